//! The frames of the streams contract: what a client sends (parsed leniently: unknown keys
//! are accepted, as clients send extras such as `bp_remaining_quota` or `price_points_mode`)
//! and what the server answers, each a type serialised once.

use serde::{Deserialize, Serialize};

use crate::format::iso_ms;

/// A client's message.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ClientMessage {
    /// Log in with a REST key.
    Authenticate {
        /// The key text.
        api_token: String,
    },
    /// Add channels.
    Subscribe {
        /// Channels with their instruments.
        channels: Vec<ChannelRequest>,
    },
    /// Replace the instruments of channels already subscribed.
    UpdateSubscription {
        /// Channels with their full new instrument lists.
        channels: Vec<ChannelRequest>,
    },
    /// Drop channels.
    Unsubscribe {
        /// Channel names.
        channels: Vec<String>,
    },
    /// `TRADING`: place an order (the REST create body).
    CreateOrder {
        /// The order, as `POST /v1/account/orders` takes it.
        order: serde_json::Value,
    },
    /// `TRADING`: cancel an order by its id or the caller's id.
    CancelOrder {
        /// The order's id.
        #[serde(default)]
        order_id: Option<String>,
        /// The caller's id of the order (its newest open order with it).
        #[serde(default)]
        client_id: Option<String>,
    },
    /// `TRADING`: amend an open order (`order_id` or `client_id`, with a new `amount`
    /// and/or `price`, as REST's `PUT` takes them).
    UpdateOrder {
        /// The order's id or client id and its new terms.
        order: serde_json::Value,
    },
    /// `TRADING`: cancel every open order, those of one instrument, or those listed.
    CancelAllOrders {
        /// The orders to cancel (their ids).
        #[serde(default)]
        order_ids: Option<Vec<String>>,
        /// Only this market's orders.
        #[serde(default)]
        instrument_code: Option<String>,
    },
    /// Disarm the account's dead-man switch (`CANCEL_ALL_AFTER` with 0).
    DeactivateCancelAllAfter,
    /// Arm, re-arm or (0) disarm the account's dead-man switch.
    CancelAllAfter {
        /// Milliseconds (a number or a numeric string).
        timeout: serde_json::Value,
    },
}

/// One channel of a SUBSCRIBE or UPDATE_SUBSCRIPTION.
#[derive(Debug, Clone, Deserialize)]
pub struct ChannelRequest {
    /// Channel name.
    pub name: String,
    /// Instruments (`None`: every market, where the channel allows it).
    #[serde(default)]
    pub instrument_codes: Option<Vec<String>>,
    /// `CANDLESTICKS`: the instruments with their granularities.
    #[serde(default)]
    pub properties: Option<Vec<CandleProperty>>,
    /// `ORDER_BOOK`: levels per side of the snapshot (0 or absent: all), as a number or
    /// a numeric string.
    #[serde(default)]
    pub depth: Option<serde_json::Value>,
    /// The older protocol's login: a REST key given with the channel instead of in an
    /// `AUTHENTICATE` before it.
    #[serde(default)]
    pub api_token: Option<String>,
}

impl ChannelRequest {
    /// Levels per side the snapshot shows: as asked, or every level for 0, absent or
    /// unreadable.
    pub fn depth(&self) -> usize {
        let depth = match &self.depth {
            Some(serde_json::Value::Number(n)) => n.as_u64(),
            Some(serde_json::Value::String(s)) => s.parse().ok(),
            _ => None,
        };
        match depth.and_then(|d| usize::try_from(d).ok()) {
            None | Some(0) => usize::MAX,
            Some(d) => d,
        }
    }
}

/// One market and granularity of a `CANDLESTICKS` subscription.
#[derive(Debug, Clone, Deserialize)]
pub struct CandleProperty {
    /// Instrument.
    pub instrument_code: String,
    /// Its granularity.
    pub time_granularity: GranularityRequest,
}

