//! The Rust side of the C ABI overhead benchmark: the workload of `ffi/bench/ffi_bench.c
//! engine N` (post-only bid then cancel, events drained every 64 commands, market data
//! kept) applied to the engine directly, so the difference per call is what the boundary
//! costs. `matchbook-ffi-direct N [read|drop]` prints the median ns per call of 5 runs
//! (`drop`: events dropped unread, as `ffi_bench engine N drop`).

#![warn(clippy::too_many_lines)]

use std::time::Instant;

use matchbook::market::{MarketData, MarketDataConfig};
use matchbook::{Command, Engine, EventRecord, NewOrder, Price, Qty, Side, TimeInForce, Timestamp};

const START: i64 = 1_767_225_600_000_000_000;

fn run(pairs: i64, read_events: bool) -> Result<f64, Box<dyn std::error::Error>> {
    let mut engine = Engine::new(matchbook::demo::config())?;
    let mut events: Vec<EventRecord> = Vec::with_capacity(1024);
    let mut market = MarketData::new(engine.instruments().len(), MarketDataConfig::default());
    let t = Timestamp(START);
    let holder = engine.apply(&Command::CreateHolder, t, &mut events)?;
    let account = holder.account.ok_or("no account")?;
    let eur = engine.currency_by_code("EUR").ok_or("no EUR")?;
    let units = matchbook::fixed::parse_scaled("100000000", engine.balance_scale(eur)?)?;
    engine.apply(
        &Command::Deposit {
            account,
            currency: eur,
            amount: units,
        },
        t,
        &mut events,
    )?;
    let btc_eur = engine.instrument_by_code("BTC_EUR").ok_or("no BTC_EUR")?;
    events.clear();
    let mut checksum = 0u64;
    let started = Instant::now();
    for i in 0..pairs {
        let time = Timestamp(START + i);
        let order = NewOrder::limit(
            account,
            btc_eur,
            Side::Buy,
            Price(5_000_000 + (i & 63)),
            Qty(100),
        )
        .with_tif(TimeInForce::PostOnly);
        let start = events.len();
        let placed = engine.apply(&Command::PlaceOrder(order), time, &mut events)?;
        market.on_events(&events[start..]);
        let handle = placed.order.ok_or("no order")?;
        let start = events.len();
        engine.apply(
            &Command::CancelOrder {
                account,
                order: handle,
            },
            time,
            &mut events,
        )?;
        market.on_events(&events[start..]);
        if i & 31 == 31 {
            checksum += if read_events {
                events.iter().map(|e| e.seq).sum::<u64>()
            } else {
                1
            };
            events.clear();
        }
    }
    let elapsed = started.elapsed().as_nanos() as f64;
    if checksum == 0 {
        eprintln!("no events");
    }
    Ok(elapsed / (pairs * 2) as f64)
}

const USAGE: &str =
    "usage: matchbook-ffi-direct [PAIRS (at least 10, default 1000000)] [read|drop]";

/// Order-and-cancel pairs a run makes, and whether events are read.
fn parse_args(args: &[String]) -> Result<(i64, bool), String> {
    let pairs = match args.first() {
        None => 1_000_000,
        Some(n) => n
            .parse()
            .map_err(|_| format!("PAIRS takes a number, not {n}"))?,
    };
    let read_events = match args.get(1).map(String::as_str) {
        None | Some("read") => true,
        Some("drop") => false,
        Some(other) => return Err(format!("unknown argument {other}")),
    };
    // The warm-up run makes a tenth of them.
    if pairs < 10 || args.len() > 2 {
        return Err("PAIRS takes at least 10, then at most `read` or `drop`".into());
    }
    Ok((pairs, read_events))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (pairs, read_events) = parse_args(&args).unwrap_or_else(|e| {
        eprintln!("matchbook-ffi-direct: {e}\n{USAGE}");
        std::process::exit(2);
    });
    run(pairs / 10, read_events)?;
    let mut runs = (0..5)
        .map(|_| run(pairs, read_events))
        .collect::<Result<Vec<_>, _>>()?;
    runs.sort_by(f64::total_cmp);
    println!(
        "rust direct, events {}: {} calls, median {:.1} ns/call (min {:.1}, max {:.1})",
        if read_events { "read" } else { "dropped" },
        pairs * 2,
        runs[2],
        runs[0],
        runs[4]
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &str) -> Result<(i64, bool), String> {
        parse_args(&matchbook_bench::cli::words(line))
    }

    /// `--help` ended in `Error: ParseIntError { kind: InvalidDigit }`, and `5` in a warm-up
    /// of no call.
    #[test]
    fn arguments_are_refused_with_what_they_should_be() {
        assert!(parsed("--help").is_err_and(|e| e.contains("PAIRS takes a number, not --help")));
        assert!(parsed("5").is_err_and(|e| e.contains("at least 10")));
        assert!(parsed("100 keep").is_err_and(|e| e.contains("unknown argument keep")));
        assert_eq!(parsed("100 drop"), Ok((100, false)));
        assert_eq!(
            parsed("100 read"),
            Ok((100, true)),
            "as benches/ffi-bench.sh passes it"
        );
        assert_eq!(parsed(""), Ok((1_000_000, true)));
    }
}
