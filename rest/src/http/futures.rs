//! Futures endpoints of the addendum: funding rates (current, history, settings), the
//! account's futures summary, open positions, positions history, a position's trades and
//! funding payments (per account and per position, spec 2.14).

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use matchbook::market::futures::{FundingPayment, PaymentFilter, PositionRecord};
use matchbook::market::query::{DAY, trade_window};

use crate::history::{HistoryQuery, Window};
use matchbook::{AccountId, FundingView, InstrumentId, PositionView, Uuid};

use crate::auth::caller::Caller;
use crate::cursor::{self, CursorKind};
use crate::error::ApiError;
use crate::format::{decimal, iso_ms, iso_nanos};
use crate::market_bodies::rate_text;
use crate::markets::Market;
use crate::params::Params;
use crate::records::trade_wrappers;
use crate::state::Shared;
use crate::trade_lists;
use crate::wire::futures::{
    ClosedPositionBody, ClosedPositionsBody, FundingPaymentBody, FundingPaymentsBody,
    FundingRateBody, FundingSettingsBody, FuturesSummaryBody, PositionBody, PositionsBody,
};
use crate::wire::orders::TradeList;

fn futures_market<'a>(state: &'a Shared, code: &str) -> Result<&'a Market, ApiError> {
    state
        .markets
        .market(code)
        .filter(|m| m.kind.is_future())
        .ok_or(ApiError::NotFound("INVALID_INSTRUMENT_CODE"))
}

/// The optional `instrument_code` filter of an account endpoint (futures markets only).
fn futures_filter(state: &Shared, params: &Params) -> Result<Option<InstrumentId>, ApiError> {
    params
        .get("instrument_code")
        .map(|c| futures_market(state, c).map(|m| m.id))
        .transpose()
}

fn codes(state: &Shared, params: &Params) -> Result<Vec<InstrumentId>, ApiError> {
    match params.get("instrument_code") {
        Some(list) => list
            .split(',')
            .map(|c| futures_market(state, c.trim()).map(|m| m.id))
            .collect(),
        None => Ok(state
            .markets
            .markets
            .iter()
            .filter(|m| m.kind.is_future())
            .map(|m| m.id)
            .collect()),
    }
}

async fn views(state: &Shared, ids: Vec<InstrumentId>) -> Result<Vec<FundingView>, ApiError> {
    state
        .engine(move |e| {
            ids.iter()
                .filter_map(|&i| e.funding_view(i).ok())
                .collect::<Vec<_>>()
        })
        .await
}

/// Current funding rates of the futures markets with funding.
#[utoipa::path(get, path = "/v1/funding-rate", tag = "futures",
    params(("instrument_code" = Option<String>, Query, description = "One or more codes, comma-separated")),
    responses((status = 200, body = Vec<FundingRateBody>),
        (status = 404, body = crate::error::ErrorBody)))]
