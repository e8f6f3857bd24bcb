//! Server configuration: the TOML file format (reference data, fee groups, holders with
//! their accounts and opening balances, keys as SHA-256 digests, limits, addresses, data
//! directory) and the embedded demo default used when no file is given.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use matchbook::fees::{FeeGroupSpec, FeeTierSpec};
use matchbook::journal::SyncPolicy;
use matchbook::runtime::MarketDataPlacement;
use matchbook::{
    Currency, EngineConfig, FundingSchedule, FundingSettings, FuturesTerms, InstrumentKind,
    InstrumentSpec, InstrumentState,
};
use rust_decimal::Decimal;
use serde::Deserialize;

use crate::keys::Scope;

/// Default public address.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";
/// Default admin address.
pub const DEFAULT_ADMIN_BIND: &str = "127.0.0.1:8081";
/// Default rate limit per key (or holder) and minute.
pub const DEFAULT_RATE_LIMIT: u32 = 240;
/// Market data on the engine thread: measured faster over HTTP on two cores, where one
/// thread hand-off fewer per request outweighs the matching time it costs (BENCHMARKS.md).
pub const DEFAULT_MARKET_DATA: MarketDataPlacement = MarketDataPlacement::EngineThread;

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// The file could not be read.
    #[error("config {path}: {source}")]
    Read {
        /// File.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// Not valid TOML of this shape.
    #[error("config {path}: {source}")]
    Parse {
        /// File.
        path: PathBuf,
        /// Cause.
        source: Box<toml::de::Error>,
    },
    /// A value that does not fit (address, decimal, type, state).
    #[error("config: {0}")]
    Invalid(String),
}

/// `[server]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// Public listener.
    pub bind: Option<String>,
    /// Admin listener.
    pub admin_bind: Option<String>,
    /// Keys (and, later, the journal) live here.
    pub data_dir: Option<PathBuf>,
    /// Requests per minute per key on rate-limited endpoints.
    pub rate_limit_per_minute: Option<u32>,
    /// Ingress queue capacity.
    pub queue_capacity: Option<usize>,
    /// Open orders per holder.
    pub max_open_orders: Option<u32>,
    /// `engine-thread` (default) or `own-thread`: where market data is kept up to date.
    pub market_data: Option<String>,
    /// `every-batch` (default: fsync before answering) or `never` (benchmarks only).
    pub journal_sync: Option<String>,
}

/// `[[currencies]]`.
#[derive(Debug, Clone, Deserialize)]
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
#[derive(Debug, Clone, Deserialize)]
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
#[derive(Debug, Clone, Deserialize)]
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
#[derive(Debug, Clone, Deserialize)]
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
#[derive(Debug, Clone, Deserialize)]
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
#[derive(Debug, Clone, Deserialize)]
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
#[derive(Debug, Clone, Deserialize)]
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

/// `[[keys]]`: a key given by its digest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyConfig {
    /// Lower-case hex SHA-256 of the key text.
    pub digest: String,
    /// Holder name.
    pub holder: String,
    /// Account name.
    pub account: String,
    /// Scopes.
    pub scopes: Vec<Scope>,
}

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Listener and limits.
    #[serde(default)]
    pub server: ServerSection,
    /// Currencies (empty: the demo set).
    #[serde(default)]
    pub currencies: Vec<CurrencyConfig>,
    /// Instruments (empty: the demo set).
    #[serde(default)]
    pub instruments: Vec<InstrumentConfig>,
    /// Fee groups (empty: the default schedule).
    #[serde(default)]
    pub fee_groups: Vec<FeeGroupConfig>,
    /// Holders created at start.
    #[serde(default)]
    pub holders: Vec<HolderConfig>,
    /// Keys accepted.
    #[serde(default)]
    pub keys: Vec<KeyConfig>,
}

/// Everything the server starts from.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Public listener.
    pub bind: SocketAddr,
    /// Admin listener.
    pub admin_bind: SocketAddr,
    /// Data directory.
    pub data_dir: PathBuf,
    /// Rate limit per minute.
    pub rate_limit_per_minute: u32,
    /// Ingress queue capacity.
    pub queue_capacity: usize,
    /// Where market data runs.
    pub market_data: MarketDataPlacement,
    /// When the journal fsyncs.
    pub journal_sync: SyncPolicy,
    /// Engine reference data and limits.
    pub engine: EngineConfig,
    /// Holders to create.
    pub holders: Vec<HolderConfig>,
    /// Keys from the configuration.
    pub keys: Vec<KeyConfig>,
    /// Demo mode: create and print demo keys at first start, seed demo liquidity.
    pub demo: bool,
    /// Where to write the demo keys as JSON when they are created.
    pub keys_out: Option<PathBuf>,
}

