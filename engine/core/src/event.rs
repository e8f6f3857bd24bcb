//! Events: what the engine reports for each command, in order, each stamped with a global
//! sequence number. Events are plain `Copy` values so a sink can hold them without allocating.

use crate::error::EngineError;
use crate::fixed::{Price, Qty};
use crate::ids::{
    AccountId, CurrencyId, HolderId, InstrumentId, OrderRef, Timestamp, TradeId, Uuid,
};
use crate::order::{BracketExits, OrderType, Side, StpMode, TimeInForce, Trail, TriggerRef};
use crate::refdata::InstrumentState;

/// An event with its sequence number and the time of the command that caused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRecord {
    /// Global, gap-free sequence number (1-based).
    pub seq: u64,
    /// Engine time when it happened.
    pub time: Timestamp,
    /// What happened.
    pub event: Event,
}

/// Why an order left the book without filling completely.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CancelReason {
    /// The owner asked.
    Requested,
    /// Immediate-or-cancel or market remainder.
    Unfilled,
    /// Self-trade prevention.
    SelfTrade,
    /// Good-till-time expiry.
    Expired,
    /// A fill-or-kill order (new or a triggered stop) that could not fill completely.
    FillOrKillUnfilled,
    /// A post-only order (new or a triggered stop) that would have taken.
    PostOnlyWouldTake,
    /// Its account was closed.
    AccountClosed,
    /// Its instrument expired or was closed for settlement.
    InstrumentClosed,
    /// Its account's dead-man switch (cancel all after) ran out.
    CancelAllAfter,
    /// A held trigger order that the checks of a new order refused when it fired
    /// (instrument state, price, size, funds, reduce-only), or a bracket's exit refused
    /// when it was placed.
    TriggerRefused(EngineError),
    /// The other leg of its one-cancels-the-other pair filled, fired or ended.
    ContingentCancelled,
}

impl CancelReason {
    /// Its wire spelling (the streams contract's and every adapter's).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Requested => "CANCELLED_BY_USER",
            Self::Unfilled => "UNFILLED_REMAINDER",
            Self::SelfTrade => "SELF_TRADE",
            Self::Expired => "EXPIRED",
            Self::FillOrKillUnfilled => "FILL_OR_KILL_UNFILLED",
            Self::PostOnlyWouldTake => "POST_ONLY_WOULD_TAKE",
            Self::AccountClosed => "ACCOUNT_CLOSED",
            Self::InstrumentClosed => "INSTRUMENT_CLOSED",
            Self::CancelAllAfter => "CANCEL_ALL_AFTER",
            Self::TriggerRefused(_) => "TRIGGER_REFUSED",
            Self::ContingentCancelled => "CONTINGENT_CANCELLED",
        }
    }

    /// The refusal an order ended this way at entry reports to its caller: its time in
    /// force forbade what the book offered.
    pub const fn refusal(self) -> Option<EngineError> {
        match self {
            Self::FillOrKillUnfilled => Some(EngineError::InsufficientLiquidity),
            Self::PostOnlyWouldTake => Some(EngineError::PostOnlyWouldTake),
            _ => None,
        }
    }

    /// The final status of an order that ended this way.
    pub const fn status(self) -> OrderStatus {
        match self {
            Self::FillOrKillUnfilled => OrderStatus::FilledRejected,
            Self::PostOnlyWouldTake => OrderStatus::Rejected(EngineError::PostOnlyWouldTake),
            Self::TriggerRefused(error) => OrderStatus::Rejected(error),
            Self::Requested
            | Self::Unfilled
            | Self::SelfTrade
            | Self::Expired
            | Self::AccountClosed
            | Self::InstrumentClosed
            | Self::CancelAllAfter
            | Self::ContingentCancelled => OrderStatus::Cancelled,
        }
    }
}

/// Status of an order as the spec and its clients spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum OrderStatus {
    /// Live: resting on the book or waiting for its trigger.
    Open,
    /// Filled completely.
    FilledFully,
    /// Ended without filling completely (by request, remainder, self-trade or expiry).
    Cancelled,
    /// A fill-or-kill order that could not fill completely.
    FilledRejected,
    /// Refused by the book for its time in force (post-only that would take): spelled
    /// `FILLED_REJECTED` like a fill-or-kill shortfall, with the code as its reason.
    Rejected(EngineError),
}

impl OrderStatus {
    /// Wire spelling, one of the public exchange's statuses (a partly filled order that was
    /// cancelled reads `FILLED_CLOSED`, which needs the record: see the order history).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Open => "OPEN",
            Self::FilledFully => "FILLED_FULLY",
            Self::Cancelled => "CANCELLED",
            Self::FilledRejected | Self::Rejected(_) => "FILLED_REJECTED",
        }
    }

    /// The refusal code of an order the book refused for its time in force, reported beside
    /// its status (`INSUFFICIENT_LIQUIDITY` for a fill-or-kill, `POST_ONLY_WOULD_TAKE`).
    pub const fn reason(self) -> Option<&'static str> {
        match self {
            Self::FilledRejected => Some(EngineError::InsufficientLiquidity.as_str()),
            Self::Rejected(error) => Some(error.as_str()),
            Self::Open | Self::FilledFully | Self::Cancelled => None,
        }
    }
}

