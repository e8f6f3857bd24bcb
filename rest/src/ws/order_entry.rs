//! Order entry over the socket (`TRADING`): `CREATE_ORDER`, `UPDATE_ORDER`,
//! `CANCEL_ORDER` and `CANCEL_ALL_ORDERS` go through exactly what REST's create, amend,
//! cancel and cancel-all do ([`crate::entry`]: a TRADE key, every field checked the same
//! way, the node's order service) and are answered with REST's acknowledgement (the ids cancelled, for a
//! cancel-all), or with an error frame carrying REST's code. The order's events follow on
//! the `TRADING` channel.

use serde::Serialize;

use super::messages::Stamp;
use crate::auth::keys::{ApiKey, Scope};
use crate::body::Body;
use crate::entry::request::{amend_terms, listed_orders, parse_client_id, parse_order_id};
use crate::entry::service;
use crate::error::ApiError;
use crate::records::order_ack;
use crate::state::Shared;
use crate::wire::orders::OrderAck;
use crate::wire::requests::CreateOrderRequest;
use matchbook::CancelScope;
use matchbook_node::orders::OrderTarget;

/// `CREATE_ORDER_ACCEPTED` or `CANCEL_ORDER_ACCEPTED`: REST's acknowledgement.
#[derive(Debug, Serialize)]
pub struct EntryAck<'a> {
    /// `TRADING`.
    pub channel_name: &'static str,
    /// Which request it answers.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The acknowledgement REST would have sent.
    pub order: OrderAck<'a>,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// The key, if it may trade.
fn trader(key: Option<&ApiKey>) -> Result<&ApiKey, ApiError> {
    let key = key.ok_or(ApiError::Unauthorized("MISSING_AUTHENTICATION"))?;
    if !key.has_any(&[Scope::Trade]) {
        return Err(ApiError::Forbidden("MISSING_PERMISSION"));
    }
    Ok(key)
}

/// Places the order of a `CREATE_ORDER`; the answer frame's JSON.
pub async fn create(
    state: &Shared,
    key: Option<&ApiKey>,
    order: &serde_json::Value,
) -> Result<String, ApiError> {
    let key = trader(key)?;
    let bytes = serde_json::to_vec(order).map_err(|_| ApiError::bad("INVALID_JSON"))?;
    let request: CreateOrderRequest = Body::read(&bytes)?;
    let placed = service::place(&state.orders, &state.markets, key.account, &request).await?;
    let ack = order_ack(&state.markets, &placed.record, "OPEN", true)?;
    answer(state, "CREATE_ORDER_ACCEPTED", ack)
}

/// Cancels the order of a `CANCEL_ORDER`; the answer frame's JSON.
pub async fn cancel(
    state: &Shared,
    key: Option<&ApiKey>,
    order_id: Option<&str>,
    client_id: Option<&str>,
) -> Result<String, ApiError> {
    let key = trader(key)?;
    let target = match (order_id, client_id) {
        (Some(id), _) => OrderTarget::Order(parse_order_id(id)?),
        (None, Some(id)) => OrderTarget::ClientId(parse_client_id(id)?),
        (None, None) => return Err(ApiError::bad("INVALID_ORDER_ID")),
    };
    let record = service::cancel(&state.orders, key.account, target).await?;
    let ack = order_ack(&state.markets, &record, "CANCELLED", false)?;
    answer(state, "CANCEL_ORDER_ACCEPTED", ack)
}

/// Amends the order of an `UPDATE_ORDER` (`{order_id | client_id, amount, price}`); the
/// answer frame's JSON.
pub async fn update(
    state: &Shared,
    key: Option<&ApiKey>,
    order: &serde_json::Value,
) -> Result<String, ApiError> {
    let key = trader(key)?;
    let text = |name: &str| match order.get(name) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(text)) => Ok(Some(text.as_str())),
        Some(_) => Err(ApiError::bad(crate::body::field_code(name))),
    };
    let target = match (text("order_id")?, text("client_id")?) {
        (Some(id), None) => OrderTarget::Order(parse_order_id(id)?),
        (None, Some(id)) => OrderTarget::ClientId(parse_client_id(id)?),
        _ => return Err(ApiError::bad("INVALID_ORDER_ID")),
    };
    let mut terms = order.clone();
    if let Some(fields) = terms.as_object_mut() {
        fields.remove("order_id");
        fields.remove("client_id");
    }
    let bytes = serde_json::to_vec(&terms).map_err(|_| ApiError::bad("INVALID_JSON"))?;
    let request = amend_terms(&bytes)?;
    let account = key.account;
    let record = service::amend(&state.orders, &state.markets, account, target, &request).await?;
    let ack = order_ack(&state.markets, &record, "OPEN", true)?;
    answer(state, "UPDATE_ORDER_ACCEPTED", ack)
}

/// `CANCEL_ALL_ORDERS_ACCEPTED`: the orders a `CANCEL_ALL_ORDERS` cancelled.
#[derive(Debug, Serialize)]
pub struct CancelledAll {
    /// `TRADING`.
    pub channel_name: &'static str,
    /// `CANCEL_ALL_ORDERS_ACCEPTED`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Their ids, as REST's cancel-all lists them.
    pub order_ids: Vec<String>,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// Cancels what a `CANCEL_ALL_ORDERS` names (every open order, those of
/// `instrument_code`, or the `order_ids` listed: one of the two at most), as REST's
/// `DELETE /v1/account/orders` does; the answer frame's JSON.
pub async fn cancel_all(
    state: &Shared,
    key: Option<&ApiKey>,
    order_ids: Option<&[String]>,
    instrument_code: Option<&str>,
) -> Result<String, ApiError> {
    let key = trader(key)?;
    let scope = match (order_ids, instrument_code) {
        (Some(_), Some(_)) => return Err(ApiError::bad("INVALID_MESSAGE_FORMAT")),
        (Some(ids), None) => listed_orders(ids.iter().map(String::as_str))?,
        (None, Some(code)) => {
            CancelScope::Instrument(crate::markets::require(&state.markets, code)?.id)
        }
        (None, None) => CancelScope::All,
    };
    let order_ids = service::cancel_all(&state.orders, key.account, scope).await?;
    serde_json::to_string(&CancelledAll {
        channel_name: "TRADING",
        kind: "CANCEL_ALL_ORDERS_ACCEPTED",
        order_ids,
        stamp: Stamp::of(state.now()),
    })
    .map_err(|_| ApiError::Internal("an acknowledgement that does not serialise"))
}

fn answer(state: &Shared, kind: &'static str, order: OrderAck<'_>) -> Result<String, ApiError> {
    serde_json::to_string(&EntryAck {
        channel_name: "TRADING",
        kind,
        order,
        stamp: Stamp::of(state.now()),
    })
    .map_err(|_| ApiError::Internal("an acknowledgement that does not serialise"))
}
