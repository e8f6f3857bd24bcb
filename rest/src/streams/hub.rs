//! The hub: one thread that follows the runtime's output (one subscription, every batch)
//! and turns it into stream frames, each serialised once and broadcast to every session,
//! which keeps the frames of the channels and instruments it subscribed to. The matching
//! thread never waits for it (the runtime drops a subscriber that falls behind; the hub then
//! subscribes again and treats every market as changed), and the hub never waits for a
//! session (a session that falls a whole broadcast buffer behind is closed as a slow
//! consumer).
//!
//! `MARKET_TICKER`: markets touched by a batch (a trade, a change of the top of the book
//! or of the instrument's state, an index price or a funding settlement) are collected and,
//! once per tick interval, read from the market stage and sent as one frame per market.
//! `CANDLESTICKS`: for the markets that traded, the newest candle of every granularity,
//! read and sent at the same tick. `PRICE_TICKS`: one frame per trade as the batch
//! arrives, with the best bid and ask the hub last saw announced.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::extract::ws::Utf8Bytes;
use crossbeam_channel::RecvTimeoutError;
use matchbook::runtime::{Clock, OffsetClock, ReadView, RuntimeHandle};
use matchbook::{Event, InstrumentId};
use tokio::sync::broadcast;

use matchbook::market::MarketData;
use matchbook::market::period::GRANULARITIES;

use super::messages::{
    CandleFrame, GranularityBody, PriceTick, PriceTickFrame, Stamp, TickerFrame, TickerUpdate,
};
use crate::markets::Markets;

/// Batches the hub's runtime subscription may fall behind before the runtime drops it.
const HUB_QUEUE: usize = 4096;

/// A stream channel the hub produces frames for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Channel {
    /// Market tickers.
    MarketTicker,
    /// Candles.
    Candlesticks,
    /// Trades as they happen.
    PriceTicks,
}

/// What a frame is about, within its channel: an instrument, and for candles the index of
/// the granularity in [`GRANULARITIES`] (0 otherwise).
pub type Topic = (InstrumentId, u8);

/// One frame for every session subscribed to its channel and topic.
#[derive(Debug)]
pub struct Frame {
    /// Its channel.
    pub channel: Channel,
    /// Its topic.
    pub topic: Topic,
    /// Sequence number of the event it shows (trades), 0 for periodic frames.
    pub seq: u64,
    /// The JSON text, serialised once.
    pub text: Utf8Bytes,
}

/// The running hub and the way sessions join it. Its thread ends when the runtime stops or
/// the hub is dropped.
#[derive(Debug)]
pub struct Hub {
    frames: broadcast::Sender<Arc<Frame>>,
    stop: Arc<AtomicBool>,
}

/// What the hub thread needs.
struct Source {
    runtime: RuntimeHandle,
    markets: Markets,
    clock: Arc<OffsetClock>,
    frames: broadcast::Sender<Arc<Frame>>,
    stop: Arc<AtomicBool>,
    tick: Duration,
}

impl Hub {
    /// Starts the hub thread; `buffer` frames may wait for the slowest session, and
    /// tickers go out every `tick`.
    pub fn start(
        runtime: RuntimeHandle,
        markets: Markets,
        clock: Arc<OffsetClock>,
        buffer: usize,
        tick: Duration,
    ) -> std::io::Result<Self> {
        let (frames, _) = broadcast::channel(buffer.max(1));
        let stop = Arc::new(AtomicBool::new(false));
        let source = Source {
            runtime,
            markets,
            clock,
            frames: frames.clone(),
            stop: stop.clone(),
            tick,
        };
        std::thread::Builder::new()
            .name("streams-hub".into())
            .spawn(move || source.run())?;
        Ok(Self { frames, stop })
    }

