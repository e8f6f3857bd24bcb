//! A session's account feed: the followed accounts' live orders and balances as a snapshot
//! where the feed starts, then every update of one of their orders with its record as it
//! stands after the event and the balances the update moved (the `ACCOUNT_HISTORY`
//! contract), as the runtime's market stage publishes them from market data's own
//! records. Polled into the caller's array like the market feed.

use std::collections::VecDeque;

use matchbook::market::orders::OrderRecord;
use matchbook::reference::ReferenceData;
use matchbook::runtime::Subscription;
use matchbook::runtime::{AccountChange, AccountUpdate, BalanceMove, FeedBatch, ReadView};
use matchbook::{AccountId, CancelReason, CurrencyId};

use crate::boundary::{fail, guard, hand_out, list, out};
use crate::history::{MbOrderRecord, MbTrade};
use crate::market_feed::take_batches;
use crate::query::MbBalance;
use crate::runtime::MbSession;
use crate::status::MbStatus;

/// What an `mb_account_update` reports.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbAccountUpdateKind {
    /// Snapshot: an order live where the feed starts (`order`).
    OpenOrder = 0,
    /// Snapshot: a balance where the feed starts (`balance`); the snapshot ends with the
    /// last account's balances.
    Balance = 1,
    /// An order was accepted (`order`; `moves` what it reserved).
    OrderCreated = 2,
    /// The order now rests on its book (`order`).
    OrderBooked = 3,
    /// The order's price or amount was amended (`order`; `moves` the reservation).
    OrderAmended = 4,
    /// The order filled (`order`, `trade`, `fee`, `maker`; `moves` what it paid and got).
    TradeSettled = 5,
    /// The order ended before filling in full (`order`, `reason`, `refusal`; `moves` what
    /// it released).
    OrderClosed = 6,
    /// A stop order's trigger fired (`order`; `moves` what it reserved).
    StopTriggered = 7,
    /// A trailing stop's trigger moved (`order`).
    TriggerMoved = 8,
    /// A funding payment (`instrument`, `position_id`, `funding_rate`, `mark_price`,
    /// `payment`; `moves` the balance it changed).
    FundingPaid = 9,
}

/// Why an order ended (`MB_ACCOUNT_UPDATE_KIND_ORDER_CLOSED`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbCancelReason {
    /// Not an ended order.
    None = 0,
    /// Cancelled by its owner (or an operator on its behalf).
    Requested = 1,
    /// The unfilled rest of an immediate-or-cancel or market order.
    Unfilled = 2,
    /// Self-trade prevention.
    SelfTrade = 3,
    /// Its good-till-time passed.
    Expired = 4,
    /// A fill-or-kill order could not fill in full.
    FillOrKillUnfilled = 5,
    /// A post-only order would have taken.
    PostOnlyWouldTake = 6,
    /// Its account was closed.
    AccountClosed = 7,
    /// Its market was closed.
    InstrumentClosed = 8,
    /// The account's dead-man switch fired.
    CancelAllAfter = 9,
    /// Refused when its trigger fired (`refusal` says why).
    TriggerRefused = 10,
    /// Its one-cancels-the-other peer or bracket entry ended it.
    ContingentCancelled = 11,
}

impl From<CancelReason> for MbCancelReason {
    fn from(reason: CancelReason) -> Self {
        match reason {
            CancelReason::Requested => Self::Requested,
            CancelReason::Unfilled => Self::Unfilled,
            CancelReason::SelfTrade => Self::SelfTrade,
            CancelReason::Expired => Self::Expired,
            CancelReason::FillOrKillUnfilled => Self::FillOrKillUnfilled,
            CancelReason::PostOnlyWouldTake => Self::PostOnlyWouldTake,
            CancelReason::AccountClosed => Self::AccountClosed,
            CancelReason::InstrumentClosed => Self::InstrumentClosed,
            CancelReason::CancelAllAfter => Self::CancelAllAfter,
            CancelReason::TriggerRefused(_) => Self::TriggerRefused,
            CancelReason::ContingentCancelled => Self::ContingentCancelled,
        }
    }
}

/// Bits of `mb_account_update.moved`: which of its `moves` hold a balance.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbBalanceMove {
    /// `moves[0]`: reserved by the order (or its amend).
    Locked = 0,
    /// `moves[1]`: released by the ended order.
    Unlocked = 1,
    /// `moves[2]`: paid by the fill.
    Spent = 2,
    /// `moves[3]`: received by the fill or the funding payment.
    Credited = 3,
    /// `moves[4]`: taken by the funding payment.
    Deducted = 4,
}

