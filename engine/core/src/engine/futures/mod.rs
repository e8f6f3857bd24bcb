//! Futures: per-instrument margin rates, index and mark prices, funding state and open
//! interest; one net position per account and futures instrument; per-account order
//! margin and margin-call flag. Collateral is the instrument's quote currency, USD.
//!
//! Units: a position's size is in lots (signed: long > 0), its entry cost in notional units
//! (ticks x lots, unsigned); money (PnL, margin, fees, funding) is in USD balance units.
//! Rates: margins in millionths, funding in 1e-8 per period.

mod schedule;
mod settle;
mod views;

pub use settle::MarginState;
pub use views::{FundingView, FuturesSummary, PositionView};

use crate::calendar::{civil_from_days, days_from_civil};
use crate::fixed::Price;
use crate::ids::{AccountId, CurrencyId, InstrumentId, Timestamp};
use crate::refdata::{ConfigError, FundingSchedule, FuturesTerms, Instrument};
use rust_decimal::Decimal;

/// One minute in nanoseconds: funding premiums are sampled each minute.
pub(crate) const MINUTE: i64 = 60_000_000_000;
const DAY: i64 = 1_440 * MINUTE;
/// Funding rates are in units of 1e-8 per period.
pub const RATE_SCALE: i64 = 100_000_000;

/// Funding of one perpetual: settings in 1e-8 per period, the premium samples of the
/// current period and the schedule.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct Funding {
    pub(crate) cap: i64,
    pub(crate) clamp: i64,
    pub(crate) interest: i64,
    /// Length of a funding period (it divides the day, so periods align to midnight UTC).
    pub(crate) period: i64,
    /// Sum and count of the premium samples taken this period.
    pub(crate) premium_sum: i128,
    pub(crate) samples: i64,
    /// Last settled rate.
    pub(crate) last_rate: i64,
    pub(crate) next_sample: Timestamp,
    pub(crate) next_settlement: Timestamp,
}

/// A futures instrument's risk parameters and live state.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct FuturesMarket {
    pub(crate) instrument: InstrumentId,
    pub(crate) collateral: CurrencyId,
    pub(crate) initial_ppm: i64,
    pub(crate) maintenance_ppm: i64,
    pub(crate) collar_ppm: i64,
    pub(crate) index: Option<Price>,
    pub(crate) funding: Option<Funding>,
    pub(crate) expiry: Option<Timestamp>,
    /// Sum of long sizes (equal to the sum of short sizes).
    pub(crate) open_interest: i64,
}

impl FuturesMarket {
    /// The price collar's half-width around `price` (ticks, rounded towards zero).
    pub(crate) fn collar_band(&self, price: Price) -> i64 {
        (i128::from(price.0) * i128::from(self.collar_ppm) / 1_000_000) as i64
    }

    /// The market's settings with its live state (index price, funding samples and
    /// schedule, open interest) left out: what the configuration alone determines.
    pub(crate) fn settings(&self) -> Self {
        Self {
            index: None,
            open_interest: 0,
            funding: self.funding.as_ref().map(|f| Funding {
                premium_sum: 0,
                samples: 0,
                last_rate: 0,
                next_sample: Timestamp(0),
                next_settlement: Timestamp(0),
                ..f.clone()
            }),
            ..self.clone()
        }
    }
}

/// A net position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
pub(crate) struct Position {
    /// Position number (0: never opened); a new number each time it opens from flat.
    pub(crate) id: u64,
    pub(crate) size: i64,
    pub(crate) entry_cost: i128,
    /// Closing PnL + funding - fees, in USD units, since it opened.
    pub(crate) realised: i64,
    pub(crate) opened: Timestamp,
    pub(crate) last_settlement: Timestamp,
}

