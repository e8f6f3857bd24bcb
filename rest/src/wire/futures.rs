//! Futures answers of the addendum (funding rates, positions, funding payments; spec 2.14).

use serde::Serialize;
use utoipa::ToSchema;

/// A funding rate: current, or settled.
#[derive(Debug, Serialize, ToSchema)]
pub struct FundingRateBody {
    /// Instrument.
    pub instrument_code: String,
    /// Rate per period, a fraction.
    pub funding_rate: String,
    /// Mark price at the time (absent before the market has one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mark_price: Option<String>,
    /// Time.
    pub time: String,
}

/// A market's funding settings.
#[derive(Debug, Serialize, ToSchema)]
pub struct FundingSettingsBody {
    /// Instrument.
    pub instrument_code: String,
    /// Instrument state.
    pub state: &'static str,
    /// Market offset, minutes.
    pub market_offset: i32,
    /// Clamp of the interest component.
    pub clamp_threshold: String,
    /// Yearly interest-rate differential.
    pub annual_interest_rate: String,
    /// Largest rate per period.
    pub cap: String,
    /// Minutes per period.
    pub period: i64,
}

/// An open position.
#[derive(Debug, Serialize, ToSchema)]
pub struct PositionBody {
    /// Position number.
    pub position_id: String,
    /// Instrument.
    pub instrument_code: String,
    /// `LONG` or `SHORT`.
    pub direction: &'static str,
    /// Size.
    pub open_volume: String,
    /// Average entry price.
    pub entry_price: String,
    /// Mark price.
    pub mark_price: String,
    /// Initial margin, USD.
    pub initial_margin: String,
    /// Maintenance margin, USD.
    pub maintenance_margin: String,
    /// Unrealised PnL, USD.
    pub unrealised_pnl: String,
    /// Realised PnL since it opened, USD.
    pub realised_pnl: String,
    /// Time it opened.
    pub opened: String,
    /// Last funding settlement (`null`: none yet).
    pub last_settlement: Option<String>,
}

/// `GET /v1/account/futures/summary`.
#[derive(Debug, Serialize, ToSchema)]
pub struct FuturesSummaryBody {
    /// The account.
    pub account_id: String,
    /// Equity, USD.
    pub equity: String,
    /// Margin used, USD.
    pub margin_used: String,
    /// Margin available, USD.
    pub margin_available: String,
    /// Maintenance margin, USD.
    pub maintenance_margin: String,
    /// Maintenance margin over equity, percent.
    pub account_ratio: String,
    /// De-risk mode.
    pub derisk: bool,
    /// Open positions.
    pub positions: Vec<PositionBody>,
}

/// `GET /v1/account/futures/positions`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PositionsBody {
    /// Open positions.
    pub positions: Vec<PositionBody>,
}

/// A closed position.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClosedPositionBody {
    /// Position number.
    pub position_id: String,
    /// Instrument.
    pub instrument_code: String,
    /// `LONG` or `SHORT`.
    pub direction: &'static str,
    /// Largest size it reached.
    pub max_open_volume: String,
    /// Average entry price.
    pub entry_price: String,
    /// Realised PnL, USD.
    pub realised_pnl: String,
    /// Time it opened.
    pub opened: String,
    /// Time it closed.
    pub closed: String,
}

/// `GET /v1/account/futures/positions-history`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClosedPositionsBody {
    /// Closed positions, newest first.
    pub positions: Vec<ClosedPositionBody>,
    /// Cursor of the next page, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// A funding payment (spec 2.14).
#[derive(Debug, Serialize, ToSchema)]
pub struct FundingPaymentBody {
    /// The account.
    pub account_id: String,
    /// The position.
    pub position_id: String,
    /// Instrument.
    pub instrument_code: String,
    /// Rate settled.
    pub funding_rate: String,
    /// Mark price.
    pub mark_price: String,
    /// Paid (negative) or received, USD.
    pub funding_payment: String,
    /// Collateral balance after it, USD.
    pub cash_balance: String,
    /// Time (nanoseconds).
    pub time: String,
}

/// Funding payments (of an account, paged; or of one position).
#[derive(Debug, Serialize, ToSchema)]
pub struct FundingPaymentsBody {
    /// Newest first.
    pub funding_payments: Vec<FundingPaymentBody>,
    /// Page size used (account list only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_page_size: Option<usize>,
    /// Cursor of the next page, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}
