//! Public market data (spec 4.4 and the addendum): server time, currencies, instruments,
//! fee groups, market tickers, candlesticks and the order book. No key needed.

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use matchbook::market::MAX_CANDLES;
use matchbook::market::period::{Granularity, Unit};
use matchbook::{FundingSchedule, InstrumentId, InstrumentKind, InstrumentState, Timestamp};
use serde::Serialize;
use serde_json::Value;

use crate::error::ApiError;
use crate::format::{decimal, iso_ms, iso_nanos};
use crate::market_bodies::ticker_body;
use crate::params::Params;
use crate::state::Shared;
use crate::wire::market::{
    BookBody, BookEntry, CandleBody, CandlesBody, CurrencyBody, CurrencyRef, FeeGroupBody,
    FeeTierBody, FundingScheduleBody, FuturesTermsBody, GranularityBody, InstrumentBody,
    TickerBody,
};

/// `GET /v1/time`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ServerTime {
    /// ISO 8601 with milliseconds.
    pub iso: String,
    /// Milliseconds since the epoch.
    pub epoch_millis: i64,
}

/// Server time.
#[utoipa::path(get, path = "/v1/time", tag = "public",
    responses((status = 200, body = ServerTime)))]
pub async fn time(State(state): State<Shared>) -> Json<ServerTime> {
    let now = state.now();
    Json(ServerTime {
        iso: iso_ms(now),
        epoch_millis: now.millis(),
    })
}

/// A decimal string as a JSON number (fee volumes and percentages are numbers on the wire).
pub fn number(text: &str) -> Value {
    serde_json::from_str::<serde_json::Number>(text).map_or(Value::Null, Value::Number)
}

/// Currency list (spec 2.10).
#[utoipa::path(get, path = "/v1/currencies", tag = "public",
    responses((status = 200, body = Vec<CurrencyBody>, description = "Spec 2.10")))]
pub async fn currencies(State(state): State<Shared>) -> Result<Json<Vec<CurrencyBody>>, ApiError> {
    let list = state
        .engine(|e| {
            e.currencies()
                .iter()
                .map(|c| CurrencyBody {
                    code: c.code.clone(),
                    precision: c.precision,
                    unified_cryptoasset_id: c.unified_cryptoasset_id,
                    name: c.name.clone(),
                    collateral_percentage: number(&c.collateral_percentage.to_string()),
                })
                .collect::<Vec<_>>()
        })
        .await?;
    Ok(Json(list))
}

fn kind_filter(params: &Params) -> Result<Option<InstrumentKind>, ApiError> {
    params
        .get("type")
        .map(|t| InstrumentKind::parse(t).ok_or(ApiError::bad("INVALID_QUERY")))
        .transpose()
}

/// Instrument list (spec 2.11), optionally filtered by `type`.
#[utoipa::path(get, path = "/v1/instruments", tag = "public",
    params(("type" = Option<String>, Query, description = "SPOT, PERP, DATED_FUTURE or EQUITY_FUTURE")),
    responses((status = 200, body = Vec<InstrumentBody>, description = "Spec 2.11"),
        (status = 400, body = crate::error::ErrorBody)))]
