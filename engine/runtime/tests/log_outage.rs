//! A command log that loses its quorum (as a replicated log does) does not stop the
//! runtime: the batch being committed is retried as it is, ingress refuses new commands
//! with `LogUnavailable` meanwhile, and once the log stores again the waiting command is
//! applied and answered, stored exactly once, and new commands are taken again, all
//! without a restart. A log whose failures are not retryable still stops the runtime, the
//! host is told why, and callers are told so even when the queue it stopped reading was
//! full; a stage that ends (a panic) is reported as a failure too, a requested stop not.

#![warn(clippy::too_many_lines)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use matchbook_config::demo;
use matchbook_core::{Command, Engine, Timestamp};
use matchbook_market::MarketData;
use matchbook_runtime::{ManualClock, Outcome, Runtime, RuntimeError};
use matchbook_store::journal::CommandLog;

const T0: Timestamp = Timestamp(1_767_225_600_000_000_000);

/// What the log under test has stored, and whether it can store now.
#[derive(Default)]
struct Shared {
    down: AtomicBool,
    stored: Mutex<Vec<u64>>,
    /// While set, a failing commit first waits for a message on it (or its sender gone).
    gate: Mutex<Option<crossbeam_channel::Receiver<()>>>,
}

/// A log that fails its commits while `down`, retryably when `retryable`.
struct OutageLog {
    shared: Arc<Shared>,
    retryable: bool,
    next: u64,
    pending: Vec<u64>,
}

impl CommandLog for OutageLog {
    fn append(&mut self, _time: Timestamp, _command: &Command) -> std::io::Result<u64> {
        self.next += 1;
        self.pending.push(self.next);
        Ok(self.next)
    }
    fn commit(&mut self) -> std::io::Result<()> {
        if self.shared.down.load(Ordering::Acquire) {
            let gate = self.shared.gate.lock().expect("not poisoned").take();
            if let Some(gate) = gate {
                let _ = gate.recv();
            }
            return Err(std::io::Error::other("no quorum"));
        }
        let batch = std::mem::take(&mut self.pending);
        self.shared
            .stored
            .lock()
            .expect("not poisoned")
            .extend(batch);
        Ok(())
    }
    fn retry_after(&self, _error: &std::io::Error) -> Option<Duration> {
        self.retryable.then_some(Duration::from_millis(1))
    }
}

fn start(retryable: bool) -> (Runtime, Arc<Shared>) {
    let engine = Engine::new(demo::config()).expect("demo config");
    let market = MarketData::new(engine.instruments().len(), Default::default());
    let shared = Arc::new(Shared::default());
    let log = OutageLog {
        shared: shared.clone(),
        retryable,
        next: 0,
        pending: Vec::new(),
    };
    let clock = Arc::new(ManualClock::at(T0));
    let runtime =
        Runtime::start_durable(engine, market, clock, 64, Box::new(log), None).expect("threads");
    (runtime, shared)
}

/// Waits (bounded) until `condition` holds.
fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "{what}: not within 10 s");
        std::thread::yield_now();
    }
}

#[test]
fn commands_wait_out_a_retryable_outage_and_are_stored_once() {
    let (runtime, shared) = start(true);
    let handle = runtime.handle();
    handle
        .apply_blocking(Command::CreateHolder)
        .expect("stored");
    shared.down.store(true, Ordering::Release);
    let (tx, answered) = crossbeam_channel::bounded::<Outcome>(1);
    handle
        .submit(Command::CreateHolder, move |o| {
            let _ = tx.send(o);
        })
        .expect("admitted before the outage is known");
    eventually("the outage is seen", || handle.stats().log_unavailable);
    assert_eq!(
        handle.submit(Command::CreateHolder, |_| {}).err(),
        Some(RuntimeError::LogUnavailable),
        "new commands are refused"
    );
    assert!(
        answered.try_recv().is_err(),
        "nothing answered before it is stored"
    );
    shared.down.store(false, Ordering::Release);
    let outcome = answered
        .recv_timeout(Duration::from_secs(10))
        .expect("answered once the log stores again");
    assert!(outcome.result.is_ok(), "{outcome:?}");
    assert_eq!(outcome.seq, 2);
    let third = handle
        .apply_blocking(Command::CreateHolder)
        .expect("taken again");
    assert_eq!(third.seq, 3);
    assert_eq!(*shared.stored.lock().expect("not poisoned"), [1, 2, 3]);
    assert!(!handle.stats().log_unavailable);
    assert_eq!(handle.failure(), None, "an outage waited out is no failure");
    let (engine, _) = runtime.shutdown().expect("stops");
    let before = Engine::new(demo::config())
        .expect("demo config")
        .holder_count();
    assert_eq!(
        engine.holder_count(),
        before + 3,
        "each command applied once"
    );
}