impl Position {
    /// Applies a fill of `delta` lots at `price`; returns the realised PnL in notional
    /// units and whether a new position number is needed (opened from flat or flipped).
    pub(crate) fn apply(&mut self, delta: i64, price: Price) -> (i128, bool) {
        let notional = |lots: i64| i128::from(lots) * i128::from(price.0);
        if self.size == 0 || (self.size > 0) == (delta > 0) {
            let opens = self.size == 0;
            self.entry_cost += notional(delta.abs());
            self.size += delta;
            return (0, opens);
        }
        let close = delta.abs().min(self.size.abs());
        let basis = self.entry_cost * i128::from(close) / i128::from(self.size.abs());
        self.entry_cost -= basis;
        let pnl = if self.size > 0 {
            notional(close) - basis
        } else {
            basis - notional(close)
        };
        self.size += delta.signum() * close;
        let rest = delta.abs() - close;
        if rest > 0 {
            self.entry_cost = notional(rest);
            self.size = delta.signum() * rest;
        }
        (pnl, rest > 0)
    }

    /// Volume-weighted entry price (ticks, rounded down); 0 when flat.
    pub(crate) fn entry_price(&self) -> Price {
        if self.size == 0 {
            Price(0)
        } else {
            Price((self.entry_cost / i128::from(self.size.abs())) as i64)
        }
    }

    /// Unrealised PnL in notional units at `mark`.
    pub(crate) fn unrealised(&self, mark: Price) -> i128 {
        let value = i128::from(self.size.abs()) * i128::from(mark.0);
        if self.size > 0 {
            value - self.entry_cost
        } else {
            self.entry_cost - value
        }
    }
}

/// Per account: margin reserved by open futures orders, and whether equity fell below
/// maintenance margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
pub(crate) struct FuturesAccount {
    pub(crate) order_margin: i64,
    pub(crate) margin_call: bool,
}

/// Every futures market plus the positions of every account.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub(crate) struct Futures {
    pub(crate) markets: Vec<FuturesMarket>,
    /// Instrument index -> futures market index.
    pub(crate) by_instrument: Vec<Option<u16>>,
    /// `account * markets.len() + market`, grown when an account first trades futures.
    pub(crate) positions: Vec<Position>,
    pub(crate) accounts: Vec<FuturesAccount>,
    pub(crate) next_position: u64,
    /// Earliest time scheduled work (funding samples, settlements, expiries) is due;
    /// `Timestamp(i64::MIN)` until the first command initialises the schedule.
    pub(crate) next_due: Timestamp,
    pub(crate) scheduled: bool,
    /// What the last futures fill did to (taker, maker), for its events.
    pub(crate) pending: [settle::SideResult; 2],
}

fn percent_to(value: &Decimal, scale: i64) -> Result<i64, ()> {
    use rust_decimal::prelude::ToPrimitive;
    (value * Decimal::from(scale) / Decimal::from(100))
        .trunc()
        .to_i64()
        .ok_or(())
}

/// Midnight UTC of a `YYYY-MM-DD` date from 1970 to 2099 (the engine's time horizon is
/// 2100-01-01); `None` for anything else, a day past its month's end included.
fn date_start(text: &str) -> Option<Timestamp> {
    let mut parts = text.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    let in_range = (1970..=2099).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d);
    if parts.next().is_some() || !in_range {
        return None;
    }
    let (m, d) = (m as u32, d as u32);
    let days = days_from_civil(y, m, d);
    // 2027-02-30 would otherwise be taken as 2027-03-02.
    (civil_from_days(days) == (y, m, d)).then_some(Timestamp(days * DAY))
}

