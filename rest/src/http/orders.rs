//! Orders (spec 4.2 and the addendum): create, list, read by id or client id, cancel by id,
//! by client id, and cancel all.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use matchbook::market::order_terms::OrderTerms;
use matchbook::market::orders::{OrderFilter, OrderPage as OrderHistoryPage, OrderRecord};
use matchbook::market::trades::TradeRecord;
use matchbook::runtime::ReadView;
use matchbook::{AccountId, CancelScope, Timestamp, Uuid};

use matchbook_node::orders::OrderTarget;

use crate::auth::caller::Caller;
use crate::auth::keys::Scope;
use crate::body::Body;
use crate::cursor::CursorKind;
use crate::entry::request::{listed_orders, parse_client_id, parse_order_id, uuid_list};
use crate::entry::service;
use crate::error::ApiError;
use crate::history::{HistoryQuery, Window};
use crate::params::Params;
use crate::records::{OrderForm, add_order_terms, order_ack, order_body, trade_wrappers};
use crate::state::Shared;
use crate::wire::orders::{OrderAck, OrderPage, OrderWithTrades};
use crate::wire::requests::CreateOrderRequest;

/// Creates an order.
#[utoipa::path(post, path = "/v1/account/orders", tag = "orders", security(("api_key" = [])),
    request_body = CreateOrderRequest,
    responses((status = 200, body = OrderAck, description = "Acknowledgement with status OPEN; `filled_amount` is what filled while it was placed"),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody),
        (status = 403, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody),
        (status = 422, body = crate::error::ErrorBody)))]
pub async fn create(
    State(state): State<Shared>,
    caller: Caller,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    caller.require(&[Scope::Trade])?;
    let request: CreateOrderRequest = Body::read(&bytes)?;
    let placed = service::place(&state.orders, &state.markets, caller.0.account, &request).await?;
    let mut ack = order_ack(&state.markets, &placed.record, "OPEN", true)?;
    ack.linked_order_id = placed.linked.map(|l| Uuid::of_order(l).to_string());
    Ok(Json(ack).into_response())
}

/// An order with its trades, as `{order, trades}`.
fn order_with_trades(
    state: &Shared,
    account: AccountId,
    (record, trades, terms): &OrderDetail,
    form: OrderForm,
) -> Result<OrderWithTrades, ApiError> {
    let mut order = order_body(&state.markets, record, form).ok_or(ApiError::Internal(
        "an order on an instrument the server does not list",
    ))?;
    if let Some(terms) = terms {
        add_order_terms(&state.markets, &mut order, record, terms);
    }
    Ok(OrderWithTrades {
        order,
        trades: trade_wrappers(&state.markets, trades, account),
    })
}

/// An order's record, its trades and its trigger terms, as read from market data.
type OrderDetail = (OrderRecord, Vec<TradeRecord>, Option<OrderTerms>);

/// The trigger terms of an order, if it has any beyond its record.
fn terms_of(md: &matchbook::market::MarketData, record: &OrderRecord) -> Option<OrderTerms> {
    md.order_terms().get(record.accepted.order.id).copied()
}

/// The trades an order record carries in an answer (the first
/// [`crate::trade_lists::EMBEDDED_TRADES`]).
pub(crate) fn trades_of(
    md: &matchbook::market::MarketData,
    record: &OrderRecord,
) -> Vec<TradeRecord> {
    crate::trade_lists::embedded(md, &record.trades)
}

/// A page's orders with their trades (unless `just_orders`) and terms, and its cursor.
fn page_details(
    md: &matchbook::market::MarketData,
    page: &OrderHistoryPage<'_>,
    just_orders: bool,
) -> (Vec<OrderDetail>, Option<u64>) {
    let list = (page.orders.iter())
        .map(|r| {
            let trades = if just_orders {
                Vec::new()
            } else {
                trades_of(md, r)
            };
            ((*r).clone(), trades, terms_of(md, r))
        })
        .collect();
    (list, page.cursor)
}

/// An order by id (activity in the last 24 hours).
#[utoipa::path(get, path = "/v1/account/orders/{order_id}", tag = "orders", security(("api_key" = [])),
    params(("order_id" = String, Path)),
    responses((status = 200, body = OrderWithTrades),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody), (status = 429, body = crate::error::ErrorBody)))]
