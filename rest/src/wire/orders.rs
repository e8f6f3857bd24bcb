//! Order and trade answers (spec 2.6 and 2.7, with the addendum's extra spellings).

use serde::Serialize;
use utoipa::ToSchema;

use super::requests::OrderTypeName;

/// An order record.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderBody {
    /// Owner (a UUID).
    pub account_id: String,
    /// Order id (a UUID).
    pub order_id: String,
    /// Client order id (given or generated; absent only for orders placed without one
    /// through the C or Python bindings of a shared journal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Ordered amount.
    pub amount: String,
    /// Filled amount.
    pub filled_amount: String,
    /// `BUY` or `SELL`.
    pub side: &'static str,
    /// Instrument.
    pub instrument_code: String,
    /// The order's type, spelled as it was placed: `LIMIT`, `MARKET`, `STOP`, or one of
    /// the extensions.
    #[serde(rename = "type")]
    #[schema(value_type = OrderTypeName)]
    pub kind: &'static str,
    /// Limit price (absent for a market order, which has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<String>,
    /// Creation time (ISO 8601, milliseconds).
    pub time: String,
    /// Sequence number of its creation.
    pub sequence: String,
    /// Fees paid so far.
    pub total_fee: String,
    /// Currency of the fees.
    pub fee_currency: String,
    /// Last change.
    pub time_last_updated: String,
    /// Book sequence number of its last change.
    pub order_book_sequence: String,
    /// `OPEN`, `FILLED_FULLY`, `FILLED_CLOSED` (partly filled, then cancelled),
    /// `CANCELLED`, `FILLED_REJECTED` (refused for its time in force: see `reason`).
    pub status: &'static str,
    /// Why the book refused the order, beside `FILLED_REJECTED`: `INSUFFICIENT_LIQUIDITY`
    /// (fill-or-kill) or `POST_ONLY_WOULD_TAKE` (an extension).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// Time in force.
    pub time_in_force: &'static str,
    /// Post-only.
    pub is_post_only: bool,
    /// Average fill price, once filled in part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub average_price: Option<String>,
    /// Trigger of a held order (a trailing order's current one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_price: Option<String>,
    /// Extension: what a trigger order watches, `LAST_PRICE` or `MARK_PRICE`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_reference: Option<&'static str>,
    /// Extension: a trailing order's distance from the best price seen, as a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trailing_offset: Option<String>,
    /// Extension: a trailing order's distance in basis points.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 9999)]
    pub trailing_offset_bps: Option<u32>,
    /// Extension: a trailing stop-limit's limit offset past its trigger.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_offset: Option<String>,
    /// Extension: an iceberg's displayed amount.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_amount: Option<String>,
    /// Extension: the other leg of its one-cancels-the-other pair.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linked_order_id: Option<String>,
    /// Extension: the bracket entry whose exit it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_order_id: Option<String>,
    /// Extension: a bracket entry's take-profit price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub take_profit_price: Option<String>,
    /// Extension: a bracket entry's stop-loss trigger.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_loss_price: Option<String>,
    /// Extension: a bracket entry's stop-loss limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_loss_limit_price: Option<String>,
    /// Origin, `API` (by id or client id only).
    #[serde(rename = "order_type", skip_serializing_if = "Option::is_none")]
    pub origin: Option<&'static str>,
    /// Creation time with nanoseconds (by id or client id only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_nanos: Option<String>,
    /// Last change with nanoseconds (by id or client id only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_last_updated_nanos: Option<String>,
}

/// An order with its trades.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderWithTrades {
    /// The order.
    pub order: OrderBody,
    /// Its trades, oldest first.
    pub trades: Vec<TradeWrapper>,
}

/// A page of order history.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderPage {
    /// Orders, newest first.
    pub order_history: Vec<OrderWithTrades>,
    /// Page size used.
    pub max_page_size: usize,
    /// Cursor of the next page, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// The acknowledgement of create and cancel (spec 2.6).
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderAck<'a> {
    /// Extension: the second leg of a one-cancels-the-other pair placed with this order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linked_order_id: Option<String>,
    /// Order id.
    pub order_id: String,
    /// Client order id (absent when the order has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Owner.
    pub account_id: String,
    /// Instrument.
    pub instrument_code: &'a str,
    /// Creation time.
    pub time: String,
    /// `BUY` or `SELL`.
    pub side: &'static str,
    /// Limit price (absent for a market order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<String>,
    /// Ordered amount.
    pub amount: String,
    /// What filled while the order was placed (create), or before it was cancelled.
    pub filled_amount: String,
    /// Order type.
    #[serde(rename = "type")]
    pub order_type: &'static str,
    /// `OPEN` on create, `CANCELLED` on cancel.
    pub status: &'a str,
    /// Create only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_in_force: Option<&'static str>,
    /// Create only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_post_only: Option<bool>,
}

/// The fee of one fill.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeeBody {
    /// Amount charged.
    pub fee_amount: String,
    /// Currency charged in.
    pub fee_currency: String,
    /// Rate in percent.
    pub fee_percentage: String,
    /// `MAKER` or `TAKER`.
    pub fee_type: &'static str,
}

/// One fill as an account sees it.
#[derive(Debug, Serialize, ToSchema)]
pub struct TradeBody {
    /// The account.
    pub account_id: String,
    /// Its order.
    pub order_id: String,
    /// Trade id.
    pub trade_id: String,
    /// Time (milliseconds).
    pub time: String,
    /// Time (nanoseconds).
    pub time_nanos: String,
    /// Instrument.
    pub instrument_code: String,
    /// The account's side.
    pub side: &'static str,
    /// `MAKER` or `TAKER`.
    pub matched_as: &'static str,
    /// Origin, `API`.
    pub order_type: &'static str,
    /// Price.
    pub price: String,
    /// Amount.
    pub amount: String,
    /// Amount (spelling of the addendum).
    pub filled_amount: String,
    /// Event sequence number.
    pub sequence: String,
    /// Futures: the position this fill moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position_id: Option<String>,
    /// Futures: the position's size after the fill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_position_amount: Option<String>,
}

/// A trade with its fee.
#[derive(Debug, Serialize, ToSchema)]
pub struct TradeWrapper {
    /// The fee.
    pub fee: FeeBody,
    /// The fill.
    pub trade: TradeBody,
}

/// Trades, oldest first (one order's or a futures position's).
#[derive(Debug, Serialize, ToSchema)]
pub struct TradeList {
    /// The trades, at most a page (100 by default).
    pub trade_history: Vec<TradeWrapper>,
    /// Where the next page starts, when more follow (pass it back as `cursor`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// A page of trade history.
#[derive(Debug, Serialize, ToSchema)]
pub struct TradePage {
    /// Trades, newest first.
    pub trade_history: Vec<TradeWrapper>,
    /// Page size used.
    pub max_page_size: usize,
    /// Cursor of the next page, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}
