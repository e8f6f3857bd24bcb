//! Order requests as the engine's terms, for HTTP and the `TRADING` channel alike: a
//! create-order body as a command (every field checked at the edge: amounts and prices at
//! the market's precision, time in force and its spellings, the trigger terms, an
//! iceberg's display; then the contingent forms, a bracket entry or an OCO pair), an
//! amend's terms, order and client ids, and cancel-all lists.

use matchbook::fixed::ParseDecimalError;
use matchbook::{
    AccountId, CancelScope, Command, NewOrder, OrderRef, OrderType, TimeInForce, Trail, TriggerRef,
    Uuid,
};

use crate::body::Body;
use crate::error::ApiError;
use crate::markets::{Market, Markets};
use crate::wire::requests::{AmendOrderRequest, CreateOrderRequest, OrderTypeName, SideName};
use crate::wire::{Flag, Numeric};

fn decimal_field(
    text: &str,
    decimals: u8,
    negative: &'static str,
    precision: &'static str,
    invalid: &'static str,
) -> Result<i64, ApiError> {
    matchbook::fixed::parse_scaled(text, decimals).map_err(|e| {
        ApiError::bad(match e {
            ParseDecimalError::Sign if text.starts_with('-') => negative,
            ParseDecimalError::TooManyDecimals => precision,
            _ => invalid,
        })
    })
}

/// An amount at `market`'s precision, with the create codes for what is wrong with it.
pub fn amount_field(market: &Market, text: &str) -> Result<matchbook::Qty, ApiError> {
    decimal_field(
        text,
        market.amount_precision,
        "NEGATIVE_AMOUNT",
        "BAD_AMOUNT_PRECISION",
        "INVALID_AMOUNT",
    )
    .map(matchbook::Qty)
}

/// A price at `market`'s precision, with the create codes for what is wrong with it.
pub fn price_field(market: &Market, text: &str) -> Result<matchbook::Price, ApiError> {
    decimal_field(
        text,
        market.market_precision,
        "NEGATIVE_PRICE",
        "BAD_PRICE_PRECISION",
        "INVALID_PRICE",
    )
    .map(matchbook::Price)
}

fn time_in_force(request: &CreateOrderRequest) -> TimeInForce {
    let tif = (request.time_in_force).map_or(TimeInForce::GoodTillCancelled, |t| t.0);
    match (request.is_post_only, tif) {
        (Some(Flag(true)), TimeInForce::GoodTillCancelled) => TimeInForce::PostOnly,
        _ => tif,
    }
}

fn new_client_id() -> Result<Uuid, ApiError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|_| ApiError::Internal("no randomness for a client id"))?;
    // RFC 9562 version 4, variant 0b10.
    let v = u128::from_be_bytes(bytes);
    let v = (v & !(0xf << 76) & !(0b11 << 62)) | (4 << 76) | (0b10 << 62);
    Ok(Uuid(v))
}

/// The trigger-order extensions of a create body: reference, trail (a price or basis
/// points, not both) and limit offset. Whether they suit the order type is the engine's
/// check (`INVALID_TRAIL`, `INVALID_TRIGGER_REFERENCE`).
fn order_terms(
    market: &Market,
    request: &CreateOrderRequest,
) -> Result<(TriggerRef, Option<Trail>, Option<matchbook::Price>), ApiError> {
    let reference = (request.trigger_reference).map_or(TriggerRef::LastPrice, |r| r.0);
    let offset = |field: &Option<Numeric>| {
        field
            .as_ref()
            .map(|Numeric(text)| {
                price_field(market, text).map_err(|_| ApiError::bad("INVALID_TRAIL"))
            })
            .transpose()
    };
    let basis_points = (request.trailing_offset_bps.as_ref())
        .map(|Numeric(text)| whole_number(text).ok_or(ApiError::bad("INVALID_TRAIL")))
        .transpose()?;
    let trail = match (offset(&request.trailing_offset)?, basis_points) {
        (Some(p), None) => Some(Trail::Price(p)),
        (None, Some(bps)) => Some(Trail::Bps(bps)),
        (None, None) => None,
        (Some(_), Some(_)) => return Err(ApiError::bad("INVALID_TRAIL")),
    };
    Ok((reference, trail, offset(&request.limit_offset)?))
}

/// `text` as a whole number of digits only (no sign, no fraction, no exponent), if it
/// fits 32 bits; the engine checks its range.
fn whole_number(text: &str) -> Option<u32> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| text.parse().ok()).flatten()
}

/// The engine's order type for its wire name.
fn order_type_of(name: OrderTypeName) -> OrderType {
    name.0
}

