//! Reference data: currencies and instruments (spec 2.10 and 2.11), their states, and the
//! edge conversions between an instrument's decimal strings and its fixed-point units.

use rust_decimal::Decimal;

use crate::fixed::{self, Notional, ParseDecimalError, Price, Qty, Scaled};
use crate::ids::CurrencyId;
use crate::order::Side;

/// A currency as configured (spec 2.10).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Currency {
    /// Upper-case code such as `BTC`.
    pub code: String,
    /// Decimal places of balances in this currency.
    pub precision: u8,
    /// CoinMarketCap-style unified id (0 when none).
    pub unified_cryptoasset_id: u32,
    /// Display name.
    pub name: String,
    /// Share of the value counted as futures collateral, in percent.
    #[serde(with = "crate::persist::decimal_bytes")]
    pub collateral_percentage: Decimal,
}

/// Market type (spec 2.11 `type`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum InstrumentKind {
    /// Spot market: base against quote.
    Spot,
    /// Perpetual future.
    Perp,
    /// Perpetual future on an equity index.
    EquityFuture,
    /// Future with an expiry date.
    DatedFuture,
}

impl InstrumentKind {
    /// The spelling used on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Spot => "SPOT",
            Self::Perp => "PERP",
            Self::EquityFuture => "EQUITY_FUTURE",
            Self::DatedFuture => "DATED_FUTURE",
        }
    }
    /// Parses the wire spelling.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Spot,
            Self::Perp,
            Self::EquityFuture,
            Self::DatedFuture,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
    /// True for every futures kind.
    pub const fn is_future(self) -> bool {
        !matches!(self, Self::Spot)
    }
}

/// Market state: which order entry an instrument accepts.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum InstrumentState {
    /// Every order type is accepted.
    Active,
    /// Only post-only orders are accepted (no taking).
    PostOnly,
    /// No new orders; cancels still work.
    Suspended,
    /// No new orders; cancels still work; not listed by the ticker.
    Closed,
}

impl InstrumentState {
    /// The spelling used on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Active => "ACTIVE",
            Self::PostOnly => "POST_ONLY",
            Self::Suspended => "SUSPENDED",
            Self::Closed => "CLOSED",
        }
    }
    /// Parses the wire spelling.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Active, Self::PostOnly, Self::Suspended, Self::Closed]
            .into_iter()
            .find(|k| k.as_str() == text)
    }
}

/// When funding settles (spec 2.11 `funding_schedule`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FundingSchedule {
    /// Settles every `period_minutes`, aligned to midnight UTC.
    FixedInterval {
        /// Minutes between settlements.
        period_minutes: u32,
    },
    /// Settles on trading-session boundaries of a calendar. Without calendar data the
    /// session is the UTC day, split into `max_periods_per_day` equal periods (so with
    /// `SESSION_MIDPOINT` and two periods: at 12:00 and 00:00 UTC).
    SessionBased {
        /// Calendar name.
        calendar: String,
        /// Upper bound of settlements per day.
        max_periods_per_day: u32,
        /// Where a session is split (`SESSION_MIDPOINT`).
        split: String,
    },
}

/// How a perpetual's funding rate is derived (the addendum's funding-rate settings), all in
/// percent per funding period.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FundingSettings {
    /// Largest absolute rate per period.
    #[serde(with = "crate::persist::decimal_bytes")]
    pub cap: Decimal,
    /// The interest component may move the premium by at most this much.
    #[serde(with = "crate::persist::decimal_bytes")]
    pub clamp_threshold: Decimal,
    /// Yearly interest-rate differential, spread evenly over the periods of a year.
    #[serde(with = "crate::persist::decimal_bytes")]
    pub annual_interest_rate: Decimal,
}

/// Fields that only futures instruments carry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FuturesTerms {
    /// Mark price is clamped to this percentage around the index.
    #[serde(with = "crate::persist::decimal_bytes")]
    pub price_collar_percentage: Decimal,
    /// Initial margin in percent of notional (reserved by orders, held by positions).
    #[serde(with = "crate::persist::decimal_bytes")]
    pub initial_margin_percentage: Decimal,
    /// Maintenance margin in percent of notional: below it an account is in de-risk.
    #[serde(with = "crate::persist::decimal_bytes")]
    pub maintenance_margin_percentage: Decimal,
    /// Funding settings; `None` for an instrument without funding (a dated future).
    pub funding: Option<FundingSettings>,
    /// Funding period in minutes, if any.
    pub funding_period: Option<u32>,
    /// Market offset (minutes).
    pub market_offset: i32,
    /// Settlement schedule.
    pub funding_schedule: FundingSchedule,
    /// Expiry date `YYYY-MM-DD` of a dated future.
    pub contract_expiry_date: Option<String>,
    /// Contract duration label of a dated future.
    pub contract_duration: Option<String>,
}

