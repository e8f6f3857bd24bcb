//! Market data and history derived from the engine's event stream: trade history, order
//! history, candlesticks and rolling 24-hour tickers. `MarketData` is a pure consumer of
//! events (the touch comes from `TopOfBook` events), so it can run on its own thread, away
//! from the matching path, fed by whatever carries the events there.

#![warn(clippy::too_many_lines)]

pub mod candles;
pub mod chunked;
mod client_ids;
pub mod futures;
pub mod order_terms;
pub mod orders;
pub mod period;
pub mod query;
pub mod ticker;
pub mod trades;

use candles::{Candle, CandleSeries};
use futures::{FundingPayment, FuturesHistory, SettledRate};
use matchbook_core::fixed::Price;
use matchbook_core::{Event, EventRecord, Trade};
use matchbook_core::{InstrumentId, Timestamp};
use order_terms::OrderTermsStore;
use orders::OrderStore;
use period::{GRANULARITIES, Granularity};
use query::{DAY, QueryError};
use ticker::{RollingStats, RollingWindow};
use trades::{TradeRecord, TradeStore};

/// Latest time restored market data may hold (about the year 2116): far enough from the
/// end of the clock that period arithmetic on it cannot overflow.
pub(crate) const LATEST_TIME: Timestamp = Timestamp(i64::MAX / 2);
// Every time the engine accepts can be restored.
const _: () = assert!(matchbook_core::limits::TIME_HORIZON.0 <= LATEST_TIME.0);

/// Applies `command` to `engine`, appends its events to `events` and feeds them to
/// `market`: what every single-threaded owner of an engine with market data does per
/// command.
#[inline]
pub fn apply_and_record(
    engine: &mut matchbook_core::Engine,
    market: Option<&mut MarketData>,
    command: &matchbook_core::Command,
    time: Timestamp,
    events: &mut Vec<EventRecord>,
) -> Result<matchbook_core::Applied, matchbook_core::EngineError> {
    let start = events.len();
    let applied = engine.apply(command, time, events);
    if let Some(market) = market {
        market.on_events(&events[start..]);
    }
    applied
}

/// Largest number of candles one request returns (spec section 8).
pub const MAX_CANDLES: usize = 5_000;

/// What market data keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MarketDataConfig {
    /// Stored periods per instrument and granularity.
    pub candle_retention: usize,
    /// How long trades stay in history (lookups go back 30 days).
    pub trade_retention_days: i64,
}

impl Default for MarketDataConfig {
    fn default() -> Self {
        Self {
            candle_retention: 20_000,
            trade_retention_days: 31,
        }
    }
}

/// Most records history keeps whatever their age: a bound on its memory where the
/// retention window alone allows any amount (order entry is not rate-limited). Past it
/// the oldest go first (an open order is kept until it ends). A host setting, not part of
/// snapshots: restored market data takes the limits of the host that restores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryLimits {
    /// Order records (about 280 bytes each).
    pub orders: usize,
    /// Trade records (about 200 bytes each).
    pub trades: usize,
}

impl Default for HistoryLimits {
    /// No limit: the retention window alone (spec 4.2, 4.3).
    fn default() -> Self {
        Self {
            orders: usize::MAX,
            trades: usize::MAX,
        }
    }
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct InstrumentData {
    candles: Vec<CandleSeries>,
    window: RollingWindow,
    /// Reference price: the mid of `top` when both sides exist, else the last trade price.
    reference: Option<i64>,
    last_trade: Option<i64>,
    last_sequence: u64,
    top: (Option<Price>, Option<Price>),
}

impl InstrumentData {
    /// Recomputes the reference after a trade or a new touch and hands it to the candles
    /// (always after a trade, whose price the candles took as provisional close reference).
    fn observe(&mut self, time: Timestamp, after_trade: bool) {
        let mid = match self.top {
            (Some(bid), Some(ask)) => Some((bid.0 + ask.0).div_euclid(2)),
            _ => None,
        };
        let reference = mid.or(self.last_trade);
        if reference == self.reference && !after_trade {
            return;
        }
        self.reference = reference;
        if let Some(r) = reference {
            for series in &mut self.candles {
                series.on_reference(time, self.last_sequence, r);
            }
        }
    }
}

/// A ticker (spec 2.13) in fixed point; adapters format it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticker {
    /// Market.
    pub instrument: InstrumentId,
    /// Rolling 24-hour statistics (all 0 without trades in the window).
    pub stats: RollingStats,
    /// Best bid.
    pub highest_bid: Option<Price>,
    /// Best ask.
    pub lowest_ask: Option<Price>,
    /// Sequence of the last event that touched the market.
    pub sequence: u64,
}