pub async fn instruments(
    State(state): State<Shared>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Vec<InstrumentBody>>, ApiError> {
    let kind = kind_filter(&Params::parse(raw.as_deref())?)?;
    let list = state
        .engine(move |e| {
            e.instruments()
                .iter()
                .filter(|i| kind.is_none_or(|k| i.spec.kind == k))
                .map(|i| instrument_body(e, i))
                .collect::<Vec<_>>()
        })
        .await?;
    Ok(Json(list))
}

fn instrument_body(engine: &matchbook::Engine, i: &matchbook::Instrument) -> InstrumentBody {
    let currency = |code: &str, id: matchbook::CurrencyId| CurrencyRef {
        code: code.to_owned(),
        precision: (engine.currencies().get(usize::from(id.0))).map_or(0, |c| c.precision),
    };
    let s = &i.spec;
    InstrumentBody {
        id: s.code.clone(),
        base: currency(&s.base, i.base),
        quote: currency(&s.quote, i.quote),
        amount_precision: s.amount_precision,
        market_precision: s.market_precision,
        min_size: s.min_size.clone(),
        min_price: s.min_price.clone(),
        max_price: s.max_price.clone(),
        kind: s.kind.as_str(),
        state: i.state.as_str(),
        futures: s.futures.as_ref().map(futures_terms).unwrap_or_default(),
    }
}

fn futures_terms(f: &matchbook::FuturesTerms) -> FuturesTermsBody {
    let funding_schedule = match &f.funding_schedule {
        FundingSchedule::FixedInterval { period_minutes } => FundingScheduleBody {
            kind: "FIXED_INTERVAL",
            period_minutes: Some(*period_minutes),
            calendar: None,
            max_periods_per_day: None,
            split: None,
        },
        FundingSchedule::SessionBased {
            calendar,
            max_periods_per_day,
            split,
        } => FundingScheduleBody {
            kind: "SESSION_BASED",
            period_minutes: None,
            calendar: Some(calendar.clone()),
            max_periods_per_day: Some(*max_periods_per_day),
            split: Some(split.clone()),
        },
    };
    FuturesTermsBody {
        price_collar_percentage: Some(f.price_collar_percentage.to_string()),
        funding_period: f.funding_period,
        market_offset: Some(f.market_offset),
        funding_schedule: Some(funding_schedule),
        contract_expiry_date: f.contract_expiry_date.clone(),
        contract_duration: f.contract_duration.clone(),
    }
}

/// Fee groups (spec 2.9), fee values in percent.
#[utoipa::path(get, path = "/v1/fees", tag = "public",
    responses((status = 200, body = Vec<FeeGroupBody>, description = "Spec 2.9")))]
pub async fn fees(State(state): State<Shared>) -> Result<Json<Vec<FeeGroupBody>>, ApiError> {
    let list = state
        .engine(|e| {
            e.fee_groups()
                .map(|g| FeeGroupBody {
                    fee_group_id: g.id.clone(),
                    display_text: g.display_text.clone(),
                    volume_currency: g.volume_currency.clone(),
                    fee_tiers: (g.tiers.iter())
                        .map(|t| FeeTierBody {
                            volume: number(&t.volume),
                            fee_group_id: g.id.clone(),
                            maker_fee: t.maker_fee.clone(),
                            taker_fee: t.taker_fee.clone(),
                        })
                        .collect(),
                })
                .collect::<Vec<_>>()
        })
        .await?;
    Ok(Json(list))
}

fn listed(state: InstrumentState) -> bool {
    matches!(
        state,
        InstrumentState::Active | InstrumentState::PostOnly | InstrumentState::Suspended
    )
}

/// Every listed market's ticker (spec 2.13), optionally filtered by `type`.
#[utoipa::path(get, path = "/v1/market-ticker", tag = "public",
    params(("type" = Option<String>, Query, description = "SPOT, PERP, DATED_FUTURE or EQUITY_FUTURE")),
    responses((status = 200, body = Vec<TickerBody>, description = "Spec 2.13"),
        (status = 400, body = crate::error::ErrorBody)))]
pub async fn tickers(
    State(state): State<Shared>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Vec<TickerBody>>, ApiError> {
    let kind = kind_filter(&Params::parse(raw.as_deref())?)?;
    let (states, futures): (Vec<InstrumentState>, Vec<Option<matchbook::FundingView>>) = state
        .engine(|e| {
            let ids = (0..e.instruments().len()).map(|i| InstrumentId(i as u16));
            (
                e.instruments().iter().map(|i| i.state).collect(),
                ids.map(|i| e.funding_view(i).ok()).collect(),
            )
        })
        .await?;
    let now = state.now();
    let ids: Vec<_> = state
        .markets
        .markets
        .iter()
        .filter(|m| kind.is_none_or(|k| m.kind == k))
        .filter(|m| listed(states[usize::from(m.id.0)]))
        .map(|m| m.id)
        .collect();
    let tickers = state
        .market(move |md| {
            ids.iter()
                .filter_map(|&id| md.ticker(id, now).ok())
                .collect::<Vec<_>>()
        })
        .await?;
    let list = tickers
        .iter()
        .filter_map(|t| {
            let market = state.markets.market_of(t.instrument)?;
            let i = usize::from(t.instrument.0);
            Some(ticker_body(
                market,
                states[i],
                t,
                now,
                true,
                futures[i].as_ref(),
            ))
        })
        .collect();
    Ok(Json(list))
}

/// One market's ticker.
#[utoipa::path(get, path = "/v1/market-ticker/{instrument_code}", tag = "public",
    params(("instrument_code" = String, Path)),
    responses((status = 200, body = TickerBody, description = "Spec 2.13"),
        (status = 404, body = crate::error::ErrorBody)))]
