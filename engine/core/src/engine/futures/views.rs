//! Read-only futures views: positions with mark, PnL and margins; the account summary of
//! the addendum; and each market's funding state.

use super::ppm_of;
use super::settle::MarginState;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, InstrumentId, Timestamp};

/// One open position as the futures endpoints show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PositionView {
    /// Market.
    pub instrument: InstrumentId,
    /// Position number.
    pub position_id: u64,
    /// Signed size in lots (long > 0).
    pub size: i64,
    /// Volume-weighted entry price.
    pub entry_price: Price,
    /// Current mark price.
    pub mark_price: Price,
    /// Unrealised PnL at mark, USD units.
    pub unrealised: i128,
    /// Realised since it opened (closing PnL, funding, fees), USD units.
    pub realised: i64,
    /// Initial margin at mark, USD units.
    pub initial_margin: i128,
    /// Maintenance margin at mark, USD units.
    pub maintenance_margin: i128,
    /// When it opened.
    pub opened: Timestamp,
    /// Last funding settlement it took part in (the epoch if none).
    pub last_settlement: Timestamp,
}

/// The futures summary of an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuturesSummary {
    /// Account.
    pub account: AccountId,
    /// Cash, PnL and margins.
    pub margin: MarginState,
    /// Whether it is in de-risk.
    pub derisk: bool,
    /// Open positions.
    pub positions: Vec<PositionView>,
}

/// A futures market's prices, funding and open interest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FundingView {
    /// Market.
    pub instrument: InstrumentId,
    /// Mark price, if any.
    pub mark_price: Option<Price>,
    /// Index price, if set.
    pub index_price: Option<Price>,
    /// The rate the current period would settle at (1e-8 per period; 0 without funding).
    pub funding_rate: i64,
    /// The last settled rate.
    pub last_rate: i64,
    /// Next settlement, if the market has funding.
    pub next_settlement: Option<Timestamp>,
    /// Long open interest in lots.
    pub open_interest: i64,
    /// Settings in 1e-8 per period: cap, clamp threshold, interest per period.
    pub cap: i64,
    /// Clamp threshold.
    pub clamp_threshold: i64,
    /// Interest per period.
    pub interest: i64,
    /// Funding period in minutes (0 without funding).
    pub period_minutes: i64,
}

impl Engine {
    /// Open positions of an account, by market.
    pub fn positions(&self, account: AccountId) -> Vec<PositionView> {
        let mut out = Vec::new();
        for (m, market) in self.futures.markets.iter().enumerate() {
            let Some(p) = self.futures.position(account, m).filter(|p| p.size != 0) else {
                continue;
            };
            let mark = self.mark_price(m).unwrap_or_else(|| p.entry_price());
            let value = self.quote_value(market.instrument, mark, Qty(p.size.abs()));
            let quote_unit =
                i128::from(self.settlements[usize::from(market.instrument.0)].quote_unit);
            out.push(PositionView {
                instrument: market.instrument,
                position_id: p.id,
                size: p.size,
                entry_price: p.entry_price(),
                mark_price: mark,
                unrealised: p.unrealised(mark) * quote_unit,
                realised: p.realised,
                initial_margin: ppm_of(value, market.initial_ppm),
                maintenance_margin: ppm_of(value, market.maintenance_ppm),
                opened: p.opened,
                last_settlement: p.last_settlement,
            });
        }
        out
    }

    /// Equity, margins and positions of an account.
    pub fn futures_summary(&self, account: AccountId) -> Result<FuturesSummary, EngineError> {
        self.accounts.core(account)?;
        Ok(FuturesSummary {
            account,
            margin: self.margin_state(account),
            derisk: self.in_derisk(account),
            positions: self.positions(account),
        })
    }

    /// Prices, funding and open interest of a futures instrument.
    pub fn funding_view(&self, instrument: InstrumentId) -> Result<FundingView, EngineError> {
        let m = self
            .futures
            .market_of(instrument)
            .ok_or(EngineError::NotFutures)?;
        let market = &self.futures.markets[m];
        let f = market.funding.as_ref();
        Ok(FundingView {
            instrument,
            mark_price: self.mark_price(m),
            index_price: market.index,
            funding_rate: self.funding_estimate(m),
            last_rate: f.map_or(0, |f| f.last_rate),
            next_settlement: self.next_funding(m),
            open_interest: market.open_interest,
            cap: f.map_or(0, |f| f.cap),
            clamp_threshold: f.map_or(0, |f| f.clamp),
            interest: f.map_or(0, |f| f.interest),
            period_minutes: f.map_or(0, |f| f.period / super::MINUTE),
        })
    }
}
