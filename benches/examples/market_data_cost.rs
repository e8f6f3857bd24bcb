//! Times `MarketData::on_events` alone over the recorded events of a funded exchange-core
//! stream, to see what the consumer costs per command apart from the engine.

use std::time::Instant;

use matchbook::EventRecord;
use matchbook::market::{MarketData, MarketDataConfig};
use matchbook_bench::workload::{self, EXCHANGE_CORE};

fn main() {
    let w = workload::generate_funded(EXCHANGE_CORE, 1, 1_000_000);
    let mut engine = w.prepared_engine();
    let mut batches: Vec<Vec<EventRecord>> = Vec::with_capacity(w.commands.len());
    for (i, c) in w.commands.iter().enumerate() {
        let mut events = Vec::new();
        let _ = engine.apply(c, w.time_of_command(i), &mut events);
        batches.push(events);
    }
    let events: usize = batches.iter().map(Vec::len).sum();
    for _ in 0..3 {
        let mut market = MarketData::new(engine.instruments().len(), MarketDataConfig::default());
        let t = Instant::now();
        for b in &batches {
            market.on_events(b);
        }
        let ns = t.elapsed().as_nanos() as f64;
        println!(
            "{} commands, {events} events: {:.1} ns per command, {:.1} ns per event",
            batches.len(),
            ns / batches.len() as f64,
            ns / events as f64
        );
    }
}