impl Ticker {
    /// `last - open` of the window, in ticks.
    pub fn price_change(&self) -> i64 {
        self.stats.last - self.stats.open
    }
}

/// Trade and order history, candles and tickers of every instrument.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct MarketData {
    config: MarketDataConfig,
    instruments: Vec<InstrumentData>,
    trades: TradeStore,
    orders: OrderStore,
    futures: FuturesHistory,
    /// False for [`MarketData::off`]: events are ignored (not part of snapshots, which only
    /// ever hold market data that is on).
    #[serde(skip, default = "on")]
    on: bool,
    /// Trigger terms beyond the order records (added last in snapshot format 9; older
    /// snapshots have none).
    #[serde(
        deserialize_with = "matchbook_core::persist::added_last::deserialize",
        default
    )]
    order_terms: OrderTermsStore,
    #[serde(skip)]
    limits: HistoryLimits,
}

fn on() -> bool {
    true
}

impl MarketData {
    /// Empty market data for `instruments` instruments (`engine.instruments().len()`).
    pub fn new(instruments: usize, config: MarketDataConfig) -> Self {
        Self {
            config,
            instruments: (0..instruments)
                .map(|_| InstrumentData {
                    candles: GRANULARITIES
                        .iter()
                        .map(|&g| CandleSeries::new(g, config.candle_retention))
                        .collect(),
                    window: RollingWindow::default(),
                    reference: None,
                    last_trade: None,
                    last_sequence: 0,
                    top: (None, None),
                })
                .collect(),
            trades: TradeStore::default(),
            orders: OrderStore::default(),
            futures: FuturesHistory::default(),
            on: true,
            order_terms: OrderTermsStore::default(),
            limits: HistoryLimits::default(),
        }
    }

    /// Sets the most records history keeps (and forgets the oldest past them now).
    pub fn set_history_limits(&mut self, limits: HistoryLimits) {
        self.limits = limits;
        self.keep_within_limits();
    }

    /// The most records history keeps.
    pub fn history_limits(&self) -> HistoryLimits {
        self.limits
    }

    /// Futures history follows the trade limit (without one it keeps everything, as
    /// before limits, and builds no index of closed positions).
    fn forget_futures(&mut self) {
        if self.limits.trades != usize::MAX {
            (self.futures).forget(self.trades.first_retained(), self.limits.trades);
        }
    }

    fn keep_within_limits(&mut self) {
        self.trades.keep_at_most(self.limits.trades);
        self.forget_futures();
        if self.orders.keep_at_most(self.limits.orders) && !self.order_terms.is_empty() {
            self.order_terms.forget_gone(&self.orders);
        }
    }

    /// Market data that keeps nothing, for a host that was asked to run without it (a
    /// pipeline stage still needs one): every event is ignored at no cost.
    pub fn off(instruments: usize) -> Self {
        Self {
            on: false,
            ..Self::new(instruments, MarketDataConfig::default())
        }
    }

    /// False for [`MarketData::off`]: queries of it answer nothing meaningful.
    pub fn is_on(&self) -> bool {
        self.on
    }

    fn instrument(&mut self, instrument: InstrumentId, seq: u64) -> Option<&mut InstrumentData> {
        let data = self.instruments.get_mut(usize::from(instrument.0))?;
        data.last_sequence = seq;
        Some(data)
    }

    /// Takes in events of one or more commands, in order.
    pub fn on_events(&mut self, events: &[EventRecord]) {
        self.on_events_each(events, |_, _| {});
    }

