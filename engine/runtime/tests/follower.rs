//! A runtime can follow a log another node writes and take it over: a follower applies the
//! leader's commands, with the leader's numbers and times, to the same state (same
//! `state_hash` at the same sequence number) and refuses commands of its own; handed a log
//! it leads, its numbers continuing the log's; a leader whose log says another writer
//! appended (fencing) steps down without applying or answering the refused batch, and
//! follows from there; asked to step down during an outage, it gives the batch up. A
//! follower stopped by a gap refuses further hand-overs instead of waiting for room.

#![warn(clippy::too_many_lines)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use matchbook_config::demo;
use matchbook_core::{AccountId, Command, CurrencyId, Engine, InstrumentId, NewOrder};
use matchbook_core::{Price, Qty, Side, Timestamp};
use matchbook_market::MarketData;
use matchbook_runtime::{ManualClock, Runtime, RuntimeError, RuntimeHandle};
use matchbook_store::journal::{CommandLog, JournalEntry};

const T0: Timestamp = Timestamp(1_767_225_600_000_000_000);

/// The replicated log as its writers see it: one list, appended to only by a writer that
/// has seen all of it (the expected-length check a JetStream publish makes).
#[derive(Default)]
struct Stored {
    entries: Mutex<Vec<JournalEntry>>,
    down: AtomicBool,
}

impl Stored {
    fn after(&self, seq: u64) -> Vec<JournalEntry> {
        let entries = self.entries.lock().expect("not poisoned");
        entries.iter().filter(|e| e.seq > seq).cloned().collect()
    }

    fn len(&self) -> usize {
        self.entries.lock().expect("not poisoned").len()
    }
}

#[derive(Debug)]
struct Fenced;

impl std::fmt::Display for Fenced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("another writer appended")
    }
}

impl std::error::Error for Fenced {}

/// One node's writer of [`Stored`].
struct Writer {
    stored: Arc<Stored>,
    seen: usize,
    pending: Vec<JournalEntry>,
}

impl Writer {
    fn open(stored: &Arc<Stored>) -> Box<Self> {
        Box::new(Writer {
            stored: stored.clone(),
            seen: stored.len(),
            pending: Vec::new(),
        })
    }
}

impl CommandLog for Writer {
    fn append(&mut self, time: Timestamp, command: &Command) -> std::io::Result<u64> {
        let seq = (self.seen + self.pending.len() + 1) as u64;
        let command = command.clone();
        self.pending.push(JournalEntry { seq, time, command });
        Ok(seq)
    }

    fn commit(&mut self) -> std::io::Result<()> {
        if self.stored.down.load(Ordering::Acquire) {
            return Err(std::io::Error::other("no quorum"));
        }
        let mut entries = self.stored.entries.lock().expect("not poisoned");
        if entries.len() != self.seen {
            return Err(std::io::Error::other(Fenced));
        }
        entries.append(&mut self.pending);
        self.seen = entries.len();
        Ok(())
    }

    fn retry_after(&self, _error: &std::io::Error) -> Option<Duration> {
        self.stored
            .down
            .load(Ordering::Acquire)
            .then_some(Duration::from_millis(1))
    }

    fn deposed(&self, error: &std::io::Error) -> bool {
        error.get_ref().is_some_and(|e| e.is::<Fenced>())
    }
}

fn fresh() -> (Engine, MarketData) {
    let engine = Engine::new(demo::config()).expect("demo config");
    let market = MarketData::new(engine.instruments().len(), Default::default());
    (engine, market)
}

fn leader(stored: &Arc<Stored>, time: Timestamp) -> Runtime {
    let (engine, market) = fresh();
    let clock = Arc::new(ManualClock::at(time));
    Runtime::start_durable(engine, market, clock, 64, Writer::open(stored), None).expect("threads")
}

fn follower() -> Runtime {
    let (engine, market) = fresh();
    let clock = Arc::new(ManualClock::at(T0));
    Runtime::start_follower(engine, market, clock, 64, 1, None).expect("threads")
}

/// Waits (bounded) until `condition` holds.
fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "{what}: not within 10 s");
        std::thread::yield_now();
    }
}

/// (last sequenced, state hash) once the stages have applied everything sequenced.
fn state(handle: &RuntimeHandle) -> (u64, u64) {
    let seq = handle.last_sequenced().unwrap_or(0);
    let read = move |view: &matchbook_runtime::ReadView<'_>| (view.seq, view.engine.state_hash());
    let (tx, rx) = crossbeam_channel::bounded(1);
    handle
        .read_at(seq, move |view| {
            let _ = tx.send(read(view));
        })
        .expect("queued");
    rx.recv_timeout(Duration::from_secs(10)).expect("read")
}

/// A seeded flow: holders funded, orders on both sides that partly cross.
fn flow(handle: &RuntimeHandle, seed: u64, orders: usize) {
    let mut accounts: Vec<AccountId> = Vec::new();
    for _ in 0..3 {
        let created = handle
            .apply_blocking(Command::CreateHolder)
            .expect("running");
        let account = created
            .result
            .ok()
            .and_then(|a| a.account)
            .expect("account");
        for currency in [0, 2] {
            let currency = CurrencyId(currency);
            let amount = 1_000_000_000_000_000;
            let deposit = Command::Deposit {
                account,
                currency,
                amount,
            };
            handle.apply_blocking(deposit).expect("running");
        }
        accounts.push(account);
    }
    let mut x = seed | 1;
    for _ in 0..orders {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let account = accounts[(x % 3) as usize];
        let side = if x & 8 == 0 { Side::Buy } else { Side::Sell };
        let price = Price(1_000_000 + ((x >> 8) % 20) as i64 * 1_000);
        let order = NewOrder::limit(account, InstrumentId(0), side, price, Qty(10_000));
        handle
            .apply_blocking(Command::PlaceOrder(order))
            .expect("running");
    }
}

