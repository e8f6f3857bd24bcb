//! Queries shared by both handles: the plain result structs and how each is read, written
//! once over [`Reader`] (the single-threaded handle reads in place, the thread-safe one
//! runs the read on the thread that owns the state and waits).

use matchbook::market::MarketData;
use matchbook::market::period::Granularity;
use matchbook::{AccountId, Engine, InstrumentId, Order, OrderRef, Timestamp};

use crate::boundary::fail;
use crate::status::MbStatus;
use crate::types::{MbCandleUnit, MbOrderRef, MbOrderState, MbSide, MbTimeInForce, MbUuid};

/// Somewhere engine state and market data can be read.
pub(crate) trait Reader {
    /// Runs `read` against the engine.
    fn engine<R: Send + 'static>(
        &self,
        read: impl FnOnce(&Engine) -> R + Send + 'static,
    ) -> Result<R, MbStatus>;
    /// Runs `read` against market data (`MB_STATUS_MARKET_DATA_OFF` without it).
    fn market<R: Send + 'static>(
        &self,
        read: impl FnOnce(&MarketData, Timestamp) -> R + Send + 'static,
    ) -> Result<R, MbStatus>;
}

fn engine_error(e: matchbook::EngineError) -> MbStatus {
    fail(MbStatus::from(e), e.to_string())
}

fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// One currency balance of an account.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbBalance {
    /// Currency index.
    pub currency: u16,
    /// Decimals of the units below.
    pub scale: u8,
    /// Available, balance units.
    pub available: i64,
    /// Locked by open orders, balance units.
    pub locked: i64,
}

pub(crate) fn balances(r: &impl Reader, account: u32) -> Result<Vec<MbBalance>, MbStatus> {
    r.engine(move |e| {
        let view = e.account(AccountId(account))?;
        Ok(view
            .dense_balances()
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let currency = matchbook::CurrencyId(i as u16);
                MbBalance {
                    currency: currency.0,
                    scale: e.balance_scale(currency).unwrap_or(0),
                    available: b.available,
                    locked: b.locked,
                }
            })
            .collect())
    })?
    .map_err(engine_error)
}

/// An open order.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbOrder {
    /// Handle.
    pub order: MbOrderRef,
    /// Owner.
    pub account: u32,
    /// Instrument index.
    pub instrument: u16,
    /// An `mb_side`.
    pub side: u32,
    /// An `mb_order_type`.
    pub order_type: u32,
    /// An `mb_time_in_force`.
    pub time_in_force: u32,
    /// An `mb_order_state`.
    pub state: u32,
    /// Limit price in ticks (0 = none).
    pub price: i64,
    /// Stop trigger in ticks (0 = none).
    pub trigger_price: i64,
    /// Total amount in lots.
    pub amount: i64,
    /// Filled lots.
    pub filled: i64,
    /// Expiry (0 = none).
    pub expire_at_ns: i64,
    /// Created.
    pub created_ns: i64,
    /// Last change.
    pub updated_ns: i64,
    /// Client order id (zero = none).
    pub client_id: MbUuid,
}

impl From<&Order> for MbOrder {
    fn from(o: &Order) -> Self {
        Self {
            order: o.handle().into(),
            account: o.account().0,
            instrument: o.instrument().0,
            side: MbSide::from(o.side()) as u32,
            order_type: crate::types::MbOrderType::from(o.order_type()) as u32,
            time_in_force: MbTimeInForce::from(o.time_in_force()) as u32,
            state: MbOrderState::from(o.state()) as u32,
            price: o.price().map_or(0, |p| p.0),
            trigger_price: o.trigger_price().map_or(0, |p| p.0),
            amount: o.amount().0,
            filled: o.filled().0,
            expire_at_ns: o.expire_at().map_or(0, |t| t.0),
            created_ns: o.created().0,
            updated_ns: o.updated().0,
            client_id: MbUuid::of(o.client_id()),
        }
    }
}

pub(crate) fn open_orders(r: &impl Reader, account: u32) -> Result<Vec<MbOrder>, MbStatus> {
    r.engine(move |e| {
        e.account(AccountId(account))?;
        Ok(e.open_orders(AccountId(account))
            .into_iter()
            .map(MbOrder::from)
            .collect())
    })?
    .map_err(engine_error)
}

