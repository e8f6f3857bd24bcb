//! The command log on a real three-server NATS cluster on loopback, started and stopped by
//! each test: acknowledged batches survive a lost server and a new writer; with two of
//! three servers gone a commit fails (nothing is acknowledged that is not stored on a
//! quorum) and succeeds once they are back, without reopening the log; a second writer
//! fences the first; every command is read back once, in order.

#![warn(clippy::too_many_lines)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use matchbook_core::{AccountId, Command, CurrencyId, Timestamp};
use matchbook_replica::cluster::{NatsCluster, server_binary};
use matchbook_replica::{JetStreamLog, LogConfig, LogError, LogTail};
use matchbook_store::journal::CommandLog;

fn cluster(test: &str) -> NatsCluster {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("nats-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    NatsCluster::start(&server_binary(), &dir, 3).expect("a three-server NATS cluster")
}

fn config(cluster: &NatsCluster, term: u64) -> LogConfig {
    LogConfig {
        servers: cluster.urls(),
        stream: "TEST".into(),
        replicas: 3,
        term,
        timeout: Duration::from_secs(2),
    }
}

/// A distinct command per number, so a lost, repeated or reordered one shows.
fn deposit(n: u64) -> Command {
    Command::Deposit {
        account: AccountId(n as u32),
        currency: CurrencyId(1),
        amount: n as i64,
    }
}

/// Appends `numbers` at their own times and commits them as one batch.
fn write(log: &mut JetStreamLog, numbers: std::ops::Range<u64>) -> std::io::Result<()> {
    for n in numbers {
        let seq = log.append(Timestamp(n as i64), &deposit(n))?;
        assert_eq!(seq, n, "commands are numbered in order");
    }
    log.commit()
}

/// Commits until it succeeds or `limit` passes (a cluster regaining its quorum elects
/// leaders first); returns the last error on time-out.
fn commit_within(log: &mut JetStreamLog, limit: Duration) -> std::io::Result<()> {
    let deadline = Instant::now() + limit;
    loop {
        match log.commit() {
            Err(e) if Instant::now() < deadline => drop(e),
            done => return done,
        }
    }
}

fn numbers_read(cluster: &NatsCluster) -> Vec<(u64, i64, Command)> {
    let (_, entries) = JetStreamLog::open(config(cluster, 99)).expect("a reader opens");
    (entries.into_iter())
        .map(|e| (e.seq, e.time.0, e.command))
        .collect()
}

fn expected(numbers: std::ops::Range<u64>) -> Vec<(u64, i64, Command)> {
    numbers.map(|n| (n, n as i64, deposit(n))).collect()
}

#[test]
fn acknowledged_batches_survive_lost_servers_and_a_new_writer() {
    let mut cluster = cluster("quorum");
    let (mut log, replay) = JetStreamLog::open(config(&cluster, 1)).expect("the log opens");
    assert!(replay.is_empty());
    write(&mut log, 1..4).expect("three commands acknowledged");
    cluster.kill(0).expect("kill n1");
    // The first publish may wait out an election (n1 may have led the stream) or a
    // reconnection: the same batch is committed again until acknowledged.
    let lost = Instant::now();
    for n in 4..6 {
        log.append(Timestamp(n as i64), &deposit(n))
            .expect("appended");
    }
    commit_within(&mut log, Duration::from_secs(30))
        .expect("acknowledged with one server of three gone");
    eprintln!(
        "one server lost: acknowledged again after {:?}",
        lost.elapsed()
    );
    cluster.kill(1).expect("kill n2");
    let refused = write(&mut log, 6..8).expect_err("no quorum: not acknowledged");
    assert!(
        log.retry_after(&refused).is_some(),
        "the runtime may try it again"
    );
    let cause = refused
        .into_inner()
        .and_then(|e| e.downcast::<LogError>().ok());
    assert!(
        matches!(
            cause.as_deref(),
            Some(LogError::Unacknowledged { first: 6, .. })
        ),
        "{cause:?}"
    );
    assert!(
        log.append(Timestamp(8), &deposit(8)).is_err(),
        "nothing is added to a batch waiting for its acknowledgement"
    );
    cluster.restart(0).expect("n1 back");
    cluster.restart(1).expect("n2 back");
    let back = Instant::now();
    commit_within(&mut log, Duration::from_secs(60)).expect("the same batch, stored once");
    eprintln!("quorum back: acknowledged after {:?}", back.elapsed());
    write(&mut log, 8..9).expect("trading goes on without reopening the log");
    drop(log);
    assert_eq!(numbers_read(&cluster), expected(1..9));
    let (mut next, replay) = JetStreamLog::open(config(&cluster, 2)).expect("a new writer");
    assert_eq!(replay.len(), 8);
    assert_eq!(next.next_seq(), 9);
    write(&mut next, 9..10).expect("appends after what it read");
    assert_eq!(numbers_read(&cluster), expected(1..10));
}

#[test]
fn a_second_writer_fences_the_first() {
    let cluster = cluster("fencing");
    let (mut old, _) = JetStreamLog::open(config(&cluster, 1)).expect("first writer");
    write(&mut old, 1..3).expect("first writer appends");
    let (mut new, replay) = JetStreamLog::open(config(&cluster, 2)).expect("second writer");
    assert_eq!(replay.len(), 2);
    write(&mut new, 3..5).expect("the new leader appends");
    let refused = write(&mut old, 3..4).expect_err("the deposed writer is refused");
    assert_eq!(
        old.retry_after(&refused),
        None,
        "never retried: it must step down"
    );
    let cause = refused
        .into_inner()
        .and_then(|e| e.downcast::<LogError>().ok());
    assert!(
        matches!(cause.as_deref(), Some(LogError::Fenced { .. })),
        "{cause:?}"
    );
    assert!(old.is_fenced());
    assert!(
        old.append(Timestamp(9), &deposit(9)).is_err(),
        "and stays refused"
    );
    assert_eq!(numbers_read(&cluster), expected(1..5));
}

#[test]
fn a_tail_returns_each_new_command_once_in_order() {
    let cluster = cluster("tail");
    let (mut log, _) = JetStreamLog::open(config(&cluster, 1)).expect("the log opens");
    let open_tail = |from| {
        LogTail::open(&cluster.urls(), "TEST", from, Duration::from_secs(2)).expect("a tail")
    };
    let (mut all, mut late) = (open_tail(1), open_tail(3));
    assert!(all.poll().expect("an empty log").is_empty());
    write(&mut log, 1..3).expect("two commands");
    write(&mut log, 3..6).expect("three more");
    let numbers = |entries: Vec<matchbook_store::journal::JournalEntry>| -> Vec<u64> {
        entries.into_iter().map(|e| e.seq).collect()
    };
    assert_eq!(numbers(all.poll().expect("poll")), [1, 2, 3, 4, 5]);
    assert_eq!(
        numbers(late.poll().expect("poll")),
        [3, 4, 5],
        "from a snapshot's next"
    );
    assert!(all.poll().expect("nothing new").is_empty());
    write(&mut log, 6..7).expect("one more");
    assert_eq!(numbers(all.poll().expect("poll")), [6]);
    assert_eq!(all.next_command(), 7);
}
