//! Order and trade records on the wire (spec 2.6 and 2.7, with the addendum's extra
//! spellings), built from market data's history records on the handler's thread.

use crate::error::ApiError;
use crate::format::{iso_ms, iso_nanos};
use crate::markets::Markets;
use crate::wire::orders::{FeeBody, OrderAck, OrderBody, TradeBody, TradeWrapper};
use matchbook::market::order_terms::OrderTerms;
use matchbook::market::orders::OrderRecord;
use matchbook::market::trades::TradeRecord;
use matchbook::{AccountId, TimeInForce, Trail, TriggerRef, Uuid};

/// How much of an order record to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderForm {
    /// By id or client id: every field.
    Full,
    /// In the history list: without `order_type`, `time_nanos`, `time_last_updated_nanos`.
    History,
}

/// An order record (`None` for an instrument the server does not list, which the engine
/// never produces).
pub fn order_body(markets: &Markets, r: &OrderRecord, form: OrderForm) -> Option<OrderBody> {
    let a = &r.accepted;
    let market = markets.market_of(a.instrument)?;
    let fee_coin = market.fee_currency(a.side);
    let full = form == OrderForm::Full;
    Some(OrderBody {
        account_id: Uuid::of_account(a.account).to_string(),
        order_id: Uuid::of_order(a.order).to_string(),
        client_id: a.client_id.map(|c| c.to_string()),
        amount: market.qty(a.amount),
        filled_amount: market.qty(r.filled),
        side: a.side.as_str(),
        instrument_code: market.code.clone(),
        kind: a.order_type.as_str(),
        price: a.price.map(|p| market.price(p)),
        time: iso_ms(r.created),
        sequence: r.sequence.to_string(),
        total_fee: markets.balance(fee_coin, i128::from(r.total_fee)),
        fee_currency: markets.currency_code(fee_coin).to_owned(),
        time_last_updated: iso_ms(r.updated),
        order_book_sequence: r.last_sequence.to_string(),
        status: r.status_name(),
        reason: r.status.reason(),
        time_in_force: a.time_in_force.as_str(),
        is_post_only: a.time_in_force == TimeInForce::PostOnly,
        average_price: r.average_price().map(|avg| market.price(avg)),
        trigger_price: a.trigger_price.map(|t| market.price(t)),
        trigger_reference: a
            .order_type
            .is_trigger()
            .then_some(TriggerRef::LastPrice.as_str()),
        trailing_offset: None,
        trailing_offset_bps: None,
        limit_offset: None,
        display_amount: None,
        linked_order_id: None,
        parent_order_id: None,
        take_profit_price: None,
        stop_loss_price: None,
        stop_loss_limit_price: None,
        origin: full.then_some("API"),
        time_nanos: full.then(|| iso_nanos(r.created)),
        time_last_updated_nanos: full.then(|| iso_nanos(r.updated)),
    })
}

/// Adds an order's terms beyond its record (mark-price reference, trail, limit offset,
/// iceberg display) to its body.
pub fn add_order_terms(
    markets: &Markets,
    body: &mut OrderBody,
    r: &OrderRecord,
    terms: &OrderTerms,
) {
    let Some(market) = markets.market_of(r.accepted.instrument) else {
        return;
    };
    body.display_amount = terms.display.map(|q| market.qty(q));
    let order_id = |handle| Uuid::of_order(handle).to_string();
    body.linked_order_id = terms.peer.map(order_id);
    body.parent_order_id = terms.parent.map(order_id);
    if let Some(exits) = terms.exits {
        body.take_profit_price = Some(market.price(exits.take_profit));
        body.stop_loss_price = Some(market.price(exits.stop_loss));
        body.stop_loss_limit_price = exits.stop_limit.map(|p| market.price(p));
    }
    if !r.accepted.order_type.is_trigger() {
        return;
    }
    body.trigger_reference = Some(terms.reference.as_str());
    match terms.trail {
        Some(Trail::Price(p)) => body.trailing_offset = Some(market.price(p)),
        Some(Trail::Bps(bps)) => body.trailing_offset_bps = Some(bps),
        None => {}
    }
    body.limit_offset = terms.limit_offset.map(|p| market.price(p));
}

