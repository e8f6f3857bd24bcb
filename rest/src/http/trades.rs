//! Trades (spec 4.3): the account's trade history with the time-window rules and cursors,
//! the trades of one order, and one trade by id.

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use matchbook::market::query::DAY;
use matchbook::market::trades::{TradeFilter, TradeRecord};
use matchbook::{InstrumentId, Uuid};

use crate::auth::caller::Caller;
use crate::cursor::CursorKind;
use crate::error::ApiError;
use crate::history::{HistoryQuery, Window};
use crate::params::Params;
use crate::records::{trade_wrapper, trade_wrappers};
use crate::state::Shared;
use crate::trade_lists;
use crate::wire::orders::{TradeList, TradePage, TradeWrapper};

/// The account's trades, newest first.
#[utoipa::path(get, path = "/v1/account/trades", tag = "trades", security(("api_key" = [])),
    params(("from" = Option<String>, Query, description = "ISO 8601, epoch s/ms/us or YYYY-MM-DD"),
        ("to" = Option<String>, Query, description = "As from, plus epoch ns"),
        ("instrument_code" = Option<String>, Query, description = "Code or comma-separated codes"),
        ("max_page_size" = Option<u32>, Query, description = "0 to 100, default 100"),
        ("cursor" = Option<String>, Query)),
    responses((status = 200, body = TradePage),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody)))]
pub async fn list(
    State(state): State<Shared>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> Result<Json<TradePage>, ApiError> {
    caller.limit_key(&state)?;
    let account = caller.0.account;
    let q = HistoryQuery::parse(
        &state,
        account,
        raw.as_deref(),
        Window::Trades,
        "max_page_size",
        CursorKind::Trades,
    )?;
    let (from, to, max, cursor) = (q.from, q.to, q.page_size, q.record_cursor()?);
    let instruments: Option<Vec<InstrumentId>> = q
        .params
        .get("instrument_code")
        .map(|list| {
            list.split(',')
                .map(|code| {
                    state
                        .markets
                        .market(code.trim())
                        .map(|m| m.id)
                        .ok_or(ApiError::bad("INVALID_INSTRUMENT_CODE"))
                })
                .collect()
        })
        .transpose()?;
    let (trades, next) = state
        .market(move |md| {
            let filter = TradeFilter {
                from,
                to,
                instruments: instruments.as_deref(),
                max_page_size: max,
                cursor,
            };
            md.trades().account_page(account, &filter).map(|p| {
                (
                    p.trades.iter().map(|t| **t).collect::<Vec<TradeRecord>>(),
                    p.cursor,
                )
            })
        })
        .await??;
    Ok(Json(TradePage {
        trade_history: trade_wrappers(&state.markets, &trades, account),
        max_page_size: max,
        cursor: state.cursors.next_page(CursorKind::Trades, account.0, next),
    }))
}

/// The trades of one order, oldest first, a page at a time (empty for an unknown order).
#[utoipa::path(get, path = "/v1/account/orders/{order_id}/trades", tag = "trades", security(("api_key" = [])),
    params(("order_id" = String, Path),
        ("max_page_size" = Option<u32>, Query, description = "0 to 100, default 100"),
        ("cursor" = Option<String>, Query, description = "From the previous page, when the order has more trades")),
    responses((status = 200, body = TradeList),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody),
        (status = 429, body = crate::error::ErrorBody)))]
pub async fn of_order(
    State(state): State<Shared>,
    caller: Caller,
    Path(order_id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<TradeList>, ApiError> {
    caller.limit_holder(&state)?;
    let uuid = order_id
        .parse::<Uuid>()
        .map_err(|_| ApiError::bad("INVALID_ORDER_ID"))?;
    let account = caller.0.account;
    let params = Params::parse(raw.as_deref())?;
    let size = params.page_size("max_page_size")?;
    let cursor = state
        .cursors
        .param(&params, CursorKind::OrderTrades, account.0)?;
    let Ok(order) = uuid.order_ref() else {
        return Ok(Json(TradeList {
            trade_history: Vec::new(),
            cursor: None,
        }));
    };
    let start = cursor.map_or(Ok(0), |c| trade_lists::start_of(c, order.id))?;
    let (trades, next) = state
        .market(move |md| {
            (md.orders().get(account, order.id)).map_or((Vec::new(), None), |r| {
                trade_lists::page(md, &r.trades, start, size)
            })
        })
        .await?;
    let next = next.map(|n| trade_lists::cursor_position(order.id, n));
    Ok(Json(TradeList {
        trade_history: trade_wrappers(&state.markets, &trades, account),
        cursor: state
            .cursors
            .next_page(CursorKind::OrderTrades, account.0, next),
    }))
}

/// One trade of the account by id (last 30 days).
#[utoipa::path(get, path = "/v1/account/trade/{trade_id}", tag = "trades", security(("api_key" = [])),
    params(("trade_id" = String, Path)),
    responses((status = 200, body = TradeWrapper),
        (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn by_id(
    State(state): State<Shared>,
    caller: Caller,
    Path(trade_id): Path<String>,
) -> Result<Json<TradeWrapper>, ApiError> {
    caller.limit_key(&state)?;
    let id = trade_id
        .parse::<Uuid>()
        .map_err(|_| ApiError::bad("INVALID_TRADE_ID"))?
        .trade_id()
        .map_err(|_| ApiError::NotFound("INVALID_TRADE_ID"))?;
    let account = caller.0.account;
    let horizon = matchbook::Timestamp(state.now().0 - 30 * DAY);
    let record = state
        .market(move |md| md.trades().get(id).copied())
        .await?
        .filter(|r| r.time >= horizon && r.side_of(account).is_some())
        .ok_or(ApiError::NotFound("INVALID_TRADE_ID"))?;
    trade_wrapper(&state.markets, &record, account)
        .map(Json)
        .ok_or(ApiError::Internal(
            "a trade on an instrument the server does not list",
        ))
}

/// The same trade at the path older clients ask (`bitpanda-aio`'s `get_account_trade`).
#[utoipa::path(get, path = "/v1/account/trades/{trade_id}", tag = "trades", security(("api_key" = [])),
    params(("trade_id" = String, Path)),
    responses((status = 200, body = TradeWrapper),
        (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn by_id_at_older_path(
    state: State<Shared>,
    caller: Caller,
    trade_id: Path<String>,
) -> Result<Json<TradeWrapper>, ApiError> {
    by_id(state, caller, trade_id).await
}
