//! Fee groups and tiers (spec 2.8, 2.9): the configured schedule with percent strings, its
//! fixed-point form (rates in millionths), the rounding rule, and the rolling 30-day traded
//! volume per holder that selects the active tier.
//!
//! Rounding rule, used everywhere a fee is charged: `fee = ceil(received x rate)` in balance
//! units of the currency received, so rounding favours the exchange; rates are never
//! negative, so a fee is never below zero and never above what was received.

mod by_holder;
mod window;

pub(crate) use by_holder::HolderVolumes;
pub use window::VOLUME_WINDOW_DAYS;
pub(crate) use window::{VolumeWindow, day_of};

use crate::fixed;
use crate::refdata::ConfigError;

/// One tier as configured: from `volume` (in the group's volume currency) upwards, these
/// maker and taker fees apply. Fees are percent strings with up to 4 decimals (`"0.1000"`
/// means 0.1 %).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FeeTierSpec {
    /// Lower bound of 30-day volume, a decimal string.
    pub volume: String,
    /// Maker fee in percent.
    pub maker_fee: String,
    /// Taker fee in percent.
    pub taker_fee: String,
}

/// A fee group as configured (spec 2.9).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FeeGroupSpec {
    /// `SPOT` or `FUTURES`.
    pub id: String,
    /// Human-readable description.
    pub display_text: String,
    /// Currency running volumes are counted in.
    pub volume_currency: String,
    /// Tiers, ascending by volume, the first from 0.
    pub tiers: Vec<FeeTierSpec>,
}

/// Id of the spot fee group.
pub const SPOT_GROUP: &str = "SPOT";
/// Id of the futures fee group.
pub const FUTURES_GROUP: &str = "FUTURES";

fn tier(volume: &str, maker: &str, taker: &str) -> FeeTierSpec {
    FeeTierSpec {
        volume: volume.into(),
        maker_fee: maker.into(),
        taker_fee: taker.into(),
    }
}

/// The shipped schedule: spot volume counted in EUR, futures in USD.
pub fn default_fee_groups() -> Vec<FeeGroupSpec> {
    vec![
        FeeGroupSpec {
            id: SPOT_GROUP.into(),
            display_text: "Spot trading fees by 30-day traded volume".into(),
            volume_currency: "EUR".into(),
            tiers: vec![
                tier("0", "0.1000", "0.1500"),
                tier("100000", "0.0800", "0.1300"),
                tier("250000", "0.0600", "0.1100"),
                tier("1000000", "0.0400", "0.0900"),
                tier("5000000", "0.0200", "0.0750"),
                tier("20000000", "0.0000", "0.0500"),
            ],
        },
        FeeGroupSpec {
            id: FUTURES_GROUP.into(),
            display_text: "Futures trading fees by 30-day traded volume".into(),
            volume_currency: "USD".into(),
            tiers: vec![
                tier("0", "0.0200", "0.0500"),
                tier("1000000", "0.0150", "0.0450"),
                tier("10000000", "0.0100", "0.0400"),
                tier("50000000", "0.0050", "0.0350"),
            ],
        },
    ]
}

/// A tier in fixed point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct FeeTier {
    /// Lower bound in balance units of the volume currency.
    pub(crate) volume: i128,
    /// Maker rate in millionths.
    pub(crate) maker_ppm: u32,
    /// Taker rate in millionths.
    pub(crate) taker_ppm: u32,
}

/// A fee group in fixed point.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct FeeGroup {
    pub(crate) spec: FeeGroupSpec,
    pub(crate) volume_currency: crate::ids::CurrencyId,
    pub(crate) tiers: Vec<FeeTier>,
}

/// Parses a percent string with up to 4 decimals into millionths (`"0.1000"` -> 1000).
pub fn percent_to_ppm(text: &str) -> Result<u32, fixed::ParseDecimalError> {
    let v = fixed::parse_scaled(text, 4)?;
    u32::try_from(v)
        .ok()
        .filter(|&ppm| ppm <= 1_000_000)
        .ok_or(fixed::ParseDecimalError::Overflow)
}

