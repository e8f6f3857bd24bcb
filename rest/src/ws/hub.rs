//! The hub: one thread that follows the runtime's market-stage feed (one subscription,
//! every batch) and turns it into stream frames, each serialised once and broadcast to
//! every session, which keeps the frames of the channels and instruments it subscribed to.
//! No stage waits for it (the runtime drops a subscriber that falls behind; the hub then
//! subscribes again and sends every book as a snapshot read where the new feed starts), and
//! the hub never waits for a session (a session that falls a whole broadcast buffer behind
//! is closed as a slow consumer).
//!
//! `ORDER_BOOK` and `BOOK_TICKER`: per command, the levels it changed in each book, with
//! their amounts after it and the book sequence, as the market stage publishes them from
//! its replica ([`matchbook::runtime::FeedBatch`]): the hub keeps no book. `PRICE_TICKS`:
//! one frame per trade as the batch arrives. `MARKET_TICKER` and `CANDLESTICKS`: markets
//! touched by a batch are collected and, once per tick interval, read from the market stage
//! and sent.
//!
//! After each batch the hub publishes the last command it has sent frames for
//! ([`Hub::sent_through`]): a snapshot read at or after it, followed by the frames that come
//! after it, misses nothing.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use crossbeam_channel::RecvTimeoutError;
use matchbook::runtime::{
    AccountUpdate, BookUpdate, Clock, DropReason, FeedBatch, OffsetClock, RuntimeHandle,
    Subscription,
};
use matchbook::{AccountId, Event, EventRecord, InstrumentId, Price, Timestamp};
use tokio::sync::broadcast;

use matchbook::market::period::GRANULARITIES;

use super::accounts::PrivateFrames;
use super::book_frames::{self, Levels};
use super::frames::{BookData, Channel, Frame, Frames, PRIVATE_TOPIC, Topic};
use super::market_frames::{candle_frames, price_tick, ticker_updates};
use super::messages::{PriceTickFrame, TickerFrame};
use crate::markets::Markets;

/// Batches the hub's runtime subscription may fall behind before the runtime drops it.
const HUB_QUEUE: usize = 4096;

/// The accounts some session follows privately, with how many sessions follow each.
type Watched = RwLock<HashMap<AccountId, usize>>;

/// A session's following of an account; dropping it stops the following.
#[derive(Debug)]
pub struct Watch {
    watched: Arc<Watched>,
    account: AccountId,
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut watched = self.watched.write().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = watched.get_mut(&self.account) {
            *count -= 1;
            if *count == 0 {
                watched.remove(&self.account);
            }
        }
    }
}

/// The running hub and the way sessions join it. Its thread ends when the runtime stops or
/// the hub is dropped.
#[derive(Debug)]
pub struct Hub {
    frames: broadcast::Sender<Frames>,
    stop: Arc<AtomicBool>,
    sent_through: Arc<AtomicU64>,
    watched: Arc<Watched>,
}

/// What the hub thread needs and keeps.
struct Source {
    runtime: RuntimeHandle,
    markets: Markets,
    clock: Arc<OffsetClock>,
    frames: broadcast::Sender<Frames>,
    /// Frames made since the last broadcast.
    pending: RefCell<Vec<Frame>>,
    stop: Arc<AtomicBool>,
    sent_through: Arc<AtomicU64>,
    tick: Duration,
    watched: Arc<Watched>,
    /// Per market, the best bid and ask the events last announced (for price ticks).
    tops: HashMap<InstrumentId, (Option<Price>, Option<Price>)>,
}

/// A feed of batches, the command it starts after, and every book as it stood there.
struct Feed {
    subscription: Subscription<FeedBatch>,
    base: u64,
    books: Vec<BookSnapshot>,
}

/// A book read where a feed starts: its market, levels and sequence.
type BookSnapshot = (InstrumentId, (Levels, Levels), u64);

/// Every book of `engine`.
fn book_snapshots(engine: &matchbook::Engine) -> Vec<BookSnapshot> {
    (0..engine.instruments().len())
        .filter_map(|i| {
            let id = InstrumentId(u16::try_from(i).ok()?);
            let (levels, sequence) = book_frames::engine_levels(engine, id, usize::MAX)?;
            Some((id, levels, sequence))
        })
        .collect()
}