/// A newly accepted order, with every field a consumer needs to build its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AcceptedOrder {
    /// Handle.
    pub order: OrderRef,
    /// Owner.
    pub account: AccountId,
    /// Market.
    pub instrument: InstrumentId,
    /// Side.
    pub side: Side,
    /// Type.
    pub order_type: OrderType,
    /// Time in force.
    pub time_in_force: TimeInForce,
    /// Effective self-trade prevention mode.
    pub stp: StpMode,
    /// Limit (or protection) price.
    pub price: Option<Price>,
    /// Trigger (a trailing order's first one; [`Event::OrderTerms`] follows for an
    /// order with terms beyond this record).
    pub trigger_price: Option<Price>,
    /// Amount.
    pub amount: Qty,
    /// Caller's tracking id.
    pub client_id: Option<Uuid>,
    /// Good-till-time expiry.
    pub expire_at: Option<Timestamp>,
}

/// One execution between a resting (maker) and an incoming (taker) order, at the maker's price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Trade {
    /// Trade number.
    pub id: TradeId,
    /// Market.
    pub instrument: InstrumentId,
    /// Execution price (the maker's).
    pub price: Price,
    /// Executed amount.
    pub amount: Qty,
    /// Side of the taker.
    pub taker_side: Side,
    /// Resting order.
    pub maker: OrderRef,
    /// Its owner.
    pub maker_account: AccountId,
    /// Its amount left after this trade (0 = filled fully).
    pub maker_remaining: Qty,
    /// Incoming order.
    pub taker: OrderRef,
    /// Its owner.
    pub taker_account: AccountId,
    /// Its amount left after this trade.
    pub taker_remaining: Qty,
    /// Fee charged to the maker, in the currency it received (balance units; 0 when
    /// balances are off).
    pub maker_fee: i64,
    /// Fee charged to the taker, in the currency it received.
    pub taker_fee: i64,
}