/// One message of the account feed. Fields a kind does not use are zero.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbAccountUpdate {
    /// The event's sequence number (a snapshot: the last event before it).
    pub seq: u64,
    /// The event's time (a snapshot: 0).
    pub time_ns: i64,
    /// An `mb_account_update_kind`.
    pub kind: u32,
    /// The account.
    pub account: u32,
    /// The order as it stands after the event.
    pub order: MbOrderRecord,
    /// `MB_ACCOUNT_UPDATE_KIND_TRADE_SETTLED`: the trade.
    pub trade: MbTrade,
    /// The fee this side of the trade paid, balance units of what it received.
    pub fee: i64,
    /// 1 when this side of the trade rested on the book.
    pub maker: u8,
    /// An `mb_cancel_reason`.
    pub reason: u32,
    /// `MB_CANCEL_REASON_TRIGGER_REFUSED` and refusals: the `mb_status` of the refusal.
    pub refusal: i32,
    /// A funding payment's market.
    pub instrument: u16,
    /// A funding payment's position.
    pub position_id: u64,
    /// A funding payment's rate (8 decimal places).
    pub funding_rate: i64,
    /// A funding payment's mark price in ticks.
    pub mark_price: i64,
    /// A funding payment (negative: paid by the account), balance units of the quote.
    pub payment: i64,
    /// `MB_ACCOUNT_UPDATE_KIND_BALANCE`: the balance.
    pub balance: MbBalance,
    /// Bit `1 << b` set when `moves[b]` (`b` an `mb_balance_move`) holds a balance after
    /// the update.
    pub moved: u32,
    /// The balances the update moved, as they stand after it.
    pub moves: [MbBalance; 5],
}

/// Batches a session's account feed may fall behind by before it is dropped.
const FEED_CAPACITY: usize = 65_536;

const NO_BALANCE: MbBalance = MbBalance {
    currency: 0,
    scale: 0,
    available: 0,
    locked: 0,
};

fn message(
    kind: MbAccountUpdateKind,
    account: AccountId,
    seq: u64,
    time_ns: i64,
) -> MbAccountUpdate {
    MbAccountUpdate {
        seq,
        time_ns,
        kind: kind as u32,
        account: account.0,
        order: MbOrderRecord::default(),
        trade: MbTrade::default(),
        fee: 0,
        maker: 0,
        reason: MbCancelReason::None as u32,
        refusal: 0,
        instrument: 0,
        position_id: 0,
        funding_rate: 0,
        mark_price: 0,
        payment: 0,
        balance: NO_BALANCE,
        moved: 0,
        moves: [NO_BALANCE; 5],
    }
}

/// The live orders and balances of `accounts` as of `view`, as snapshot messages.
fn snapshot(
    view: &ReadView<'_>,
    accounts: &[AccountId],
    reference: &ReferenceData,
) -> Result<VecDeque<MbAccountUpdate>, MbStatus> {
    if !view.market.is_on() {
        return Err(fail(
            MbStatus::InvalidArgument,
            "runtime created without market data",
        ));
    }
    let mut out = VecDeque::new();
    for &account in accounts {
        let balances =
            (view.engine.account(account)).map_err(|e| fail(MbStatus::from(e), e.to_string()))?;
        for order in view.engine.open_orders(account) {
            if let Some(record) = view.market.orders().get(account, order.handle().id) {
                out.push_back(MbAccountUpdate {
                    order: MbOrderRecord::from(record),
                    ..message(MbAccountUpdateKind::OpenOrder, account, view.event_seq, 0)
                });
            }
        }
        for (i, b) in balances.dense_balances().iter().enumerate() {
            let currency = CurrencyId(i as u16);
            let balance = MbBalance {
                currency: currency.0,
                scale: reference.scale(currency),
                available: b.available,
                locked: b.locked,
            };
            out.push_back(MbAccountUpdate {
                balance,
                ..message(MbAccountUpdateKind::Balance, account, view.event_seq, 0)
            });
        }
    }
    Ok(out)
}