impl Hub {
    /// Starts the hub thread; `buffer` broadcasts may wait for the slowest session, and
    /// tickers go out every `tick`. Returns once the hub follows the runtime.
    pub fn start(
        runtime: RuntimeHandle,
        markets: Markets,
        clock: Arc<OffsetClock>,
        buffer: usize,
        tick: Duration,
    ) -> std::io::Result<Self> {
        let (frames, _) = broadcast::channel(buffer.max(1));
        let stop = Arc::new(AtomicBool::new(false));
        let sent_through = Arc::new(AtomicU64::new(0));
        let watched = Arc::new(Watched::default());
        let mut source = Source {
            runtime,
            markets,
            clock,
            frames: frames.clone(),
            pending: RefCell::new(Vec::new()),
            stop: stop.clone(),
            sent_through: sent_through.clone(),
            tick,
            watched: watched.clone(),
            tops: HashMap::new(),
        };
        let feed = source
            .follow()
            .ok_or_else(|| std::io::Error::other("the runtime stopped"))?;
        std::thread::Builder::new()
            .name("streams-hub".into())
            .spawn(move || source.run(feed))?;
        Ok(Self {
            frames,
            stop,
            sent_through,
            watched,
        })
    }

    /// Has the hub make the private frames of `account` until the guard is dropped.
    pub fn watch(&self, account: AccountId) -> Watch {
        let mut watched = self.watched.write().unwrap_or_else(|e| e.into_inner());
        *watched.entry(account).or_insert(0) += 1;
        Watch {
            watched: self.watched.clone(),
            account,
        }
    }

    /// A new session's feed: every frame from now on.
    pub fn join(&self) -> broadcast::Receiver<Frames> {
        self.frames.subscribe()
    }

