//! The deadline keeper: the engine sees time pass only when a command arrives, so a
//! good-till-time order or a dead-man switch (`SetCancelAllAfter`) would wait for anyone's
//! next command. This thread looks at the next deadline the market stage published (a
//! counter: no read is queued, so hosts' reads keep the whole read queue) every
//! [`CHECK_EVERY`] and, once the node's clock has reached it, submits `AdvanceTime`
//! (journalled like any command, so a replay cancels at the same point). One is in flight
//! at most: a slow pipeline is not handed a second while the first waits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{RecvTimeoutError, Sender};
use matchbook::Command;
use matchbook::runtime::{Clock, RuntimeHandle};

/// How often the next deadline is looked at: how late, at most, a deadline is met (when
/// the pipeline has room).
pub const CHECK_EVERY: Duration = Duration::from_millis(100);

/// The running keeper; dropping it stops the thread.
#[derive(Debug)]
pub(crate) struct DeadlineKeeper {
    /// Dropped to stop the thread (its receiver then disconnects).
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl DeadlineKeeper {
    /// Starts keeping the deadlines of the runtime behind `handle` by `clock`.
    pub(crate) fn start(handle: RuntimeHandle, clock: Arc<dyn Clock>) -> std::io::Result<Self> {
        let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
        let thread = std::thread::Builder::new()
            .name("matchbook-deadlines".into())
            .spawn(move || {
                let in_flight = Arc::new(AtomicBool::new(false));
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(CHECK_EVERY) {
                    let due = handle.next_deadline().is_some_and(|at| at <= clock.now());
                    if due && !in_flight.swap(true, Ordering::AcqRel) {
                        let answered = in_flight.clone();
                        let submitted = handle.submit(Command::AdvanceTime, move |_| {
                            answered.store(false, Ordering::Release);
                        });
                        // Refused (a full pipeline, a follower, a stop): the next look retries.
                        if submitted.is_err() {
                            in_flight.store(false, Ordering::Release);
                        }
                    }
                }
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for DeadlineKeeper {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