impl FeeGroup {
    pub(crate) fn build(
        spec: FeeGroupSpec,
        volume_currency: crate::ids::CurrencyId,
        scale: u8,
    ) -> Result<Self, ConfigError> {
        let bad = |field: &'static str| {
            let id = spec.id.clone();
            move |source| ConfigError::BadNumber {
                instrument: id,
                field,
                source,
            }
        };
        let mut tiers = Vec::with_capacity(spec.tiers.len());
        for t in &spec.tiers {
            tiers.push(FeeTier {
                volume: fixed::parse_scaled_wide(&t.volume, scale).map_err(bad("volume"))?,
                maker_ppm: percent_to_ppm(&t.maker_fee).map_err(bad("maker_fee"))?,
                taker_ppm: percent_to_ppm(&t.taker_fee).map_err(bad("taker_fee"))?,
            });
        }
        let ascending = tiers.windows(2).all(|w| w[0].volume < w[1].volume);
        if tiers.first().is_none_or(|t| t.volume != 0) || !ascending {
            return Err(ConfigError::BadRange(spec.id));
        }
        Ok(Self {
            spec,
            volume_currency,
            tiers,
        })
    }

    /// Index of the tier that applies at `volume`.
    pub(crate) fn tier_at(&self, volume: i128) -> usize {
        self.tiers
            .iter()
            .rposition(|t| t.volume <= volume)
            .unwrap_or(0)
    }
}

/// `ceil(amount x ppm / 1e6)`, the one fee rounding rule. In 64 bits whenever the product
/// fits (every fill short of 9.2 x 10^12 units at a 100 % rate): a 128-bit division is a
/// call of about 60 instructions, a 64-bit one by a constant a multiply and shifts.
#[inline]
pub(crate) fn fee_for(amount: i64, ppm: u32) -> i64 {
    match amount
        .checked_mul(i64::from(ppm))
        .and_then(|product| product.checked_add(999_999))
    {
        Some(rounded) => rounded.div_euclid(1_000_000),
        None => wide_fee_for(amount, ppm),
    }
}

/// [`fee_for`] in 128 bits.
fn wide_fee_for(amount: i64, ppm: u32) -> i64 {
    let product = i128::from(amount) * i128::from(ppm);
    (product + 999_999).div_euclid(1_000_000) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::CurrencyId;

    proptest::proptest! {
        /// The 64-bit path gives what the 128-bit rule gives, at every size and sign.
        #[test]
        fn the_narrow_fee_is_the_wide_fee(
            amount in proptest::prop_oneof![
                proptest::num::i64::ANY,
                -10_000_000_000_000i64..10_000_000_000_000,
            ],
            ppm in proptest::prop_oneof![proptest::num::u32::ANY, 0u32..=1_000_000],
        ) {
            proptest::prop_assert_eq!(fee_for(amount, ppm), wide_fee_for(amount, ppm));
        }
    }

    #[test]
    fn percent_strings_become_millionths() {
        assert_eq!(percent_to_ppm("0.1000"), Ok(1000));
        assert_eq!(percent_to_ppm("0.15"), Ok(1500));
        assert_eq!(percent_to_ppm("100"), Ok(1_000_000));
        assert!(percent_to_ppm("100.0001").is_err());
        assert!(percent_to_ppm("0.00001").is_err());
        assert!(percent_to_ppm("-0.1").is_err());
    }

    #[test]
    fn fees_round_up_and_stay_within_what_was_received() {
        assert_eq!(fee_for(1_000_000, 1000), 1000);
        assert_eq!(fee_for(1, 1000), 1);
        assert_eq!(fee_for(999, 1000), 1);
        assert_eq!(fee_for(1001, 1000), 2);
        assert_eq!(fee_for(0, 1000), 0);
        assert_eq!(fee_for(5, 0), 0);
        assert_eq!(fee_for(7, 1_000_000), 7);
    }

    #[test]
    fn schedule_must_start_at_zero_and_ascend() {
        let mut spec = default_fee_groups().remove(0);
        spec.tiers.swap(1, 2);
        assert!(FeeGroup::build(spec, CurrencyId(0), 2).is_err());
        let mut spec = default_fee_groups().remove(0);
        spec.tiers.remove(0);
        assert!(FeeGroup::build(spec, CurrencyId(0), 2).is_err());
    }
}
