//! A session's market feed: every book as a snapshot where the feed starts, then each
//! command's changed levels (numbered with the book sequence, exactly the `ORDER_BOOK`
//! stream's contract), the top of a book when it moved, and every trade, as the runtime's
//! market stage publishes them from its replica. Polled into the caller's array: nothing
//! is allocated per message on the caller's side, and a poll hands out what fits.

use std::collections::VecDeque;

use matchbook::runtime::{BookUpdate, FeedBatch, ReadView, Subscription};
use matchbook::{Event, InstrumentId, Side, TopLevel};

use crate::boundary::{fail, guard, hand_out, out};
use crate::runtime::MbSession;
use crate::status::MbStatus;

/// What an `mb_market_update` reports.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbMarketUpdateKind {
    /// A book's snapshot starts: forget its levels; `book_sequence` is its sequence. Its
    /// levels follow as `MB_MARKET_UPDATE_KIND_LEVEL` with the same `book_sequence`.
    Snapshot = 0,
    /// A level (`side`, `price`) now shows `amount` lots in `orders` orders (0: gone).
    Level = 1,
    /// The book's best bid or ask moved (sent for both sides, bid first): the best of
    /// `side` is now `price` with `amount` (both 0: none).
    Top = 2,
    /// A trade of `amount` at `price`; `side` is the taker's, `trade` its id.
    Trade = 3,
}

/// One message of the market feed.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbMarketUpdate {
    /// Sequence number of the command it comes from (a snapshot: the command it was
    /// read after).
    pub seq: u64,
    /// The book's sequence after that command (a trade: 0).
    pub book_sequence: u64,
    /// Trade id (other kinds: 0).
    pub trade: u64,
    /// Price in ticks.
    pub price: i64,
    /// Amount in lots.
    pub amount: i64,
    /// Orders at the level (`MB_MARKET_UPDATE_KIND_LEVEL`).
    pub orders: u32,
    /// Instrument index.
    pub instrument: u16,
    /// Side (0 buy, 1 sell).
    pub side: u8,
    /// Kind.
    pub kind: MbMarketUpdateKind,
}

/// Batches a session's market feed may fall behind by before it is dropped.
const FEED_CAPACITY: usize = 65_536;

/// A session's market feed and what it has not handed out yet.
pub(crate) struct MarketFeed {
    subscription: Subscription<FeedBatch>,
    pending: VecDeque<MbMarketUpdate>,
}

fn message(kind: MbMarketUpdateKind, seq: u64, instrument: InstrumentId) -> MbMarketUpdate {
    MbMarketUpdate {
        seq,
        book_sequence: 0,
        trade: 0,
        price: 0,
        amount: 0,
        orders: 0,
        instrument: instrument.0,
        side: 0,
        kind,
    }
}

/// Every book of the replica, as snapshot messages.
fn snapshot(view: &ReadView<'_>) -> VecDeque<MbMarketUpdate> {
    let mut out = VecDeque::new();
    for i in 0..view.engine.instruments().len() {
        let id = InstrumentId(i as u16);
        let Ok(book) = view.engine.book_levels(id, usize::MAX) else {
            continue;
        };
        let start = MbMarketUpdate {
            book_sequence: book.sequence,
            ..message(MbMarketUpdateKind::Snapshot, view.seq, id)
        };
        out.push_back(start);
        for (side, levels) in [(Side::Buy, &book.bids), (Side::Sell, &book.asks)] {
            for l in levels {
                out.push_back(MbMarketUpdate {
                    book_sequence: book.sequence,
                    price: l.price.0,
                    amount: l.amount.0,
                    orders: l.number_of_orders,
                    side: side as u8,
                    ..message(MbMarketUpdateKind::Level, view.seq, id)
                });
            }
        }
    }
    out
}