/// An instrument as configured, with decimal strings (spec 2.11).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InstrumentSpec {
    /// Instrument code such as `BTC_EUR`.
    pub code: String,
    /// Base currency code.
    pub base: String,
    /// Quote currency code.
    pub quote: String,
    /// Decimal places of order amounts.
    pub amount_precision: u8,
    /// Decimal places of prices.
    pub market_precision: u8,
    /// Minimum order value (amount x price) in quote currency.
    pub min_size: String,
    /// Lowest accepted limit price.
    pub min_price: String,
    /// Highest accepted limit price.
    pub max_price: String,
    /// Market type.
    pub kind: InstrumentKind,
    /// Initial state.
    pub state: InstrumentState,
    /// Futures fields; `None` for spot.
    pub futures: Option<FuturesTerms>,
}

/// Why a configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Two currencies or instruments share a code.
    #[error("duplicate code {0}")]
    DuplicateCode(String),
    /// An instrument names a currency that is not configured.
    #[error("instrument {instrument} names unknown currency {currency}")]
    UnknownCurrency {
        /// Instrument code.
        instrument: String,
        /// Missing currency code.
        currency: String,
    },
    /// A decimal field does not parse at the instrument's precision.
    #[error("instrument {instrument} field {field}: {source}")]
    BadNumber {
        /// Instrument code.
        instrument: String,
        /// Field name.
        field: &'static str,
        /// Parse failure.
        source: ParseDecimalError,
    },
    /// A precision outside 0..=12, min/max price inverted, or a max price past
    /// [`crate::limits::MAX_PRICE`].
    #[error("instrument {0}: precision or price range out of bounds")]
    BadRange(String),
    /// Spot with futures terms or a future without them.
    #[error("instrument {0}: futures fields do not match its type")]
    FuturesTermsMismatch(String),
    /// More currencies or instruments than the interned index can hold.
    #[error("too many entries")]
    TooMany,
    /// A setting outside what the engine works with (one that would overflow or invert a
    /// bound once trading starts).
    #[error("{item}: {field} {range}")]
    OutOfRange {
        /// Currency or instrument code.
        item: String,
        /// The setting.
        field: &'static str,
        /// What it must be.
        range: &'static str,
    },
}

impl Currency {
    /// Checks what the engine cannot check by its type: a collateral share is a percentage.
    pub(crate) fn check(&self) -> Result<(), ConfigError> {
        let share = self.collateral_percentage;
        if share < Decimal::ZERO || share > Decimal::ONE_HUNDRED {
            return Err(ConfigError::OutOfRange {
                item: self.code.clone(),
                field: "collateral_percentage",
                range: "from 0 to 100",
            });
        }
        Ok(())
    }
}

/// An instrument inside the engine, with its limits in fixed point.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Instrument {
    /// The configuration it was built from (decimal strings kept for views).
    pub spec: InstrumentSpec,
    /// Interned base currency.
    pub base: CurrencyId,
    /// Interned quote currency.
    pub quote: CurrencyId,
    /// Minimum order value at notional scale.
    pub min_size: Notional,
    /// Lowest price in ticks.
    pub min_price: Price,
    /// Highest price in ticks.
    pub max_price: Price,
    /// Current state (commands may change it).
    pub state: InstrumentState,
}

