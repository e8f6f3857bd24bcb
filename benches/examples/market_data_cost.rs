//! What `MarketData::on_events` costs per command when fed inline, on a funded exchange-core
//! stream: the engine alone and the engine followed by market data, alternating in one
//! process, events hot in cache as on the engine thread. Prints the median and the minimum
//! of seven runs of each and their ratios.

#![warn(clippy::too_many_lines)]

use std::time::Instant;

use matchbook::market::{MarketData, MarketDataConfig};
use matchbook_bench::workload::{self, EXCHANGE_CORE};

fn run(w: &workload::Workload, with_market: bool) -> f64 {
    let mut engine = w.prepared_engine();
    let mut market = MarketData::new(engine.instruments().len(), MarketDataConfig::default());
    let mut events = Vec::with_capacity(64);
    let t = Instant::now();
    for (i, c) in w.commands.iter().enumerate() {
        events.clear();
        let _ = engine.apply(c, w.time_of_command(i), &mut events);
        if with_market {
            market.on_events(&events);
        }
    }
    let ns = t.elapsed().as_nanos() as f64 / w.commands.len() as f64;
    std::hint::black_box((&engine, &market));
    ns
}

/// Median and minimum.
fn summary(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0])
}

fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    // A second argument, `off` or `on`, runs only that side (for profiling one of them).
    let only = std::env::args().nth(2);
    let w = workload::generate_funded(EXCHANGE_CORE, 1, n);
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        if only.as_deref() != Some("on") {
            off.push(run(&w, false));
        }
        if only.as_deref() != Some("off") {
            on.push(run(&w, true));
        }
    }
    if only.is_some() {
        println!("{:?} ns/command", off.iter().chain(&on).collect::<Vec<_>>());
        return;
    }
    let ((off, off_min), (on, on_min)) = (summary(off), summary(on));
    println!(
        "{n} commands, median (minimum) of 7: engine {off:.1} ({off_min:.1}) ns/command, \
         engine + market data {on:.1} ({on_min:.1}) ns/command: market data {:.1} ({:.1}) \
         ns/command, {:.2}x ({:.2}x)",
        on - off,
        on_min - off_min,
        on / off,
        on_min / off_min
    );
}
