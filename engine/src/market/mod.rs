//! Market data and history derived from the engine's event stream: trade history, order
//! history, candlesticks and rolling 24-hour tickers. `MarketData` is a consumer outside the
//! matching path: after each command the caller hands it the command's events (and the
//! engine, read-only, for the touch); it never changes the engine.

pub mod candles;
pub mod orders;
pub mod period;
pub mod query;
pub mod ticker;
pub mod trades;

use crate::engine::Engine;
use crate::event::{Event, EventRecord};
use crate::fixed::Price;
use crate::ids::{InstrumentId, Timestamp};
use candles::{Candle, CandleSeries};
use orders::OrderStore;
use period::{GRANULARITIES, Granularity};
use query::{DAY, QueryError};
use ticker::{RollingStats, RollingWindow};
use trades::{TradeRecord, TradeStore};

/// Largest number of candles one request returns (spec section 8).
pub const MAX_CANDLES: usize = 5_000;

/// What market data keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

#[derive(Debug, Clone)]
struct InstrumentData {
    candles: Vec<CandleSeries>,
    window: RollingWindow,
    reference: Option<i64>,
    last_sequence: u64,
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
#[derive(Debug, Clone)]
pub struct MarketData {
    config: MarketDataConfig,
    instruments: Vec<InstrumentData>,
    trades: TradeStore,
    orders: OrderStore,
    touched: Vec<bool>,
}

impl MarketData {
    /// Empty market data for the engine's instruments.
    pub fn new(engine: &Engine, config: MarketDataConfig) -> Self {
        let n = engine.instruments().len();
        Self {
            config,
            instruments: (0..n)
                .map(|_| InstrumentData {
                    candles: GRANULARITIES
                        .iter()
                        .map(|&g| CandleSeries::new(g, config.candle_retention))
                        .collect(),
                    window: RollingWindow::default(),
                    reference: None,
                    last_sequence: 0,
                })
                .collect(),
            trades: TradeStore::default(),
            orders: OrderStore::default(),
            touched: vec![false; n],
        }
    }

    /// Takes in the events of one command, after `engine` applied it.
    pub fn on_events(&mut self, engine: &Engine, events: &[EventRecord]) {
        let mut traded = false;
        for record in events {
            let (time, seq) = (record.time, record.seq);
            match record.event {
                Event::OrderAccepted(a) => {
                    self.orders.accept(a, time, seq);
                    self.touch(a.instrument, seq);
                }
                Event::Trade(t) => {
                    traded = true;
                    let trade = TradeRecord {
                        trade: t,
                        time,
                        sequence: seq,
                    };
                    self.orders.fill(&trade);
                    self.trades.push(trade);
                    let notional = t.price.notional(t.amount).0;
                    let data = &mut self.instruments[usize::from(t.instrument.0)];
                    for series in &mut data.candles {
                        series.on_trade(time, seq, t.price.0, t.amount.0, notional);
                    }
                    data.window.on_trade(time, t.price.0, t.amount.0, notional);
                    data.reference = Some(t.price.0);
                    self.touch(t.instrument, seq);
                }
                Event::OrderCancelled {
                    order,
                    reason,
                    instrument,
                    ..
                } => {
                    self.orders.cancel(order.id, reason, time, seq);
                    self.touch(instrument, seq);
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
                    self.touch(instrument, seq);
                }
                Event::StopTriggered { order, instrument } => {
                    self.orders.touch(order.id, None, None, time, seq);
                    self.touch(instrument, seq);
                }
                Event::OrderBooked { instrument, .. } => self.touch(instrument, seq),
                _ => {}
            }
        }
        let Some(last) = events.last() else { return };
        for i in 0..self.touched.len() {
            if !std::mem::take(&mut self.touched[i]) {
                continue;
            }
            self.observe(engine, InstrumentId(i as u16), last.time, traded);
        }
        if traded {
            self.trades.forget_before(Timestamp(
                last.time.0 - self.config.trade_retention_days * DAY,
            ));
        }
    }

    fn touch(&mut self, instrument: InstrumentId, seq: u64) {
        if let Some(t) = self.touched.get_mut(usize::from(instrument.0)) {
            *t = true;
            self.instruments[usize::from(instrument.0)].last_sequence = seq;
        }
    }

    /// Updates the reference price (mid, else last trade) after a command touched the book.
    fn observe(
        &mut self,
        engine: &Engine,
        instrument: InstrumentId,
        time: Timestamp,
        traded: bool,
    ) {
        let data = &mut self.instruments[usize::from(instrument.0)];
        let mid = match engine.best_bid_ask(instrument) {
            Ok((Some(bid), Some(ask))) => Some((bid.0 + ask.0).div_euclid(2)),
            _ => None,
        };
        let reference = mid.or(data.reference);
        if reference == data.reference && !traded {
            return;
        }
        data.reference = reference;
        if let Some(r) = reference {
            let seq = data.last_sequence;
            for series in &mut data.candles {
                series.on_reference(time, seq, r);
            }
        }
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
        let series = &data.candles[granularity.index()];
        Ok(match count_back {
            Some(n) => series.query(Timestamp(i64::MIN / 2), to, n.min(MAX_CANDLES)),
            None => series.query(from, to, MAX_CANDLES),
        })
    }

    /// The ticker of one instrument at `now`.
    pub fn ticker(
        &self,
        engine: &Engine,
        instrument: InstrumentId,
        now: Timestamp,
    ) -> Result<Ticker, QueryError> {
        let data = self
            .instruments
            .get(usize::from(instrument.0))
            .ok_or(QueryError::UnknownInstrument)?;
        let (highest_bid, lowest_ask) = engine
            .best_bid_ask(instrument)
            .map_err(|_| QueryError::UnknownInstrument)?;
        Ok(Ticker {
            instrument,
            stats: data.window.stats(now),
            highest_bid,
            lowest_ask,
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
}
