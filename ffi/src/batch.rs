//! `mb_engine_submit_batch`: many commands in one call. A trading system that holds a run
//! of commands (a replay, a strategy's order burst, a gateway's batch) pays the boundary
//! once per batch instead of once per command, and while one command is applied the next
//! one's lines (the order it names, its account's balances) are fetched ahead
//! (`matchbook::prefetch`), which a one-call-per-command caller cannot be given.

use crate::boundary::{guard, list, list_mut, out};
use crate::command::{MbCommand, MbCommandKind, MbResult, to_command};
use crate::engine::{MbEngine, engine_mut};
use crate::status::MbStatus;

/// Applies `count` commands in order, command `i` at `times_ns[i]`, as `count` calls of
/// `mb_engine_submit` would: `statuses[i]` is the status that call would return and
/// `results[i]` the result it would write (all zero for a command refused outright).
/// Returns `MB_STATUS_OK` once every command was applied or refused on its own; a NULL
/// array (with `count > 0`) or a poisoned engine refuses the whole call, and a data
/// directory that fails stops the batch at that command (`MB_STATUS_STORAGE`, also in its
/// status). `*submitted_out` counts the statuses written: the commands after them were
/// not looked at.
///
/// # Safety
/// `engine` live; `times_ns`, `commands` readable and `results`, `statuses` writable for
/// `count` elements each (any pointer when `count` is 0), the four arrays not
/// overlapping; `submitted_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_submit_batch(
    engine: *mut MbEngine,
    times_ns: *const i64,
    commands: *const MbCommand,
    count: usize,
    results: *mut MbResult,
    statuses: *mut MbStatus,
    submitted_out: *mut usize,
) -> MbStatus {
    guard(|| {
        let e = engine_mut(engine)?;
        let submitted = out(submitted_out, "submitted_out")?;
        *submitted = 0;
        if count == 0 {
            return Ok(());
        }
        // SAFETY: each valid for `count` elements and not overlapping per the contract;
        // caller memory, so nothing Rust owns aliases them.
        let (times, commands, results, statuses) = unsafe {
            (
                list(times_ns, count, "times_ns")?,
                list(commands, count, "commands")?,
                list_mut(results, count, "results")?,
                list_mut(statuses, count, "statuses")?,
            )
        };
        submit_each(e, times, commands, results, statuses, submitted)
    })
}

/// The batch's loop: the next command's lines hinted before the current one is applied.
fn submit_each(
    e: &mut MbEngine,
    times: &[i64],
    commands: &[MbCommand],
    results: &mut [MbResult],
    statuses: &mut [MbStatus],
    submitted: &mut usize,
) -> Result<(), MbStatus> {
    for (i, command) in commands.iter().enumerate() {
        if let Some(next) = commands.get(i + 1) {
            look_ahead(e, next);
        }
        let outcome = to_command(command).and_then(|c| e.submit_command(&c, times[i]));
        let (result, status) = match outcome {
            Ok((result, status)) => (result, status.err().unwrap_or(MbStatus::Ok)),
            Err(status) => (MbResult::default(), status),
        };
        results[i] = result;
        statuses[i] = status;
        *submitted = i + 1;
        if status == MbStatus::Storage {
            return Err(status);
        }
    }
    Ok(())
}

/// Hints the lines `next` will read, from its fields alone: translating it ahead (a
/// command of a few hundred bytes, then moved into place) cost more than the hint saved.
fn look_ahead(e: &MbEngine, next: &MbCommand) {
    let engine = &e.host.engine;
    if !engine.hints_pay() {
        return;
    }
    let account = matchbook::AccountId(next.account);
    let ahead = match next.kind {
        k if k == MbCommandKind::AmendOrder as u32 || k == MbCommandKind::CancelOrder as u32 => {
            engine.lookahead_order(account, next.order.into())
        }
        k if k == MbCommandKind::PlaceOrder as u32 => engine.lookahead_new_order(account),
        _ => return,
    };
    ahead.hint();
}