/// The futures market of `instrument` under `terms`, each term checked.
fn market(
    instrument: InstrumentId,
    inst: &Instrument,
    terms: &FuturesTerms,
) -> Result<FuturesMarket, ConfigError> {
    let bad = || ConfigError::FuturesTermsMismatch(inst.spec.code.clone());
    // A negative bound would invert a clamp (and panic) once trading starts.
    let out_of_range = |field, range| ConfigError::OutOfRange {
        item: inst.spec.code.clone(),
        field,
        range,
    };
    let at_least_zero = |value: i64, field| {
        (value >= 0)
            .then_some(value)
            .ok_or_else(|| out_of_range(field, "at least 0"))
    };
    let ppm = |d: &Decimal| percent_to(d, 1_000_000).map_err(|_| bad());
    let rate = |d: &Decimal| percent_to(d, RATE_SCALE).map_err(|_| bad());
    let (initial_ppm, maintenance_ppm) = (
        ppm(&terms.initial_margin_percentage)?,
        ppm(&terms.maintenance_margin_percentage)?,
    );
    if initial_ppm <= 0 || maintenance_ppm <= 0 || maintenance_ppm > initial_ppm {
        return Err(bad());
    }
    let period = match &terms.funding_schedule {
        FundingSchedule::FixedInterval { period_minutes } => i64::from(*period_minutes) * MINUTE,
        FundingSchedule::SessionBased {
            max_periods_per_day,
            ..
        } => DAY / i64::from((*max_periods_per_day).max(1)),
    };
    if period <= 0 || DAY % period != 0 {
        return Err(bad());
    }
    let funding = match &terms.funding {
        None => None,
        Some(s) => Some(Funding {
            cap: at_least_zero(rate(&s.cap)?, "funding cap")?,
            clamp: at_least_zero(rate(&s.clamp_threshold)?, "funding clamp threshold")?,
            interest: rate(&s.annual_interest_rate)? / (365 * (DAY / period)),
            period,
            premium_sum: 0,
            samples: 0,
            last_rate: 0,
            next_sample: Timestamp(i64::MIN),
            next_settlement: Timestamp(i64::MIN),
        }),
    };
    let collar_ppm = ppm(&terms.price_collar_percentage)?;
    if !(0..=1_000_000).contains(&collar_ppm) {
        return Err(out_of_range("price_collar_percentage", "from 0 to 100"));
    }
    let expiry = match &terms.contract_expiry_date {
        Some(text) => Some(date_start(text).ok_or_else(|| {
            out_of_range(
                "contract_expiry_date",
                "a date YYYY-MM-DD from 1970 to 2099",
            )
        })?),
        None => None,
    };
    Ok(FuturesMarket {
        instrument,
        collateral: inst.quote,
        initial_ppm,
        maintenance_ppm,
        collar_ppm,
        index: None,
        funding,
        expiry,
        open_interest: 0,
    })
}

impl Futures {
    /// Builds the futures state of `instruments` (collateral: each future's quote).
    pub(crate) fn build(instruments: &[Instrument]) -> Result<Self, ConfigError> {
        let mut f = Self {
            by_instrument: vec![None; instruments.len()],
            next_due: Timestamp(i64::MIN),
            next_position: 1,
            ..Self::default()
        };
        for (i, inst) in instruments.iter().enumerate() {
            let Some(terms) = &inst.spec.futures else {
                continue;
            };
            f.by_instrument[i] = Some(f.markets.len() as u16);
            f.markets.push(market(InstrumentId(i as u16), inst, terms)?);
        }
        Ok(f)
    }

    /// The futures market index of an instrument, if it is a future.
    #[inline]
    pub(crate) fn market_of(&self, instrument: InstrumentId) -> Option<usize> {
        self.by_instrument
            .get(usize::from(instrument.0))
            .copied()
            .flatten()
            .map(usize::from)
    }

    /// A position, if the account ever had room for one.
    pub(crate) fn position(&self, account: AccountId, market: usize) -> Option<&Position> {
        self.positions
            .get(account.0 as usize * self.markets.len() + market)
    }

    /// A position, making room for the account's positions on first use.
    pub(crate) fn position_mut(&mut self, account: AccountId, market: usize) -> &mut Position {
        let n = self.markets.len();
        let index = account.0 as usize * n + market;
        if self.positions.len() <= index {
            self.positions
                .resize((account.0 as usize + 1) * n, Position::default());
        }
        &mut self.positions[index]
    }

