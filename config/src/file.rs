//! The serde shape of an exchange definition: `[[currencies]]`, `[[instruments]]` (with
//! their futures terms), `[[fee_groups]]` and `[[holders]]` with their accounts and opening
//! balances. Decimals are strings so no value is rounded on the way in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `[[currencies]]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CurrencyConfig {
    /// Code.
    pub code: String,
    /// Decimal places.
    pub precision: u8,
    /// Unified id.
    #[serde(default)]
    pub unified_cryptoasset_id: u32,
    /// Name.
    pub name: String,
    /// Collateral percentage, a decimal string.
    #[serde(default = "zero")]
    pub collateral_percentage: String,
}

fn zero() -> String {
    "0".into()
}

fn ten() -> String {
    "10".into()
}

fn five() -> String {
    "5".into()
}

fn active() -> String {
    "ACTIVE".into()
}

/// Futures terms of an instrument.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FuturesConfig {
    /// Collar around the index, percent.
    pub price_collar_percentage: String,
    /// Initial margin, percent of notional.
    #[serde(default = "ten")]
    pub initial_margin_percentage: String,
    /// Maintenance margin, percent of notional.
    #[serde(default = "five")]
    pub maintenance_margin_percentage: String,
    /// Funding cap per period, percent (perpetuals; omit all three for no funding).
    pub funding_cap: Option<String>,
    /// Funding clamp threshold, percent.
    pub funding_clamp_threshold: Option<String>,
    /// Annual interest rate, percent.
    pub funding_annual_interest_rate: Option<String>,
    /// Funding period (minutes); omit for none.
    pub funding_period: Option<u32>,
    /// Market offset (minutes).
    #[serde(default)]
    pub market_offset: i32,
    /// Fixed funding interval in minutes.
    pub funding_interval_minutes: u32,
    /// Expiry date of a dated future.
    pub contract_expiry_date: Option<String>,
    /// Contract duration label.
    pub contract_duration: Option<String>,
}

/// `[[instruments]]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct InstrumentConfig {
    /// Code.
    pub code: String,
    /// Base currency.
    pub base: String,
    /// Quote currency.
    pub quote: String,
    /// Amount decimals.
    pub amount_precision: u8,
    /// Price decimals.
    pub market_precision: u8,
    /// Minimum order value.
    pub min_size: String,
    /// Lowest price.
    pub min_price: String,
    /// Highest price.
    pub max_price: String,
    /// `SPOT`, `PERP`, `EQUITY_FUTURE` or `DATED_FUTURE`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Initial state.
    #[serde(default = "active")]
    pub state: String,
    /// Futures terms (futures only).
    pub futures: Option<FuturesConfig>,
}

/// `[[fee_groups]]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FeeGroupConfig {
    /// `SPOT` or `FUTURES`.
    pub id: String,
    /// Description.
    pub display_text: String,
    /// Volume currency.
    pub volume_currency: String,
    /// Tiers ascending by volume.
    pub tiers: Vec<FeeTierConfig>,
}

/// One fee tier.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FeeTierConfig {
    /// Lower volume bound.
    pub volume: String,
    /// Maker fee, percent.
    pub maker_fee: String,
    /// Taker fee, percent.
    pub taker_fee: String,
}

/// `[[holders]]`: a holder, its subaccounts and opening balances.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HolderConfig {
    /// Name used by `[[keys]]` to refer to it.
    pub name: String,
    /// Accounts: `main` for deposits into the main account, any other name creates a
    /// subaccount.
    #[serde(default)]
    pub accounts: Vec<AccountConfig>,
}

/// An account of a holder.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AccountConfig {
    /// Name (`main` for the main account).
    pub name: String,
    /// `regular`, `instant-trade` or `blp`.
    #[serde(default)]
    pub kind: Option<String>,
    /// Opening balances: currency code -> decimal string.
    #[serde(default)]
    pub deposits: BTreeMap<String, String>,
}
