//! Small C enums and handles shared by commands, events and queries, with their one
//! translation to and from the engine's types.

use matchbook::{
    AccountKind, InstrumentState, LiveState, OrderRef, OrderType, Side, StpMode, TimeInForce,
};

/// An order handle: its number and slab slot (both needed to address it in O(1)).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MbOrderRef {
    /// Order number.
    pub id: u64,
    /// Slab slot.
    pub slot: u32,
}

impl From<OrderRef> for MbOrderRef {
    fn from(r: OrderRef) -> Self {
        Self {
            id: r.id,
            slot: r.slot,
        }
    }
}

impl From<MbOrderRef> for OrderRef {
    fn from(r: MbOrderRef) -> Self {
        Self {
            id: r.id,
            slot: r.slot,
        }
    }
}

/// Buy or sell.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbSide {
    /// Buy.
    Buy = 0,
    /// Sell.
    Sell = 1,
}

impl From<MbSide> for Side {
    fn from(s: MbSide) -> Self {
        match s {
            MbSide::Buy => Side::Buy,
            MbSide::Sell => Side::Sell,
        }
    }
}

impl From<Side> for MbSide {
    fn from(s: Side) -> Self {
        match s {
            Side::Buy => MbSide::Buy,
            Side::Sell => MbSide::Sell,
        }
    }
}

/// Time in force.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbTimeInForce {
    /// Good till cancelled.
    GoodTillCancelled = 0,
    /// Immediate or cancel.
    ImmediateOrCancelled = 1,
    /// Fill or kill.
    FillOrKill = 2,
    /// Post only.
    PostOnly = 3,
    /// Good till `expire_at_ns`.
    GoodTillTime = 4,
}

impl From<MbTimeInForce> for TimeInForce {
    fn from(t: MbTimeInForce) -> Self {
        match t {
            MbTimeInForce::GoodTillCancelled => TimeInForce::GoodTillCancelled,
            MbTimeInForce::ImmediateOrCancelled => TimeInForce::ImmediateOrCancelled,
            MbTimeInForce::FillOrKill => TimeInForce::FillOrKill,
            MbTimeInForce::PostOnly => TimeInForce::PostOnly,
            MbTimeInForce::GoodTillTime => TimeInForce::GoodTillTime,
        }
    }
}

impl From<TimeInForce> for MbTimeInForce {
    fn from(t: TimeInForce) -> Self {
        match t {
            TimeInForce::GoodTillCancelled => Self::GoodTillCancelled,
            TimeInForce::ImmediateOrCancelled => Self::ImmediateOrCancelled,
            TimeInForce::FillOrKill => Self::FillOrKill,
            TimeInForce::PostOnly => Self::PostOnly,
            TimeInForce::GoodTillTime => Self::GoodTillTime,
        }
    }
}

/// Order type.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbOrderType {
    /// Limit.
    Limit = 0,
    /// Market (price = optional protection price, 0 for none).
    Market = 1,
    /// Stop-limit (`trigger_price` required).
    Stop = 2,
    /// Stop entering as a market order (`trigger_price` required).
    StopMarket = 3,
    /// Take-profit limit: limit-if-touched (`price`, `trigger_price` required).
    TakeProfit = 4,
    /// Take-profit market: market-if-touched (`trigger_price` required).
    TakeProfitMarket = 5,
    /// Trailing stop entering as a market order (`trail_kind`, `trail` required).
    TrailingStop = 6,
    /// Trailing stop entering as a limit order `limit_offset` past its trigger.
    TrailingStopLimit = 7,
}

/// What a trigger order watches.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbTriggerRef {
    /// The last trade price.
    LastPrice = 0,
    /// The futures mark price.
    MarkPrice = 1,
}

/// How `mb_command.trail` is measured.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbTrailKind {
    /// No trail (every order but a trailing one).
    None = 0,
    /// A price distance in ticks.
    Ticks = 1,
    /// A distance in basis points (1-9999) of the reference price.
    Bps = 2,
}

const ORDER_TYPES: [(MbOrderType, OrderType); 8] = [
    (MbOrderType::Limit, OrderType::Limit),
    (MbOrderType::Market, OrderType::Market),
    (MbOrderType::Stop, OrderType::Stop),
    (MbOrderType::StopMarket, OrderType::StopMarket),
    (MbOrderType::TakeProfit, OrderType::TakeProfit),
    (MbOrderType::TakeProfitMarket, OrderType::TakeProfitMarket),
    (MbOrderType::TrailingStop, OrderType::TrailingStop),
    (MbOrderType::TrailingStopLimit, OrderType::TrailingStopLimit),
];

impl From<MbOrderType> for OrderType {
    fn from(t: MbOrderType) -> Self {
        ORDER_TYPES
            .iter()
            .find(|(c, _)| *c == t)
            .map_or(OrderType::Limit, |&(_, e)| e)
    }
}

impl From<OrderType> for MbOrderType {
    fn from(t: OrderType) -> Self {
        ORDER_TYPES
            .iter()
            .find(|(_, e)| *e == t)
            .map_or(Self::Limit, |&(c, _)| c)
    }
}