/// The C message of one update.
fn message_of(update: &AccountUpdate, reference: &ReferenceData) -> MbAccountUpdate {
    let kind = match update.change {
        AccountChange::OrderCreated { .. } => MbAccountUpdateKind::OrderCreated,
        AccountChange::OrderBooked => MbAccountUpdateKind::OrderBooked,
        AccountChange::OrderAmended => MbAccountUpdateKind::OrderAmended,
        AccountChange::TradeSettled { .. } => MbAccountUpdateKind::TradeSettled,
        AccountChange::OrderClosed { .. } => MbAccountUpdateKind::OrderClosed,
        AccountChange::StopTriggered => MbAccountUpdateKind::StopTriggered,
        AccountChange::TriggerMoved => MbAccountUpdateKind::TriggerMoved,
        AccountChange::FundingPaid { .. } => MbAccountUpdateKind::FundingPaid,
    };
    let mut m = message(kind, update.account, update.seq, update.time.0);
    if let Some(order) = &update.order {
        m.order = MbOrderRecord::from(order as &OrderRecord);
    }
    match update.change {
        AccountChange::TradeSettled { trade, fee, maker } => {
            m.trade = MbTrade::from(&trade);
            m.fee = fee;
            m.maker = u8::from(maker);
        }
        AccountChange::OrderClosed { reason } => {
            m.reason = MbCancelReason::from(reason) as u32;
            m.refusal = reason.refusal().map_or(0, |e| MbStatus::from(e) as i32);
        }
        AccountChange::FundingPaid {
            instrument,
            position_id,
            rate,
            mark,
            payment,
        } => {
            m.instrument = instrument.0;
            m.position_id = position_id;
            m.funding_rate = rate;
            m.mark_price = mark.0;
            m.payment = payment;
        }
        _ => {}
    }
    let moves = &update.moves;
    for (bit, moved) in [
        moves.locked,
        moves.unlocked,
        moves.spent,
        moves.credited,
        moves.deducted,
    ]
    .into_iter()
    .enumerate()
    {
        if let Some(BalanceMove {
            currency,
            available,
            locked,
        }) = moved
        {
            m.moved |= 1 << bit;
            m.moves[bit] = MbBalance {
                currency: currency.0,
                scale: reference.scale(currency),
                available,
                locked,
            };
        }
    }
    m
}

/// A session's account feed and what it has not handed out yet.
pub(crate) struct AccountFeed {
    subscription: Subscription<FeedBatch>,
    accounts: Vec<AccountId>,
    /// The balance scales the messages carry.
    reference: ReferenceData,
    pending: VecDeque<MbAccountUpdate>,
}

impl AccountFeed {
    fn start(session: &MbSession, accounts: Vec<AccountId>) -> Result<Self, MbStatus> {
        let wanted = accounts.clone();
        let read = move |view: &ReadView<'_>| {
            let reference = ReferenceData::of(view.engine);
            snapshot(view, &wanted, &reference).map(|pending| (reference, pending))
        };
        let (subscription, read) = (session.handle())
            .subscribe_feed(FEED_CAPACITY, read)
            .map_err(|e| fail(MbStatus::from(e), e.to_string()))?;
        let (reference, pending) = read?;
        Ok(Self {
            subscription,
            accounts,
            reference,
            pending,
        })
    }

    /// Takes every batch published so far; a feed dropped for lagging is reported.
    fn take_published(&mut self) -> Result<(), MbStatus> {
        let (pending, accounts, reference) = (&mut self.pending, &self.accounts, &self.reference);
        take_batches(&self.subscription, "account", |batch| {
            let followed = (batch.accounts.iter()).filter(|(_, u)| accounts.contains(&u.account));
            for (_, update) in followed {
                pending.push_back(message_of(update, reference));
            }
        })
    }
}

/// Starts (or restarts) the session's account feed for the `count` accounts at
/// `accounts`: their live orders and balances as a snapshot, then every update of their
/// orders and the balances each moved, polled with `mb_session_poll_accounts`. Needs a
/// runtime with market data (the records are its): else `MB_STATUS_INVALID_ARGUMENT`.
/// An unknown account: `MB_STATUS_UNKNOWN_ACCOUNT`, and the session keeps the feed it had.
/// A session that does not poll for more than 65,536 published batches loses the feed
/// (`MB_STATUS_STOPPED` at the next poll; subscribe again for a fresh snapshot).
///
/// # Safety
/// `session` live and used by this thread only; `accounts` NULL (with `count` 0) or
/// `count` readable elements.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_subscribe_accounts(
    session: *mut MbSession,
    accounts: *const u32,
    count: usize,
) -> MbStatus {
    guard(|| {
        let s = crate::runtime::session_mut(session)?;
        // SAFETY: `accounts` has `count` readable elements per the contract above.
        let wanted = unsafe { list(accounts, count, "accounts")? };
        let wanted = wanted.iter().map(|&a| AccountId(a)).collect();
        s.accounts = Some(AccountFeed::start(s, wanted)?);
        Ok(())
    })
}

/// Moves up to `capacity` account-feed messages, oldest first, into `updates` and writes
/// how many (`*len_out` equal to `capacity`: more may wait; poll again).
/// `MB_STATUS_INVALID_ARGUMENT` when the session has no account feed.
///
/// # Safety
/// `session` live and used by this thread only; `updates` NULL (with `capacity` 0) or
/// `capacity` writable elements; `len_out` writable.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_poll_accounts(
    session: *mut MbSession,
    updates: *mut MbAccountUpdate,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    guard(|| {
        let s = crate::runtime::session_mut(session)?;
        let feed = (s.accounts.as_mut())
            .ok_or_else(|| fail(MbStatus::InvalidArgument, "the session has no account feed"))?;
        let len = out(len_out, "len_out")?;
        *len = 0;
        if let Err(stopped) = feed.take_published() {
            s.accounts = None;
            return Err(stopped);
        }
        hand_out(&mut feed.pending, updates, capacity, len)
    })
}
