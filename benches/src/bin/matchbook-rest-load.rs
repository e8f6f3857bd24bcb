//! `matchbook-rest-load`: a bounded load generator for the REST exchange. Each of
//! `--connections` keep-alive connections places a resting BTC_EUR limit order and cancels
//! it, again and again, for `--seconds`; at most one request per connection is in flight,
//! so the load is bounded by the connection count. With `--rate R` (requests per second
//! over all connections) each connection follows a fixed schedule and latency is measured
//! from the scheduled send time, so a stalled server shows up in the percentiles instead
//! of silently lowering the offered load (coordinated omission).
//!
//! Usage: `matchbook-rest-load --url 127.0.0.1:8080 --key KEY [--connections 16]
//! [--seconds 10] [--warmup 2] [--rate R]`

#![warn(clippy::too_many_lines)]

use std::time::{Duration, Instant};

use matchbook_bench::http::{Connection, json_field};

struct Args {
    url: String,
    key: String,
    connections: usize,
    seconds: f64,
    warmup: f64,
    rate: Option<f64>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut parsed = Args {
        url: "127.0.0.1:8080".into(),
        key: String::new(),
        connections: 16,
        seconds: 10.0,
        warmup: 2.0,
        rate: None,
    };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |v: &str| v.parse::<f64>().map_err(|_| format!("bad {flag} {v}"));
        match flag.as_str() {
            "--url" => parsed.url = value.trim_start_matches("http://").to_owned(),
            "--key" => parsed.key = value,
            "--connections" => {
                parsed.connections = value.parse().map_err(|_| format!("bad {flag}"))?;
            }
            "--seconds" => parsed.seconds = number(&value)?,
            "--warmup" => parsed.warmup = number(&value)?,
            "--rate" => parsed.rate = Some(number(&value)?),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if parsed.key.is_empty() {
        return Err("--key is required".into());
    }
    Ok(parsed)
}

/// Latencies (nanoseconds) of one connection, by request kind, and its failures.
#[derive(Default)]
struct Samples {
    place: Vec<u64>,
    cancel: Vec<u64>,
    errors: u64,
}

fn drive(
    args: &Args,
    index: usize,
    start: Instant,
    measure_from: Instant,
    end: Instant,
) -> Samples {
    let mut samples = Samples::default();
    let Ok(mut conn) = Connection::open(&args.url) else {
        samples.errors += 1;
        return samples;
    };
    // Each connection works its own price so books stay shallow and orders never cross.
    let price = 40_000 + index * 10;
    let body = format!(
        "{{\"instrument_code\":\"BTC_EUR\",\"type\":\"LIMIT\",\"side\":\"BUY\",\"amount\":\"0.01000\",\"price\":\"{price}.00\"}}"
    );
    let interval = args
        .rate
        .map(|r| Duration::from_secs_f64(args.connections as f64 / r));
    let mut scheduled = start
        + interval.map_or(Duration::ZERO, |i| {
            i.mul_f64(index as f64 / args.connections as f64)
        });
    let mut next = |now: Instant| -> Instant {
        match interval {
            Some(i) => {
                let at = scheduled;
                scheduled += i;
                if at > now {
                    std::thread::sleep(at - now);
                }
                at
            }
            None => now,
        }
    };
    loop {
        let sent = next(Instant::now());
        if sent >= end {
            break;
        }
        let placed = conn.send("POST", "/v1/account/orders", Some(&args.key), Some(&body));
        let done = Instant::now();
        let Ok(placed) = placed else {
            samples.errors += 1;
            break;
        };
        if sent >= measure_from {
            samples.place.push((done - sent).as_nanos() as u64);
        }
        let Some(id) = json_field(&placed.body, "order_id").filter(|_| placed.status == 200) else {
            samples.errors += 1;
            continue;
        };
        let path = format!("/v1/account/orders/{id}");
        let sent = next(Instant::now());
        let cancelled = conn.send("DELETE", &path, Some(&args.key), None);
        let done = Instant::now();
        match cancelled {
            Ok(r) if r.status == 200 => {
                if sent >= measure_from {
                    samples.cancel.push((done - sent).as_nanos() as u64);
                }
            }
            _ => samples.errors += 1,
        }
    }
    samples
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i] as f64 / 1_000.0
}

fn report(name: &str, mut values: Vec<u64>, seconds: f64) {
    values.sort_unstable();
    println!(
        "{name:<7} {:>9} req {:>9.0} req/s  p50 {:>7.0} us  p90 {:>7.0} us  p99 {:>7.0} us  p99.9 {:>7.0} us  max {:>7.0} us",
        values.len(),
        values.len() as f64 / seconds,
        percentile(&values, 0.50),
        percentile(&values, 0.90),
        percentile(&values, 0.99),
        percentile(&values, 0.999),
        percentile(&values, 1.0),
    );
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!(
                "{e}\nusage: matchbook-rest-load --url HOST:PORT --key KEY [--connections N] [--seconds S] [--warmup S] [--rate R]"
            );
            std::process::exit(2);
        }
    };
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(args.warmup);
    let end = measure_from + Duration::from_secs_f64(args.seconds);
    let results: Vec<Samples> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..args.connections)
            .map(|i| {
                let args = &args;
                scope.spawn(move || drive(args, i, start, measure_from, end))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let (mut place, mut cancel, mut errors) = (Vec::new(), Vec::new(), 0);
    for s in results {
        place.extend(s.place);
        cancel.extend(s.cancel);
        errors += s.errors;
    }
    println!(
        "connections {}  measured {:.1} s after {:.1} s warm-up  offered {}  errors {errors}",
        args.connections,
        args.seconds,
        args.warmup,
        args.rate
            .map_or_else(|| "closed loop".to_owned(), |r| format!("{r:.0} req/s"))
    );
    let all: Vec<u64> = place.iter().chain(&cancel).copied().collect();
    report("place", place, args.seconds);
    report("cancel", cancel, args.seconds);
    report("all", all, args.seconds);
}
