//! What the JetStream command log costs: a three-server cluster on loopback (R3, file
//! storage, `sync_interval: always`), one writer appending order commands and committing
//! them in batches of `B`, for each batch size: commands per second, commit latency
//! (p50, p99, max) and bytes per command on the log. The single-server R1 row shows what
//! replication itself adds.
//!
//! `cargo run --release -p matchbook-replica --example log_throughput -- [SECONDS] [B,B,...]`
//! (default 3 seconds per row; batch sizes 1,16,256). Needs `.venv/bin/nats-server`
//! (`make .venv/ready`).

#![warn(clippy::too_many_lines)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use matchbook_core::{AccountId, Command, InstrumentId, NewOrder, Price, Qty, Side, Timestamp};
use matchbook_replica::batch::BatchWriter;
use matchbook_replica::cluster::{NatsCluster, server_binary};
use matchbook_replica::{JetStreamLog, LogConfig};
use matchbook_store::journal::CommandLog;

fn order(n: u64) -> Command {
    let side = if n.is_multiple_of(2) {
        Side::Buy
    } else {
        Side::Sell
    };
    let price = Price(6_000_000 + (n % 100) as i64);
    let account = AccountId((n % 2_000) as u32);
    Command::PlaceOrder(NewOrder::limit(
        account,
        InstrumentId(0),
        side,
        price,
        Qty(1_000),
    ))
}

/// (commands/s, commit p50, p99, max) over `seconds` of batches of `batch` commands.
fn run(log: &mut JetStreamLog, batch: usize, seconds: u64) -> (f64, Duration, Duration, Duration) {
    let start = Instant::now();
    let mut latencies = Vec::new();
    let mut n = log.next_seq();
    let mut commands = 0u64;
    while start.elapsed() < Duration::from_secs(seconds) {
        for _ in 0..batch {
            log.append(Timestamp(n as i64), &order(n))
                .expect("appended");
            n += 1;
        }
        let t = Instant::now();
        log.commit().expect("acknowledged");
        latencies.push(t.elapsed());
        commands += batch as u64;
    }
    let rate = commands as f64 / start.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    (rate, at(0.5), at(0.99), latencies[latencies.len() - 1])
}

/// Bytes a sealed batch of `batch` order commands takes, per command.
fn bytes_per_command(batch: usize) -> f64 {
    let mut writer = BatchWriter::default();
    writer.start(1);
    for n in 0..batch as u64 {
        writer.push(Timestamp(n as i64), &order(n));
    }
    writer.seal().len() as f64 / batch as f64
}

fn main() {
    let seconds = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    let batches: Vec<usize> = std::env::args()
        .nth(2)
        .map(|a| a.split(',').filter_map(|b| b.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 16, 256]);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/log-throughput");
    for replicas in [3usize, 1] {
        let dir = root.join(format!("r{replicas}"));
        let _ = std::fs::remove_dir_all(&dir);
        let cluster = NatsCluster::start(&server_binary(), &dir, replicas).expect("cluster");
        let config = LogConfig {
            servers: cluster.urls(),
            stream: "BENCH".into(),
            replicas,
            term: 1,
            timeout: Duration::from_secs(5),
        };
        let (mut log, _) = JetStreamLog::open(config).expect("log");
        for &batch in &batches {
            let (rate, p50, p99, max) = run(&mut log, batch, seconds);
            println!(
                "R{replicas} batch {batch:>4}: {rate:>9.0} commands/s; commit p50 {p50:?} p99 {p99:?} \
                 max {max:?}; {:.1} bytes/command",
                bytes_per_command(batch)
            );
        }
    }
}
