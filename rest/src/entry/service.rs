//! The node's order service ([`OrderService`]) for the async gateways: HTTP's order
//! routes and the WebSocket's `TRADING` requests both come here, with the request already
//! read from their wire format ([`super::request`]), and get the order's record back from
//! market data in the same hop, or an [`ApiError`] mapped once from the service's error.

use std::time::Duration;

use matchbook::market::orders::OrderRecord;
use matchbook::{AccountId, CancelScope, OrderRef, Uuid};
use matchbook_node::orders::{Answer, OrderEntryError, OrderService, OrderTarget, Placed};
use tokio::sync::oneshot;

use super::request::{amount_field, contingent_command, parse_order, price_field};
use crate::error::ApiError;
use crate::markets::Markets;
use crate::wire::Numeric;
use crate::wire::requests::{AmendOrderRequest, CreateOrderRequest};

/// How long cancels (and amends) wait for the engine's confirmation (spec 4.2).
pub const CANCEL_WAIT: Duration = Duration::from_secs(2);

impl From<OrderEntryError> for ApiError {
    fn from(e: OrderEntryError) -> Self {
        match e {
            OrderEntryError::Refused(e) => Self::Engine(e),
            OrderEntryError::NotFound => Self::NotFound("ORDER_NOT_FOUND"),
            OrderEntryError::NoHistory => Self::Internal("market data keeps no order history"),
            OrderEntryError::NotAPlacement => Self::Internal("a placement that is none"),
            OrderEntryError::Runtime(e) => Self::Runtime(e),
        }
    }
}

/// Runs one service call and awaits its answer (at most `wait`, when given).
async fn call<T: Send + 'static>(
    wait: Option<Duration>,
    start: impl FnOnce(
        Box<dyn FnOnce(Answer<T>) + Send>,
    ) -> Result<(), matchbook::runtime::RuntimeError>,
) -> Result<T, ApiError> {
    let (tx, rx) = oneshot::channel();
    start(Box::new(move |answer| {
        let _ = tx.send(answer);
    }))?;
    let stopped = |_| ApiError::Runtime(matchbook::runtime::RuntimeError::Stopped);
    let answer = match wait {
        Some(wait) => (tokio::time::timeout(wait, rx).await)
            .map_err(|_| ApiError::Timeout)?
            .map_err(stopped)?,
        None => rx.await.map_err(stopped)?,
    };
    Ok(answer?)
}

/// Places the order of a create request for `account`: every field checked, then the
/// engine's answer; an order accepted and ended at once by its time in force is answered
/// as that refusal (its history record keeps it). Returns its record right after the
/// command (what filled at entry included), and an OCO pair's second leg.
pub async fn place(
    orders: &OrderService,
    markets: &Markets,
    account: AccountId,
    request: &CreateOrderRequest,
) -> Result<Placed, ApiError> {
    let order = parse_order(markets, account, request)?;
    let command = contingent_command(markets, request, order)?;
    call(None, |reply| orders.place(command, reply)).await
}

/// Amends `account`'s open order `target`: the fields are read at the order's market's
/// precision, then the engine's answer; returns the order's record after the amend (and
/// whatever it traded).
pub async fn amend(
    orders: &OrderService,
    markets: &Markets,
    account: AccountId,
    target: OrderTarget,
    request: &AmendOrderRequest,
) -> Result<OrderRecord, ApiError> {
    let (order, instrument) = call(None, |reply| orders.find(account, target, reply)).await?;
    let market =
        (markets.market_of(instrument)).ok_or(ApiError::NotFound("INVALID_INSTRUMENT_CODE"))?;
    let amount = (request.amount.as_ref())
        .map(|Numeric(text)| amount_field(market, text))
        .transpose()?;
    let price = (request.price.as_ref())
        .map(|Numeric(text)| price_field(market, text))
        .transpose()?;
    let terms = (amount, price);
    call(Some(CANCEL_WAIT), |reply| {
        orders.amend(account, order, terms, reply)
    })
    .await
}

/// Cancels `account`'s open order `target`; its record as it ended.
pub async fn cancel(
    orders: &OrderService,
    account: AccountId,
    target: OrderTarget,
) -> Result<OrderRecord, ApiError> {
    call(Some(CANCEL_WAIT), |reply| {
        orders.cancel(account, target, reply)
    })
    .await
}

/// Cancels `account`'s open orders in `scope` (none there is no error); the ids of those
/// cancelled, as the exchange spells them.
pub async fn cancel_all(
    orders: &OrderService,
    account: AccountId,
    scope: CancelScope,
) -> Result<Vec<String>, ApiError> {
    let cancelled: Vec<OrderRef> = call(Some(CANCEL_WAIT), |reply| {
        orders.cancel_all(account, scope, reply)
    })
    .await?;
    Ok(cancelled
        .into_iter()
        .map(|o| Uuid::of_order(o).to_string())
        .collect())
}
