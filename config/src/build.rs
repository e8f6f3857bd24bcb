//! From the file shape to the engine's reference data: decimals parsed, kinds and states
//! checked, demo defaults for the sections left out.

use matchbook_core::fees::{FeeGroupSpec, FeeTierSpec};
use matchbook_core::{
    Currency, EngineConfig, FundingSchedule, FundingSettings, FuturesTerms, InstrumentKind,
    InstrumentSpec, InstrumentState,
};
use std::collections::HashSet;

use rust_decimal::Decimal;

use crate::{DefinitionError, Exchange, FuturesConfig, HolderConfig, InstrumentConfig};

fn decimal(text: &str, what: &str) -> Result<Decimal, DefinitionError> {
    text.parse()
        .map_err(|_| DefinitionError::Invalid(format!("{what}: bad decimal {text:?}")))
}

/// Holder names, and account names within a holder, are what keys and provisioning find
/// them by: a second of the same name would hide the first.
fn check_names(holders: &[HolderConfig]) -> Result<(), DefinitionError> {
    let mut seen = HashSet::new();
    for holder in holders {
        if !seen.insert(holder.name.as_str()) {
            let why = format!("holder {:?} is named twice", holder.name);
            return Err(DefinitionError::Invalid(why));
        }
        let mut accounts = HashSet::new();
        for account in &holder.accounts {
            if !accounts.insert(account.name.as_str()) {
                let why = format!("{}/{} is named twice", holder.name, account.name);
                return Err(DefinitionError::Invalid(why));
            }
        }
    }
    Ok(())
}

pub(crate) fn engine_config(exchange: &Exchange) -> Result<EngineConfig, DefinitionError> {
    check_names(&exchange.holders)?;
    let mut engine = crate::demo::config();
    if !exchange.currencies.is_empty() {
        engine.currencies = exchange
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
            .collect::<Result<_, DefinitionError>>()?;
    }
    if !exchange.instruments.is_empty() {
        engine.instruments = exchange
            .instruments
            .iter()
            .map(instrument)
            .collect::<Result<_, _>>()?;
    }
    if !exchange.fee_groups.is_empty() {
        engine.fee_groups = exchange
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
    if let Some(max) = exchange.max_open_orders {
        engine.max_open_orders = max;
    }
    Ok(engine)
}

fn instrument(c: &InstrumentConfig) -> Result<InstrumentSpec, DefinitionError> {
    let kind = InstrumentKind::parse(&c.kind)
        .ok_or_else(|| DefinitionError::Invalid(format!("{}: bad type {:?}", c.code, c.kind)))?;
    let state = InstrumentState::parse(&c.state)
        .ok_or_else(|| DefinitionError::Invalid(format!("{}: bad state {:?}", c.code, c.state)))?;
    let futures = c
        .futures
        .as_ref()
        .map(|f| futures_terms(&c.code, f))
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

fn futures_terms(code: &str, f: &FuturesConfig) -> Result<FuturesTerms, DefinitionError> {
    let funding = match (
        &f.funding_cap,
        &f.funding_clamp_threshold,
        &f.funding_annual_interest_rate,
    ) {
        (Some(cap), Some(clamp), Some(interest)) => Some(FundingSettings {
            cap: decimal(cap, code)?,
            clamp_threshold: decimal(clamp, code)?,
            annual_interest_rate: decimal(interest, code)?,
        }),
        (None, None, None) => None,
        _ => {
            return Err(DefinitionError::Invalid(format!(
                "{code}: give all three funding settings or none"
            )));
        }
    };
    Ok(FuturesTerms {
        price_collar_percentage: decimal(&f.price_collar_percentage, code)?,
        initial_margin_percentage: decimal(&f.initial_margin_percentage, code)?,
        maintenance_margin_percentage: decimal(&f.maintenance_margin_percentage, code)?,
        funding,
        funding_period: f.funding_period,
        market_offset: f.market_offset,
        funding_schedule: FundingSchedule::FixedInterval {
            period_minutes: f.funding_interval_minutes,
        },
        contract_expiry_date: f.contract_expiry_date.clone(),
        contract_duration: f.contract_duration.clone(),
    })
}
