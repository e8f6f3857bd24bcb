//! `matchbook-rest-book`: fills a REST exchange's BTC_EUR bid side with `--orders` resting
//! limit orders (0.001 BTC each, over 20,000 price levels a cent apart from 30,000.00) over
//! `--connections` keep-alive connections, then exits: the book a memory measurement
//! (`benches/memory-bench.sh`) is taken on.
//!
//! Usage: `matchbook-rest-book --url 127.0.0.1:8080 --key KEY --orders 1000000
//! [--connections 16]`

#![warn(clippy::too_many_lines)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use matchbook_bench::http::Connection;

/// Distinct prices the orders spread over.
const LEVELS: u64 = 20_000;

struct Args {
    url: String,
    key: String,
    orders: u64,
    connections: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut parsed = Args {
        url: "127.0.0.1:8080".into(),
        key: String::new(),
        orders: 1_000_000,
        connections: 16,
    };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |v: &str| v.parse::<u64>().map_err(|_| format!("bad {flag} {v}"));
        match flag.as_str() {
            "--url" => parsed.url = value.trim_start_matches("http://").to_owned(),
            "--key" => parsed.key = value,
            "--orders" => parsed.orders = number(&value)?,
            "--connections" => parsed.connections = number(&value)?.max(1),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if parsed.key.is_empty() {
        return Err("--key is required".into());
    }
    Ok(parsed)
}

/// Places orders numbered from the shared counter until `args.orders` are taken; the
/// number of refusals.
fn fill(args: &Args, next: &AtomicU64) -> Result<u64, String> {
    let mut conn = Connection::open(&args.url).map_err(|e| e.to_string())?;
    let mut refused = 0;
    loop {
        let n = next.fetch_add(1, Ordering::Relaxed);
        if n >= args.orders {
            return Ok(refused);
        }
        let cents = 3_000_000 + n % LEVELS;
        let body = format!(
            "{{\"instrument_code\":\"BTC_EUR\",\"type\":\"LIMIT\",\"side\":\"BUY\",\"amount\":\"0.00100\",\"price\":\"{}.{:02}\"}}",
            cents / 100,
            cents % 100
        );
        let placed = (conn.send("POST", "/v1/account/orders", Some(&args.key), Some(&body)))
            .map_err(|e| e.to_string())?;
        if placed.status != 200 {
            refused += 1;
        }
    }
}

fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!(
                "{e}\nusage: matchbook-rest-book --url HOST:PORT --key KEY --orders N [--connections C]"
            );
            std::process::exit(2);
        }
    };
    let next = AtomicU64::new(0);
    let started = Instant::now();
    let results: Vec<Result<u64, String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..args.connections)
            .map(|_| scope.spawn(|| fill(&args, &next)))
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err("a connection panicked".into()))
            })
            .collect()
    });
    let mut refused = 0;
    for result in results {
        match result {
            Ok(r) => refused += r,
            Err(e) => {
                eprintln!("matchbook-rest-book: {e}");
                std::process::exit(1);
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "placed {} orders ({refused} refused) in {seconds:.1} s",
        args.orders - refused
    );
    if refused > 0 {
        std::process::exit(1);
    }
}
