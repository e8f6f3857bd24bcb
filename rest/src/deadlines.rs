//! The deadline keeper: the engine only sees time pass when a command arrives, so a
//! good-till-time order or a dead-man switch (`CANCEL_ALL_AFTER`) would wait for the next
//! command of anyone. This task looks at the next deadline the market stage published (a
//! counter: no read is queued, so clients' reads keep the whole read queue) a few times a
//! second and, once the clock has reached it, submits `AdvanceTime` (journalled like any
//! command, so a replay cancels at the same point).

use std::time::Duration;

use matchbook::Command;
use tokio::sync::watch;

use crate::state::Shared;

/// How often the next deadline is looked at: how late, at most, a deadline is met.
pub const CHECK_EVERY: Duration = Duration::from_millis(100);

/// Runs until `stop` turns true.
pub async fn keep(state: Shared, mut stop: watch::Receiver<bool>) -> std::io::Result<()> {
    let mut every = tokio::time::interval(CHECK_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = stop.wait_for(|stopped| *stopped) => return Ok(()),
        }
        if state
            .runtime
            .next_deadline()
            .is_some_and(|at| at <= state.now())
        {
            // Refused only while the pipeline is full or stopping: the next look retries.
            let _ = state.submit(Command::AdvanceTime).await;
        }
    }
}