pub async fn funding_rate(
    State(state): State<Shared>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Vec<FundingRateBody>>, ApiError> {
    let params = Params::parse(raw.as_deref())?;
    let ids = codes(&state, &params)?;
    let now = state.now();
    let list = views(&state, ids)
        .await?
        .iter()
        .filter(|v| v.period_minutes > 0)
        .filter_map(|v| {
            let market = state.markets.market_of(v.instrument)?;
            Some(FundingRateBody {
                instrument_code: market.code.clone(),
                funding_rate: rate_text(v.funding_rate),
                mark_price: v.mark_price.map(|p| market.price(p)),
                time: iso_ms(now),
            })
        })
        .collect();
    Ok(Json(list))
}

/// Settled funding rates of one market, newest first.
#[utoipa::path(get, path = "/v1/funding-rate/history", tag = "futures",
    params(("instrument_code" = String, Query), ("from" = Option<String>, Query), ("to" = Option<String>, Query),
        ("limit" = Option<u32>, Query)),
    responses((status = 200, body = Vec<FundingRateBody>, description = "Settled rates, newest first"),
        (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn funding_rate_history(
    State(state): State<Shared>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Vec<FundingRateBody>>, ApiError> {
    let params = Params::parse(raw.as_deref())?;
    let market = futures_market(
        &state,
        params
            .get("instrument_code")
            .ok_or(ApiError::bad("INVALID_INSTRUMENT_CODE"))?,
    )?
    .clone();
    let now = state.now();
    let (from, to) = trade_window(params.time("from", false)?, params.time("to", true)?, now)?;
    let limit = params.page_size("limit")?;
    let id = market.id;
    let rates = state
        .market(move |md| md.futures().rates(id, from, to, limit))
        .await?;
    let list = rates
        .iter()
        .map(|r| FundingRateBody {
            instrument_code: market.code.clone(),
            funding_rate: rate_text(r.rate),
            mark_price: Some(market.price(r.mark)),
            time: iso_ms(r.time),
        })
        .collect();
    Ok(Json(list))
}

/// Funding settings of the futures markets.
#[utoipa::path(get, path = "/v1/funding-rate/settings", tag = "futures",
    params(("instrument_code" = Option<String>, Query, description = "One or more codes, comma-separated")),
    responses((status = 200, body = Vec<FundingSettingsBody>),
        (status = 404, body = crate::error::ErrorBody)))]
pub async fn funding_rate_settings(
    State(state): State<Shared>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Vec<FundingSettingsBody>>, ApiError> {
    let params = Params::parse(raw.as_deref())?;
    let ids = codes(&state, &params)?;
    let states: Vec<(InstrumentId, &'static str, i32)> = state
        .engine(|e| {
            e.instruments()
                .iter()
                .enumerate()
                .map(|(i, inst)| {
                    (
                        InstrumentId(i as u16),
                        inst.state.as_str(),
                        inst.spec.futures.as_ref().map_or(0, |f| f.market_offset),
                    )
                })
                .collect()
        })
        .await?;
    let list = views(&state, ids)
        .await?
        .iter()
        .filter(|v| v.period_minutes > 0)
        .filter_map(|v| {
            let market = state.markets.market_of(v.instrument)?;
            let &(_, st, offset) = states.iter().find(|s| s.0 == v.instrument)?;
            let periods_per_day = 1_440 / v.period_minutes.max(1);
            Some(FundingSettingsBody {
                instrument_code: market.code.clone(),
                state: st,
                market_offset: offset,
                clamp_threshold: rate_text(v.clamp_threshold),
                annual_interest_rate: rate_text(v.interest * 365 * periods_per_day),
                cap: rate_text(v.cap),
                period: v.period_minutes,
            })
        })
        .collect();
    Ok(Json(list))
}

fn usd(state: &Shared, units: i128) -> String {
    state
        .markets
        .currency_id("USD")
        .map_or_else(|| "0".into(), |id| state.markets.balance(id, units))
}

fn position_body(state: &Shared, p: &PositionView) -> Option<PositionBody> {
    let market = state.markets.market_of(p.instrument)?;
    Some(PositionBody {
        position_id: p.position_id.to_string(),
        instrument_code: market.code.clone(),
        direction: if p.size > 0 { "LONG" } else { "SHORT" },
        open_volume: market.qty(matchbook::Qty(p.size.abs())),
        entry_price: market.price(p.entry_price),
        mark_price: market.price(p.mark_price),
        initial_margin: usd(state, p.initial_margin),
        maintenance_margin: usd(state, p.maintenance_margin),
        unrealised_pnl: usd(state, p.unrealised),
        realised_pnl: usd(state, i128::from(p.realised)),
        opened: iso_ms(p.opened),
        last_settlement: (p.last_settlement.0 != 0).then(|| iso_ms(p.last_settlement)),
    })
}

/// Equity, margins and positions of the key's account.
#[utoipa::path(get, path = "/v1/account/futures/summary", tag = "futures", security(("api_key" = [])),
    responses((status = 200, body = FuturesSummaryBody),
        (status = 401, body = crate::error::ErrorBody)))]
pub async fn summary(
    State(state): State<Shared>,
    caller: Caller,
) -> Result<Json<FuturesSummaryBody>, ApiError> {
    let account = caller.0.account;
    let s = state.engine(move |e| e.futures_summary(account)).await??;
    let m = s.margin;
    // Maintenance margin over equity, in percent with two decimals (0 without positions).
    let ratio = if m.equity() > 0 {
        m.maintenance * 10_000 / m.equity()
    } else if m.maintenance > 0 {
        1_000_000
    } else {
        0
    };
    Ok(Json(FuturesSummaryBody {
        account_id: Uuid::of_account(account).to_string(),
        equity: usd(&state, m.equity()),
        margin_used: usd(&state, m.used()),
        margin_available: usd(&state, m.available()),
        maintenance_margin: usd(&state, m.maintenance),
        account_ratio: decimal(ratio, 2),
        derisk: s.derisk,
        positions: (s.positions.iter())
            .filter_map(|p| position_body(&state, p))
            .collect(),
    }))
}

/// Open positions of the key's account.
#[utoipa::path(get, path = "/v1/account/futures/positions", tag = "futures", security(("api_key" = [])),
    params(("instrument_code" = Option<String>, Query)),
    responses((status = 200, body = PositionsBody), (status = 401, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody)))]