impl Instrument {
    /// Validates `spec` against the interned currencies.
    pub fn build(spec: InstrumentSpec, currencies: &[Currency]) -> Result<Self, ConfigError> {
        let find = |code: &str| {
            currencies
                .iter()
                .position(|c| c.code == code)
                .and_then(|i| u16::try_from(i).ok())
                .map(CurrencyId)
                .ok_or_else(|| ConfigError::UnknownCurrency {
                    instrument: spec.code.clone(),
                    currency: code.to_owned(),
                })
        };
        let base = find(&spec.base)?;
        let quote = find(&spec.quote)?;
        if base == quote {
            return Err(ConfigError::OutOfRange {
                item: spec.code.clone(),
                field: "quote",
                range: "must differ from the base",
            });
        }
        if spec.amount_precision > 12 || spec.market_precision > 12 {
            return Err(ConfigError::BadRange(spec.code.clone()));
        }
        if spec.kind.is_future() != spec.futures.is_some() {
            return Err(ConfigError::FuturesTermsMismatch(spec.code.clone()));
        }
        let bad = |field: &'static str| {
            let code = spec.code.clone();
            move |source| ConfigError::BadNumber {
                instrument: code,
                field,
                source,
            }
        };
        let notional_scale = spec.amount_precision + spec.market_precision;
        let min_size = Notional(
            fixed::parse_scaled_wide(&spec.min_size, notional_scale).map_err(bad("min_size"))?,
        );
        let min_price = Price(
            fixed::parse_scaled(&spec.min_price, spec.market_precision)
                .map_err(bad("min_price"))?,
        );
        let max_price = Price(
            fixed::parse_scaled(&spec.max_price, spec.market_precision)
                .map_err(bad("max_price"))?,
        );
        if min_price.0 <= 0 || min_price > max_price || max_price.0 > crate::limits::MAX_PRICE {
            return Err(ConfigError::BadRange(spec.code.clone()));
        }
        Ok(Self {
            base,
            quote,
            min_size,
            min_price,
            max_price,
            state: spec.state,
            spec,
        })
    }

    /// Instrument code.
    pub fn code(&self) -> &str {
        &self.spec.code
    }

    /// The currency a fill's fee on `side` is charged in: on a spot market the currency
    /// that side receives (a buyer's base, a seller's quote), on a futures market the
    /// quote, where margin and profit settle.
    pub fn fee_currency(&self, side: Side) -> CurrencyId {
        match side {
            Side::Buy if !self.spec.kind.is_future() => self.base,
            _ => self.quote,
        }
    }

    /// Parses a price string at this instrument's market precision.
    pub fn parse_price(&self, text: &str) -> Result<Price, ParseDecimalError> {
        fixed::parse_scaled(text, self.spec.market_precision).map(Price)
    }
    /// Parses an amount string at this instrument's amount precision.
    pub fn parse_qty(&self, text: &str) -> Result<Qty, ParseDecimalError> {
        fixed::parse_scaled(text, self.spec.amount_precision).map(Qty)
    }
    /// Displays a price with this instrument's precision.
    pub fn show_price(&self, price: Price) -> Scaled {
        Scaled {
            value: i128::from(price.0),
            decimals: self.spec.market_precision,
        }
    }
    /// Displays an amount with this instrument's precision.
    pub fn show_qty(&self, qty: Qty) -> Scaled {
        Scaled {
            value: i128::from(qty.0),
            decimals: self.spec.amount_precision,
        }
    }
    /// Displays a notional value (price x amount) in quote currency.
    pub fn show_notional(&self, notional: Notional) -> Scaled {
        Scaled {
            value: notional.0,
            decimals: self.spec.amount_precision + self.spec.market_precision,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn currency(code: &str, precision: u8) -> Currency {
        Currency {
            code: code.into(),
            precision,
            unified_cryptoasset_id: 0,
            name: code.into(),
            collateral_percentage: Decimal::ZERO,
        }
    }

    fn spot() -> InstrumentSpec {
        InstrumentSpec {
            code: "BTC_EUR".into(),
            base: "BTC".into(),
            quote: "EUR".into(),
            amount_precision: 5,
            market_precision: 2,
            min_size: "10".into(),
            min_price: "1.00".into(),
            max_price: "1000000".into(),
            kind: InstrumentKind::Spot,
            state: InstrumentState::Active,
            futures: None,
        }
    }

    #[test]
    fn builds_and_converts_units() {
        let currencies = [currency("BTC", 8), currency("EUR", 2)];
        let inst = Instrument::build(spot(), &currencies).expect("valid");
        assert_eq!(inst.min_price, Price(100));
        assert_eq!(inst.max_price, Price(100_000_000));
        assert_eq!(inst.min_size, Notional(10_0000000));
        assert_eq!(inst.parse_price("123.45"), Ok(Price(12345)));
        assert_eq!(inst.parse_qty("0.5"), Ok(Qty(50000)));
        assert_eq!(inst.show_qty(Qty(50000)).to_string(), "0.50000");
        assert_eq!(
            inst.show_notional(Price(12345).notional(Qty(50000)))
                .to_string(),
            "61.7250000"
        );
    }

    #[test]
    fn refuses_bad_configuration() {
        let currencies = [currency("BTC", 8), currency("EUR", 2)];
        let mut s = spot();
        s.quote = "USD".into();
        assert!(matches!(
            Instrument::build(s, &currencies),
            Err(ConfigError::UnknownCurrency { .. })
        ));
        let mut s = spot();
        s.min_price = "1.001".into();
        assert!(matches!(
            Instrument::build(s, &currencies),
            Err(ConfigError::BadNumber { .. })
        ));
        let mut s = spot();
        s.min_price = "2000000".into();
        assert!(matches!(
            Instrument::build(s, &currencies),
            Err(ConfigError::BadRange(_))
        ));
        let mut s = spot();
        s.kind = InstrumentKind::Perp;
        assert!(matches!(
            Instrument::build(s, &currencies),
            Err(ConfigError::FuturesTermsMismatch(_))
        ));
    }

    #[test]
    fn kinds_and_states_round_trip_their_spelling() {
        for k in [
            InstrumentKind::Spot,
            InstrumentKind::Perp,
            InstrumentKind::EquityFuture,
            InstrumentKind::DatedFuture,
        ] {
            assert_eq!(InstrumentKind::parse(k.as_str()), Some(k));
        }
        for s in [
            InstrumentState::Active,
            InstrumentState::PostOnly,
            InstrumentState::Suspended,
            InstrumentState::Closed,
        ] {
            assert_eq!(InstrumentState::parse(s.as_str()), Some(s));
        }
        assert_eq!(InstrumentKind::parse("spot"), None);
    }
}