pub async fn by_id(
    State(state): State<Shared>,
    caller: Caller,
    Path(order_id): Path<String>,
) -> Result<Json<OrderWithTrades>, ApiError> {
    caller.limit_holder(&state)?;
    let order = parse_order_id(&order_id)?;
    let account = caller.0.account;
    one_order(&state, account, move |view, now| {
        view.market.orders().by_id(account, order.id, now).ok()
    })
    .await
}

/// The most recent order with a client id (created in the last 30 days).
#[utoipa::path(get, path = "/v1/account/orders/client/{client_id}", tag = "orders", security(("api_key" = [])),
    params(("client_id" = String, Path)),
    responses((status = 200, body = OrderWithTrades),
        (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn by_client_id(
    State(state): State<Shared>,
    caller: Caller,
    Path(client_id): Path<String>,
) -> Result<Json<OrderWithTrades>, ApiError> {
    caller.limit_holder(&state)?;
    let client_id = client_id
        .parse::<Uuid>()
        .map_err(|_| ApiError::bad("INVALID_CLIENT_UUID"))?;
    let account = caller.0.account;
    one_order(&state, account, move |view, now| {
        // History reads a bounded run of the newest orders; an open order further back is
        // found through the engine's index of client ids.
        let open = (view.engine.order_by_client_id(account, client_id)).map(|o| o.handle().id);
        (view.market.orders())
            .by_client_id(account, client_id, open, now)
            .ok()
    })
    .await
}

/// One order of `account` as `find` locates it in history (as of now, with the engine
/// replica at hand), with its trades; 404 `ORDER_NOT_FOUND` when it does not.
async fn one_order<F>(
    state: &Shared,
    account: AccountId,
    find: F,
) -> Result<Json<OrderWithTrades>, ApiError>
where
    F: for<'a> FnOnce(&'a ReadView<'a>, Timestamp) -> Option<&'a OrderRecord> + Send + 'static,
{
    let now = state.now();
    let detail = state
        .view(move |view| {
            let md = view.market;
            find(view, now).map(|r| (r.clone(), trades_of(md, r), terms_of(md, r)))
        })
        .await?
        .ok_or(ApiError::NotFound("ORDER_NOT_FOUND"))?;
    order_with_trades(state, account, &detail, OrderForm::Full).map(Json)
}

/// Open orders, and inactive ones on request, newest first.
#[utoipa::path(get, path = "/v1/account/orders", tag = "orders", security(("api_key" = [])),
    params(("from" = Option<String>, Query), ("to" = Option<String>, Query),
        ("instrument_code" = Option<String>, Query),
        ("with_cancelled_and_rejected" = Option<bool>, Query, description = "Also every ended order in the window: cancelled, rejected and filled (it extends `with_just_filled_inactive`)"),
        ("with_just_filled_inactive" = Option<bool>, Query, description = "Also the ended orders in the window that filled, fully or partly before they were cancelled"),
        ("with_just_orders" = Option<bool>, Query, description = "Leave out each order's trades"),
        ("max_page_size" = Option<u32>, Query), ("cursor" = Option<String>, Query)),
    responses((status = 200, body = OrderPage),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody)))]