pub async fn positions(
    State(state): State<Shared>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> Result<Json<PositionsBody>, ApiError> {
    let params = Params::parse(raw.as_deref())?;
    let only = futures_filter(&state, &params)?;
    let account = caller.0.account;
    let list = state.engine(move |e| e.positions(account)).await?;
    let positions = list
        .iter()
        .filter(|p| only.is_none_or(|i| i == p.instrument))
        .filter_map(|p| position_body(&state, p))
        .collect();
    Ok(Json(PositionsBody { positions }))
}

fn closed_body(state: &Shared, p: &PositionRecord) -> Option<ClosedPositionBody> {
    let market = state.markets.market_of(p.instrument)?;
    Some(ClosedPositionBody {
        position_id: p.position_id.to_string(),
        instrument_code: market.code.clone(),
        direction: if p.long { "LONG" } else { "SHORT" },
        max_open_volume: market.qty(matchbook::Qty(p.max_size)),
        entry_price: market.price(p.entry_price),
        realised_pnl: usd(state, i128::from(p.realised)),
        opened: iso_ms(p.opened),
        closed: iso_ms(p.closed),
    })
}

/// Closed positions of the key's account, newest first.
#[utoipa::path(get, path = "/v1/account/futures/positions-history", tag = "futures", security(("api_key" = [])),
    params(("from" = Option<String>, Query), ("to" = Option<String>, Query), ("instrument_code" = Option<String>, Query),
        ("cursor" = Option<String>, Query), ("limit" = Option<u32>, Query)),
    responses((status = 200, body = ClosedPositionsBody), (status = 400, body = crate::error::ErrorBody)))]
pub async fn positions_history(
    State(state): State<Shared>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> Result<Json<ClosedPositionsBody>, ApiError> {
    caller.limit_key(&state)?;
    let account = caller.0.account;
    let q = HistoryQuery::parse(
        &state,
        account,
        raw.as_deref(),
        Window::Trades,
        "limit",
        CursorKind::Positions,
    )?;
    let only = futures_filter(&state, &q.params)?;
    let before = q.cursor.map(cursor::to_closed_key);
    let (from, to, limit) = (q.from, q.to, q.page_size);
    let (list, next) = state
        .market(move |md| {
            md.futures()
                .closed_positions(account, from, to, only, limit, before)
        })
        .await?;
    Ok(Json(ClosedPositionsBody {
        positions: list.iter().filter_map(|p| closed_body(&state, p)).collect(),
        cursor: state.cursors.next_page(
            CursorKind::Positions,
            account.0,
            next.map(cursor::from_closed_key),
        ),
    }))
}

fn position_id(text: &str) -> Result<u64, ApiError> {
    text.parse::<u64>()
        .map_err(|_| ApiError::bad("INVALID_POSITION_ID"))
}

/// 403 unless the position is one of `account`'s: the same answer for a position of
/// another account and one that never existed, so ids reveal nothing (the spec lists 403).
fn own_position(
    md: &matchbook::market::MarketData,
    account: AccountId,
    id: u64,
) -> Result<(), ApiError> {
    if md.futures().position_owner(id) == Some(account) {
        Ok(())
    } else {
        Err(ApiError::Forbidden("MISSING_PERMISSION"))
    }
}

/// Trades of one of the account's positions, oldest first, a page at a time.
#[utoipa::path(get, path = "/v1/account/futures/positions/{position_id}/trades", tag = "futures", security(("api_key" = [])),
    params(("position_id" = String, Path),
        ("max_page_size" = Option<u32>, Query, description = "0 to 100, default 100"),
        ("cursor" = Option<String>, Query, description = "From the previous page, when the position has more trades")),
    responses((status = 200, body = TradeList, description = "Oldest first"), (status = 400, body = crate::error::ErrorBody),
        (status = 403, body = crate::error::ErrorBody, description = "Not one of the caller's positions")))]
