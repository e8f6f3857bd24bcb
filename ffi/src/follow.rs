//! A session following accounts: every event that concerns them, whoever's command caused
//! it (a fill of a resting order by another session's taker, a funding payment, a cancel by
//! an operator), read from the runtime's published batches. Events that name no account
//! (an order booked, a stop triggered) are matched through the live orders of the
//! followed accounts, seeded from their open orders when following starts.

use std::collections::HashSet;

use matchbook::runtime::Subscription;
use matchbook::{AccountId, Event, EventRecord};

use crate::boundary::{fail, guard, list};
use crate::event::MbEvent;
use crate::runtime::MbSession;
use crate::status::MbStatus;

/// Batches a follower may fall behind by before its feed is dropped.
const FOLLOW_CAPACITY: usize = 65_536;

/// What a session follows and what it has not handed out yet.
pub(crate) struct Follow {
    subscription: Subscription,
    accounts: HashSet<u32>,
    /// Order numbers of the followed accounts' live orders.
    live: HashSet<u64>,
    pending: Vec<EventRecord>,
}

impl Follow {
    /// Starts following `accounts` on `session`'s runtime.
    fn start(session: &MbSession, accounts: HashSet<u32>) -> Result<Self, MbStatus> {
        let handle = session.handle();
        let subscription = handle
            .subscribe(FOLLOW_CAPACITY)
            .map_err(|e| fail(MbStatus::from(e), e.to_string()))?;
        let wanted: Vec<u32> = accounts.iter().copied().collect();
        // Orders open from before: their later events may name no account.
        let live = handle
            .engine_blocking(move |e| {
                wanted
                    .iter()
                    .flat_map(|&a| e.open_orders(AccountId(a)))
                    .map(|o| o.handle().id)
                    .collect::<HashSet<u64>>()
            })
            .map_err(|e| fail(MbStatus::from(e), e.to_string()))?;
        Ok(Self {
            subscription,
            accounts,
            live,
            pending: Vec::new(),
        })
    }

    fn follows(&self, account: AccountId) -> bool {
        self.accounts.contains(&account.0)
    }

    /// Whether `record` concerns a followed account, keeping the live orders up to date.
    fn concerns(&mut self, record: &EventRecord) -> bool {
        match record.event {
            Event::OrderAccepted(a) if self.follows(a.account) => {
                self.live.insert(a.order.id);
                true
            }
            Event::Trade(t) => {
                for (order, remaining) in
                    [(t.maker, t.maker_remaining), (t.taker, t.taker_remaining)]
                {
                    if remaining.0 == 0 {
                        self.live.remove(&order.id);
                    }
                }
                self.follows(t.maker_account) || self.follows(t.taker_account)
            }
            Event::OrderCancelled { order, account, .. } => {
                self.live.remove(&order.id);
                self.follows(account)
            }
            Event::OrderBooked { order, .. } | Event::StopTriggered { order, .. } => {
                self.live.contains(&order.id)
            }
            Event::TransferCompleted {
                source,
                destination,
                ..
            } => self.follows(source) || self.follows(destination),
            Event::Rejected { account, .. } => account.is_some_and(|a| self.follows(a)),
            Event::HolderCreated { main_account, .. } => self.follows(main_account),
            Event::SubaccountCreated { account, .. }
            | Event::AccountClosed { account }
            | Event::DeriskChanged { account, .. }
            | Event::BlpThresholdSet { account, .. }
            | Event::BalanceChanged { account, .. }
            | Event::StpModeSet { account, .. }
            | Event::OrderAmended { account, .. }
            | Event::PositionChanged { account, .. }
            | Event::FundingPaid { account, .. }
            | Event::CancelAllAfterSet { account, .. } => self.follows(account),
            _ => false,
        }
    }

    /// Takes every batch published so far; a feed dropped for lagging is reported.
    fn take_published(&mut self) -> Result<(), MbStatus> {
        loop {
            match self.subscription.try_recv() {
                Ok(Some(batch)) => {
                    for record in &batch.events {
                        if self.concerns(record) {
                            self.pending.push(*record);
                        }
                    }
                }
                Ok(None) => return Ok(()),
                Err(reason) => {
                    return Err(fail(
                        MbStatus::Stopped,
                        format!("the followed events ended: {reason}; follow again"),
                    ));
                }
            }
        }
    }
}

/// Follows the `len` accounts listed (replacing what the session followed before; `len`
/// 0 stops following): from now on `mb_session_poll_followed` hands out every event that
/// concerns them, whoever's command caused it. A session that does not poll for more than
/// 65,536 published batches loses the feed (`MB_STATUS_STOPPED` at the next poll; follow
/// again).
///
/// # Safety
/// `session` live and used by this thread only; `accounts` NULL (with `len` 0) or `len`
/// readable elements.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_follow(
    session: *mut MbSession,
    accounts: *const u32,
    len: usize,
) -> MbStatus {
    guard(|| {
        let s = crate::runtime::session_mut(session)?;
        if len == 0 {
            s.follow = None;
            return Ok(());
        }
        // SAFETY: `len` readable elements per the contract.
        let list = unsafe { list(accounts, len, "accounts")? };
        s.follow = Some(Follow::start(s, list.iter().copied().collect())?);
        Ok(())
    })
}

/// Moves the events concerning the followed accounts since the last poll into `events`,
/// oldest first (all or nothing, as `mb_session_poll_events`): `MB_STATUS_INVALID_ARGUMENT`
/// when the session follows nothing.
///
/// # Safety
/// `session` live and used by this thread only; `events` NULL or `capacity` writable
/// elements; `len_out` writable.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_poll_followed(
    session: *mut MbSession,
    events: *mut MbEvent,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    guard(|| {
        let s = crate::runtime::session_mut(session)?;
        let follow = s
            .follow
            .as_mut()
            .ok_or_else(|| fail(MbStatus::InvalidArgument, "the session follows no account"))?;
        let taken = follow.take_published();
        if taken.is_err() {
            s.follow = None;
            return taken;
        }
        crate::event::drain(&mut follow.pending, events, capacity, len_out)
    })
}
