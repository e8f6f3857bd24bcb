//! Orders: the vocabulary (side, type, time in force, self-trade prevention), the order-entry
//! request, and ([`live`]) the live order record the engine keeps while an order is open.

use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, InstrumentId, Timestamp, Uuid};

mod live;

pub(crate) use live::NIL;
pub use live::Order;
/// Live orders by slot.
pub(crate) type OrderStore = crate::store::DenseStore<Order>;

/// Buy or sell.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Side {
    /// Bid.
    Buy,
    /// Ask.
    Sell,
}

impl Side {
    /// The other side.
    pub const fn opposite(self) -> Self {
        match self {
            Self::Buy => Self::Sell,
            Self::Sell => Self::Buy,
        }
    }
    /// Wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Buy => "BUY",
            Self::Sell => "SELL",
        }
    }
    /// True when an order on this side with `limit` would trade against a resting `price`.
    /// Written as a choice of operands, not of comparisons, so that it compiles to
    /// conditional moves: the side of the next order is as random as the flow, and a
    /// branch on it mispredicted every other time.
    #[inline]
    pub fn crosses(self, limit: Price, resting: Price) -> bool {
        let buy = self as u8 == Self::Buy as u8;
        let (low, high) = if buy {
            (resting, limit)
        } else {
            (limit, resting)
        };
        low <= high
    }
}

/// How an order enters the market.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum OrderType {
    /// Rests at its limit price (subject to its time in force).
    Limit,
    /// Takes what the book offers, up to an optional protection price; never rests.
    Market,
    /// A stop-limit: held off the book until its reference price reaches `trigger_price`
    /// (rising to it for a buy, falling to it for a sell), then entered at its limit.
    Stop,
    /// A stop that enters as a market order (with MARKET's protection rules) when triggered.
    StopMarket,
    /// Take-profit limit (limit-if-touched): triggers in the opposite direction to a stop
    /// (a buy when the reference falls to its trigger, a sell when it rises to it).
    TakeProfit,
    /// Take-profit market (market-if-touched).
    TakeProfitMarket,
    /// Trailing stop entering as a market order: its trigger follows the best reference
    /// price seen since entry at a fixed distance ([`Trail`]) and never loosens.
    TrailingStop,
    /// Trailing stop entering as a limit order at its trigger plus (buy) or minus (sell)
    /// the order's limit offset.
    TrailingStopLimit,
}

impl OrderType {
    /// Wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Limit => "LIMIT",
            Self::Market => "MARKET",
            Self::Stop => "STOP",
            Self::StopMarket => "STOP_MARKET",
            Self::TakeProfit => "TAKE_PROFIT",
            Self::TakeProfitMarket => "TAKE_PROFIT_MARKET",
            Self::TrailingStop => "TRAILING_STOP",
            Self::TrailingStopLimit => "TRAILING_STOP_LIMIT",
        }
    }
    /// Every type, in the order of their codes (journal, C and Python enumerations).
    pub const ALL: [Self; 8] = [
        Self::Limit,
        Self::Market,
        Self::Stop,
        Self::StopMarket,
        Self::TakeProfit,
        Self::TakeProfitMarket,
        Self::TrailingStop,
        Self::TrailingStopLimit,
    ];
    /// Held off the book until a trigger is reached.
    pub const fn is_trigger(self) -> bool {
        !matches!(self, Self::Limit | Self::Market)
    }
    /// Trails the reference price.
    pub const fn is_trailing(self) -> bool {
        matches!(self, Self::TrailingStop | Self::TrailingStopLimit)
    }
    /// Enters the market as a market order (no limit; MARKET's rules).
    pub const fn is_market(self) -> bool {
        matches!(
            self,
            Self::Market | Self::StopMarket | Self::TakeProfitMarket | Self::TrailingStop
        )
    }
    /// Carries its limit price from entry (a limit, a stop-limit, a take-profit limit).
    pub const fn needs_price(self) -> bool {
        matches!(self, Self::Limit | Self::Stop | Self::TakeProfit)
    }
    /// Reserves funds (or margin) when it is placed: every type whose price is known then.
    /// Market-type and trailing trigger orders reserve when triggered instead, after the
    /// checks of a new order at that moment.
    pub const fn reserves_at_entry(self) -> bool {
        !self.is_trigger() || self.needs_price()
    }
    /// Whether a held order of this type on `side` fires when its reference price rises to
    /// its trigger (`true`: buy stops, sell take-profits) or falls to it.
    pub const fn fires_rising(self, side: Side) -> bool {
        let stop_like = !matches!(self, Self::TakeProfit | Self::TakeProfitMarket);
        matches!(side, Side::Buy) == stop_like
    }
}

/// The price a held trigger order watches.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum TriggerRef {
    /// The instrument's last trade price.
    #[default]
    LastPrice,
    /// The futures mark price (futures only).
    MarkPrice,
}

impl TriggerRef {
    /// Wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::LastPrice => "LAST_PRICE",
            Self::MarkPrice => "MARK_PRICE",
        }
    }
}

/// How far a trailing stop's trigger stays from the best reference price seen.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Trail {
    /// An absolute price distance (in the instrument's price units).
    Price(Price),
    /// A distance in basis points of the reference price (1..=9,999); the trigger is
    /// rounded away from the reference to the instrument's price precision.
    Bps(u32),
}