#[test]
fn a_failure_that_cannot_be_retried_still_stops_the_runtime() {
    let (runtime, shared) = start(false);
    let handle = runtime.handle();
    handle
        .apply_blocking(Command::CreateHolder)
        .expect("stored");
    assert_eq!(handle.failure(), None);
    shared.down.store(true, Ordering::Release);
    let refused = handle.apply_blocking(Command::CreateHolder);
    assert!(refused.is_err(), "{refused:?}");
    eventually("the runtime stopped", || {
        matches!(
            handle.submit(Command::CreateHolder, |_| {}),
            Err(RuntimeError::Stopped)
        )
    });
    assert_eq!(*shared.stored.lock().expect("not poisoned"), [1]);
    // The host is told why, and after which command nothing was acknowledged.
    assert_eq!(
        handle.failure().as_deref(),
        Some("the command log failed after command 1: no quorum")
    );
}

#[test]
fn a_runtime_stopped_with_a_full_queue_says_stopped_not_busy() {
    let (runtime, shared) = start(false);
    let handle = runtime.handle();
    let (release, gate) = crossbeam_channel::bounded::<()>(1);
    *shared.gate.lock().expect("not poisoned") = Some(gate);
    shared.down.store(true, Ordering::Release);
    handle
        .submit(Command::CreateHolder, |_| {})
        .expect("admitted");
    // The sequencer waits in its failing commit while callers fill the pipeline.
    let mut admitted = 1;
    while handle.submit(Command::CreateHolder, |_| {}).is_ok() {
        admitted += 1;
    }
    assert_eq!(admitted, 64, "admitted up to the limit");
    release.send(()).expect("the commit is waiting");
    eventually("the runtime stopped", || {
        matches!(
            handle.submit(Command::CreateHolder, |_| {}),
            Err(RuntimeError::Stopped)
        )
    });
    assert_eq!(
        handle.apply_blocking(Command::CreateHolder).err(),
        Some(RuntimeError::Stopped)
    );
    assert!(shared.stored.lock().expect("not poisoned").is_empty());
}

#[test]
fn a_stop_during_an_outage_ends_the_retries() {
    let (runtime, shared) = start(true);
    let handle = runtime.handle();
    shared.down.store(true, Ordering::Release);
    handle
        .submit(Command::CreateHolder, |_| {})
        .expect("admitted");
    eventually("the outage is seen", || handle.stats().log_unavailable);
    let (done, finished) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        let _ = done.send(runtime.shutdown().is_ok());
    });
    finished
        .recv_timeout(Duration::from_secs(10))
        .expect("the stop ends the retries");
    assert!(shared.stored.lock().expect("not poisoned").is_empty());
}

/// A log whose append panics, as a bug in a stage would.
struct PanickingLog;

impl CommandLog for PanickingLog {
    fn append(&mut self, _time: Timestamp, _command: &Command) -> std::io::Result<u64> {
        panic!("a bug in the log");
    }
    fn commit(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_stage_that_ends_is_a_failure_and_a_requested_stop_is_not() {
    let engine = Engine::new(demo::config()).expect("demo config");
    let market = MarketData::new(engine.instruments().len(), Default::default());
    let clock = Arc::new(ManualClock::at(T0));
    let runtime = Runtime::start_durable(engine, market, clock, 64, Box::new(PanickingLog), None)
        .expect("threads");
    let handle = runtime.handle();
    assert_eq!(handle.failure(), None);
    let refused = handle.apply_blocking(Command::CreateHolder);
    assert!(refused.is_err(), "{refused:?}");
    eventually("the failure is seen", || handle.failure().is_some());
    assert_eq!(
        handle.failure().as_deref(),
        Some("the engine runtime stopped unexpectedly after command 0")
    );

    let (runtime, _) = start(false);
    let handle = runtime.handle();
    handle
        .apply_blocking(Command::CreateHolder)
        .expect("stored");
    runtime.shutdown().expect("stops");
    assert_eq!(handle.failure(), None, "asked to stop");
}