pub async fn position_trades(
    State(state): State<Shared>,
    caller: Caller,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<TradeList>, ApiError> {
    caller.limit_key(&state)?;
    let id = position_id(&id)?;
    let account = caller.0.account;
    let params = crate::params::Params::parse(raw.as_deref())?;
    let size = params.page_size("max_page_size")?;
    let cursor = state
        .cursors
        .param(&params, CursorKind::PositionTrades, account.0)?;
    let start = cursor.map_or(Ok(0), |c| trade_lists::start_of(c, id))?;
    let (trades, next) = state
        .market(move |md| {
            own_position(md, account, id)?;
            let ids = md.futures().position_trades(id);
            Ok::<_, ApiError>(trade_lists::page(md, ids, start, size))
        })
        .await??;
    let next = next.map(|n| trade_lists::cursor_position(id, n));
    Ok(Json(TradeList {
        trade_history: trade_wrappers(&state.markets, &trades, account),
        cursor: state
            .cursors
            .next_page(CursorKind::PositionTrades, account.0, next),
    }))
}

fn payment_body(state: &Shared, p: &FundingPayment) -> Option<FundingPaymentBody> {
    let market = state.markets.market_of(p.instrument)?;
    Some(FundingPaymentBody {
        account_id: Uuid::of_account(p.account).to_string(),
        position_id: p.position_id.to_string(),
        instrument_code: market.code.clone(),
        funding_rate: rate_text(p.rate),
        mark_price: market.price(p.mark),
        funding_payment: usd(state, i128::from(p.payment)),
        cash_balance: usd(state, i128::from(p.cash_balance)),
        time: iso_nanos(p.time),
    })
}

/// Funding payments of the key's account, newest first, with a cursor.
#[utoipa::path(get, path = "/v1/account/futures/funding-payments", tag = "futures", security(("api_key" = [])),
    params(("from" = Option<String>, Query), ("to" = Option<String>, Query), ("instrument_code" = Option<String>, Query),
        ("cursor" = Option<String>, Query), ("max_page_size" = Option<u32>, Query)),
    responses((status = 200, body = FundingPaymentsBody, description = "Spec 2.14"), (status = 400, body = crate::error::ErrorBody)))]
pub async fn funding_payments(
    State(state): State<Shared>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> Result<Json<FundingPaymentsBody>, ApiError> {
    caller.limit_key(&state)?;
    let account = caller.0.account;
    let q = HistoryQuery::parse(
        &state,
        account,
        raw.as_deref(),
        Window::Trades,
        "max_page_size",
        CursorKind::FundingPayments,
    )?;
    let instrument = futures_filter(&state, &q.params)?;
    let (from, to, limit, before) = (q.from, q.to, q.page_size, q.record_cursor()?);
    let filter = PaymentFilter {
        instrument,
        position: None,
        before,
    };
    let (list, next) = state
        .market(move |md| md.futures().payments(account, from, to, filter, limit))
        .await?;
    Ok(Json(FundingPaymentsBody {
        funding_payments: list
            .iter()
            .filter_map(|p| payment_body(&state, p))
            .collect(),
        max_page_size: Some(limit),
        cursor: (state.cursors).next_page(CursorKind::FundingPayments, account.0, next),
    }))
}

/// Funding payments of one of the account's positions, newest first (spec 4.5).
#[utoipa::path(get, path = "/v1/account/futures/positions/{position_id}/funding-payments", tag = "futures", security(("api_key" = [])),
    params(("position_id" = String, Path)),
    responses((status = 200, body = FundingPaymentsBody, description = "Newest first (spec 2.14)"), (status = 400, body = crate::error::ErrorBody),
        (status = 403, body = crate::error::ErrorBody, description = "Not one of the caller's positions")))]
pub async fn position_funding_payments(
    State(state): State<Shared>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<FundingPaymentsBody>, ApiError> {
    caller.limit_key(&state)?;
    let id = position_id(&id)?;
    let account = caller.0.account;
    let now = state.now();
    let filter = PaymentFilter {
        position: Some(id),
        ..PaymentFilter::default()
    };
    let from = matchbook::Timestamp(now.0 - 365 * DAY);
    let (list, _) = state
        .market(move |md| {
            own_position(md, account, id)?;
            Ok::<_, ApiError>(
                md.futures()
                    .payments(account, from, now, filter, usize::MAX),
            )
        })
        .await??;
    Ok(Json(FundingPaymentsBody {
        funding_payments: list
            .iter()
            .filter_map(|p| payment_body(&state, p))
            .collect(),
        max_page_size: None,
        cursor: None,
    }))
}