    /// The account's futures record, making room on first use.
    pub(crate) fn account_mut(&mut self, account: AccountId) -> &mut FuturesAccount {
        let i = account.0 as usize;
        if self.accounts.len() <= i {
            self.accounts.resize(i + 1, FuturesAccount::default());
        }
        &mut self.accounts[i]
    }

    /// The account's futures record (default when it never traded futures).
    pub(crate) fn account(&self, account: AccountId) -> FuturesAccount {
        self.accounts
            .get(account.0 as usize)
            .copied()
            .unwrap_or_default()
    }

    /// Accounts that have room for positions, in index order.
    pub(crate) fn account_count(&self) -> usize {
        if self.markets.is_empty() {
            0
        } else {
            self.positions.len() / self.markets.len()
        }
    }
}

/// `ceil(value x ppm / 1e6)` for non-negative values.
#[inline]
pub(crate) fn ppm_of(value: i128, ppm: i64) -> i128 {
    (value * i128::from(ppm) + 999_999).div_euclid(1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_open_add_reduce_flip_and_close() {
        let mut p = Position::default();
        assert_eq!(p.apply(10, Price(100)), (0, true), "opens from flat");
        assert_eq!(p.apply(10, Price(110)), (0, false));
        assert_eq!(
            (p.size, p.entry_cost, p.entry_price()),
            (20, 2_100, Price(105))
        );
        assert_eq!(
            p.apply(-5, Price(120)),
            (5 * 120 - 525, false),
            "partial close"
        );
        assert_eq!(p.size, 15);
        let (pnl, flipped) = p.apply(-20, Price(90));
        assert_eq!(pnl, 15 * 90 - 1_575, "the remaining 15 closed at a loss");
        assert!(flipped, "a flip opens a new position");
        assert_eq!((p.size, p.entry_cost), (-5, 450));
        assert_eq!(
            p.unrealised(Price(80)),
            50,
            "a short gains when the mark falls"
        );
        assert_eq!(p.apply(5, Price(100)), (-50, false), "closed at a loss");
        assert_eq!((p.size, p.entry_cost), (0, 0));
    }

    #[test]
    fn margin_rounds_up() {
        assert_eq!(ppm_of(1_000_001, 100_000), 100_001);
        assert_eq!(ppm_of(0, 100_000), 0);
    }

    /// An index price must lie in the market's price range: a huge one would overflow the
    /// collar around it. A refusal changes nothing.
    #[test]
    fn index_prices_outside_the_price_range_are_refused() {
        let mut engine = crate::Engine::new(crate::demo::config()).expect("demo");
        let perp = engine
            .instruments()
            .iter()
            .position(|i| i.spec.futures.is_some())
            .map(|i| InstrumentId(i as u16))
            .expect("the demo has a future");
        let (min, max) = {
            let i = &engine.instruments()[usize::from(perp.0)];
            (i.min_price, i.max_price)
        };
        let mut events = Vec::new();
        // The first command initialises the funding schedule; compare from after it.
        let advance = crate::command::Command::AdvanceTime;
        assert!(engine.apply(&advance, Timestamp(0), &mut events).is_ok());
        let before = engine.content_hash();
        for price in [
            Price(0),
            Price(min.0 - 1),
            Price(max.0 + 1),
            Price(i64::MAX),
        ] {
            let command = crate::command::Command::SetIndexPrice {
                instrument: perp,
                price,
            };
            let result = engine.apply(&command, Timestamp(0), &mut events);
            assert_eq!(
                result,
                Err(crate::error::EngineError::InvalidPrice),
                "{price:?}"
            );
        }
        assert_eq!(engine.content_hash(), before);
        let command = crate::command::Command::SetIndexPrice {
            instrument: perp,
            price: max,
        };
        assert!(engine.apply(&command, Timestamp(0), &mut events).is_ok());
    }
}
