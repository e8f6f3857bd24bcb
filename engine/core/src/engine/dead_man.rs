//! Dead-man switches (`CANCEL_ALL_AFTER`): per account, a deadline after which every open
//! order of the account is cancelled unless the switch is set again first. They run out
//! as time passes, like good-till-time expiries: at the start of the first command whose
//! time reaches them, earliest deadline first (then lowest account).

use std::collections::{BTreeMap, BTreeSet};

use super::{Applied, Engine};
use crate::command::CancelScope;
use crate::error::EngineError;
use crate::event::{CancelReason, Event, EventSink};
use crate::ids::{AccountId, Timestamp};

/// The armed switches, by account and by deadline.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeadManSwitches {
    by_account: BTreeMap<AccountId, Timestamp>,
    by_deadline: BTreeSet<(Timestamp, AccountId)>,
}

impl DeadManSwitches {
    /// Arms `account`'s switch at `deadline` (`None`: disarms it).
    pub(crate) fn set(&mut self, account: AccountId, deadline: Option<Timestamp>) {
        if let Some(old) = self.by_account.remove(&account) {
            self.by_deadline.remove(&(old, account));
        }
        if let Some(deadline) = deadline {
            self.by_account.insert(account, deadline);
            self.by_deadline.insert((deadline, account));
        }
    }

    /// The earliest deadline, if any switch is armed.
    pub(crate) fn next(&self) -> Option<(Timestamp, AccountId)> {
        self.by_deadline.first().copied()
    }

    /// Every armed switch, by account.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (AccountId, Timestamp)> + '_ {
        self.by_account.iter().map(|(&a, &t)| (a, t))
    }
}

impl Engine {
    pub(super) fn set_cancel_all_after<S: EventSink>(
        &mut self,
        account: AccountId,
        timeout: u64,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        self.accounts.account(account)?;
        let deadline = match timeout {
            0 => None,
            t => {
                let at = i64::try_from(t)
                    .ok()
                    .and_then(|t| self.now.0.checked_add(t))
                    .filter(|&at| at <= crate::limits::TIME_HORIZON.0)
                    .ok_or(EngineError::TimeOutOfRange)?;
                Some(Timestamp(at))
            }
        };
        self.dead_man.set(account, deadline);
        self.emit(sink, Event::CancelAllAfterSet { account, deadline });
        Ok(Applied::default())
    }

    /// Runs out every switch whose deadline has come: the account's open orders are
    /// cancelled, oldest first.
    pub(super) fn run_dead_man_switches<S: EventSink>(&mut self, sink: &mut S) {
        while let Some((at, account)) = self.dead_man.next() {
            if at > self.now {
                return;
            }
            self.dead_man.set(account, None);
            let deadline = None;
            self.emit(sink, Event::CancelAllAfterSet { account, deadline });
            let reason = CancelReason::CancelAllAfter;
            let _ = self.cancel_all_for(account, &CancelScope::All, reason, sink);
        }
    }

    /// The account's dead-man switch deadline, if armed.
    pub fn cancel_all_after(&self, account: AccountId) -> Option<Timestamp> {
        self.dead_man.by_account.get(&account).copied()
    }

    /// The earliest time at which time passing alone changes the engine (a good-till-time
    /// expiry or a dead-man switch), so a host knows when to apply `AdvanceTime`.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        let expiry = self.expiries.first_key_value().map(|(&(at, _), _)| at);
        let switch = self.dead_man.next().map(|(at, _)| at);
        match (expiry, switch) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
