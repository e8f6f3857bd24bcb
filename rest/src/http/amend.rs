//! Amending an open order (an extension; clients written for the public exchange send it):
//! `PUT /v1/account/orders/{order_id}` and `PUT /v1/account/orders/client/{client_id}`
//! with a new total `amount` and/or limit `price`, as the engine's amend has it (a size-down
//! at the same price keeps the order's place in the queue; a new price or a larger amount
//! re-queues it and may trade). The `TRADING` stream's `UPDATE_ORDER` is the same amend
//! ([`crate::entry`]).

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use matchbook::AccountId;
use matchbook_node::orders::OrderTarget;

use crate::auth::caller::Caller;
use crate::auth::keys::Scope;
use crate::entry::request::{amend_terms, parse_client_id, parse_order_id};
use crate::entry::service;
use crate::error::ApiError;
use crate::records::order_ack;
use crate::state::Shared;
use crate::wire::orders::OrderAck;
use crate::wire::requests::AmendOrderRequest;

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
    let target = OrderTarget::Order(parse_order_id(&order_id)?);
    answer(&state, caller.0.account, target, &bytes).await
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
    let target = OrderTarget::ClientId(parse_client_id(&client_id)?);
    answer(&state, caller.0.account, target, &bytes).await
}

/// Amends `account`'s order `target` to the terms in `bytes`; the acknowledgement, as
/// create answers.
async fn answer(
    state: &Shared,
    account: AccountId,
    target: OrderTarget,
    bytes: &[u8],
) -> Result<Response, ApiError> {
    let request = amend_terms(bytes)?;
    let record = service::amend(&state.orders, &state.markets, account, target, &request).await?;
    Ok(Json(order_ack(&state.markets, &record, "OPEN", true)?).into_response())
}