/// One open order of `account` by handle, or by client id when `client_id` is nonzero.
pub(crate) fn order(
    r: &impl Reader,
    account: u32,
    handle: MbOrderRef,
    client_id: Option<matchbook::Uuid>,
) -> Result<MbOrder, MbStatus> {
    let found = r.engine(move |e| {
        let owned = |o: &&Order| o.account() == AccountId(account);
        match client_id {
            Some(id) => e
                .order_by_client_id(AccountId(account), id)
                .map(MbOrder::from),
            None => e
                .order(OrderRef::from(handle))
                .filter(owned)
                .map(MbOrder::from),
        }
    })?;
    found.ok_or_else(|| {
        fail(
            MbStatus::OrderNotFound,
            "no such open order of this account",
        )
    })
}

/// L1: best bid and ask with the amounts resting there (0 where a side is empty).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MbTop {
    /// Best bid, ticks.
    pub bid: i64,
    /// Lots at the best bid.
    pub bid_amount: i64,
    /// Best ask, ticks.
    pub ask: i64,
    /// Lots at the best ask.
    pub ask_amount: i64,
    /// Book sequence: how many commands changed the book.
    pub sequence: u64,
}

pub(crate) fn top(r: &impl Reader, instrument: u16) -> Result<MbTop, MbStatus> {
    let view = r.engine(move |e| e.book_levels(InstrumentId(instrument), 1))?;
    let view = view.map_err(engine_error)?;
    let side = |levels: &[matchbook::LevelView]| {
        levels.first().map_or((0, 0), |l| (l.price.0, l.amount.0))
    };
    let ((bid, bid_amount), (ask, ask_amount)) = (side(&view.bids), side(&view.asks));
    Ok(MbTop {
        bid,
        bid_amount,
        ask,
        ask_amount,
        sequence: view.sequence,
    })
}

/// One L2 price level.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbLevel {
    /// Price, ticks.
    pub price: i64,
    /// Lots resting.
    pub amount: i64,
    /// Orders resting.
    pub orders: u32,
}

/// Both sides of an L2 view, best first.
pub(crate) type Sides<T> = (Vec<T>, Vec<T>);

pub(crate) fn levels(
    r: &impl Reader,
    instrument: u16,
    depth: usize,
) -> Result<Sides<MbLevel>, MbStatus> {
    let view = r
        .engine(move |e| e.book_levels(InstrumentId(instrument), depth))?
        .map_err(engine_error)?;
    let convert = |levels: Vec<matchbook::LevelView>| {
        levels
            .into_iter()
            .map(|l| MbLevel {
                price: l.price.0,
                amount: l.amount.0,
                orders: l.number_of_orders,
            })
            .collect()
    };
    Ok((convert(view.bids), convert(view.asks)))
}

/// One resting order of an L3 view.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbBookOrder {
    /// Handle.
    pub order: MbOrderRef,
    /// Owner.
    pub account: u32,
    /// Price, ticks.
    pub price: i64,
    /// Remaining lots.
    pub amount: i64,
}

pub(crate) fn book_orders(
    r: &impl Reader,
    instrument: u16,
    depth: usize,
) -> Result<Sides<MbBookOrder>, MbStatus> {
    let view = r
        .engine(move |e| e.book_orders(InstrumentId(instrument), depth))?
        .map_err(engine_error)?;
    let convert = |orders: Vec<matchbook::OrderView>| {
        orders
            .into_iter()
            .map(|o| MbBookOrder {
                order: o.order.into(),
                account: o.account.0,
                price: o.price.0,
                amount: o.amount.0,
            })
            .collect()
    };
    Ok((convert(view.bids), convert(view.asks)))
}

/// One candle; prices in ticks, `volume` the quote volume at notional scale (ticks x lots,
/// saturating at the int64 range).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbCandle {
    /// Period start.
    pub start_ns: i64,
    /// Period end.
    pub end_ns: i64,
    /// Open.
    pub open: i64,
    /// High.
    pub high: i64,
    /// Low.
    pub low: i64,
    /// Close.
    pub close: i64,
    /// Lots traded (base volume).
    pub total_amount: i64,
    /// Quote traded: price x amount summed, at ticks x lots scale (REST's and Python's
    /// `volume`).
    pub volume: i64,
}