fn address(text: &str) -> Result<SocketAddr, ConfigFileError> {
    text.parse()
        .map_err(|_| ConfigFileError::Invalid(format!("bad address {text:?}")))
}

fn decimal(text: &str, what: &str) -> Result<Decimal, ConfigFileError> {
    text.parse()
        .map_err(|_| ConfigFileError::Invalid(format!("{what}: bad decimal {text:?}")))
}

fn deposits(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(c, a)| ((*c).to_owned(), (*a).to_owned()))
        .collect()
}

impl Settings {
    /// The embedded default: demo markets, a demo holder with a main account and a
    /// subaccount, a market-maker holder that quotes the spot books, local data directory.
    pub fn demo() -> Self {
        let funds = [
            ("BTC", "10"),
            ("ETH", "100"),
            ("EUR", "1000000"),
            ("USD", "1000000"),
            ("USDT", "1000000"),
            ("SHIB", "100000000"),
        ];
        Self {
            bind: address(DEFAULT_BIND)
                .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 8080))),
            admin_bind: address(DEFAULT_ADMIN_BIND)
                .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 8081))),
            data_dir: PathBuf::from("data"),
            rate_limit_per_minute: DEFAULT_RATE_LIMIT,
            queue_capacity: matchbook::runtime::DEFAULT_QUEUE_CAPACITY,
            market_data: DEFAULT_MARKET_DATA,
            journal_sync: SyncPolicy::EveryBatch,
            engine: matchbook::demo::config(),
            holders: vec![
                HolderConfig {
                    name: "demo".into(),
                    accounts: vec![
                        AccountConfig {
                            name: "main".into(),
                            kind: None,
                            deposits: deposits(&funds),
                        },
                        AccountConfig {
                            name: "trading".into(),
                            kind: None,
                            deposits: deposits(&[("BTC", "1"), ("EUR", "100000")]),
                        },
                    ],
                },
                HolderConfig {
                    name: "market-maker".into(),
                    accounts: vec![AccountConfig {
                        name: "main".into(),
                        kind: None,
                        deposits: deposits(&[
                            ("BTC", "1000"),
                            ("ETH", "10000"),
                            ("EUR", "100000000"),
                            ("USD", "100000000"),
                            ("USDT", "100000000"),
                            ("SHIB", "100000000000"),
                        ]),
                    }],
                },
            ],
            keys: Vec::new(),
            demo: true,
            keys_out: None,
        }
    }

    /// Settings from a TOML file; sections left out take the demo defaults for reference
    /// data and fee groups, and no holders or keys.
    pub fn from_file(path: &std::path::Path) -> Result<Self, ConfigFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigFileError::Read {
            path: path.to_owned(),
            source,
        })?;
        let file: FileConfig = toml::from_str(&text).map_err(|source| ConfigFileError::Parse {
            path: path.to_owned(),
            source: Box::new(source),
        })?;
        Self::from_config(file)
    }

    /// Settings from a parsed file.
    pub fn from_config(file: FileConfig) -> Result<Self, ConfigFileError> {
        let demo = Self::demo();
        let mut engine = demo.engine;
        if !file.currencies.is_empty() {
            engine.currencies = file
                .currencies
                .iter()
                .map(|c| {
                    Ok(Currency {
                        code: c.code.clone(),
                        precision: c.precision,
                        unified_cryptoasset_id: c.unified_cryptoasset_id,
                        name: c.name.clone(),
                        collateral_percentage: decimal(&c.collateral_percentage, &c.code)?,
                    })
                })
                .collect::<Result<_, ConfigFileError>>()?;
        }
        if !file.instruments.is_empty() {
            engine.instruments = file
                .instruments
                .iter()
                .map(instrument)
                .collect::<Result<_, _>>()?;
        }
        if !file.fee_groups.is_empty() {
            engine.fee_groups = file
                .fee_groups
                .iter()
                .map(|g| FeeGroupSpec {
                    id: g.id.clone(),
                    display_text: g.display_text.clone(),
                    volume_currency: g.volume_currency.clone(),
                    tiers: g
                        .tiers
                        .iter()
                        .map(|t| FeeTierSpec {
                            volume: t.volume.clone(),
                            maker_fee: t.maker_fee.clone(),
                            taker_fee: t.taker_fee.clone(),
                        })
                        .collect(),
                })
                .collect();
        }
        if let Some(max) = file.server.max_open_orders {
            engine.max_open_orders = max;
        }
        Ok(Self {
            bind: file
                .server
                .bind
                .as_deref()
                .map(address)
                .transpose()?
                .unwrap_or(demo.bind),
            admin_bind: file
                .server
                .admin_bind
                .as_deref()
                .map(address)
                .transpose()?
                .unwrap_or(demo.admin_bind),
            data_dir: file.server.data_dir.unwrap_or(demo.data_dir),
            rate_limit_per_minute: file
                .server
                .rate_limit_per_minute
                .unwrap_or(DEFAULT_RATE_LIMIT),
            queue_capacity: file.server.queue_capacity.unwrap_or(demo.queue_capacity),
            journal_sync: match file.server.journal_sync.as_deref() {
                None | Some("every-batch") => SyncPolicy::EveryBatch,
                Some("never") => SyncPolicy::Never,
                Some(other) => {
                    return Err(ConfigFileError::Invalid(format!(
                        "journal_sync {other:?}: every-batch or never"
                    )));
                }
            },
            market_data: match file.server.market_data.as_deref() {
                None => DEFAULT_MARKET_DATA,
                Some("engine-thread") => MarketDataPlacement::EngineThread,
                Some("own-thread") => MarketDataPlacement::OwnThread,
                Some(other) => {
                    return Err(ConfigFileError::Invalid(format!(
                        "market_data {other:?}: engine-thread or own-thread"
                    )));
                }
            },
            engine,
            holders: file.holders,
            keys: file.keys,
            demo: false,
            keys_out: None,
        })
    }
}

