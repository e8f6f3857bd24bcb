//! The account's dead-man switch, as HTTP's `cancel-all-after` and the stream's
//! `CANCEL_ALL_AFTER` both set it: a timeout in milliseconds (0 turns it off), answered
//! with when it will fire.

use matchbook::{AccountId, Command, Event, Timestamp};

use crate::error::ApiError;
use crate::format::iso_ms;
use crate::state::Shared;

/// What setting the switch did: the timeout, the deadline (none: off) and when.
pub struct SwitchSet {
    /// Milliseconds.
    pub timeout: u64,
    /// When it runs out.
    pub cancel_at: Option<String>,
    /// When it was set (the command's time).
    pub time: Timestamp,
}

/// Sets `account`'s switch to `millis` (0: off): a command like any other, journalled
/// and answered once applied. An out-of-range timeout is 400 `INVALID_MESSAGE_FORMAT`.
pub async fn set_cancel_all_after(
    state: &Shared,
    account: AccountId,
    millis: u64,
) -> Result<SwitchSet, ApiError> {
    let timeout = (millis.checked_mul(1_000_000)).ok_or(ApiError::bad("INVALID_MESSAGE_FORMAT"))?;
    let outcome = state
        .submit(Command::SetCancelAllAfter { account, timeout })
        .await?;
    outcome.result?;
    let cancel_at = (outcome.events.iter()).find_map(|r| match r.event {
        Event::CancelAllAfterSet { deadline, .. } => deadline.map(iso_ms),
        _ => None,
    });
    Ok(SwitchSet {
        timeout: millis,
        cancel_at,
        time: outcome.time,
    })
}

/// A timeout in milliseconds from its text (a JSON number's or a string's): whole and
/// not negative, else 400 `INVALID_MESSAGE_FORMAT`. REST's body and the stream's
/// `CANCEL_ALL_AFTER` read it so.
pub fn timeout_millis(text: Option<&str>) -> Result<u64, ApiError> {
    (text.and_then(|text| text.parse::<u64>().ok())).ok_or(ApiError::bad("INVALID_MESSAGE_FORMAT"))
}
