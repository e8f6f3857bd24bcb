//! Read-only account views of spec 2.4 and 2.8: fees of an account (running volumes and
//! active tiers, SPOT first), the fee-group list, and the USD margin totals.

use super::Engine;
use crate::error::EngineError;
use crate::fees::{self, FeeGroupSpec};
use crate::ids::{AccountId, CurrencyId};

/// Running 30-day volume of a holder in one fee group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunningVolume<'a> {
    /// `SPOT` or `FUTURES`.
    pub fee_group_id: &'a str,
    /// Volume in balance units of `currency`.
    pub volume: i128,
    /// The group's volume currency.
    pub currency: CurrencyId,
}

/// The tier that applies to a holder in one fee group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveTier<'a> {
    /// `SPOT` or `FUTURES`.
    pub fee_group_id: &'a str,
    /// The tier's lower volume bound as configured.
    pub volume: &'a str,
    /// Maker fee in percent as configured.
    pub maker_fee: &'a str,
    /// Taker fee in percent as configured.
    pub taker_fee: &'a str,
}

/// Fees of an account (combined over its holder's accounts), spec 2.8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountFees<'a> {
    /// Running volumes, SPOT first, FUTURES second.
    pub running_volumes: Vec<RunningVolume<'a>>,
    /// Active tiers, in the same order.
    pub active_fee_tiers: Vec<ActiveTier<'a>>,
}

/// Equity and margin of an account in USD balance units (spec 2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MarginTotals {
    /// USD cash (available + locked) plus unrealised futures PnL.
    pub account_equity: i128,
    /// Initial margin of futures positions and orders (0 without futures).
    pub margin_used: i128,
    /// Equity less margin used.
    pub margin_available: i128,
}

impl Engine {
    /// Fee view of an account: its holder's 30-day volumes and active tiers at engine time.
    pub fn account_fees(&self, account: AccountId) -> Result<AccountFees<'_>, EngineError> {
        let holder = self.accounts.core(account)?.holder;
        let day = fees::day_of(self.now);
        let mut view = AccountFees {
            running_volumes: Vec::new(),
            active_fee_tiers: Vec::new(),
        };
        for (group, window) in self.fee_groups.iter().zip(self.volumes.of(holder)) {
            let volume = window.volume_on(day);
            let tier = &group.spec.tiers[group.tier_at(volume)];
            view.running_volumes.push(RunningVolume {
                fee_group_id: &group.spec.id,
                volume,
                currency: group.volume_currency,
            });
            view.active_fee_tiers.push(ActiveTier {
                fee_group_id: &group.spec.id,
                volume: &tier.volume,
                maker_fee: &tier.maker_fee,
                taker_fee: &tier.taker_fee,
            });
        }
        Ok(view)
    }

    /// The fee groups as configured, SPOT first.
    pub fn fee_groups(&self) -> impl Iterator<Item = &FeeGroupSpec> + '_ {
        self.fee_groups.iter().map(|g| &g.spec)
    }

    /// USD equity and margin of an account: cash plus unrealised futures PnL, the initial
    /// margin of positions and open futures orders, and the difference.
    pub fn margin_totals(&self, account: AccountId) -> Result<MarginTotals, EngineError> {
        let record = self.accounts.account(account)?;
        if !self.futures.markets.is_empty() {
            let m = self.margin_state(account);
            return Ok(MarginTotals {
                account_equity: m.equity(),
                margin_used: m.used(),
                margin_available: m.available(),
            });
        }
        let equity = self.currency_by_code("USD").map_or(0, |usd| {
            let b = record.balances.get(usd);
            i128::from(b.available) + i128::from(b.locked)
        });
        Ok(MarginTotals {
            account_equity: equity,
            margin_used: 0,
            margin_available: equity,
        })
    }
}
