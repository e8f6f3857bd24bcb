//! What the hub broadcasts: frames, each for one channel and topic (and an account, for
//! private channels), serialised once; and, for `ORDER_BOOK` frames, what they say, so a
//! session following a book at a depth can rework them (`depth`).

use std::sync::{Arc, Mutex};

use axum::extract::ws::Utf8Bytes;
use matchbook::{AccountId, InstrumentId, Price, Qty, Side, Timestamp};

use super::book_frames::Levels;

/// A stream channel the hub produces frames for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Channel {
    /// Book snapshots and level updates.
    OrderBook,
    /// The best bid and ask.
    BookTicker,
    /// Market tickers.
    MarketTicker,
    /// Candles.
    Candlesticks,
    /// Trades as they happen.
    PriceTicks,
    /// An account's orders, fills and balances (private).
    AccountHistory,
    /// An account's order events, and order entry (private).
    Trading,
}

impl Channel {
    /// The channel a client names (the contract's older and newer names of the account's
    /// order updates included).
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "ORDER_BOOK" => Some(Self::OrderBook),
            "BOOK_TICKER" => Some(Self::BookTicker),
            "MARKET_TICKER" => Some(Self::MarketTicker),
            "CANDLESTICKS" => Some(Self::Candlesticks),
            "PRICE_TICKS" => Some(Self::PriceTicks),
            "ACCOUNT_HISTORY" | "ORDERS" | "ORDERS_SNAPSHOT" => Some(Self::AccountHistory),
            "TRADING" => Some(Self::Trading),
            _ => None,
        }
    }

    /// Its name in frames.
    pub fn name(self) -> &'static str {
        match self {
            Self::OrderBook => "ORDER_BOOK",
            Self::BookTicker => "BOOK_TICKER",
            Self::MarketTicker => "MARKET_TICKER",
            Self::Candlesticks => "CANDLESTICKS",
            Self::PriceTicks => "PRICE_TICKS",
            Self::AccountHistory => "ACCOUNT_HISTORY",
            Self::Trading => "TRADING",
        }
    }

    /// Whether it carries an account's own data (after `AUTHENTICATE`).
    pub fn is_private(self) -> bool {
        matches!(self, Self::AccountHistory | Self::Trading)
    }
}

/// What a frame is about, within its channel: an instrument, and for candles the index of
/// the granularity in [`matchbook::market::period::GRANULARITIES`] (0 otherwise).
pub type Topic = (InstrumentId, u8);

/// The topic of private frames: they are told apart by their account.
pub const PRIVATE_TOPIC: Topic = (InstrumentId(0), 0);

/// The frames of one batch of commands (or one ticker round), broadcast together so a
/// session wakes once for all of them and writes them with one flush.
pub type Frames = Arc<Vec<Frame>>;

/// One frame for every session subscribed to its channel and topic.
#[derive(Debug)]
pub struct Frame {
    /// Its channel.
    pub channel: Channel,
    /// Its topic.
    pub topic: Topic,
    /// What orders it within its topic: the book sequence for `ORDER_BOOK` and
    /// `BOOK_TICKER`, the event sequence number for trades, 0 for periodic frames.
    pub seq: u64,
    /// The account it belongs to, for private channels (only its sessions get it).
    pub account: Option<AccountId>,
    /// The JSON text, serialised once.
    pub text: Utf8Bytes,
    /// For `ORDER_BOOK` frames, what the text says, for sessions that follow the book at
    /// a depth (`depth`).
    pub book: Option<BookData>,
}

/// What an `ORDER_BOOK` frame of the hub says, for sessions that rework it.
#[derive(Debug)]
pub enum BookData {
    /// Every level of the book (sent after the hub started over).
    Snapshot {
        /// Bids and asks, best first.
        levels: (Levels, Levels),
        /// The frame's time.
        time: Timestamp,
    },
    /// The levels one command changed, with their amounts after it (0: gone).
    Update {
        /// Side, price, new amount.
        levels: Vec<(Side, Price, Qty)>,
        /// The frame's time.
        time: Timestamp,
        /// The updates sessions wrote for this frame, shared by the sessions whose window
        /// changed alike (every session at one depth).
        written: Written,
    },
}

/// Levels with their amounts after a change (0: gone).
pub type LevelChange = Vec<(Side, Price, Qty)>;

/// Updates written for one frame of the hub: the change of a window, and its text.
#[derive(Debug, Default)]
pub struct Written(pub(super) Mutex<Vec<(LevelChange, Utf8Bytes)>>);