/// Turns a create-order body into an engine order, checking every field at the edge.
pub fn parse_order(
    markets: &Markets,
    account: AccountId,
    request: &CreateOrderRequest,
) -> Result<NewOrder, ApiError> {
    let code =
        (request.instrument_code.as_deref()).ok_or(ApiError::bad("INVALID_INSTRUMENT_CODE"))?;
    // The spec lists 200, 400 and 422 for create: an unknown instrument is a bad request.
    let market = (markets.market(code)).ok_or(ApiError::bad("INVALID_INSTRUMENT_CODE"))?;
    let order_type = request
        .order_type
        .map(order_type_of)
        .ok_or(ApiError::bad("MISSING_ORDER_TYPE"))?;
    let Some(SideName(side)) = request.side else {
        return Err(ApiError::bad("MISSING_SIDE"));
    };
    let Some(Numeric(amount)) = &request.amount else {
        return Err(ApiError::bad("INVALID_AMOUNT"));
    };
    let amount = amount_field(market, amount)?;
    let price = match &request.price {
        Some(Numeric(p)) => Some(price_field(market, p)?),
        None if !order_type.needs_price() => None,
        None => return Err(ApiError::bad("MISSING_PRICE")),
    };
    let trigger_price = (request.trigger_price.as_ref())
        .map(|Numeric(p)| price_field(market, p))
        .transpose()?;
    let client_id = match &request.client_id {
        Some(text) => text
            .parse::<Uuid>()
            .map_err(|_| ApiError::bad("INVALID_CLIENT_UUID"))?,
        None => new_client_id()?,
    };
    let expire_at = match &request.expire_after {
        Some(text) => {
            Some(crate::params::parse_time(text, true).ok_or(ApiError::bad("INVALID_EXPIRY"))?)
        }
        None => None,
    };
    let (trigger_ref, trail, limit_offset) = order_terms(market, request)?;
    let display = match &request.display_amount {
        Some(Numeric(text)) => Some(matchbook::Qty(decimal_field(
            text,
            market.amount_precision,
            "INVALID_DISPLAY",
            "BAD_AMOUNT_PRECISION",
            "INVALID_DISPLAY",
        )?)),
        None => None,
    };
    Ok(NewOrder {
        account,
        instrument: market.id,
        side,
        order_type,
        time_in_force: time_in_force(request),
        price,
        trigger_price,
        trigger_ref,
        trail,
        limit_offset,
        display,
        amount,
        expire_at,
        client_id: Some(client_id),
        stp: None,
        reduce_only: request.reduce_only.is_some_and(|Flag(on)| on),
    })
}

/// The command a create body asks for: a plain order, a bracket entry (with
/// `take_profit_price` and `stop_loss_price`) or an OCO pair's first leg (with `oco_order`).
pub fn contingent_command(
    markets: &Markets,
    request: &CreateOrderRequest,
    order: NewOrder,
) -> Result<Command, ApiError> {
    let code = request.instrument_code.as_deref().unwrap_or_default();
    let market = (markets.market(code)).ok_or(ApiError::bad("INVALID_INSTRUMENT_CODE"))?;
    let price = |field: &Option<Numeric>| {
        field
            .as_ref()
            .map(|Numeric(text)| price_field(market, text))
            .transpose()
    };
    let exits = (
        price(&request.take_profit_price)?,
        price(&request.stop_loss_price)?,
    );
    let stop_limit = price(&request.stop_loss_limit_price)?;
    match (exits, &request.oco_order) {
        ((None, None), None) if stop_limit.is_none() => Ok(Command::PlaceOrder(order)),
        ((Some(take_profit), Some(stop_loss)), None) => Ok(Command::PlaceBracket {
            entry: order,
            exits: matchbook::BracketExits {
                take_profit,
                stop_loss,
                stop_limit,
            },
        }),
        ((None, None), Some(leg)) if stop_limit.is_none() => {
            let order_type = leg
                .order_type
                .map(order_type_of)
                .ok_or(ApiError::bad("MISSING_ORDER_TYPE"))?;
            let amount = match &leg.amount {
                Some(Numeric(text)) => amount_field(market, text)?,
                None => order.amount,
            };
            let second = NewOrder {
                order_type,
                price: price(&leg.price)?,
                trigger_price: price(&leg.trigger_price)?,
                amount,
                client_id: None,
                trail: None,
                limit_offset: None,
                display: None,
                ..order
            };
            Ok(Command::PlaceOco {
                first: order,
                second: Box::new(second),
            })
        }
        _ => Err(ApiError::bad("INVALID_CONTINGENT_ORDER")),
    }
}

/// An order id as the exchange spells it: 400 `INVALID_ORDER_ID` for no UUID, 404
/// `ORDER_NOT_FOUND` for one that names no order of this exchange.
pub fn parse_order_id(text: &str) -> Result<OrderRef, ApiError> {
    let uuid = text
        .parse::<Uuid>()
        .map_err(|_| ApiError::bad("INVALID_ORDER_ID"))?;
    uuid.order_ref()
        .map_err(|_| ApiError::NotFound("ORDER_NOT_FOUND"))
}

/// A client id: 400 `INVALID_CLIENT_UUID` for no UUID.
pub fn parse_client_id(text: &str) -> Result<Uuid, ApiError> {
    (text.parse::<Uuid>()).map_err(|_| ApiError::bad("INVALID_CLIENT_UUID"))
}

/// UUIDs listed in `texts`; 400 with `code` for one that is not.
pub fn uuid_list<'a>(
    texts: impl Iterator<Item = &'a str>,
    code: &'static str,
) -> Result<Vec<Uuid>, ApiError> {
    texts
        .map(|s| s.trim().parse::<Uuid>().map_err(|_| ApiError::bad(code)))
        .collect()
}

/// The cancel-all scope of listed order ids: a text that is no UUID is 400
/// `INVALID_ORDER_ID`; a UUID that names no order of this server's is left out (it has
/// nothing to cancel).
pub fn listed_orders<'a>(ids: impl Iterator<Item = &'a str>) -> Result<CancelScope, ApiError> {
    let uuids = uuid_list(ids, "INVALID_ORDER_ID")?;
    Ok(CancelScope::Orders(
        uuids
            .into_iter()
            .filter_map(|u| u.order_ref().ok())
            .collect(),
    ))
}

/// The terms of an amend: `amount` and `price`, nothing else. Any other field (`side`,
/// `type`, `instrument_code`, ...) asks for a change no amend makes, so the request is
/// refused whole (400 `INVALID_AMEND`) rather than applied without it.
pub fn amend_terms(bytes: &[u8]) -> Result<AmendOrderRequest, ApiError> {
    let body = Body::parse(bytes)?;
    if body.names().any(|name| name != "amount" && name != "price") {
        return Err(ApiError::bad("INVALID_AMEND"));
    }
    body.typed()
}