pub async fn ticker(
    State(state): State<Shared>,
    Path(code): Path<String>,
) -> Result<Json<TickerBody>, ApiError> {
    let market = crate::markets::require(&state.markets, &code)?.clone();
    let id = market.id;
    let (instrument_state, futures) = state
        .engine(move |e| e.instrument(id).map(|i| (i.state, e.funding_view(id).ok())))
        .await??;
    let now = state.now();
    let t = state.market(move |md| md.ticker(id, now)).await??;
    Ok(Json(ticker_body(
        &market,
        instrument_state,
        &t,
        now,
        false,
        futures.as_ref(),
    )))
}

fn granularity(params: &Params) -> Result<Granularity, ApiError> {
    let unit = params
        .get("unit")
        .and_then(Unit::parse)
        .ok_or(ApiError::bad("INVALID_UNIT"))?;
    let period = params
        .integer("period", "INVALID_PERIOD")?
        .ok_or(ApiError::bad("INVALID_PERIOD"))?;
    let period = u32::try_from(period).map_err(|_| ApiError::bad("INVALID_PERIOD"))?;
    Granularity::new(unit, period).map_err(|_| ApiError::bad("INVALID_PERIOD"))
}

/// 400 `CANDLESTICKS_TIME_RANGE_TOO_BIG` when `from..=to` spans more than 5,000 periods.
fn check_candle_count(g: Granularity, from: Timestamp, to: Timestamp) -> Result<(), ApiError> {
    // Walk period starts: cheap (at most 5,001 steps) and exact for weeks and months.
    let mut start = g.start_of(from);
    for _ in 0..=MAX_CANDLES {
        if start > to {
            return Ok(());
        }
        start = g.next(start);
    }
    Err(ApiError::bad("CANDLESTICKS_TIME_RANGE_TOO_BIG"))
}

/// Candlesticks (spec 2.12), newest first.
#[utoipa::path(get, path = "/v1/candlesticks/{instrument_code}", tag = "public",
    params(("instrument_code" = String, Path),
        ("unit" = String, Query, description = "MINUTES, HOURS, DAYS, WEEKS or MONTHS"),
        ("period" = u32, Query, description = "1, 5, 15, 30 (MINUTES); 1, 4 (HOURS); 1 otherwise"),
        ("from" = Option<String>, Query), ("to" = Option<String>, Query),
        ("countBack" = Option<u32>, Query, description = "Candles back from `to`; takes precedence over `from`")),
    responses((status = 200, body = CandlesBody),
        (status = 400, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody)))]