    /// The last command whose frames have all been broadcast. A session that joined and
    /// then reads a snapshot at or after this command gets, from its feed, every frame
    /// that follows the snapshot.
    pub fn sent_through(&self) -> u64 {
        self.sent_through.load(Ordering::Acquire)
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
    /// Subscribes to the runtime's book feed, reading the books and accounts where it
    /// starts.
    fn follow(&mut self) -> Option<Feed> {
        let start = |view: &matchbook::runtime::ReadView<'_>| book_snapshots(view.engine);
        let (subscription, books) = self.runtime.subscribe_feed(HUB_QUEUE, start).ok()?;
        let base = subscription.start_seq;
        self.sent_through.store(base, Ordering::Release);
        Some(Feed {
            subscription,
            base,
            books,
        })
    }

    fn run(mut self, mut feed: Feed) {
        let every: BTreeSet<InstrumentId> = self.markets.markets.iter().map(|m| m.id).collect();
        let mut changed = BTreeSet::new();
        let mut traded = BTreeSet::new();
        let mut next_tick = Instant::now() + self.tick;
        while !self.stop.load(Ordering::Acquire) {
            let wait = next_tick.saturating_duration_since(Instant::now());
            match feed.subscription.receiver().recv_timeout(wait) {
                Ok(batch) => {
                    // Held for the whole batch, so a session that starts following an
                    // account waits for the batch in progress: every later batch has its
                    // frames, and every earlier one is before `sent_through`.
                    let watched = self.watched.clone();
                    let watched = watched.read().unwrap_or_else(|e| e.into_inner());
                    let published = &batch.published;
                    for (index, command) in published.commands.iter().enumerate() {
                        if command.seq <= feed.base {
                            continue;
                        }
                        let events = published.events_of(index);
                        let books = batch.books_of(index);
                        let accounts = batch.accounts_of(index);
                        self.send_command(events, (books, accounts), command.time, &watched);
                        changed.extend(events.iter().filter_map(|e| touched(&e.event)));
                        traded.extend(events.iter().filter_map(|e| match &e.event {
                            Event::Trade(t) => Some(t.instrument),
                            _ => None,
                        }));
                    }
                    self.flush();
                    if let Some(last) = batch.published.last_seq() {
                        self.sent_through.fetch_max(last, Ordering::AcqRel);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => match feed.subscription.reason() {
                    DropReason::Stopped => return,
                    DropReason::Lagged { .. } => {
                        let Some(again) = self.follow() else {
                            return;
                        };
                        feed = again;
                        self.send_book_snapshots(&feed.books);
                        self.flush();
                        changed.clone_from(&every);
                        traded.clone_from(&every);
                    }
                },
            }
            if Instant::now() >= next_tick {
                next_tick = Instant::now() + self.tick;
                if self.frames.receiver_count() > 0 {
                    self.send(std::mem::take(&mut changed), std::mem::take(&mut traded));
                    self.flush();
                }
                changed.clear();
                traded.clear();
            }
        }
    }

    /// The frames of one command: its trades, and its changes to each book.
    fn send_command<'b>(
        &mut self,
        events: &[EventRecord],
        (books, accounts): (
            impl Iterator<Item = &'b BookUpdate>,
            impl Iterator<Item = &'b AccountUpdate>,
        ),
        time: Timestamp,
        watched: &HashMap<AccountId, usize>,
    ) {
        self.send_ticks(events);
        for change in books {
            let Some(market) = self.markets.market_of(change.instrument) else {
                continue;
            };
            let topic = (change.instrument, 0);
            let levels = book_frames::changed_levels(change);
            let update = book_frames::update_of(market, &levels, change.sequence, time);
            // The change is the hub's own once its frame is written: its levels move.
            let data = BookData::Update {
                levels,
                time,
                written: Default::default(),
            };
            self.send_book(topic, change.sequence, &update, data);
            if let Some(top) = change.top {
                let tick = book_frames::tick(market, "BOOK_TICK", top, change.sequence, time);
                self.broadcast(Channel::BookTicker, topic, change.sequence, &tick);
            }
        }
        let updates = PrivateFrames::of(&self.markets, accounts, |a| watched.contains_key(&a));
        for (account, seq, frame) in updates.history {
            self.send_private(Channel::AccountHistory, account, seq, &frame);
        }
        for (account, seq, frame) in updates.trading {
            self.send_private(Channel::Trading, account, seq, &frame);
        }
    }

    /// After starting over: every book and top as a snapshot, read where the new feed
    /// starts, so sessions that followed the old feed continue from the new one without a
    /// gap.
    fn send_book_snapshots(&self, books: &[BookSnapshot]) {
        let now = self.clock.now();
        for (id, levels, sequence) in books {
            let Some(market) = self.markets.market_of(*id) else {
                continue;
            };
            let top = book_frames::top_of(levels);
            let topic = (market.id, 0);
            let snapshot = book_frames::snapshot(market, levels.clone(), *sequence, now);
            let data = BookData::Snapshot {
                levels: levels.clone(),
                time: now,
            };
            self.send_book(topic, *sequence, &snapshot, data);
            let tick = book_frames::tick(market, "BOOK_TICKER_SNAPSHOT", top, *sequence, now);
            self.broadcast(Channel::BookTicker, topic, *sequence, &tick);
        }
    }

    /// One `PRICE_TICK` per trade, at once, with the best bid and ask the events last
    /// announced.
    fn send_ticks(&mut self, events: &[EventRecord]) {
        for record in events {
            match &record.event {
                Event::TopOfBook {
                    instrument,
                    bid,
                    ask,
                } => {
                    self.tops.insert(*instrument, (*bid, *ask));
                }
                Event::Trade(trade) => {
                    let top = self.tops.get(&trade.instrument).copied();
                    let Some(tick) = price_tick(&self.markets, trade, record.time, top) else {
                        continue;
                    };
                    let frame = PriceTickFrame {
                        channel_name: "PRICE_TICKS",
                        kind: "PRICE_TICK",
                        tick,
                    };
                    let topic = (trade.instrument, 0);
                    self.broadcast(Channel::PriceTicks, topic, record.seq, &frame);
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

    /// Serialises a frame once for every session (none: nothing to do); it goes out with
    /// the next [`Source::flush`].
    fn broadcast(&self, channel: Channel, topic: Topic, seq: u64, frame: &impl serde::Serialize) {
        self.send_frame(channel, (topic, None), seq, frame, None);
    }

    /// As [`Source::broadcast`], an `ORDER_BOOK` frame with what it says as `data`.
    fn send_book(&self, topic: Topic, seq: u64, frame: &impl serde::Serialize, data: BookData) {
        self.send_frame(Channel::OrderBook, (topic, None), seq, frame, Some(data));
    }

    /// As [`Source::broadcast`], for the sessions of `account` only.
    fn send_private(
        &self,
        channel: Channel,
        account: AccountId,
        seq: u64,
        frame: &impl serde::Serialize,
    ) {
        self.send_frame(channel, (PRIVATE_TOPIC, Some(account)), seq, frame, None);
    }

    fn send_frame(
        &self,
        channel: Channel,
        (topic, account): (Topic, Option<AccountId>),
        seq: u64,
        frame: &impl serde::Serialize,
        book: Option<BookData>,
    ) {
        if self.frames.receiver_count() == 0 {
            return;
        }
        if let Ok(text) = serde_json::to_string(frame) {
            self.pending.borrow_mut().push(Frame {
                channel,
                topic,
                seq,
                account,
                text: text.into(),
                book,
            });
        }
    }

    /// Broadcasts the frames made since the last call, as one item.
    fn flush(&self) {
        let frames = std::mem::take(&mut *self.pending.borrow_mut());
        if !frames.is_empty() {
            let _ = self.frames.send(Arc::new(frames));
        }
    }
}