/// The acknowledgement of create, amend and cancel (`time_in_force` with `with_tif`); 404
/// `INVALID_INSTRUMENT_CODE` for an order on a market the server does not list.
pub fn order_ack<'a>(
    markets: &'a Markets,
    r: &OrderRecord,
    status: &'a str,
    with_tif: bool,
) -> Result<OrderAck<'a>, ApiError> {
    let a = &r.accepted;
    let market =
        (markets.market_of(a.instrument)).ok_or(ApiError::NotFound("INVALID_INSTRUMENT_CODE"))?;
    Ok(OrderAck {
        linked_order_id: None,
        order_id: Uuid::of_order(a.order).to_string(),
        client_id: a.client_id.map(|c| c.to_string()),
        account_id: Uuid::of_account(a.account).to_string(),
        instrument_code: &market.code,
        time: iso_ms(r.created),
        side: a.side.as_str(),
        price: a.price.map(|p| market.price(p)),
        amount: market.qty(a.amount),
        filled_amount: market.qty(r.filled),
        order_type: a.order_type.as_str(),
        status,
        time_in_force: with_tif.then(|| a.time_in_force.as_str()),
        is_post_only: with_tif.then_some(a.time_in_force == TimeInForce::PostOnly),
    })
}

/// A trade wrapper `{fee, trade}` as `account` sees it (`None` when the account is on
/// neither side).
pub fn trade_wrapper(
    markets: &Markets,
    r: &TradeRecord,
    account: AccountId,
) -> Option<TradeWrapper> {
    let side = r.side_of(account)?;
    let market = markets.market_of(r.trade.instrument)?;
    let t = &r.trade;
    let fee_coin = market.fee_currency(side.side);
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
        .currencies
        .get(usize::from(fee_coin.0))
        .map_or(0, |c| c.scale);
    let received_units = rescale(received, received_scale, coin_scale);
    let percentage = if received_units > 0 {
        i128::from(side.fee) * 1_000_000 / received_units
    } else {
        0
    };
    let matched_as = if side.maker { "MAKER" } else { "TAKER" };
    // Futures: the position this fill moved, on the account's side.
    let position = r.positions[usize::from(side.maker)];
    Some(TradeWrapper {
        fee: FeeBody {
            fee_amount: markets.balance(fee_coin, i128::from(side.fee)),
            fee_currency: markets.currency_code(fee_coin).to_owned(),
            fee_percentage: crate::format::decimal(percentage, 4),
            fee_type: matched_as,
        },
        trade: TradeBody {
            account_id: Uuid::of_account(account).to_string(),
            order_id: Uuid::of_order(side.order).to_string(),
            trade_id: Uuid::of_trade(t.id).to_string(),
            time: iso_ms(r.time),
            time_nanos: iso_nanos(r.time),
            instrument_code: market.code.clone(),
            side: side.side.as_str(),
            matched_as,
            order_type: "API",
            price: market.price(t.price),
            amount: market.qty(t.amount),
            filled_amount: market.qty(t.amount),
            sequence: r.sequence.to_string(),
            position_id: position.map(|(id, _)| id.to_string()),
            open_position_amount: position.map(|(_, size)| market.qty(matchbook::Qty(size.abs()))),
        },
    })
}

/// The wrappers of `trades` as `account` sees them.
pub fn trade_wrappers(
    markets: &Markets,
    trades: &[TradeRecord],
    account: AccountId,
) -> Vec<TradeWrapper> {
    trades
        .iter()
        .filter_map(|t| trade_wrapper(markets, t, account))
        .collect()
}

fn rescale(value: i128, from: u8, to: u8) -> i128 {
    if to >= from {
        value * 10i128.pow(u32::from(to - from))
    } else {
        value / 10i128.pow(u32::from(from - to))
    }
}
