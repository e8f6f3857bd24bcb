//! The comparison runner behind `matchbook-bench run`: replays one workload through several
//! engines in the same process, alternating their order from run to run, and measures each
//! on a fresh instance: throughput with one timer around the measured commands, latency
//! with a timer around each command into an HDR histogram, and heap allocations per command
//! (read from the binary's counting allocator). Every engine is first checked against
//! matchbook on the whole workload; one that diverges is reported as incorrect and not timed.

use std::time::Instant;

use hdrhistogram::Histogram;

use crate::script::{Line, OrderCounter, Script};
use crate::venues::{self, Gap, Outcome, check};

/// Commands replayed between two progress updates (no per-command cost).
const CHUNK: usize = 1 << 16;

/// What one timed run of one engine measured.
#[derive(Debug, Clone)]
pub struct Run {
    /// Measured commands per second (throughput pass).
    pub throughput: f64,
    /// Heap allocations per measured command (throughput pass).
    pub allocations: f64,
    /// Per-command latency in nanoseconds, timer included (latency pass).
    pub latency: Histogram<u64>,
}

/// Everything measured for one engine.
#[derive(Debug)]
pub struct EngineReport {
    /// Engine name.
    pub name: &'static str,
    /// `Err` with the first divergence when the engine disagreed with matchbook.
    pub check: Result<(), Box<check::Divergence>>,
    /// What the engine lacks and how its adapter deals with it.
    pub gaps: &'static [Gap],
    /// One entry per run (empty when the check failed).
    pub runs: Vec<Run>,
}

impl EngineReport {
    /// Median throughput over the runs.
    pub fn throughput(&self) -> Option<f64> {
        median(self.runs.iter().map(|r| r.throughput).collect())
    }
    /// Median over the runs of a latency percentile, in nanoseconds.
    pub fn percentile(&self, q: f64) -> Option<f64> {
        median(
            self.runs
                .iter()
                .map(|r| r.latency.value_at_quantile(q) as f64)
                .collect(),
        )
    }
    /// Largest latency seen in any run.
    pub fn max(&self) -> Option<u64> {
        self.runs.iter().map(|r| r.latency.max()).max()
    }
    /// Median allocations per command.
    pub fn allocations(&self) -> Option<f64> {
        median(self.runs.iter().map(|r| r.allocations).collect())
    }
}

/// The median of some figures (the mean of the middle two for an even count).
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// How a comparison is run.
pub struct Options<'a> {
    /// Engines, by name (see [`venues::NAMES`]).
    pub engines: Vec<&'static str>,
    /// Timed runs per engine.
    pub runs: usize,
    /// Reads the process's allocation counter.
    pub allocations: &'a dyn Fn() -> u64,
    /// Called after every chunk of commands with (commands done, commands in all).
    pub progress: &'a dyn Fn(u64, u64),
}

/// Cost of one `Instant::now()` pair, in nanoseconds (median of many), reported beside the
/// latencies since every per-command figure includes it.
pub fn timer_cost() -> f64 {
    let mut samples: Vec<f64> = (0..10_001)
        .map(|_| {
            let a = Instant::now();
            let b = Instant::now();
            (b - a).as_nanos() as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Checks and measures every engine of `options` on `script`.
pub fn compare(script: &Script, options: &Options<'_>) -> Vec<EngineReport> {
    let mut reports: Vec<EngineReport> = options
        .engines
        .iter()
        .map(|&name| {
            let venue = venues::open(name, script).expect("known engine");
            let check = if name.starts_with("matchbook") || name == "null" {
                Ok(())
            } else {
                check::against(name, "matchbook", script)
            };
            EngineReport {
                name,
                check,
                gaps: venue.gaps(),
                runs: Vec::new(),
            }
        })
        .collect();
    let timed: Vec<usize> = (0..reports.len())
        .filter(|&i| reports[i].check.is_ok())
        .collect();
    let per_run = 2 * script.measured.len() as u64;
    let total = per_run * (timed.len() * options.runs) as u64;
    let mut done = 0u64;
    for run in 0..options.runs {
        // Alternate the order so no engine always runs first (cold) or last.
        for k in 0..timed.len() {
            let i = timed[(k + run) % timed.len()];
            let name = reports[i].name;
            let measured = measure(name, script, options, &mut |n| {
                done += n as u64;
                (options.progress)(done, total);
            });
            reports[i].runs.push(measured);
        }
    }
    reports
}

/// The venue `name` (`None`: no such venue) with the script's set-up applied, and the
/// order counter where the set-up left it: what every timed pass starts from.
pub fn prepared(name: &str, script: &Script) -> Option<(Box<dyn venues::Venue>, OrderCounter)> {
    let mut venue = venues::open(name, script)?;
    let mut out = Outcome::default();
    let mut numbers = OrderCounter::default();
    for line in &script.setup {
        out.clear();
        venue.apply(line, numbers.number(line), &mut out, false);
    }
    Some((venue, numbers))
}

/// Applies `lines` one at a time and hands `record` the nanoseconds each took (its
/// look-ahead at the lines after it, within `lines`, included): the latency pass's timing.
pub fn time_each(
    venue: &mut dyn venues::Venue,
    lines: &[Line],
    numbers: &mut OrderCounter,
    mut record: impl FnMut(u64),
) {
    let mut out = Outcome::default();
    for (i, line) in lines.iter().enumerate() {
        out.clear();
        let number = numbers.number(line);
        let start = Instant::now();
        venue.look_ahead(lines.get(i + 1..).unwrap_or_default());
        venue.apply(std::hint::black_box(line), number, &mut out, false);
        record(start.elapsed().as_nanos() as u64);
    }
}

/// One throughput pass and one latency pass, each on a fresh engine.
fn measure(
    name: &str,
    script: &Script,
    options: &Options<'_>,
    progress: &mut dyn FnMut(usize),
) -> Run {
    let lines: &[Line] = &script.measured;
    let n = lines.len().max(1);
    let mut out = Outcome::default();

    let (mut venue, mut numbers) = prepared(name, script).expect("known engine");
    let mut elapsed = 0.0;
    let allocations_before = (options.allocations)();
    for chunk in lines.chunks(CHUNK) {
        let start = Instant::now();
        for (i, line) in chunk.iter().enumerate() {
            out.clear();
            venue.look_ahead(chunk.get(i + 1..).unwrap_or_default());
            let number = numbers.number(line);
            venue.apply(std::hint::black_box(line), number, &mut out, false);
        }
        elapsed += start.elapsed().as_secs_f64();
        progress(chunk.len());
    }
    let allocations = ((options.allocations)() - allocations_before) as f64 / n as f64;
    std::hint::black_box(&out);
    drop(venue);

    let (mut venue, mut numbers) = prepared(name, script).expect("known engine");
    let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("bounds");
    for chunk in lines.chunks(CHUNK) {
        time_each(venue.as_mut(), chunk, &mut numbers, |ns| {
            latency.saturating_record(ns.max(1));
        });
        progress(chunk.len());
    }
    Run {
        throughput: n as f64 / elapsed.max(f64::MIN_POSITIVE),
        allocations,
        latency,
    }
}