fn instrument(c: &InstrumentConfig) -> Result<InstrumentSpec, ConfigFileError> {
    let kind = InstrumentKind::parse(&c.kind)
        .ok_or_else(|| ConfigFileError::Invalid(format!("{}: bad type {:?}", c.code, c.kind)))?;
    let state = InstrumentState::parse(&c.state)
        .ok_or_else(|| ConfigFileError::Invalid(format!("{}: bad state {:?}", c.code, c.state)))?;
    let futures = c
        .futures
        .as_ref()
        .map(|f| {
            let funding = match (
                &f.funding_cap,
                &f.funding_clamp_threshold,
                &f.funding_annual_interest_rate,
            ) {
                (Some(cap), Some(clamp), Some(interest)) => Some(FundingSettings {
                    cap: decimal(cap, &c.code)?,
                    clamp_threshold: decimal(clamp, &c.code)?,
                    annual_interest_rate: decimal(interest, &c.code)?,
                }),
                (None, None, None) => None,
                _ => {
                    return Err(ConfigFileError::Invalid(format!(
                        "{}: give all three funding settings or none",
                        c.code
                    )));
                }
            };
            Ok::<_, ConfigFileError>(FuturesTerms {
                price_collar_percentage: decimal(&f.price_collar_percentage, &c.code)?,
                initial_margin_percentage: decimal(&f.initial_margin_percentage, &c.code)?,
                maintenance_margin_percentage: decimal(&f.maintenance_margin_percentage, &c.code)?,
                funding,
                funding_period: f.funding_period,
                market_offset: f.market_offset,
                funding_schedule: FundingSchedule::FixedInterval {
                    period_minutes: f.funding_interval_minutes,
                },
                contract_expiry_date: f.contract_expiry_date.clone(),
                contract_duration: f.contract_duration.clone(),
            })
        })
        .transpose()?;
    Ok(InstrumentSpec {
        code: c.code.clone(),
        base: c.base.clone(),
        quote: c.quote.clone(),
        amount_precision: c.amount_precision,
        market_precision: c.market_precision,
        min_size: c.min_size.clone(),
        min_price: c.min_price.clone(),
        max_price: c.max_price.clone(),
        kind,
        state,
        futures,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_file_replaces_the_defaults_it_names() {
        let text = r#"
            [server]
            bind = "127.0.0.1:9000"
            rate_limit_per_minute = 10

            [[currencies]]
            code = "BTC"
            precision = 8
            name = "Bitcoin"
            [[currencies]]
            code = "EUR"
            precision = 2
            name = "Euro"

            [[instruments]]
            code = "BTC_EUR"
            base = "BTC"
            quote = "EUR"
            amount_precision = 5
            market_precision = 2
            min_size = "10"
            min_price = "0.01"
            max_price = "1000000"
            type = "SPOT"

            [[holders]]
            name = "alice"
            [[holders.accounts]]
            name = "main"
            deposits = { EUR = "1000" }

            [[keys]]
            digest = "00"
            holder = "alice"
            account = "main"
            scopes = ["TRADE"]
        "#;
        let file: FileConfig = toml::from_str(text).expect("parses");
        let s = Settings::from_config(file).expect("valid");
        assert_eq!(s.bind.port(), 9000);
        assert_eq!(s.rate_limit_per_minute, 10);
        assert_eq!(s.engine.instruments.len(), 1);
        assert_eq!(s.engine.currencies.len(), 2);
        assert!(!s.demo);
        assert_eq!(s.keys[0].scopes, vec![Scope::Trade]);
        assert!(
            toml::from_str::<FileConfig>("[server]\nbindd = \"x\"").is_err(),
            "unknown keys are refused"
        );
    }
}
