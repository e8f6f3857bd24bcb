//! Amending an open order (an extension; clients written for the public exchange send it):
//! `PUT /v1/account/orders/{order_id}` and `PUT /v1/account/orders/client/{client_id}`
//! with a new total `amount` and/or limit `price`, as the engine's amend has it (a size-down
//! at the same price keeps the order's place in the queue; a new price or a larger amount
//! re-queues it and may trade). The `TRADING` stream's `UPDATE_ORDER` goes through here too.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use matchbook::market::orders::OrderRecord;
use matchbook::{AccountId, Command, OrderRef, Uuid};

use crate::auth::Caller;
use crate::body::Body;
use crate::error::ApiError;
use crate::keys::Scope;
use crate::records::order_ack;
use crate::state::{CANCEL_WAIT, Shared};
use crate::wire::Numeric;
use crate::wire::orders::OrderAck;
use crate::wire::requests::AmendOrderRequest;

use super::order_request::{amount_field, price_field};
use super::orders::parse_order_id;

/// Which open order of the caller's an amend names.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AmendTarget {
    /// By the exchange's order id.
    Order(OrderRef),
    /// The newest open order with this client id.
    ClientId(Uuid),
}

/// Amends an open order by id.
#[utoipa::path(put, path = "/v1/account/orders/{order_id}", tag = "orders", security(("api_key" = [])),
    params(("order_id" = String, Path)),
    request_body = AmendOrderRequest,
    responses((status = 200, body = OrderAck, description = "Acknowledgement with status OPEN, the new amount and price; `filled_amount` counts what the amend traded"),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody),
        (status = 403, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody),
        (status = 422, body = crate::error::ErrorBody)))]
pub async fn amend(
    State(state): State<Shared>,
    caller: Caller,
    Path(order_id): Path<String>,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    caller.require(&[Scope::Trade])?;
    let target = AmendTarget::Order(parse_order_id(&order_id)?);
    let request = amend_terms(&bytes)?;
    answer(
        &state,
        amend_order(&state, caller.0.account, target, &request).await?,
    )
}

/// Amends the newest open order with a client id.
#[utoipa::path(put, path = "/v1/account/orders/client/{client_id}", tag = "orders", security(("api_key" = [])),
    params(("client_id" = String, Path)),
    request_body = AmendOrderRequest,
    responses((status = 200, body = OrderAck, description = "Acknowledgement with status OPEN, the new amount and price"),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody),
        (status = 403, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody),
        (status = 422, body = crate::error::ErrorBody)))]
pub async fn amend_by_client_id(
    State(state): State<Shared>,
    caller: Caller,
    Path(client_id): Path<String>,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    caller.require(&[Scope::Trade])?;
    let client_id =
        (client_id.parse::<Uuid>()).map_err(|_| ApiError::bad("INVALID_CLIENT_UUID"))?;
    let request = amend_terms(&bytes)?;
    let target = AmendTarget::ClientId(client_id);
    answer(
        &state,
        amend_order(&state, caller.0.account, target, &request).await?,
    )
}

/// The terms of an amend: `amount` and `price`, nothing else. Any other field (`side`,
/// `type`, `instrument_code`, ...) asks for a change no amend makes, so the request is
/// refused whole (400 `INVALID_AMEND`) rather than applied without it.
pub(crate) fn amend_terms(bytes: &[u8]) -> Result<AmendOrderRequest, ApiError> {
    let body = Body::parse(bytes)?;
    if body.names().any(|name| name != "amount" && name != "price") {
        return Err(ApiError::bad("INVALID_AMEND"));
    }
    body.typed()
}

/// The acknowledgement of an amended order, as create answers.
fn answer(state: &Shared, record: OrderRecord) -> Result<Response, ApiError> {
    Ok(Json(order_ack(&state.markets, &record, "OPEN", true)?).into_response())
}

/// Amends `account`'s order `target` as REST and the `TRADING` stream do: the fields are
/// read at the order's market's precision, then the engine's answer; returns the order's
/// record after the amend (and whatever it traded).
pub(crate) async fn amend_order(
    state: &Shared,
    account: AccountId,
    target: AmendTarget,
    request: &AmendOrderRequest,
) -> Result<OrderRecord, ApiError> {
    let found = state
        .engine(move |e| {
            let order = match target {
                AmendTarget::Order(order) => e.order(order),
                AmendTarget::ClientId(client_id) => e.order_by_client_id(account, client_id),
            };
            order
                .filter(|o| o.account() == account)
                .map(|o| (o.handle(), o.instrument()))
        })
        .await?;
    let (order, instrument) = found.ok_or(ApiError::NotFound("ORDER_NOT_FOUND"))?;
    let market = (state.markets.market_of(instrument))
        .ok_or(ApiError::NotFound("INVALID_INSTRUMENT_CODE"))?;
    let amount = (request.amount.as_ref())
        .map(|Numeric(text)| amount_field(market, text))
        .transpose()?;
    let price = (request.price.as_ref())
        .map(|Numeric(text)| price_field(market, text))
        .transpose()?;
    let command = Command::AmendOrder {
        account,
        order,
        amount,
        price,
    };
    state
        .submit_then_read(command, CANCEL_WAIT, move |outcome, md| {
            outcome.result?;
            (md.orders().get(account, order.id).cloned())
                .ok_or(ApiError::NotFound("ORDER_NOT_FOUND"))
        })
        .await?
}
