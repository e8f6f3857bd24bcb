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
use matchbook::{AccountId, CancelScope, Command, EngineError, Event, OrderRef, Timestamp, Uuid};

use crate::auth::Caller;
use crate::body::Body;
use crate::cursor::CursorKind;
use crate::error::ApiError;
use crate::history::{HistoryQuery, Window};
use crate::keys::Scope;
use crate::params::Params;
use crate::records::{OrderForm, add_order_terms, order_ack, order_body, trade_wrappers};
use crate::state::{CANCEL_WAIT, Shared};
use crate::wire::orders::{OrderAck, OrderPage, OrderWithTrades};
use crate::wire::requests::CreateOrderRequest;

use super::order_request::{contingent_command, parse_order};

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
    let (record, linked) = place(&state, caller.0.account, &request).await?;
    let mut ack = order_ack(&state.markets, &record, "OPEN", true)?;
    ack.linked_order_id = linked.map(|l| Uuid::of_order(l).to_string());
    Ok(Json(ack).into_response())
}

/// Places an order for `account` as REST and the `TRADING` stream do: every field checked,
/// then the engine's answer; an order accepted and ended at once by its time in force is
/// answered as that refusal (its history record keeps it). Returns the order as accepted,
/// and the second leg of a one-cancels-the-other pair.
pub(crate) async fn place(
    state: &Shared,
    account: AccountId,
    request: &CreateOrderRequest,
) -> Result<(OrderRecord, Option<OrderRef>), ApiError> {
    let order = parse_order(state, account, request)?;
    let command = contingent_command(state, request, order)?;
    let outcome = state.submit(command).await?;
    let applied = outcome.result?;
    if let Some(refusal) = applied.rejected {
        return Err(refusal.into());
    }
    let handle = applied
        .order
        .ok_or(ApiError::Internal("a placed order without its handle"))?;
    let accepted = outcome
        .events
        .iter()
        .find_map(|e| match e.event {
            Event::OrderAccepted(a) if a.order == handle => Some(a),
            _ => None,
        })
        .ok_or(ApiError::Internal("a placed order without its acceptance"))?;
    let mut record = OrderRecord::accepted(accepted, outcome.time, 0);
    filled_at_entry(&mut record, &outcome.events);
    Ok((record, applied.linked))
}

/// Adds what the order filled while it was placed (it took from the book, or a stop
/// triggered at once), so the acknowledgement's `filled_amount` is true.
fn filled_at_entry(record: &mut OrderRecord, events: &[matchbook::EventRecord]) {
    let handle = record.accepted.order;
    for e in events {
        if let Event::Trade(t) = &e.event
            && (t.taker == handle || t.maker == handle)
        {
            record.filled.0 += t.amount.0;
            record.filled_notional.0 += t.price.notional(t.amount).0;
        }
    }
}

pub(crate) fn parse_order_id(text: &str) -> Result<OrderRef, ApiError> {
    let uuid = text
        .parse::<Uuid>()
        .map_err(|_| ApiError::bad("INVALID_ORDER_ID"))?;
    uuid.order_ref()
        .map_err(|_| ApiError::NotFound("ORDER_NOT_FOUND"))
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
    command: Command,
) -> Result<Response, ApiError> {
    let record = cancel_record(state, account, command).await?;
    Ok(Json(order_ack(&state.markets, &record, "CANCELLED", false)?).into_response())
}

/// Applies a cancel of one order and returns its record as it ended.
pub(crate) async fn cancel_record(
    state: &Shared,
    account: AccountId,
    command: Command,
) -> Result<OrderRecord, ApiError> {
    state
        .submit_then_read(command, CANCEL_WAIT, move |outcome, md| {
            outcome.result?;
            let order = outcome
                .events
                .iter()
                .find_map(|e| match e.event {
                    Event::OrderCancelled { order, .. } => Some(order),
                    _ => None,
                })
                .ok_or(ApiError::NotFound("ORDER_NOT_FOUND"))?;
            md.orders()
                .get(account, order.id)
                .cloned()
                .ok_or(ApiError::NotFound("ORDER_NOT_FOUND"))
        })
        .await?
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
        let market = state.markets.require(code)?.id;
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
    cancelled_ack(&state, account, Command::CancelOrder { account, order }).await
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
    let client_id = client_id
        .parse::<Uuid>()
        .map_err(|_| ApiError::bad("INVALID_CLIENT_UUID"))?;
    let account = caller.0.account;
    cancelled_ack(
        &state,
        account,
        Command::CancelByClientId { account, client_id },
    )
    .await
}

/// UUIDs listed in `texts`; 400 with `code` for one that is not.
fn uuid_list<'a>(
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
pub(crate) fn listed_orders<'a>(
    ids: impl Iterator<Item = &'a str>,
) -> Result<CancelScope, ApiError> {
    let uuids = uuid_list(ids, "INVALID_ORDER_ID")?;
    Ok(CancelScope::Orders(
        uuids
            .into_iter()
            .filter_map(|u| u.order_ref().ok())
            .collect(),
    ))
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
        CancelScope::Instrument(state.markets.require(code)?.id)
    } else if let Some(ids) = params.get("ids") {
        listed_orders(ids.split(','))?
    } else if let Some(ids) = params.get("client_ids") {
        CancelScope::ClientIds(uuid_list(ids.split(','), "INVALID_CLIENT_UUID")?)
    } else {
        CancelScope::All
    };
    Ok(Json(
        cancel_in_scope(&state, caller.0.account, scope).await?,
    ))
}

/// Cancels `account`'s open orders in `scope` (none there is no error); the ids of those
/// cancelled. REST's cancel-all and the `TRADING` stream's `CANCEL_ALL_ORDERS` use it.
pub(crate) async fn cancel_in_scope(
    state: &Shared,
    account: AccountId,
    scope: CancelScope,
) -> Result<Vec<String>, ApiError> {
    let outcome = state
        .submit_within(Command::CancelAll { account, scope }, CANCEL_WAIT)
        .await?;
    match outcome.result {
        Ok(_) | Err(EngineError::OrderNotFound) => {}
        Err(e) => return Err(e.into()),
    }
    let ids = (outcome.events.iter())
        .filter_map(|e| match e.event {
            Event::OrderCancelled { order, .. } => Some(Uuid::of_order(order).to_string()),
            _ => None,
        })
        .collect();
    Ok(ids)
}