pub async fn candlesticks(
    State(state): State<Shared>,
    Path(code): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<CandlesBody>, ApiError> {
    let params = Params::parse(raw.as_deref())?;
    let market = crate::markets::require(&state.markets, &code)?.clone();
    let g = granularity(&params)?;
    let now = state.now();
    let from = params.time("from", false)?;
    let asked_to = params.time("to", true)?;
    // No candle is invented for a period that has not begun: a `to` in the future is now,
    // so the candle in progress is the newest one returned.
    let to = asked_to.map_or(now, |t| t.min(now));
    let count_back = params.integer("countBack", "INVALID_QUERY")?;
    let count_back = match (count_back, from) {
        (Some(n), _) => Some(usize::try_from(n).unwrap_or(MAX_CANDLES).min(MAX_CANDLES)),
        (None, None) => Some(MAX_CANDLES),
        (None, Some(_)) => None,
    };
    let from = from.unwrap_or(to);
    if count_back.is_none() {
        if asked_to.unwrap_or(now) < from {
            return Err(ApiError::bad("INVALID_TIME_RANGE"));
        }
        if from > now {
            return Ok(Json(CandlesBody {
                status: "data",
                candlesticks: Vec::new(),
            }));
        }
        check_candle_count(g, from, to)?;
    }
    let id = market.id;
    let candles = state
        .market(move |md| md.candles(id, g, from, to, count_back))
        .await??;
    let price = |p: i64| decimal(p, market.market_precision);
    let candlesticks = candles
        .iter()
        .map(|c| CandleBody {
            last_sequence: c.last_sequence,
            instrument_code: market.code.clone(),
            granularity: GranularityBody {
                unit: g.unit.as_str(),
                period: g.period,
            },
            high: price(c.high),
            low: price(c.low),
            open: price(c.open),
            close: price(c.close),
            volume: decimal(c.volume, market.amount_precision + market.market_precision),
            total_amount: decimal(c.total_amount, market.amount_precision),
            time: iso_ms(crate::format::candle_time(c.end)),
            start_time: iso_ms(c.start),
        })
        .collect();
    Ok(Json(CandlesBody {
        status: "data",
        candlesticks,
    }))
}

/// The order book at level 1 (touch), 2 (by price) or 3 (every order).
#[utoipa::path(get, path = "/v1/order-book/{instrument_code}", tag = "public",
    params(("instrument_code" = String, Path),
        ("level" = Option<u8>, Query, description = "1, 2 or 3 (default)"),
        ("depth" = Option<u32>, Query, description = "Price levels per side (default and most: the server's `max_order_book_depth`, 1000 unless configured)")),
    responses((status = 200, body = BookBody),
        (status = 400, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody)))]
pub async fn order_book(
    State(state): State<Shared>,
    Path(code): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<BookBody>, ApiError> {
    let params = Params::parse(raw.as_deref())?;
    let market = crate::markets::require(&state.markets, &code)?.clone();
    let level = params
        .integer("level", "INVALID_ORDER_BOOK_LEVEL")?
        .unwrap_or(3);
    if !(1..=3).contains(&level) {
        return Err(ApiError::bad("INVALID_ORDER_BOOK_LEVEL"));
    }
    // Bounded whatever is asked: the read walks every order of the levels it shows.
    let depth = match params.integer("depth", "INVALID_ORDER_BOOK_DEPTH")? {
        Some(0) => return Err(ApiError::bad("INVALID_ORDER_BOOK_DEPTH")),
        Some(d) => usize::try_from(d).unwrap_or(usize::MAX),
        None if level == 1 => 1,
        None => state.max_book_depth,
    }
    .min(state.max_book_depth);
    let depth = if level == 1 { 1 } else { depth };
    let id = market.id;
    let (bids, asks, sequence) = if level == 3 {
        let view = state.engine(move |e| e.book_orders(id, depth)).await??;
        let entry = |o: &matchbook::OrderView| BookEntry {
            price: market.price(o.price),
            amount: market.qty(o.amount),
            order_id: Some(matchbook::Uuid::of_order(o.order).to_string()),
            number_of_orders: None,
        };
        (
            view.bids.iter().map(entry).collect::<Vec<_>>(),
            view.asks.iter().map(entry).collect::<Vec<_>>(),
            view.sequence,
        )
    } else {
        let view = state.engine(move |e| e.book_levels(id, depth)).await??;
        let entry = |l: &matchbook::LevelView| BookEntry {
            price: market.price(l.price),
            amount: market.qty(l.amount),
            order_id: None,
            number_of_orders: Some(l.number_of_orders),
        };
        (
            view.bids.iter().map(entry).collect::<Vec<_>>(),
            view.asks.iter().map(entry).collect::<Vec<_>>(),
            view.sequence,
        )
    };
    Ok(Json(BookBody {
        instrument_code: market.code.clone(),
        time: iso_nanos(state.now()),
        sequence,
        bids,
        asks,
    }))
}
