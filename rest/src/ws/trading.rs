//! The `TRADING` channel's order events (the newer clients' view of their orders):
//! `TRACKED` / `STOP_TRACKED` when the engine accepts an order, `STOP_TRIGGERED`,
//! `BOOKED` when it rests, `FILL` per fill, `UPDATE` per amend and `DONE` when it ends,
//! each with the order as it then stands.

use matchbook::market::orders::OrderRecord;
use matchbook::market::trades::TradeRecord;
use matchbook::{OrderType, Timestamp, Uuid};
use serde::Serialize;

use super::messages::Stamp;
use crate::markets::Markets;

/// One order event.
#[derive(Debug, Serialize)]
pub struct TradingFrame {
    /// `TRADING`.
    pub channel_name: &'static str,
    /// What happened.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The order's status after it.
    pub status: &'static str,
    /// Order.
    pub order_id: String,
    /// The caller's id of the order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Owner.
    pub account_id: String,
    /// Market.
    pub instrument_code: String,
    /// `BUY` or `SELL`.
    pub side: &'static str,
    /// `LIMIT`, `MARKET` or `STOP`.
    pub order_type: &'static str,
    /// Limit price (none for a market order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<String>,
    /// Stop trigger.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_price: Option<String>,
    /// Amount ordered.
    pub amount: String,
    /// Amount not filled yet.
    pub remaining: String,
    /// Amount filled so far.
    pub filled_amount: String,
    /// `FILL`: this fill's amount.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_amount: Option<String>,
    /// `FILL`: its price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_price: Option<String>,
    /// `FILL`: `MAKER` or `TAKER`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_as: Option<&'static str>,
    /// `FILL`: the trade.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trade_id: Option<String>,
    /// `FILL`: its fee.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fee: Option<String>,
    /// `FILL`: the fee's currency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fee_currency: Option<String>,
    /// Event sequence number.
    pub sequence: u64,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// What a `FILL` adds: the trade, this side's fee and whether it made or took.
pub struct Fill<'a> {
    /// The trade.
    pub trade: &'a TradeRecord,
    /// This side's fee (balance units of the fee currency).
    pub fee: i64,
    /// True for the resting side.
    pub maker: bool,
}

/// The event `kind` of an order as `record` now stands (`None` for a market the server
/// does not list).
pub fn event(
    markets: &Markets,
    kind: &'static str,
    record: &OrderRecord,
    fill: Option<Fill<'_>>,
    sequence: u64,
    time: Timestamp,
) -> Option<TradingFrame> {
    let a = &record.accepted;
    let market = markets.market_of(a.instrument)?;
    let mut frame = TradingFrame {
        channel_name: "TRADING",
        kind,
        status: record.status_name(),
        order_id: Uuid::of_order(a.order).to_string(),
        client_id: a.client_id.map(|c| c.to_string()),
        account_id: Uuid::of_account(a.account).to_string(),
        instrument_code: market.code.clone(),
        side: a.side.as_str(),
        order_type: a.order_type.as_str(),
        price: (a.order_type != OrderType::Market)
            .then_some(a.price)
            .flatten()
            .map(|p| market.price(p)),
        trigger_price: a.trigger_price.map(|p| market.price(p)),
        amount: market.qty(a.amount),
        remaining: market.qty(matchbook::Qty(a.amount.0 - record.filled.0)),
        filled_amount: market.qty(record.filled),
        matched_amount: None,
        matched_price: None,
        matched_as: None,
        trade_id: None,
        fee: None,
        fee_currency: None,
        sequence,
        stamp: Stamp::of(time),
    };
    if let Some(fill) = fill {
        let t = &fill.trade.trade;
        let coin = market.fee_currency(a.side);
        frame.matched_amount = Some(market.qty(t.amount));
        frame.matched_price = Some(market.price(t.price));
        frame.matched_as = Some(if fill.maker { "MAKER" } else { "TAKER" });
        frame.trade_id = Some(Uuid::of_trade(t.id).to_string());
        frame.fee = Some(markets.balance(coin, i128::from(fill.fee)));
        frame.fee_currency = Some(markets.currency_code(coin).to_owned());
    }
    Some(frame)
}
