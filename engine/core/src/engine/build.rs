//! Building an engine from its configuration: the reference data's checks (unique codes,
//! counts, precisions) and the tables derived from it before any command runs.

use std::collections::BTreeSet;

use super::ledger;
use crate::fees::{FeeGroup, FeeGroupSpec};
use crate::ids::CurrencyId;
use crate::refdata::{ConfigError, Currency, Instrument, InstrumentSpec};

/// The instruments of `specs`, checked against `currencies`: every code (currency or
/// instrument) unique, no more of either than an id can name.
pub(super) fn instruments(
    currencies: &[Currency],
    specs: Vec<InstrumentSpec>,
) -> Result<Vec<Instrument>, ConfigError> {
    let mut seen = BTreeSet::new();
    for currency in currencies {
        if !seen.insert(currency.code.clone()) {
            return Err(ConfigError::DuplicateCode(currency.code.clone()));
        }
        currency.check()?;
    }
    if currencies.len() > usize::from(u16::MAX) || specs.len() > usize::from(u16::MAX) {
        return Err(ConfigError::TooMany);
    }
    let mut instruments = Vec::with_capacity(specs.len());
    for spec in specs {
        if !seen.insert(spec.code.clone()) {
            return Err(ConfigError::DuplicateCode(spec.code));
        }
        instruments.push(Instrument::build(spec, currencies)?);
    }
    Ok(instruments)
}

/// Each currency's balance scale (decimals), refused past 18.
pub(super) fn balance_scales(
    currencies: &[Currency],
    instruments: &[Instrument],
) -> Result<Vec<u8>, ConfigError> {
    let scales = ledger::balance_scales(currencies, instruments);
    if let Some(i) = scales.iter().position(|&s| s > 18) {
        return Err(ConfigError::OutOfRange {
            item: currencies[i].code.clone(),
            field: "precision",
            range: "at most 18 decimals, counting an instrument's amount plus price \
                    precision in its quote currency",
        });
    }
    Ok(scales)
}

/// The fee groups of `specs`, each counting volume in a configured currency, ids unique;
/// spot first, futures second, as the account-fees view lists them.
pub(super) fn fee_groups(
    specs: Vec<FeeGroupSpec>,
    currencies: &[Currency],
    scales: &[u8],
) -> Result<Vec<FeeGroup>, ConfigError> {
    let mut fee_groups: Vec<FeeGroup> = Vec::with_capacity(specs.len());
    for spec in specs {
        let currency = currencies
            .iter()
            .position(|c| c.code == spec.volume_currency)
            .ok_or_else(|| ConfigError::UnknownCurrency {
                instrument: spec.id.clone(),
                currency: spec.volume_currency.clone(),
            })?;
        if fee_groups.iter().any(|g| g.spec.id == spec.id) {
            return Err(ConfigError::DuplicateCode(spec.id));
        }
        fee_groups.push(FeeGroup::build(
            spec,
            CurrencyId(currency as u16),
            scales[currency],
        )?);
    }
    fee_groups.sort_by_key(|g| {
        (
            g.spec.id != crate::fees::SPOT_GROUP,
            g.spec.id != crate::fees::FUTURES_GROUP,
        )
    });
    Ok(fee_groups)
}