impl Trail {
    /// The trigger of a trailing order on `side` whose best reference so far is `extreme`
    /// (the highest for a sell, the lowest for a buy): below it for a sell, above it for a
    /// buy, never nearer than the trail.
    pub fn trigger(self, side: Side, extreme: Price) -> Price {
        let distance = match self {
            Self::Price(offset) => i128::from(offset.0),
            Self::Bps(bps) => {
                let exact = i128::from(extreme.0) * i128::from(bps);
                // Away from the reference: a sell rounds its distance up, so does a buy.
                (exact + 9_999) / 10_000
            }
        };
        let trigger = match side {
            Side::Sell => i128::from(extreme.0) - distance,
            Side::Buy => i128::from(extreme.0) + distance,
        };
        Price(trigger.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
    }
}

/// Time in force.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum TimeInForce {
    /// Rests until cancelled.
    GoodTillCancelled,
    /// Fills what it can at once, cancels the rest.
    ImmediateOrCancelled,
    /// Fills completely at once or not at all.
    FillOrKill,
    /// Rests only; refused if any part would take.
    PostOnly,
    /// Rests until its `expire_at` time.
    GoodTillTime,
}

impl TimeInForce {
    /// Wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::GoodTillCancelled => "GOOD_TILL_CANCELLED",
            Self::ImmediateOrCancelled => "IMMEDIATE_OR_CANCELLED",
            Self::FillOrKill => "FILL_OR_KILL",
            Self::PostOnly => "POST_ONLY",
            Self::GoodTillTime => "GOOD_TILL_TIME",
        }
    }
    /// True when a remainder of such an order stays on the book.
    pub const fn rests(self) -> bool {
        matches!(
            self,
            Self::GoodTillCancelled | Self::PostOnly | Self::GoodTillTime
        )
    }
}

/// What happens when an order would trade against an order of the same account.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum StpMode {
    /// Self trades are allowed.
    #[default]
    None,
    /// The incoming order's remainder is cancelled.
    CancelNewest,
    /// The resting order is cancelled and matching goes on.
    CancelOldest,
    /// Both are cancelled.
    CancelBoth,
}

/// The exits of a bracket: once its entry is done, a take-profit limit and a stop-loss
/// (stop-market, or stop-limit at `stop_limit`) on the other side, one-cancels-the-other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct BracketExits {
    /// Limit price of the take-profit.
    pub take_profit: Price,
    /// Trigger of the stop-loss.
    pub stop_loss: Price,
    /// Limit of the stop-loss once triggered (`None`: it enters as a market order).
    pub stop_limit: Option<Price>,
}

/// An order-entry request, in fixed-point units of its instrument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewOrder {
    /// Account placing the order.
    pub account: AccountId,
    /// Market.
    pub instrument: InstrumentId,
    /// Buy or sell.
    pub side: Side,
    /// Limit, market or stop.
    pub order_type: OrderType,
    /// Time in force (market orders behave as immediate-or-cancel whatever is given).
    pub time_in_force: TimeInForce,
    /// Limit price; protection price for a market order (optional there).
    pub price: Option<Price>,
    /// Trigger price of a stop or take-profit order (a trailing order computes its own).
    pub trigger_price: Option<Price>,
    /// The price a trigger order watches.
    pub trigger_ref: TriggerRef,
    /// Distance of a trailing order's trigger from the best reference price seen.
    pub trail: Option<Trail>,
    /// A trailing stop-limit's limit: this far past its trigger when it fires.
    pub limit_offset: Option<Price>,
    /// An iceberg limit order's displayed amount: the book shows at most this much of it;
    /// each time the shown part fills, the next part is shown at the back of its price.
    pub display: Option<Qty>,
    /// Amount in lots.
    pub amount: Qty,
    /// Expiry of a good-till-time order.
    pub expire_at: Option<Timestamp>,
    /// Caller's tracking id.
    pub client_id: Option<Uuid>,
    /// Overrides the account's self-trade prevention mode.
    pub stp: Option<StpMode>,
    /// Futures only: may only reduce the position (never opens, adds or flips). It must
    /// oppose the position and not exceed it when placed; while it rests, each fill is
    /// capped at what is left of the position, and it is cancelled once nothing is.
    /// Reserves no margin.
    pub reduce_only: bool,
}

impl NewOrder {
    /// A good-till-cancelled limit order.
    pub fn limit(
        account: AccountId,
        instrument: InstrumentId,
        side: Side,
        price: Price,
        amount: Qty,
    ) -> Self {
        Self {
            account,
            instrument,
            side,
            order_type: OrderType::Limit,
            time_in_force: TimeInForce::GoodTillCancelled,
            price: Some(price),
            trigger_price: None,
            trigger_ref: TriggerRef::LastPrice,
            trail: None,
            limit_offset: None,
            display: None,
            amount,
            expire_at: None,
            client_id: None,
            stp: None,
            reduce_only: false,
        }
    }
    /// The same order with another time in force.
    pub fn with_tif(mut self, tif: TimeInForce) -> Self {
        self.time_in_force = tif;
        self
    }
}

/// Where a live order is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum LiveState {
    /// Being matched inside the command that created or moved it.
    Taking,
    /// On the book.
    Resting,
    /// A trigger order waiting for its trigger.
    PendingTrigger,
}