    /// Takes in events as [`MarketData::on_events`] does, calling `after(i, self)` once
    /// event `i` is applied: a feed reads each order's record as it stands after each
    /// event, before history past the retention window is forgotten at the end. Market
    /// data that is off calls nothing.
    pub fn on_events_each(&mut self, events: &[EventRecord], mut after: impl FnMut(usize, &Self)) {
        if !self.on {
            return;
        }
        let (mut traded_at, mut settled_at) = (None, None);
        let mut last_trade = None;
        for (index, record) in events.iter().enumerate() {
            let (time, seq) = (record.time, record.seq);
            match record.event {
                Event::Trade(t) => {
                    traded_at = Some(time);
                    last_trade = Some(t.id);
                    self.on_trade(t, time, seq);
                }
                Event::PositionChanged {
                    account,
                    instrument,
                    position_id,
                    size,
                    entry_price,
                    realised,
                } => {
                    self.trades
                        .attach_position(last_trade, account, position_id, size);
                    self.futures.on_position(
                        account,
                        instrument,
                        position_id,
                        size,
                        entry_price,
                        realised,
                        time,
                        last_trade,
                    );
                }
                Event::FundingPaid {
                    account,
                    instrument,
                    position_id,
                    rate,
                    mark,
                    payment,
                    cash_balance,
                } => {
                    last_trade = None;
                    self.futures.on_payment(FundingPayment {
                        account,
                        instrument,
                        position_id,
                        rate,
                        mark,
                        payment,
                        cash_balance,
                        time,
                        sequence: seq,
                    });
                }
                Event::FundingSettled {
                    instrument,
                    rate,
                    mark,
                } => {
                    last_trade = None;
                    self.futures
                        .on_settled(instrument, SettledRate { rate, mark, time });
                    settled_at = Some(time);
                }
                ref event => self.on_order_event(event, time, seq),
            }
            after(index, self);
        }
        self.forget_past(traded_at, settled_at);
    }

    /// A trade: its record, its orders' fills, and its instrument's candles, window and
    /// last price.
    fn on_trade(&mut self, t: Trade, time: Timestamp, seq: u64) {
        let trade = TradeRecord::new(t, time, seq);
        self.orders.fill(&trade);
        self.trades.push(trade);
        if self.trades.len() > self.limits.trades {
            self.keep_within_limits();
        }
        let (notional, most_trades) = (t.price.notional(t.amount).0, self.limits.trades);
        if let Some(data) = self.instrument(t.instrument, seq) {
            for series in &mut data.candles {
                series.on_trade(time, seq, t.price.0, t.amount.0, notional);
            }
            data.window.on_trade(time, t.price.0, t.amount.0, notional);
            if data.window.len() > most_trades {
                data.window.keep_at_most(most_trades);
            }
            data.last_trade = Some(t.price.0);
            data.observe(time, true);
        }
    }

    /// An event of an order's life or of a book's top: the order's history record and
    /// its instrument's sequence.
    fn on_order_event(&mut self, event: &Event, time: Timestamp, seq: u64) {
        match *event {
            Event::OrderAccepted(a) => {
                self.orders.accept(a, time, seq);
                self.instrument(a.instrument, seq);
                if self.orders.run_len() > self.limits.orders {
                    self.keep_within_limits();
                }
            }
            Event::TopOfBook {
                instrument,
                bid,
                ask,
            } => {
                if let Some(data) = self.instrument(instrument, seq) {
                    data.top = (bid, ask);
                    data.observe(time, false);
                }
            }
            Event::OrderCancelled {
                order,
                reason,
                instrument,
                ..
            } => {
                self.orders.cancel(order.id, reason, time, seq);
                self.instrument(instrument, seq);
            }
            Event::OrderAmended {
                order,
                price,
                amount,
                instrument,
                ..
            } => {
                self.orders
                    .touch(order.id, Some(price), Some(amount), time, seq);
                self.instrument(instrument, seq);
            }
            Event::StopTriggered {
                order,
                instrument,
                trigger_price,
                price,
            } => {
                self.orders
                    .trigger(order.id, trigger_price, price, time, seq);
                self.instrument(instrument, seq);
            }
            Event::TriggerMoved {
                order,
                instrument,
                trigger_price,
            } => {
                self.orders
                    .trigger_moved(order.id, trigger_price, time, seq);
                self.instrument(instrument, seq);
            }
            Event::OrderTerms { .. } | Event::OrdersLinked { .. } | Event::BracketPlaced { .. } => {
                self.order_terms.on_event(event)
            }
            Event::OrderBooked { instrument, .. } => {
                self.instrument(instrument, seq);
            }
            _ => {}
        }
    }