#[test]
fn a_follower_reaches_the_leaders_state_and_takes_no_commands() {
    let stored = Arc::new(Stored::default());
    let leader = leader(&stored, T0);
    let follower = follower();
    let (lead, follow) = (leader.handle(), follower.handle());
    lead.set_checkpoint_every(50);
    follow.set_checkpoint_every(50);
    flow(&lead, 7, 200);
    assert!(follow.is_following() && !lead.is_following());
    assert_eq!(
        follow.submit(Command::CreateHolder, |_| {}).err(),
        Some(RuntimeError::NotLeader)
    );
    // Handed over in uneven pieces, as a tail reads them.
    let entries = stored.after(0);
    for piece in entries.chunks(37) {
        follow.replicate(piece.to_vec()).expect("following");
    }
    eventually("the follower applied the log", || {
        follow.last_sequenced() == lead.last_sequenced()
    });
    let (seq, hash) = state(&lead);
    assert_eq!(seq, stored.len() as u64);
    assert_eq!(
        state(&follow),
        (seq, hash),
        "same state at the same command"
    );
    assert_eq!(follow.stats().divergences, 0);
}

#[test]
fn a_command_out_of_sequence_stops_a_follower() {
    let stored = Arc::new(Stored::default());
    let leader = leader(&stored, T0);
    flow(&leader.handle(), 3, 5);
    let follower = follower();
    let follow = follower.handle();
    let mut entries = stored.after(0);
    entries.remove(2);
    follow.replicate(entries).expect("queued");
    eventually("the follower stopped", || {
        follow.replicate(stored.after(5)).is_err()
    });
}

#[test]
fn a_follower_stopped_with_a_full_pipeline_refuses_more_commands_at_once() {
    let stored = Arc::new(Stored::default());
    let leader = leader(&stored, T0);
    flow(&leader.handle(), 5, 80);
    let follower = follower();
    let follow = follower.handle();
    let mut entries = stored.after(0);
    entries.remove(2);
    assert!(entries.len() > 64, "more than the pipeline holds");
    follow.replicate(entries).expect("queued");
    // The out-of-step batch is never finished, so the pipeline stays full: the next
    // hand-over must learn that the follower stopped rather than wait for room.
    let (tx, answered) = crossbeam_channel::bounded(1);
    let rest = stored.after(stored.len() as u64 - 1);
    std::thread::spawn(move || {
        let _ = tx.send(follow.replicate(rest));
    });
    let answer = answered
        .recv_timeout(Duration::from_secs(10))
        .expect("answered, not waiting for ever");
    assert_eq!(answer, Err(RuntimeError::Stopped));
}

#[test]
fn a_new_leader_continues_the_numbers_and_the_old_one_steps_down() {
    let stored = Arc::new(Stored::default());
    let old = leader(&stored, T0);
    let successor = follower();
    let (old_handle, new_handle) = (old.handle(), successor.handle());
    flow(&old_handle, 11, 50);
    new_handle.replicate(stored.after(0)).expect("following");
    eventually("caught up", || {
        new_handle.last_sequenced() == Some(stored.len() as u64)
    });
    let taken_over_at = stored.len() as u64;
    new_handle.lead(Writer::open(&stored)).expect("running");
    eventually("leading", || !new_handle.is_following());
    let first = new_handle
        .apply_blocking(Command::CreateHolder)
        .expect("taken");
    assert_eq!(first.seq, taken_over_at + 1, "numbers continue the log");

    // The old leader's next batch is fenced: dropped, unanswered, never applied.
    let refused = old_handle.apply_blocking(Command::CreateHolder);
    assert_eq!(refused.err(), Some(RuntimeError::Stopped), "reply dropped");
    eventually("the old leader follows", || old_handle.is_following());
    assert_eq!(
        old_handle.submit(Command::CreateHolder, |_| {}).err(),
        Some(RuntimeError::NotLeader)
    );
    assert_eq!(state(&old_handle).0, taken_over_at);
    assert_eq!(old_handle.stats().in_flight, 0, "its admission given back");
    // Following from where it stopped, it reaches the new leader's state.
    old_handle
        .replicate(stored.after(taken_over_at))
        .expect("following");
    eventually("caught up", || {
        old_handle.last_sequenced() == new_handle.last_sequenced()
    });
    assert_eq!(state(&old_handle), state(&new_handle));
}

#[test]
fn stepping_down_during_an_outage_gives_the_batch_up() {
    let stored = Arc::new(Stored::default());
    let runtime = leader(&stored, T0);
    let handle = runtime.handle();
    handle
        .apply_blocking(Command::CreateHolder)
        .expect("stored");
    stored.down.store(true, Ordering::Release);
    let (tx, answered) = crossbeam_channel::bounded(1);
    handle
        .submit(Command::CreateHolder, move |o| {
            let _ = tx.send(o);
        })
        .expect("admitted");
    eventually("the outage is seen", || handle.stats().log_unavailable);
    handle.follow().expect("running");
    eventually("following", || handle.is_following());
    assert!(answered.recv_timeout(Duration::from_secs(5)).is_err());
    let stats = handle.stats();
    assert!(!stats.log_unavailable && stats.in_flight == 0, "{stats:?}");
    assert_eq!(stored.len(), 1, "nothing stored by the deposed node");
    stored.down.store(false, Ordering::Release);
    assert_eq!(
        handle.submit(Command::CreateHolder, |_| {}).err(),
        Some(RuntimeError::NotLeader)
    );
}