    /// A new session's feed: every frame from now on.
    pub fn join(&self) -> broadcast::Receiver<Arc<Frame>> {
        self.frames.subscribe()
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// The markets an event concerns, for the ticker.
fn touched(event: &Event) -> Option<InstrumentId> {
    match event {
        Event::Trade(t) => Some(t.instrument),
        Event::TopOfBook { instrument, .. }
        | Event::InstrumentStateChanged { instrument, .. }
        | Event::IndexPriceSet { instrument, .. }
        | Event::FundingSettled { instrument, .. } => Some(*instrument),
        _ => None,
    }
}

impl Source {
    fn run(self) {
        let every: BTreeSet<InstrumentId> = self.markets.markets.iter().map(|m| m.id).collect();
        let mut changed = BTreeSet::new();
        let mut traded = BTreeSet::new();
        let mut tops = std::collections::HashMap::new();
        let mut next_tick = Instant::now() + self.tick;
        'subscribe: while !self.stop.load(Ordering::Acquire) {
            let Ok(subscription) = self.runtime.subscribe(HUB_QUEUE) else {
                return;
            };
            loop {
                if self.stop.load(Ordering::Acquire) {
                    return;
                }
                let wait = next_tick.saturating_duration_since(Instant::now());
                match subscription.receiver().recv_timeout(wait) {
                    Ok(batch) => {
                        self.send_ticks(&batch.events, &mut tops);
                        changed.extend(batch.events.iter().filter_map(|e| touched(&e.event)));
                        traded.extend(batch.events.iter().filter_map(|e| match &e.event {
                            Event::Trade(t) => Some(t.instrument),
                            _ => None,
                        }));
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => match subscription.reason() {
                        matchbook::runtime::DropReason::Stopped => return,
                        matchbook::runtime::DropReason::Lagged { .. } => {
                            changed.clone_from(&every);
                            traded.clone_from(&every);
                            continue 'subscribe;
                        }
                    },
                }
                if Instant::now() >= next_tick {
                    next_tick = Instant::now() + self.tick;
                    if self.frames.receiver_count() > 0 {
                        self.send(std::mem::take(&mut changed), std::mem::take(&mut traded));
                    }
                    changed.clear();
                    traded.clear();
                }
            }
        }
    }

    /// One `PRICE_TICK` per trade, at once; `tops` follows each market's best bid and ask
    /// (as the events announce them) for the ticks to carry.
    fn send_ticks(
        &self,
        events: &[matchbook::EventRecord],
        tops: &mut std::collections::HashMap<
            InstrumentId,
            (Option<matchbook::Price>, Option<matchbook::Price>),
        >,
    ) {
        for record in events {
            match &record.event {
                Event::TopOfBook {
                    instrument,
                    bid,
                    ask,
                } => {
                    tops.insert(*instrument, (*bid, *ask));
                }
                Event::Trade(trade) => {
                    let Some(tick) = price_tick(
                        &self.markets,
                        trade,
                        record.time,
                        tops.get(&trade.instrument).copied(),
                    ) else {
                        continue;
                    };
                    let frame = PriceTickFrame {
                        channel_name: "PRICE_TICKS",
                        kind: "PRICE_TICK",
                        tick,
                    };
                    self.broadcast(
                        Channel::PriceTicks,
                        (trade.instrument, 0),
                        record.seq,
                        &frame,
                    );
                }
                _ => {}
            }
        }
    }

    /// Reads the tickers of `changed` and the newest candles of `traded`, and broadcasts
    /// them, one frame per market (and granularity).
    fn send(&self, changed: BTreeSet<InstrumentId>, traded: BTreeSet<InstrumentId>) {
        if changed.is_empty() && traded.is_empty() {
            return;
        }
        let markets = self.markets.clone();
        let now = self.clock.now();
        let (changed, traded): (Vec<_>, Vec<_>) =
            (changed.into_iter().collect(), traded.into_iter().collect());
        let Ok((tickers, candles)) = self.runtime.read_blocking(move |view| {
            let topics: Vec<Topic> = (traded.iter())
                .flat_map(|&id| (0..GRANULARITIES.len() as u8).map(move |g| (id, g)))
                .collect();
            (
                ticker_updates(view, &markets, &changed, now),
                candle_frames(view.market, &markets, &topics, now, "CANDLESTICK"),
            )
        }) else {
            return;
        };
        for (id, update) in tickers {
            let frame = TickerFrame::of(vec![update], now);
            self.broadcast(Channel::MarketTicker, (id, 0), 0, &frame);
        }
        for (topic, frame) in candles {
            self.broadcast(Channel::Candlesticks, topic, 0, &frame);
        }
    }

    /// Serialises a frame once and hands it to every session.
    fn broadcast(&self, channel: Channel, topic: Topic, seq: u64, frame: &impl serde::Serialize) {
        if let Ok(text) = serde_json::to_string(frame) {
            let _ = self.frames.send(Arc::new(Frame {
                channel,
                topic,
                seq,
                text: text.into(),
            }));
        }
    }
}

/// The candle of each topic whose period holds `now`, as `kind` frames (topics without a
/// candle yet are left out).
pub fn candle_frames(
    market: &MarketData,
    markets: &Markets,
    topics: &[Topic],
    now: matchbook::Timestamp,
    kind: &'static str,
) -> Vec<(Topic, CandleFrame)> {
    topics
        .iter()
        .filter_map(|&(id, g)| {
            let granularity = *GRANULARITIES.get(usize::from(g))?;
            let m = markets.market_of(id)?;
            let candle = (market.candles(id, granularity, now, now, Some(1)).ok()?)
                .into_iter()
                .next()?;
            let price = |p: i64| m.price(matchbook::Price(p));
            Some((
                (id, g),
                CandleFrame {
                    channel_name: "CANDLESTICKS",
                    kind,
                    instrument_code: m.code.clone(),
                    granularity: GranularityBody {
                        unit: granularity.unit.as_str(),
                        period: granularity.period,
                    },
                    open: price(candle.open),
                    high: price(candle.high),
                    low: price(candle.low),
                    close: price(candle.close),
                    volume: crate::format::decimal(
                        candle.volume,
                        m.amount_precision + m.market_precision,
                    ),
                    last_sequence: candle.last_sequence,
                    stamp: Stamp::of(crate::format::candle_time(candle.end)),
                },
            ))
        })
        .collect()
}

/// The tickers of `ids` as of `view`, as the streams write them.
pub fn ticker_updates(
    view: &ReadView<'_>,
    markets: &Markets,
    ids: &[InstrumentId],
    now: matchbook::Timestamp,
) -> Vec<(InstrumentId, TickerUpdate)> {
    ids.iter()
        .filter_map(|&id| {
            let market = markets.market_of(id)?;
            let state = view.engine.instrument(id).ok()?.state;
            let ticker = view.market.ticker(id, now).ok()?;
            let funding = view.engine.funding_view(id).ok();
            let body = crate::routes::public::ticker_body(
                market,
                state,
                &ticker,
                now,
                false,
                funding.as_ref(),
            );
            Some((id, TickerUpdate::from(body)))
        })
        .collect()
}

impl TickerFrame {
    /// A `MARKET_TICKER_UPDATES` frame.
    pub fn of(ticker_updates: Vec<TickerUpdate>, now: matchbook::Timestamp) -> Self {
        Self {
            channel_name: "MARKET_TICKER",
            kind: "MARKET_TICKER_UPDATES",
            ticker_updates,
            stamp: Stamp::of(now),
        }
    }
}

impl From<crate::wire::market::TickerBody> for TickerUpdate {
    fn from(t: crate::wire::market::TickerBody) -> Self {
        Self {
            instrument: t.instrument_code,
            last_price: t.last_price,
            price_change: t.price_change,
            price_change_percentage: t.price_change_percentage,
            high: t.high,
            low: t.low,
            volume: t.quote_volume,
            best_bid: t.best_bid,
            best_ask: t.best_ask,
            mark_price: t.futures.mark_price,
            funding_rate: t.futures.funding_rate,
            next_funding_payment: t.futures.next_funding_payment,
        }
    }
}

/// A trade as a tick; `top` is the book's best bid and ask before it, when known.
pub fn price_tick(
    markets: &Markets,
    trade: &matchbook::Trade,
    time: matchbook::Timestamp,
    top: Option<(Option<matchbook::Price>, Option<matchbook::Price>)>,
) -> Option<PriceTick> {
    let m = markets.market_of(trade.instrument)?;
    let side = |p: Option<matchbook::Price>| p.map(|p| m.price(p));
    Some(PriceTick {
        instrument_code: m.code.clone(),
        price: m.price(trade.price),
        amount: m.qty(trade.amount),
        volume: m.notional(trade.price.notional(trade.amount)),
        taker_side: trade.taker_side.as_str(),
        best_bid: top.and_then(|(bid, _)| side(bid)),
        best_ask: top.and_then(|(_, ask)| side(ask)),
        stamp: Stamp::of(time),
    })
}