    /// After a batch: history past the retention window forgotten, as of its last trade
    /// and its last funding settlement.
    fn forget_past(&mut self, traded_at: Option<Timestamp>, settled_at: Option<Timestamp>) {
        if let Some(time) = settled_at {
            // Settlements are a few a day (all markets' at once): the time to drop payments
            // out of the retention window, reading every account's list once.
            (self.futures).forget_payments_before(self.retention_horizon(time));
        }
        if let Some(time) = traded_at {
            let horizon = self.retention_horizon(time);
            self.trades.forget_before(horizon);
            self.orders.forget_before(horizon);
            self.forget_futures();
            if !self.order_terms.is_empty() {
                self.order_terms.forget_gone(&self.orders);
            }
        }
    }

    /// The earliest time history keeps at `time`: the retention window back from it.
    fn retention_horizon(&self, time: Timestamp) -> Timestamp {
        let window = self.config.trade_retention_days.saturating_mul(DAY);
        Timestamp(time.0.saturating_sub(window))
    }

    /// Candles of one instrument, newest first: the `count_back` periods up to the one
    /// containing `to` when given (it takes precedence over `from`), else the periods from
    /// `from` to `to`; never more than 5,000.
    pub fn candles(
        &self,
        instrument: InstrumentId,
        granularity: Granularity,
        from: Timestamp,
        to: Timestamp,
        count_back: Option<usize>,
    ) -> Result<Vec<Candle>, QueryError> {
        let data = self
            .instruments
            .get(usize::from(instrument.0))
            .ok_or(QueryError::UnknownInstrument)?;
        if to < from && count_back.is_none() {
            return Err(QueryError::InvalidTimeRange);
        }
        // Candles start from 0 to LATEST_TIME; a span clamped to that keeps the period
        // arithmetic clear of the ends of the clock, whatever times a caller passes.
        if to.0 < 0 {
            return Ok(Vec::new());
        }
        let (from, to) = (from.max(Timestamp(0)), to.min(LATEST_TIME));
        let series = &data.candles[granularity.index()];
        Ok(match count_back {
            Some(n) => series.query(Timestamp(i64::MIN / 2), to, n.min(MAX_CANDLES)),
            None => series.query(from, to, MAX_CANDLES),
        })
    }

    /// A copy for a snapshot, cheap however long the history: order and trade records are
    /// shared with this market data (each chunk of them copied only when this one next
    /// changes it while the copy lives), the rest copied.
    pub fn share(&mut self) -> Self {
        Self {
            config: self.config,
            instruments: self.instruments.clone(),
            trades: self.trades.share(),
            orders: self.orders.share(),
            futures: self.futures.clone(),
            on: self.on,
            order_terms: self.order_terms.clone(),
            limits: self.limits,
        }
    }

    /// Builds what is derived from the records and not saved (the order history's
    /// client-id index), so that the first request after a restore does not pay for it.
    pub fn build_indexes(&mut self) {
        self.orders.index_client_ids();
    }

    /// Checks decoded market data before it is used: one entry per instrument of the
    /// engine (`instruments`), every candle series, 24-hour window and the trade history
    /// consistent (see the `check` of each).
    pub fn check_restored(&self, instruments: usize) -> Result<(), String> {
        if self.instruments.len() != instruments || self.config.candle_retention == 0 {
            return Err("market data is not for these instruments".into());
        }
        for data in &self.instruments {
            if data.candles.len() != GRANULARITIES.len() {
                return Err("candle series missing".into());
            }
            for (series, &granularity) in data.candles.iter().zip(GRANULARITIES.iter()) {
                series.check(granularity)?;
            }
            data.window.check()?;
        }
        self.trades.check()
    }

    /// The ticker of one instrument at `now`.
    pub fn ticker(&self, instrument: InstrumentId, now: Timestamp) -> Result<Ticker, QueryError> {
        let data = self
            .instruments
            .get(usize::from(instrument.0))
            .ok_or(QueryError::UnknownInstrument)?;
        Ok(Ticker {
            instrument,
            stats: data.window.stats(now),
            highest_bid: data.top.0,
            lowest_ask: data.top.1,
            sequence: data.last_sequence,
        })
    }

    /// Trade history.
    pub fn trades(&self) -> &TradeStore {
        &self.trades
    }

    /// Order history.
    pub fn orders(&self) -> &OrderStore {
        &self.orders
    }

    /// Trigger terms of orders that watch the mark price or trail.
    pub fn order_terms(&self) -> &OrderTermsStore {
        &self.order_terms
    }

    /// Funding payments, settled rates, positions history and position trades.
    pub fn futures(&self) -> &FuturesHistory {
        &self.futures
    }
}