/// Something that happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A holder and its main account were created.
    HolderCreated {
        /// New holder.
        holder: HolderId,
        /// Its main account.
        main_account: AccountId,
    },
    /// A subaccount was created.
    SubaccountCreated {
        /// Owner.
        holder: HolderId,
        /// New account.
        account: AccountId,
    },
    /// A subaccount was closed.
    AccountClosed {
        /// Account.
        account: AccountId,
    },
    /// An account entered or left de-risk.
    DeriskChanged {
        /// Account.
        account: AccountId,
        /// In de-risk now.
        on: bool,
    },
    /// A BLP account's minimum balance changed.
    BlpThresholdSet {
        /// Account.
        account: AccountId,
        /// Currency.
        currency: CurrencyId,
        /// New minimum.
        amount: i64,
    },
    /// A balance changed; the values are the new ones (balance units).
    BalanceChanged {
        /// Account.
        account: AccountId,
        /// Currency.
        currency: CurrencyId,
        /// Available after the change.
        available: i64,
        /// Locked after the change.
        locked: i64,
    },
    /// A transfer between two accounts of one holder completed.
    TransferCompleted {
        /// Transfer number (its UUID is `Uuid::of_transfer`).
        transfer: u64,
        /// Owner of both accounts.
        holder: HolderId,
        /// Debited account.
        source: AccountId,
        /// Credited account.
        destination: AccountId,
        /// Currency.
        currency: CurrencyId,
        /// Amount moved (balance units).
        amount: i64,
    },
    /// An account's default self-trade prevention changed.
    StpModeSet {
        /// Account.
        account: AccountId,
        /// New mode.
        mode: StpMode,
    },
    /// An instrument's state changed.
    InstrumentStateChanged {
        /// Market.
        instrument: InstrumentId,
        /// New state.
        state: InstrumentState,
    },
    /// A command was refused; nothing else changed.
    Rejected {
        /// Account the command acted for, if any.
        account: Option<AccountId>,
        /// Caller's tracking id of a refused order.
        client_id: Option<Uuid>,
        /// Why.
        error: EngineError,
    },
    /// An order was accepted (it may trade, rest, or wait for its trigger next).
    OrderAccepted(AcceptedOrder),
    /// An execution.
    Trade(Trade),
    /// An order (new, moved or triggered) now rests on the book with `remaining`.
    OrderBooked {
        /// Order.
        order: OrderRef,
        /// Market.
        instrument: InstrumentId,
        /// Side.
        side: Side,
        /// Its price.
        price: Price,
        /// Amount resting.
        remaining: Qty,
    },
    /// An open order was amended; a lost priority means it is re-matched and re-booked next.
    OrderAmended {
        /// Order.
        order: OrderRef,
        /// Owner.
        account: AccountId,
        /// Market.
        instrument: InstrumentId,
        /// New price.
        price: Option<Price>,
        /// New total amount.
        amount: Qty,
        /// Amount left to fill.
        remaining: Qty,
        /// True when it kept its place in the queue.
        kept_priority: bool,
    },
    /// An order ended without filling completely.
    OrderCancelled {
        /// Order.
        order: OrderRef,
        /// Owner.
        account: AccountId,
        /// Market.
        instrument: InstrumentId,
        /// Amount that will never fill.
        remaining: Qty,
        /// Why.
        reason: CancelReason,
    },
    /// The best bid or ask of an instrument changed (emitted after the command that changed
    /// it, instruments in index order), so consumers can follow the touch without the book.
    TopOfBook {
        /// Market.
        instrument: InstrumentId,
        /// Best bid.
        bid: Option<Price>,
        /// Best ask.
        ask: Option<Price>,
    },
    /// A futures position changed (after a fill, funding, or settlement at expiry).
    PositionChanged {
        /// Account.
        account: AccountId,
        /// Futures instrument.
        instrument: InstrumentId,
        /// Position number (a new one each time a position opens from flat or flips).
        position_id: u64,
        /// Signed size in lots after the change (long > 0; 0 = closed).
        size: i64,
        /// Volume-weighted entry price after the change.
        entry_price: Price,
        /// PnL realised by this change (closing PnL, funding or fees), USD balance units.
        realised: i64,
    },
    /// A funding payment between an account and the other side of the market.
    FundingPaid {
        /// Account.
        account: AccountId,
        /// Futures instrument.
        instrument: InstrumentId,
        /// Position number.
        position_id: u64,
        /// Rate settled, in 1e-8 per period.
        rate: i64,
        /// Mark price used.
        mark: Price,
        /// Amount received (negative when paid), USD balance units.
        payment: i64,
        /// USD cash (available + locked) after the payment.
        cash_balance: i64,
    },
    /// A funding rate was settled.
    FundingSettled {
        /// Futures instrument.
        instrument: InstrumentId,
        /// Rate in 1e-8 per period.
        rate: i64,
        /// Mark price at settlement.
        mark: Price,
    },
    /// A futures instrument's index price was set.
    IndexPriceSet {
        /// Futures instrument.
        instrument: InstrumentId,
        /// Index price.
        price: Price,
    },
    /// An account's dead-man switch was armed (`deadline`), disarmed or ran out (`None`;
    /// when it ran out, the cancels of the account's orders follow).
    CancelAllAfterSet {
        /// Account.
        account: AccountId,
        /// When its open orders are cancelled unless it is set again.
        deadline: Option<Timestamp>,
    },
    /// A held trigger order's trigger was reached; it is checked as a new order and entered
    /// (at its limit, or as a market order) next.
    StopTriggered {
        /// Order.
        order: OrderRef,
        /// Market.
        instrument: InstrumentId,
        /// The trigger it fired at.
        trigger_price: Price,
        /// The limit it enters with (a trailing stop-limit's is set now); none for a
        /// market-type order.
        price: Option<Price>,
    },
    /// Terms of an accepted order beyond [`AcceptedOrder`] (kept apart so that record, and
    /// the history files holding it, keep their form): follows the `OrderAccepted` of an
    /// order that watches the mark price, trails, or is an iceberg.
    OrderTerms {
        /// Order.
        order: OrderRef,
        /// Market.
        instrument: InstrumentId,
        /// The price it watches.
        reference: TriggerRef,
        /// A trailing order's trail.
        trail: Option<Trail>,
        /// A trailing stop-limit's limit offset.
        limit_offset: Option<Price>,
        /// An iceberg's displayed amount.
        display: Option<Qty>,
    },
    /// Two live orders were linked one-cancels-the-other (an OCO, or a bracket's exits,
    /// `parent` naming the bracket's entry).
    OrdersLinked {
        /// First leg (a bracket's take-profit).
        first: OrderRef,
        /// Second leg (a bracket's stop-loss).
        second: OrderRef,
        /// Market.
        instrument: InstrumentId,
        /// The bracket entry whose exits they are.
        parent: Option<OrderRef>,
    },
    /// A bracket entry was accepted with these exits (placed once it is done).
    BracketPlaced {
        /// The entry.
        order: OrderRef,
        /// Market.
        instrument: InstrumentId,
        /// Its exits.
        exits: BracketExits,
    },
    /// A trailing order's trigger followed a new best reference price.
    TriggerMoved {
        /// Order.
        order: OrderRef,
        /// Market.
        instrument: InstrumentId,
        /// Its new trigger.
        trigger_price: Price,
    },
}

/// Where the engine writes events. Implemented for `Vec<EventRecord>`; a sink is cleared by
/// its owner between commands, never reallocated by the engine.
pub trait EventSink {
    /// Receives one event.
    fn push(&mut self, record: EventRecord);
}

impl EventSink for Vec<EventRecord> {
    #[inline]
    fn push(&mut self, record: EventRecord) {
        Vec::push(self, record);
    }
}

/// A sink that only counts, for benchmarks that must not measure event storage.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingSink {
    /// Events received.
    pub events: u64,
    /// Trades among them.
    pub trades: u64,
}

impl EventSink for CountingSink {
    #[inline]
    fn push(&mut self, record: EventRecord) {
        self.events += 1;
        self.trades += u64::from(matches!(record.event, Event::Trade(_)));
    }
}