pub async fn list(
    State(state): State<Shared>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> Result<Json<OrderPage>, ApiError> {
    caller.limit_key(&state)?;
    let account = caller.0.account;
    let q = HistoryQuery::parse(
        &state,
        account,
        raw.as_deref(),
        Window::Orders,
        "max_page_size",
        CursorKind::Orders,
    )?;
    let cursor = q.record_cursor()?;
    let (params, from, to, max) = (q.params, q.from, q.to, q.page_size);
    let instrument = params
        .get("instrument_code")
        .map(|code| {
            state
                .markets
                .market(code)
                .map(|m| m.id)
                .ok_or(ApiError::bad("INVALID_INSTRUMENT_CODE"))
        })
        .transpose()?;
    let filter = OrderFilter {
        from,
        to,
        instrument,
        with_cancelled_and_rejected: params.flag("with_cancelled_and_rejected")?,
        with_just_filled_inactive: params.flag("with_just_filled_inactive")?,
        max_page_size: max,
        cursor,
    };
    let just_orders = params.flag("with_just_orders")?;
    let (page, next) = if filter.with_cancelled_and_rejected || filter.with_just_filled_inactive {
        state
            .market(move |md| {
                (md.orders().page(account, &filter)).map(|p| page_details(md, &p, just_orders))
            })
            .await??
    } else {
        // Open orders only (what bots poll): the engine's list of the account's live
        // orders, not a walk through its whole history.
        state
            .view(move |view| {
                let mut open: Vec<u64> = (view.engine.open_orders(account).iter())
                    .map(|o| o.handle().id)
                    .collect();
                open.sort_unstable_by(|a, b| b.cmp(a));
                let md = view.market;
                page_details(
                    md,
                    &md.orders().listed(account, &open, &filter),
                    just_orders,
                )
            })
            .await?
    };
    let order_history = page
        .iter()
        .map(|detail| order_with_trades(&state, account, detail, OrderForm::History))
        .collect::<Result<_, _>>()?;
    Ok(Json(OrderPage {
        order_history,
        max_page_size: max,
        cursor: state.cursors.next_page(CursorKind::Orders, account.0, next),
    }))
}

async fn cancelled_ack(
    state: &Shared,
    account: AccountId,
    target: OrderTarget,
) -> Result<Response, ApiError> {
    let record = service::cancel(&state.orders, account, target).await?;
    Ok(Json(order_ack(&state.markets, &record, "CANCELLED", false)?).into_response())
}

/// Cancels an open order by id, waiting up to 2 s for the engine.
#[utoipa::path(delete, path = "/v1/account/orders/{order_id}", tag = "orders", security(("api_key" = [])),
    params(("order_id" = String, Path), ("instrument_code" = Option<String>, Query)),
    responses((status = 200, body = OrderAck, description = "Acknowledgement with status CANCELLED"),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody),
        (status = 403, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn cancel(
    State(state): State<Shared>,
    caller: Caller,
    Path(order_id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    caller.require(&[Scope::Trade])?;
    let params = Params::parse(raw.as_deref())?;
    let order = parse_order_id(&order_id)?;
    let account = caller.0.account;
    if let Some(code) = params.get("instrument_code") {
        let market = crate::markets::require(&state.markets, code)?.id;
        let matches = state
            .engine(move |e| {
                e.order(order)
                    .is_some_and(|o| o.instrument() == market && o.account() == account)
            })
            .await?;
        if !matches {
            return Err(ApiError::NotFound("ORDER_NOT_FOUND"));
        }
    }
    cancelled_ack(&state, account, OrderTarget::Order(order)).await
}

/// Cancels the most recent open order with a client id.
#[utoipa::path(delete, path = "/v1/account/orders/client/{client_id}", tag = "orders", security(("api_key" = [])),
    params(("client_id" = String, Path)),
    responses((status = 200, body = OrderAck, description = "Acknowledgement with status CANCELLED"),
        (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn cancel_by_client_id(
    State(state): State<Shared>,
    caller: Caller,
    Path(client_id): Path<String>,
) -> Result<Response, ApiError> {
    caller.require(&[Scope::Trade])?;
    let target = OrderTarget::ClientId(parse_client_id(&client_id)?);
    cancelled_ack(&state, caller.0.account, target).await
}

/// Cancels every open order, or those of one instrument, or listed ids or client ids.
#[utoipa::path(delete, path = "/v1/account/orders", tag = "orders", security(("api_key" = [])),
    params(("instrument_code" = Option<String>, Query), ("ids" = Option<String>, Query),
        ("client_ids" = Option<String>, Query)),
    responses((status = 200, body = Vec<String>, description = "The cancelled order ids"),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody),
        (status = 403, body = crate::error::ErrorBody)))]
pub async fn cancel_all(
    State(state): State<Shared>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> Result<Json<Vec<String>>, ApiError> {
    caller.require(&[Scope::Trade])?;
    let params = Params::parse(raw.as_deref())?;
    let given = ["instrument_code", "ids", "client_ids"]
        .iter()
        .filter(|p| params.get(p).is_some())
        .count();
    if given > 1 {
        return Err(ApiError::bad("INVALID_QUERY"));
    }
    let scope = if let Some(code) = params.get("instrument_code") {
        CancelScope::Instrument(crate::markets::require(&state.markets, code)?.id)
    } else if let Some(ids) = params.get("ids") {
        listed_orders(ids.split(','))?
    } else if let Some(ids) = params.get("client_ids") {
        CancelScope::ClientIds(uuid_list(ids.split(','), "INVALID_CLIENT_UUID")?)
    } else {
        CancelScope::All
    };
    let account = caller.0.account;
    Ok(Json(
        service::cancel_all(&state.orders, account, scope).await?,
    ))
}
