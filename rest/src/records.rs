//! Order and trade records on the wire (spec 2.6 and 2.7, with the addendum's extra
//! spellings), built from market data's history records on the handler's thread.

use matchbook::market::orders::OrderRecord;
use matchbook::market::trades::TradeRecord;
use matchbook::{AccountId, Side, TimeInForce, Uuid};
use serde::Serialize;
use serde_json::{Value, json};

use crate::format::{iso_ms, iso_nanos};
use crate::markets::{Market, Markets};

/// How much of an order record to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderForm {
    /// By id or client id: every field.
    Full,
    /// In the history list: without `order_type`, `time_nanos`, `time_last_updated_nanos`.
    History,
}

/// The currency an order's fees are charged in: what it receives on a spot market, the
/// USD collateral on a future.
fn fee_coin(market: &Market, side: Side) -> matchbook::CurrencyId {
    match side {
        Side::Buy if !market.kind.is_future() => market.base,
        _ => market.quote,
    }
}

/// An order record.
pub fn order_json(markets: &Markets, r: &OrderRecord, form: OrderForm) -> Value {
    let a = &r.accepted;
    let Some(market) = markets.market_of(a.instrument) else {
        return Value::Null;
    };
    let fee_coin = fee_coin(market, a.side);
    let mut v = json!({
        "account_id": Uuid::of_account(a.account).to_string(),
        "order_id": Uuid::of_order(a.order).to_string(),
        "client_id": a.client_id.map(|c| c.to_string()).unwrap_or_default(),
        "amount": market.qty(a.amount),
        "filled_amount": market.qty(r.filled),
        "side": a.side.as_str(),
        "instrument_code": market.code,
        "type": a.order_type.as_str(),
        "price": a.price.map(|p| market.price(p)).unwrap_or_default(),
        "time": iso_ms(r.created),
        "sequence": r.sequence.to_string(),
        "total_fee": markets.balance(fee_coin, i128::from(r.total_fee)),
        "fee_currency": markets.coin_code(fee_coin),
        "time_last_updated": iso_ms(r.updated),
        "order_book_sequence": r.last_sequence.to_string(),
        "status": r.status.as_str(),
        "time_in_force": a.time_in_force.as_str(),
        "is_post_only": a.time_in_force == TimeInForce::PostOnly,
    });
    if let Some(map) = v.as_object_mut() {
        if let Some(avg) = r.average_price() {
            map.insert("average_price".into(), market.price(avg).into());
        }
        if let Some(trigger) = a.trigger_price {
            map.insert("trigger_price".into(), market.price(trigger).into());
        }
        if form == OrderForm::Full {
            map.insert("order_type".into(), "API".into());
            map.insert("time_nanos".into(), iso_nanos(r.created).into());
            map.insert(
                "time_last_updated_nanos".into(),
                iso_nanos(r.updated).into(),
            );
        }
    }
    v
}

/// The acknowledgement of create and cancel (spec 2.6), written straight from the record
/// (no intermediate JSON tree: it is the hottest response).
#[derive(Debug, Serialize)]
pub struct OrderAck<'a> {
    order_id: String,
    client_id: String,
    account_id: String,
    instrument_code: &'a str,
    time: String,
    side: &'static str,
    price: String,
    amount: String,
    filled_amount: String,
    #[serde(rename = "type")]
    order_type: &'static str,
    status: &'a str,
    /// Create only.
    #[serde(skip_serializing_if = "Option::is_none")]
    time_in_force: Option<&'static str>,
    /// Create only.
    #[serde(skip_serializing_if = "Option::is_none")]
    is_post_only: Option<bool>,
}

/// The acknowledgement of create and cancel: `time_in_force` on create only.
pub fn order_ack<'a>(
    markets: &'a Markets,
    r: &OrderRecord,
    status: &'a str,
    with_tif: bool,
) -> Option<OrderAck<'a>> {
    let a = &r.accepted;
    let market = markets.market_of(a.instrument)?;
    Some(OrderAck {
        order_id: Uuid::of_order(a.order).to_string(),
        client_id: a.client_id.map(|c| c.to_string()).unwrap_or_default(),
        account_id: Uuid::of_account(a.account).to_string(),
        instrument_code: &market.code,
        time: iso_ms(r.created),
        side: a.side.as_str(),
        price: a.price.map(|p| market.price(p)).unwrap_or_default(),
        amount: market.qty(a.amount),
        filled_amount: market.qty(r.filled),
        order_type: a.order_type.as_str(),
        status,
        time_in_force: with_tif.then(|| a.time_in_force.as_str()),
        is_post_only: with_tif.then_some(a.time_in_force == TimeInForce::PostOnly),
    })
}

/// A trade wrapper `{fee, trade}` as `account` sees it.
pub fn trade_json(markets: &Markets, r: &TradeRecord, account: AccountId) -> Value {
    let (Some(side), Some(market)) = (r.side_of(account), markets.market_of(r.trade.instrument))
    else {
        return Value::Null;
    };
    let t = &r.trade;
    let fee_coin = fee_coin(market, side.side);
    let (received, received_scale) = if fee_coin == market.base {
        (i128::from(t.amount.0), market.amount_precision)
    } else {
        (
            t.price.notional(t.amount).0,
            market.amount_precision + market.market_precision,
        )
    };
    // The rate in percent, from the fee over what was received, both brought to the fee
    // currency's balance scale (4 decimals, rounded down: fees are rounded up when charged).
    let coin_scale = markets
        .coins
        .get(usize::from(fee_coin.0))
        .map_or(0, |c| c.scale);
    let received_units = rescale(received, received_scale, coin_scale);
    let percentage = if received_units > 0 {
        i128::from(side.fee) * 1_000_000 / received_units
    } else {
        0
    };
    let mut trade = json!({
            "account_id": Uuid::of_account(account).to_string(),
            "order_id": Uuid::of_order(side.order).to_string(),
            "trade_id": Uuid::of_trade(t.id).to_string(),
            "time": iso_ms(r.time),
            "time_nanos": iso_nanos(r.time),
            "instrument_code": market.code,
            "side": side.side.as_str(),
            "matched_as": if side.maker { "MAKER" } else { "TAKER" },
            "order_type": "API",
            "price": market.price(t.price),
            "amount": market.qty(t.amount),
            "filled_amount": market.qty(t.amount),
            "sequence": r.sequence.to_string(),
    });
    // Futures: the position this fill moved, on the account's side.
    let position = r.positions[usize::from(side.maker)];
    if let (Some((id, size)), Some(map)) = (position, trade.as_object_mut()) {
        map.insert("position_id".into(), id.to_string().into());
        map.insert(
            "open_position_amount".into(),
            market.qty(matchbook::Qty(size.abs())).into(),
        );
    }
    json!({
        "fee": {
            "fee_amount": markets.balance(fee_coin, i128::from(side.fee)),
            "fee_currency": markets.coin_code(fee_coin),
            "fee_percentage": crate::format::decimal(percentage, 4),
            "fee_type": if side.maker { "MAKER" } else { "TAKER" },
        },
        "trade": trade,
    })
}

fn rescale(value: i128, from: u8, to: u8) -> i128 {
    if to >= from {
        value * 10i128.pow(u32::from(to - from))
    } else {
        value / 10i128.pow(u32::from(from - to))
    }
}
