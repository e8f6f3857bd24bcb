//! The attack of SECURITY.md's ladder row, command by command: beside 2,000 resting bid
//! levels, a bid 5,000 ticks above the best is placed and cancelled 20,000 times; each
//! command is timed alone. Prints the mean, percentiles, the largest and the commands over
//! 5 us with their positions (a window move shows as one of those, at a regular interval).
//!
//! Usage: `far_bid_latency` (book only, the bench configuration).

#![warn(clippy::too_many_lines)]

use std::time::Instant;

use matchbook::{AccountId, Command, Engine, EventRecord, NewOrder, Price, Qty, Side};
use matchbook_bench::workload::{self, INSTRUMENT, START, START_PRICE};

const LEVELS: u32 = 2_000;
const ROUNDS: usize = 20_000;

fn main() -> Result<(), String> {
    let mut engine = Engine::new(workload::bench_config(false)).map_err(|e| e.to_string())?;
    let mut events: Vec<EventRecord> = Vec::with_capacity(64);
    for i in 0..LEVELS {
        if i < 1_000 {
            apply(&mut engine, &mut events, &Command::CreateHolder)?;
        }
        let bid = bid(AccountId(i % 1_000), START_PRICE - 1 - i64::from(i));
        apply(&mut engine, &mut events, &Command::PlaceOrder(bid))?;
    }
    let far = Command::PlaceOrder(bid(AccountId(0), START_PRICE + 5_000));
    let mut nanos = Vec::with_capacity(2 * ROUNDS);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let order = apply(&mut engine, &mut events, &far)?
            .order
            .ok_or("the far bid was not placed")?;
        nanos.push(start.elapsed().as_nanos() as u64);
        let cancel = Command::CancelOrder {
            account: AccountId(0),
            order,
        };
        let start = Instant::now();
        apply(&mut engine, &mut events, &cancel)?;
        nanos.push(start.elapsed().as_nanos() as u64);
    }
    report(&nanos);
    Ok(())
}

fn bid(account: AccountId, price: i64) -> NewOrder {
    NewOrder::limit(account, INSTRUMENT, Side::Buy, Price(price), Qty(1))
}

fn apply(
    engine: &mut Engine,
    events: &mut Vec<EventRecord>,
    command: &Command,
) -> Result<matchbook::Applied, String> {
    events.clear();
    engine
        .apply(command, START, events)
        .map_err(|e| format!("{command:?}: {e}"))
}

fn report(nanos: &[u64]) {
    let slow: Vec<String> = (nanos.iter().enumerate())
        .filter(|&(_, &ns)| ns > 5_000)
        .map(|(i, ns)| format!("{i}:{ns}"))
        .collect();
    let mean = nanos.iter().sum::<u64>() as f64 / nanos.len() as f64;
    let mut sorted = nanos.to_vec();
    sorted.sort_unstable();
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize];
    println!(
        "commands {} mean {mean:.0} ns p50 {} p99 {} p99.9 {} p99.99 {} max {}",
        sorted.len(),
        at(0.5),
        at(0.99),
        at(0.999),
        at(0.9999),
        sorted[sorted.len() - 1]
    );
    println!("over 5 us (command:ns): {}", slow.join(" "));
}
