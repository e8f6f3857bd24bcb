//! `matchbook-stream-load`: order entry on a busy market while `--subscribers` WebSocket
//! clients follow its `ORDER_BOOK` and `PRICE_TICKS`. A maker and a taker connection
//! repeat: the maker rests an order on BTC_EUR, the taker takes it with an immediate-or-
//! cancel order (a trade: a tick and two book updates per cycle; the sides alternate). One pair only: a second
//! pair's taker would take the first one's sells. Every order's amount is unique, so a tick
//! names the command that made it: the latency of a tick is the time from the taker's
//! acknowledgement to the tick's arrival at each subscriber (zero when the tick beat the
//! acknowledgement).
//!
//! Prints one line: subscribers, frames delivered per second in total, tick latency p50 and
//! p99 (microseconds), order entry (commands per second).
//!
//! Usage: `matchbook-stream-load --url 127.0.0.1:8080 --maker-key K1 --taker-key K2
//! [--subscribers 100] [--seconds 5] [--warmup 1] [--depth 0]` (`--depth`: the
//! `ORDER_BOOK` subscription's depth; 0, the whole book)

#![warn(clippy::too_many_lines)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use matchbook_bench::http::Connection;
use tokio_tungstenite::tungstenite::Message;

/// Distinct markers: amounts are 0.01 BTC + marker units of 0.00001 (not reused within a
/// run at the rates this machine reaches: about 30 s of cycles).
const MARKERS: u64 = 100_000;
/// One tick in this many is timed (enough samples, bounded memory at 1,000 subscribers).
const SAMPLE_EVERY: u64 = 16;

struct Args {
    url: String,
    maker_key: String,
    taker_key: String,
    subscribers: usize,
    /// The `ORDER_BOOK` subscription's depth (0: the whole book).
    depth: usize,
    connections: usize,
    seconds: f64,
    warmup: f64,
}

const USAGE: &str = "usage: matchbook-stream-load --url HOST:PORT --maker-key K1 --taker-key K2 \
                     [--subscribers N] [--seconds S] [--warmup S] [--depth N]";

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut parsed = Args {
        url: "127.0.0.1:8080".into(),
        maker_key: String::new(),
        taker_key: String::new(),
        subscribers: 100,
        depth: 0,
        connections: 1,
        seconds: 5.0,
        warmup: 1.0,
    };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |_| format!("bad {flag} {value}");
        match flag.as_str() {
            "--url" => parsed.url = value.trim_start_matches("http://").to_owned(),
            "--maker-key" => parsed.maker_key = value,
            "--taker-key" => parsed.taker_key = value,
            "--subscribers" => parsed.subscribers = value.parse().map_err(bad)?,
            "--depth" => parsed.depth = value.parse().map_err(bad)?,
            "--seconds" => parsed.seconds = value.parse().map_err(|_| format!("bad {flag}"))?,
            "--warmup" => parsed.warmup = value.parse().map_err(|_| format!("bad {flag}"))?,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if parsed.maker_key.is_empty() || parsed.taker_key.is_empty() {
        return Err("--maker-key and --taker-key are required".into());
    }
    Ok(parsed)
}

/// What the run shares between the order entry threads and the subscribers.
#[derive(Default)]
struct Shared {
    /// Frames received by all subscribers while measuring.
    frames: AtomicU64,
    measuring: AtomicBool,
    stop: AtomicBool,
    /// Marker -> the taker's acknowledgement, for the sampled markers.
    acks: Mutex<HashMap<u64, Instant>>,
    /// (marker, arrival) of sampled ticks, all subscribers.
    arrivals: Mutex<Vec<(u64, Instant)>>,
}

/// The marker of a tick's amount (`"amount":"0.01234"` -> 234), if the frame is a tick.
fn tick_marker(text: &str) -> Option<u64> {
    if !text.contains("\"PRICE_TICK\"") {
        return None;
    }
    let at = text.find("\"amount\":\"")? + 10;
    let digits: String = text[at..].chars().take_while(|c| *c != '"').collect();
    let (whole, fraction) = digits.split_once('.')?;
    let units = whole.parse::<u64>().ok()? * 100_000 + fraction.parse::<u64>().ok()?;
    units.checked_sub(1_000)
}

async fn subscriber(
    url: String,
    depth: usize,
    shared: Arc<Shared>,
    ready: tokio::sync::mpsc::Sender<()>,
) {
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async(format!("ws://{url}/")).await else {
        eprintln!("a subscriber could not connect");
        return;
    };
    let subscribe = format!(
        r#"{{"type":"SUBSCRIBE","channels":[{{"name":"ORDER_BOOK","instrument_codes":["BTC_EUR"],"depth":{depth}}},{{"name":"PRICE_TICKS","instrument_codes":["BTC_EUR"]}}]}}"#
    );
    if ws.send(Message::Text(subscribe.into())).await.is_err() {
        return;
    }
    let mut announced = false;
    let mut arrivals = Vec::new();
    while let Some(Ok(message)) = ws.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        if !announced && text.contains("PRICE_TICK_HISTORY") {
            announced = true;
            let _ = ready.send(()).await;
        }
        if text.contains("\"error\"") {
            eprintln!("a subscriber got {text}");
            break;
        }
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        if shared.measuring.load(Ordering::Relaxed) {
            shared.frames.fetch_add(1, Ordering::Relaxed);
            if let Some(marker) = tick_marker(&text).filter(|m| m.is_multiple_of(SAMPLE_EVERY)) {
                arrivals.push((marker, Instant::now()));
            }
        }
    }
    shared.arrivals.lock().map(|mut a| a.extend(arrivals)).ok();
}

