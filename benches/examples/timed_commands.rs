//! The measured commands of a workload file through one venue, and nothing else under a
//! profiler: `valgrind --tool=callgrind --collect-atstart=no
//! --toggle-collect=timed_commands::measured` counts the instructions of exactly the
//! commands the harness times (set-up, parsing and the venue's construction excluded), and
//! with `PERF_CTL=FIFO` the tool writes `enable`/`disable` to a `perf record --control
//! fifo:FIFO -D -1` around them. `benches/instructions.sh` drives the first.
//!
//! Usage: `timed_commands FILE [VENUE] [ROUNDS]` (venue `matchbook` and one round by
//! default); prints each round's rate to standard error.

#![warn(clippy::too_many_lines)]

use std::io::Write;
use std::time::Instant;

use matchbook_bench::harness;
use matchbook_bench::script::{OrderCounter, Script};
use matchbook_bench::venues::{Outcome, Venue};

fn main() {
    if let Err(message) = run() {
        eprintln!("timed_commands: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .ok_or("usage: timed_commands FILE [VENUE] [ROUNDS]")?;
    let venue_name = args.get(1).map_or("matchbook", String::as_str);
    let rounds: usize = match args.get(2) {
        Some(n) => n
            .parse()
            .map_err(|_| format!("ROUNDS is a number, not {n}"))?,
        None => 1,
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let script = Script::parse(&text).map_err(|e| format!("{path}: {e}"))?;
    let control = std::env::var("PERF_CTL").ok();
    for _ in 0..rounds {
        let (mut venue, mut numbers) =
            harness::prepared(venue_name, &script).ok_or(format!("unknown venue {venue_name}"))?;
        tell_perf(control.as_deref(), "enable")?;
        let start = Instant::now();
        measured(venue.as_mut(), &script, &mut numbers);
        let seconds = start.elapsed().as_secs_f64();
        tell_perf(control.as_deref(), "disable")?;
        let rate = script.measured.len() as f64 / seconds.max(f64::MIN_POSITIVE);
        eprintln!("{venue_name}: {:.2} M commands/s", rate / 1e6);
    }
    Ok(())
}

/// The timed loop, as the harness's throughput pass runs it; kept out of line so a
/// profiler can name it.
#[inline(never)]
fn measured(venue: &mut dyn Venue, script: &Script, numbers: &mut OrderCounter) {
    let mut out = Outcome::default();
    for (i, line) in script.measured.iter().enumerate() {
        out.clear();
        venue.look_ahead(script.measured.get(i + 1..).unwrap_or_default());
        let number = numbers.number(line);
        venue.apply(std::hint::black_box(line), number, &mut out, false);
    }
    std::hint::black_box(&out);
}

/// Writes `command` to perf's control FIFO, when there is one.
fn tell_perf(control: Option<&str>, command: &str) -> Result<(), String> {
    let Some(path) = control else {
        return Ok(());
    };
    let mut fifo = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| format!("cannot open {path}: {e}"))?;
    writeln!(fifo, "{command}").map_err(|e| format!("cannot write {path}: {e}"))
}