pub(crate) fn candles(
    r: &impl Reader,
    instrument: u16,
    unit: u32,
    period: u32,
    from_ns: i64,
    to_ns: i64,
) -> Result<Vec<MbCandle>, MbStatus> {
    let unit = MbCandleUnit::from_raw(unit)
        .ok_or_else(|| fail(MbStatus::InvalidArgument, format!("candle unit {unit}")))?;
    let granularity = Granularity::new(unit.into(), period)
        .map_err(|e| fail(MbStatus::InvalidArgument, format!("granularity: {e}")))?;
    let found = r.market(move |m, now| {
        // No candle for a period after the engine's time (it would be flat, made up).
        let to = Timestamp(to_ns).min(now);
        if Timestamp(from_ns) > to {
            return Ok(Vec::new());
        }
        m.candles(
            InstrumentId(instrument),
            granularity,
            Timestamp(from_ns),
            to,
            None,
        )
    })?;
    let candles = found.map_err(query_error)?;
    Ok(candles
        .into_iter()
        .map(|c| MbCandle {
            start_ns: c.start.0,
            end_ns: c.end.0,
            open: c.open,
            high: c.high,
            low: c.low,
            close: c.close,
            total_amount: c.total_amount,
            volume: saturate(c.volume),
        })
        .collect())
}

fn query_error(e: matchbook::market::query::QueryError) -> MbStatus {
    use matchbook::market::query::QueryError as Q;
    let status = match e {
        Q::UnknownInstrument => MbStatus::UnknownInstrument,
        _ => MbStatus::InvalidArgument,
    };
    fail(status, e.to_string())
}

/// The 24-hour ticker of an instrument (prices in ticks, 0 without trades).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MbTicker {
    /// First price of the window.
    pub open: i64,
    /// High.
    pub high: i64,
    /// Low.
    pub low: i64,
    /// Last price.
    pub last: i64,
    /// Lots traded.
    pub base_volume: i64,
    /// Quote volume at notional scale (saturating).
    pub quote_volume: i64,
    /// Trades in the window.
    pub trades: u64,
    /// Best bid (0 = none).
    pub bid: i64,
    /// Best ask (0 = none).
    pub ask: i64,
    /// Sequence of the last event in this market.
    pub sequence: u64,
}

pub(crate) fn ticker(r: &impl Reader, instrument: u16) -> Result<MbTicker, MbStatus> {
    let t = r
        .market(move |m, now| m.ticker(InstrumentId(instrument), now))?
        .map_err(query_error)?;
    Ok(MbTicker {
        open: t.stats.open,
        high: t.stats.high,
        low: t.stats.low,
        last: t.stats.last,
        base_volume: t.stats.base_volume,
        quote_volume: saturate(t.stats.quote_volume),
        trades: t.stats.trades as u64,
        bid: t.highest_bid.map_or(0, |p| p.0),
        ask: t.lowest_ask.map_or(0, |p| p.0),
        sequence: t.sequence,
    })
}

/// A futures position; money in USD balance units (unrealised and margins saturating).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbPosition {
    /// Instrument index.
    pub instrument: u16,
    /// Position number.
    pub position_id: u64,
    /// Signed lots (long > 0).
    pub size: i64,
    /// Entry price, ticks.
    pub entry_price: i64,
    /// Mark price, ticks.
    pub mark_price: i64,
    /// Unrealised PnL at mark.
    pub unrealised: i64,
    /// Realised since opening (PnL, funding, fees).
    pub realised: i64,
    /// Initial margin at mark.
    pub initial_margin: i64,
    /// Maintenance margin at mark.
    pub maintenance_margin: i64,
    /// Opened.
    pub opened_ns: i64,
}

pub(crate) fn positions(r: &impl Reader, account: u32) -> Result<Vec<MbPosition>, MbStatus> {
    let found = r.engine(move |e| {
        e.account(AccountId(account))?;
        Ok(e.positions(AccountId(account)))
    })?;
    Ok(found
        .map_err(engine_error)?
        .into_iter()
        .map(|p| MbPosition {
            instrument: p.instrument.0,
            position_id: p.position_id,
            size: p.size,
            entry_price: p.entry_price.0,
            mark_price: p.mark_price.0,
            unrealised: saturate(p.unrealised),
            realised: p.realised,
            initial_margin: saturate(p.initial_margin),
            maintenance_margin: saturate(p.maintenance_margin),
            opened_ns: p.opened.0,
        })
        .collect())
}

/// The engine's state hash (equal hashes: equal state; a replay check).
pub(crate) fn state_hash(r: &impl Reader) -> Result<u64, MbStatus> {
    r.engine(Engine::state_hash)
}