fn push_book(out: &mut VecDeque<MbMarketUpdate>, seq: u64, update: &BookUpdate) {
    let base = MbMarketUpdate {
        book_sequence: update.sequence,
        ..message(MbMarketUpdateKind::Level, seq, update.instrument)
    };
    for l in &update.levels {
        out.push_back(MbMarketUpdate {
            price: l.price.0,
            amount: l.amount.0,
            orders: l.orders,
            side: l.side as u8,
            ..base
        });
    }
    if let Some((bid, ask)) = update.top {
        for (side, top) in [(Side::Buy, bid), (Side::Sell, ask)] {
            let (price, amount) = top_values(top);
            out.push_back(MbMarketUpdate {
                price,
                amount,
                side: side as u8,
                kind: MbMarketUpdateKind::Top,
                ..base
            });
        }
    }
}

fn top_values(top: TopLevel) -> (i64, i64) {
    top.map_or((0, 0), |(p, a)| (p.0, a.0))
}

impl MarketFeed {
    fn start(session: &MbSession) -> Result<Self, MbStatus> {
        let (subscription, pending) = (session.handle())
            .subscribe_feed(FEED_CAPACITY, snapshot)
            .map_err(|e| fail(MbStatus::from(e), e.to_string()))?;
        Ok(Self {
            subscription,
            pending,
        })
    }

    /// Takes every batch published so far; a feed dropped for lagging is reported.
    fn take_published(&mut self) -> Result<(), MbStatus> {
        let pending = &mut self.pending;
        take_batches(&self.subscription, "market", |batch| {
            let published = &batch.published;
            for (index, command) in published.commands.iter().enumerate() {
                for record in published.events_of(index) {
                    if let Event::Trade(t) = &record.event {
                        pending.push_back(MbMarketUpdate {
                            trade: t.id.0,
                            price: t.price.0,
                            amount: t.amount.0,
                            side: t.taker_side as u8,
                            ..message(MbMarketUpdateKind::Trade, command.seq, t.instrument)
                        });
                    }
                }
                for update in batch.books_of(index) {
                    push_book(pending, command.seq, update);
                }
            }
        })
    }
}

/// Hands every batch queued on a session's feed to `each`; a feed the runtime dropped
/// (the session fell behind, or the runtime stopped) is `MB_STATUS_STOPPED`.
pub(crate) fn take_batches(
    subscription: &Subscription<FeedBatch>,
    feed: &str,
    mut each: impl FnMut(&FeedBatch),
) -> Result<(), MbStatus> {
    loop {
        match subscription.try_recv() {
            Ok(Some(batch)) => each(&batch),
            Ok(None) => return Ok(()),
            Err(reason) => {
                return Err(fail(
                    MbStatus::Stopped,
                    format!("the {feed} feed ended: {reason}; subscribe again"),
                ));
            }
        }
    }
}

/// Starts (or restarts) the session's market feed: every book as a snapshot, then every
/// change after it, polled with `mb_session_poll_market`. A session that does not poll
/// for more than 65,536 published batches loses the feed (`MB_STATUS_STOPPED` at the next
/// poll; subscribe again for a fresh snapshot).
///
/// # Safety
/// `session` live and used by this thread only.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_subscribe_market(session: *mut MbSession) -> MbStatus {
    guard(|| {
        let s = crate::runtime::session_mut(session)?;
        s.market = Some(MarketFeed::start(s)?);
        Ok(())
    })
}

/// Moves up to `capacity` market-feed messages, oldest first, into `updates` and writes
/// how many (`*len_out` equal to `capacity`: more may wait; poll again).
/// `MB_STATUS_INVALID_ARGUMENT` when the session has no market feed.
///
/// # Safety
/// `session` live and used by this thread only; `updates` NULL (with `capacity` 0) or
/// `capacity` writable elements; `len_out` writable.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_poll_market(
    session: *mut MbSession,
    updates: *mut MbMarketUpdate,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    guard(|| {
        let s = crate::runtime::session_mut(session)?;
        let feed = (s.market.as_mut())
            .ok_or_else(|| fail(MbStatus::InvalidArgument, "the session has no market feed"))?;
        let len = out(len_out, "len_out")?;
        *len = 0;
        if let Err(stopped) = feed.take_published() {
            s.market = None;
            return Err(stopped);
        }
        hand_out(&mut feed.pending, updates, capacity, len)
    })
}