/// A granularity as clients write it.
#[derive(Debug, Clone, Deserialize)]
pub struct GranularityRequest {
    /// `MINUTES`, `HOURS`, `DAYS`, `WEEKS` or `MONTHS`.
    pub unit: String,
    /// Units per candle.
    pub period: u32,
}

/// A channel as the server confirms it.
#[derive(Debug, Clone, Serialize)]
pub struct ChannelState {
    /// Channel name.
    pub name: String,
    /// Instruments subscribed.
    pub instrument_codes: Vec<String>,
}

/// Engine time as the contract writes it: ISO milliseconds and integer nanoseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Stamp {
    /// ISO 8601 with milliseconds.
    pub time: String,
    /// Nanoseconds since the epoch.
    pub time_nanos: i64,
}

impl Stamp {
    /// The stamp of `at`.
    pub fn of(at: matchbook::Timestamp) -> Self {
        Self {
            time: iso_ms(at),
            time_nanos: at.0,
        }
    }
}

/// A session answer: `AUTHENTICATED`, `SUBSCRIPTIONS`, `SUBSCRIPTION_UPDATED`,
/// `UNSUBSCRIBED` or the heartbeat.
#[derive(Debug, Serialize)]
pub struct SessionFrame {
    /// Always `SYSTEM` for session answers.
    pub channel_name: &'static str,
    /// What happened.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Channels, for subscription answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channels: Option<Vec<ChannelState>>,
    /// `SYSTEM`, for the heartbeat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscription: Option<&'static str>,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// An error frame: clients raise on any frame carrying `error`.
#[derive(Debug, Serialize)]
pub struct ErrorFrame {
    /// The code.
    pub error: String,
    /// `SYSTEM`, or the channel the error is about.
    pub channel_name: String,
    /// `ERROR`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The instrument codes that were not recognised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid_instruments: Option<Vec<String>>,
    /// `TRADING`: the order id the refused request named, for the client to match it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_id: Option<String>,
    /// `TRADING`: the client id the refused request carried or named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// One market's ticker in a `MARKET_TICKER_UPDATES` frame.
#[derive(Debug, Serialize)]
pub struct TickerUpdate {
    /// Instrument code (the contract's key is `instrument`).
    pub instrument: String,
    /// Last trade price.
    pub last_price: String,
    /// Change over 24 hours.
    pub price_change: String,
    /// Change over 24 hours, percent.
    pub price_change_percentage: String,
    /// 24-hour high.
    pub high: String,
    /// 24-hour low.
    pub low: String,
    /// 24-hour quote volume.
    pub volume: String,
    /// Best bid (absent while the book has no bid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_bid: Option<String>,
    /// Best ask (absent while the book has no ask).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_ask: Option<String>,
    /// Futures: mark price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mark_price: Option<String>,
    /// Futures: current funding rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub funding_rate: Option<String>,
    /// Futures: next settlement (absent without funding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_funding_payment: Option<String>,
}

/// `MARKET_TICKER_UPDATES`.
#[derive(Debug, Serialize)]
pub struct TickerFrame {
    /// `MARKET_TICKER`.
    pub channel_name: &'static str,
    /// `MARKET_TICKER_UPDATES`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The markets.
    pub ticker_updates: Vec<TickerUpdate>,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// A candle's granularity on the wire (`period` a JSON integer).
#[derive(Debug, Serialize)]
pub struct GranularityBody {
    /// Unit.
    pub unit: &'static str,
    /// Units per candle.
    pub period: u32,
}

/// `CANDLESTICK_SNAPSHOT` or `CANDLESTICK`: one candle, keyed by its last millisecond.
#[derive(Debug, Serialize)]
pub struct CandleFrame {
    /// `CANDLESTICKS`.
    pub channel_name: &'static str,
    /// `CANDLESTICK_SNAPSHOT` on subscribe, `CANDLESTICK` after.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Instrument.
    pub instrument_code: String,
    /// Granularity.
    pub granularity: GranularityBody,
    /// Open.
    pub open: String,
    /// High.
    pub high: String,
    /// Low.
    pub low: String,
    /// Close.
    pub close: String,
    /// Quote volume.
    pub volume: String,
    /// Sequence number of its last trade.
    pub last_sequence: u64,
    /// The period's last millisecond (the same for every update of one candle).
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// One trade on the tape.
#[derive(Debug, Serialize)]
pub struct PriceTick {
    /// Instrument.
    pub instrument_code: String,
    /// Price.
    pub price: String,
    /// Amount.
    pub amount: String,
    /// Price x amount, in the quote currency.
    pub volume: String,
    /// `BUY` or `SELL`: the side that took.
    pub taker_side: &'static str,
    /// Best bid just before the trade (live ticks only, once known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_bid: Option<String>,
    /// Best ask just before the trade (live ticks only, once known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_ask: Option<String>,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// `PRICE_TICK`: one trade as it happens.
#[derive(Debug, Serialize)]
pub struct PriceTickFrame {
    /// `PRICE_TICKS`.
    pub channel_name: &'static str,
    /// `PRICE_TICK`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The trade.
    #[serde(flatten)]
    pub tick: PriceTick,
}

/// `PRICE_TICK_HISTORY`: the last trades of a market, newest first, on subscribe.
#[derive(Debug, Serialize)]
pub struct PriceTickHistory {
    /// `PRICE_TICKS`.
    pub channel_name: &'static str,
    /// `PRICE_TICK_HISTORY`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Instrument.
    pub instrument_code: String,
    /// Up to 80 trades.
    pub history: Vec<PriceTick>,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// `ORDER_BOOK_SNAPSHOT`: a book's levels at one book sequence.
#[derive(Debug, Serialize)]
pub struct BookSnapshotFrame {
    /// `ORDER_BOOK`.
    pub channel_name: &'static str,
    /// `ORDER_BOOK_SNAPSHOT`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Instrument.
    pub instrument_code: String,
    /// Bids, best first: `[price, amount]`.
    pub bids: Vec<[String; 2]>,
    /// Asks, best first.
    pub asks: Vec<[String; 2]>,
    /// The book sequence it shows; the next update carries this plus one.
    pub sequence: u64,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// `ORDER_BOOK_UPDATE`: the levels one command changed.
#[derive(Debug, Serialize)]
pub struct BookUpdateFrame {
    /// `ORDER_BOOK`.
    pub channel_name: &'static str,
    /// `ORDER_BOOK_UPDATE`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Instrument.
    pub instrument_code: String,
    /// `[side, price, new amount]`, amount `"0"` for a level gone.
    pub changes: Vec<[String; 3]>,
    /// The book sequence after the change: one more than the frame before.
    pub sequence: u64,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// The best bid and ask of a `BOOK_TICKER` frame (`null` for an empty side).
#[derive(Debug, Serialize)]
pub struct BookTop {
    /// Best bid.
    pub best_bid: Option<String>,
    /// Amount at it.
    pub bid_amount: Option<String>,
    /// Best ask.
    pub best_ask: Option<String>,
    /// Amount at it.
    pub ask_amount: Option<String>,
}

/// `BOOK_TICKER_SNAPSHOT` on subscribe, `BOOK_TICK` when the top changes.
#[derive(Debug, Serialize)]
pub struct BookTickFrame {
    /// `BOOK_TICKER`.
    pub channel_name: &'static str,
    /// `BOOK_TICKER_SNAPSHOT` or `BOOK_TICK`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Instrument.
    pub instrument_code: String,
    /// The top.
    pub data: BookTop,
    /// The book sequence it reflects.
    pub sequence: u64,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// `AUTO_CANCELLATION_TIMER_SET`: the dead-man switch as it now stands.
#[derive(Debug, Serialize)]
pub struct TimerFrame {
    /// `SYSTEM`.
    pub channel_name: &'static str,
    /// `AUTO_CANCELLATION_TIMER_SET`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The timeout set, in milliseconds (0: off).
    pub timeout: u64,
    /// When the account's open orders will be cancelled (`null`: off).
    pub cancel_at: Option<String>,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}
