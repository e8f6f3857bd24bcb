//! Public market-data answers (spec 2.9 to 2.13 and the order book).

use serde::Serialize;
use utoipa::ToSchema;

/// A currency (spec 2.10).
#[derive(Debug, Serialize, ToSchema)]
pub struct CurrencyBody {
    /// Code.
    pub code: String,
    /// Decimal places of balances.
    pub precision: u8,
    /// CoinMarketCap-style id (0: none).
    pub unified_cryptoasset_id: u32,
    /// Display name.
    pub name: String,
    /// Share counted as futures collateral, in percent.
    #[schema(value_type = f64)]
    pub collateral_percentage: serde_json::Value,
}

/// A currency of an instrument.
#[derive(Debug, Serialize, ToSchema)]
pub struct CurrencyRef {
    /// Code.
    pub code: String,
    /// Decimal places.
    pub precision: u8,
}

/// How a perpetual settles funding.
#[derive(Debug, Serialize, ToSchema)]
pub struct FundingScheduleBody {
    /// `FIXED_INTERVAL` or `SESSION_BASED`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Minutes between settlements (fixed interval).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_minutes: Option<u32>,
    /// Calendar (session based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calendar: Option<String>,
    /// Settlements per day at most (session based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_periods_per_day: Option<u32>,
    /// Where a session is split (session based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
}

/// The futures terms of an instrument (absent on spot instruments).
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct FuturesTermsBody {
    /// Mark price collar around the index, percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_collar_percentage: Option<String>,
    /// Minutes per funding period (absent on a future without funding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub funding_period: Option<u32>,
    /// Market offset, minutes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub market_offset: Option<i32>,
    /// Funding schedule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub funding_schedule: Option<FundingScheduleBody>,
    /// Expiry date of a dated future.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contract_expiry_date: Option<String>,
    /// Contract duration of a dated future.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contract_duration: Option<String>,
}

/// An instrument (spec 2.11).
#[derive(Debug, Serialize, ToSchema)]
pub struct InstrumentBody {
    /// Code such as `BTC_EUR`.
    pub id: String,
    /// Base currency.
    pub base: CurrencyRef,
    /// Quote currency.
    pub quote: CurrencyRef,
    /// Decimal places of amounts.
    pub amount_precision: u8,
    /// Decimal places of prices.
    pub market_precision: u8,
    /// Minimum order value.
    pub min_size: String,
    /// Lowest price.
    pub min_price: String,
    /// Highest price.
    pub max_price: String,
    /// `SPOT`, `PERP`, `DATED_FUTURE` or `EQUITY_FUTURE`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `ACTIVE`, `POST_ONLY`, `SUSPENDED` or `CLOSED`.
    pub state: &'static str,
    /// Futures terms (futures only).
    #[serde(flatten)]
    pub futures: FuturesTermsBody,
}

/// A fee tier (spec 2.9).
#[derive(Debug, Serialize, ToSchema)]
pub struct FeeTierBody {
    /// Lower 30-day volume bound.
    #[schema(value_type = f64)]
    pub volume: serde_json::Value,
    /// Its group.
    pub fee_group_id: String,
    /// Maker fee, percent.
    pub maker_fee: String,
    /// Taker fee, percent.
    pub taker_fee: String,
}

/// A fee group (spec 2.9).
#[derive(Debug, Serialize, ToSchema)]
pub struct FeeGroupBody {
    /// `SPOT` or `FUTURES`.
    pub fee_group_id: String,
    /// Description.
    pub display_text: String,
    /// Currency volumes are counted in.
    pub volume_currency: String,
    /// Tiers by volume.
    pub fee_tiers: Vec<FeeTierBody>,
}

/// The futures fields of a ticker (absent on spot markets).
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct TickerFuturesBody {
    /// Open interest in contracts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_interest: Option<String>,
    /// Open interest at the mark price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_interest_usd: Option<String>,
    /// Mark price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mark_price: Option<String>,
    /// Current funding rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub funding_rate: Option<String>,
    /// Next settlement (absent on a future without funding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_funding_payment: Option<String>,
}

/// A market ticker (spec 2.13).
#[derive(Debug, Serialize, ToSchema)]
pub struct TickerBody {
    /// Instrument.
    pub instrument_code: String,
    /// Sequence number of the last change.
    pub sequence: u64,
    /// Instrument state.
    pub state: &'static str,
    /// 24-hour base volume.
    pub base_volume: String,
    /// 24-hour quote volume.
    pub quote_volume: String,
    /// 24-hour high.
    pub high: String,
    /// 24-hour low.
    pub low: String,
    /// Last trade price.
    pub last_price: String,
    /// Change over 24 hours.
    pub price_change: String,
    /// Change over 24 hours, percent.
    pub price_change_percentage: String,
    /// Best bid (absent while the book has no bid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub highest_bid: Option<String>,
    /// Best ask (absent while the book has no ask).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lowest_ask: Option<String>,
    /// Best bid (addendum spelling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_bid: Option<String>,
    /// Best ask (addendum spelling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_ask: Option<String>,
    /// Time of the answer.
    pub time: String,
    /// Futures fields (futures only).
    #[serde(flatten)]
    pub futures: TickerFuturesBody,
    /// Market type (list only).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// 24-hour quote volume (list only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_volume: Option<String>,
}

/// A candle's period.
#[derive(Debug, Serialize, ToSchema)]
pub struct GranularityBody {
    /// `MINUTES`, `HOURS`, `DAYS`, `WEEKS` or `MONTHS`.
    pub unit: &'static str,
    /// Units per candle.
    pub period: u32,
}

/// A candlestick (spec 2.12).
#[derive(Debug, Serialize, ToSchema)]
pub struct CandleBody {
    /// Sequence number of its last trade.
    pub last_sequence: u64,
    /// Instrument.
    pub instrument_code: String,
    /// Period.
    pub granularity: GranularityBody,
    /// High.
    pub high: String,
    /// Low.
    pub low: String,
    /// Open.
    pub open: String,
    /// Close.
    pub close: String,
    /// Quote volume.
    pub volume: String,
    /// Base volume.
    pub total_amount: String,
    /// The period's last millisecond (the streams key candles by it too).
    pub time: String,
    /// Start of the period.
    pub start_time: String,
}

/// `GET /v1/candlesticks/{instrument_code}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CandlesBody {
    /// `data`.
    pub status: &'static str,
    /// Newest first.
    pub candlesticks: Vec<CandleBody>,
}

/// One entry of a book side: an order (level 3) or a price level (levels 1 and 2).
#[derive(Debug, Serialize, ToSchema)]
pub struct BookEntry {
    /// Price.
    pub price: String,
    /// Amount.
    pub amount: String,
    /// The order (level 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_id: Option<String>,
    /// Orders at the price (levels 1 and 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_of_orders: Option<u32>,
}

/// `GET /v1/order-book/{instrument_code}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct BookBody {
    /// Instrument.
    pub instrument_code: String,
    /// Time of the answer (nanoseconds).
    pub time: String,
    /// The book sequence it reflects: one per command that changed the book, the same
    /// number the `ORDER_BOOK` stream gives its snapshots and updates.
    pub sequence: u64,
    /// Bids, best first.
    pub bids: Vec<BookEntry>,
    /// Asks, best first.
    pub asks: Vec<BookEntry>,
}