/// One order entry connection pair: rest a sell, take it; returns commands done while
/// measuring.
fn trade_loop(args: &Args, index: usize, shared: &Shared) -> u64 {
    let (Ok(mut maker), Ok(mut taker)) = (Connection::open(&args.url), Connection::open(&args.url))
    else {
        eprintln!("an order entry connection could not open");
        return 0;
    };
    let price = 60_000 + index;
    // Whatever an earlier run left resting would be taken first and confuse the markers.
    let _ = maker.send("DELETE", "/v1/account/orders", Some(&args.maker_key), None);
    let mut done = 0;
    let mut cycle = index as u64;
    while !shared.stop.load(Ordering::Relaxed) {
        let marker = cycle % MARKERS;
        cycle += args.connections as u64;
        let units = 1_000 + marker;
        let amount = format!("{}.{:05}", units / 100_000, units % 100_000);
        let order = |side: &str, tif: &str| {
            format!(
                "{{\"instrument_code\":\"BTC_EUR\",\"type\":\"LIMIT\",\"side\":\"{side}\",\"amount\":\"{amount}\",\"price\":\"{price}.00\",\"time_in_force\":\"{tif}\"}}"
            )
        };
        // The sides alternate, so neither account runs out of what it sells.
        let (rest_side, take_side) = if marker.is_multiple_of(2) {
            ("SELL", "BUY")
        } else {
            ("BUY", "SELL")
        };
        let rest = order(rest_side, "GOOD_TILL_CANCELLED");
        let take = order(take_side, "IMMEDIATE_OR_CANCELLED");
        let placed = maker.send(
            "POST",
            "/v1/account/orders",
            Some(&args.maker_key),
            Some(&rest),
        );
        let took = taker.send(
            "POST",
            "/v1/account/orders",
            Some(&args.taker_key),
            Some(&take),
        );
        let acked = Instant::now();
        match (placed, took) {
            (Ok(p), Ok(t)) if p.status == 200 && t.status == 200 => {}
            (Ok(p), Ok(t)) => {
                let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                eprintln!(
                    "refused: {} {} / {} {}",
                    p.status,
                    text(&p.body),
                    t.status,
                    text(&t.body)
                );
                break;
            }
            _ => break,
        }
        if shared.measuring.load(Ordering::Relaxed) {
            done += 2;
            if marker.is_multiple_of(SAMPLE_EVERY) {
                shared.acks.lock().map(|mut a| a.insert(marker, acked)).ok();
            }
        }
    }
    done
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize] as f64 / 1_000.0
}

fn main() -> Result<(), String> {
    let args = Arc::new(parse_args().unwrap_or_else(|e| {
        eprintln!("matchbook-stream-load: {e}\n{USAGE}");
        std::process::exit(2);
    }));
    let shared = Arc::new(Shared::default());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(args.subscribers.max(1));
    let mut tasks = Vec::new();
    for _ in 0..args.subscribers {
        let task = subscriber(
            args.url.clone(),
            args.depth,
            shared.clone(),
            ready_tx.clone(),
        );
        tasks.push(runtime.spawn(task));
    }
    drop(ready_tx);
    runtime.block_on(async {
        for _ in 0..args.subscribers {
            ready_rx.recv().await;
        }
    });
    let entry: Vec<_> = (0..args.connections)
        .map(|i| {
            let (args, shared) = (args.clone(), shared.clone());
            std::thread::spawn(move || trade_loop(&args, i, &shared))
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(args.warmup));
    shared.measuring.store(true, Ordering::Relaxed);
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(args.seconds));
    shared.measuring.store(false, Ordering::Relaxed);
    let elapsed = started.elapsed().as_secs_f64();
    shared.stop.store(true, Ordering::Relaxed);
    let commands: u64 = entry.into_iter().map(|t| t.join().unwrap_or(0)).sum();
    // Subscribers stop at their next frame; the heartbeat brings one within its interval.
    runtime.block_on(async {
        for task in tasks {
            let _ = tokio::time::timeout(Duration::from_secs(15), task).await;
        }
    });
    let acks = shared.acks.lock().map_err(|e| e.to_string())?;
    let arrivals = shared.arrivals.lock().map_err(|e| e.to_string())?;
    let mut latencies: Vec<u64> = (arrivals.iter())
        .filter_map(|(marker, at)| {
            let acked = acks.get(marker)?;
            Some(at.saturating_duration_since(*acked).as_nanos() as u64)
        })
        .collect();
    latencies.sort_unstable();
    println!(
        "subscribers {:>5}  frames/s {:>11.0}  tick latency us p50 {:>9.1} p99 {:>9.1} (n={})  order entry {:>8.0} commands/s",
        args.subscribers,
        shared.frames.load(Ordering::Relaxed) as f64 / elapsed,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.len(),
        commands as f64 / elapsed,
    );
    Ok(())
}