/// Self-trade prevention of one order.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbStp {
    /// The account's default.
    AccountDefault = 0,
    /// Self trades allowed.
    None = 1,
    /// Cancel the incoming order's remainder.
    CancelNewest = 2,
    /// Cancel the resting order and go on.
    CancelOldest = 3,
    /// Cancel both.
    CancelBoth = 4,
}

impl MbStp {
    pub(crate) fn to_engine(self) -> Option<StpMode> {
        match self {
            Self::AccountDefault => None,
            Self::None => Some(StpMode::None),
            Self::CancelNewest => Some(StpMode::CancelNewest),
            Self::CancelOldest => Some(StpMode::CancelOldest),
            Self::CancelBoth => Some(StpMode::CancelBoth),
        }
    }
}

/// Kind of a subaccount.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbAccountKind {
    /// Ordinary trading account.
    Regular = 0,
    /// The instant-trade account.
    InstantTrade = 1,
    /// Liquidity-provider account.
    Blp = 2,
}

impl From<MbAccountKind> for AccountKind {
    fn from(k: MbAccountKind) -> Self {
        match k {
            MbAccountKind::Regular => AccountKind::Regular,
            MbAccountKind::InstantTrade => AccountKind::InstantTrade,
            MbAccountKind::Blp => AccountKind::Blp,
        }
    }
}

/// Which order entry an instrument accepts.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbInstrumentState {
    /// Trading.
    Active = 0,
    /// Post-only orders only.
    PostOnly = 1,
    /// No order entry.
    Suspended = 2,
    /// Closed: open orders cancelled.
    Closed = 3,
}

impl From<MbInstrumentState> for InstrumentState {
    fn from(s: MbInstrumentState) -> Self {
        match s {
            MbInstrumentState::Active => InstrumentState::Active,
            MbInstrumentState::PostOnly => InstrumentState::PostOnly,
            MbInstrumentState::Suspended => InstrumentState::Suspended,
            MbInstrumentState::Closed => InstrumentState::Closed,
        }
    }
}

/// Where a live order is.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbOrderState {
    /// On the book.
    Resting = 0,
    /// A stop waiting for its trigger.
    PendingTrigger = 1,
    /// Being matched (never seen between two commands).
    Taking = 2,
}

impl From<LiveState> for MbOrderState {
    fn from(s: LiveState) -> Self {
        match s {
            LiveState::Resting => Self::Resting,
            LiveState::PendingTrigger => Self::PendingTrigger,
            LiveState::Taking => Self::Taking,
        }
    }
}

/// A candle period: unit and length (1/5/15/30 minutes, 1/4 hours, 1 day, week, month).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbCandleUnit {
    /// Minutes.
    Minutes = 0,
    /// Hours.
    Hours = 1,
    /// Days.
    Days = 2,
    /// Weeks.
    Weeks = 3,
    /// Months.
    Months = 4,
}

impl From<MbCandleUnit> for matchbook::market::period::Unit {
    fn from(u: MbCandleUnit) -> Self {
        use matchbook::market::period::Unit;
        match u {
            MbCandleUnit::Minutes => Unit::Minutes,
            MbCandleUnit::Hours => Unit::Hours,
            MbCandleUnit::Days => Unit::Days,
            MbCandleUnit::Weeks => Unit::Weeks,
            MbCandleUnit::Months => Unit::Months,
        }
    }
}

/// A UUID as 16 big-endian bytes (a client order id).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MbUuid {
    /// Bytes, most significant first.
    pub bytes: [u8; 16],
}

impl MbUuid {
    /// The all-zero UUID means "none".
    pub(crate) fn to_engine(self) -> Option<matchbook::Uuid> {
        let v = u128::from_be_bytes(self.bytes);
        (v != 0).then_some(matchbook::Uuid(v))
    }

    pub(crate) fn of(id: Option<matchbook::Uuid>) -> Self {
        Self {
            bytes: id.map_or(0, |u| u.0).to_be_bytes(),
        }
    }
}

/// Reads a C integer as one of an enum's values (C may pass any integer; a Rust enum may
/// only hold its declared values, so nothing arrives as an enum).
macro_rules! from_raw {
    ($t:ty: $($v:ident),+) => {
        impl $t {
            /// The value whose code is `raw`, if any.
            pub(crate) fn from_raw(raw: u32) -> Option<Self> {
                $(if raw == Self::$v as u32 {
                    return Some(Self::$v);
                })+
                None
            }
        }
    };
}

from_raw!(MbSide: Buy, Sell);
from_raw!(MbTimeInForce:
    GoodTillCancelled,
    ImmediateOrCancelled,
    FillOrKill,
    PostOnly,
    GoodTillTime
);
from_raw!(MbOrderType:
    Limit,
    Market,
    Stop,
    StopMarket,
    TakeProfit,
    TakeProfitMarket,
    TrailingStop,
    TrailingStopLimit
);
from_raw!(MbTriggerRef: LastPrice, MarkPrice);
from_raw!(MbTrailKind: None, Ticks, Bps);
from_raw!(MbStp: AccountDefault, None, CancelNewest, CancelOldest, CancelBoth);
from_raw!(MbAccountKind: Regular, InstantTrade, Blp);
from_raw!(MbInstrumentState: Active, PostOnly, Suspended, Closed);
from_raw!(MbCandleUnit: Minutes, Hours, Days, Weeks, Months);
