//! Candle periods: the units and periods of spec 2.12 and the addendum, and the UTC calendar
//! arithmetic that maps a time to the start of its period (weeks start on Monday 00:00 UTC,
//! months are calendar months).

use matchbook_core::Timestamp;

const NANOS_PER_MINUTE: i64 = 60_000_000_000;
const NANOS_PER_DAY: i64 = 1_440 * NANOS_PER_MINUTE;

/// A candle unit.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Unit {
    /// Minutes (periods 1, 5, 15, 30).
    Minutes,
    /// Hours (periods 1, 4).
    Hours,
    /// Days (period 1).
    Days,
    /// Weeks starting Monday (period 1).
    Weeks,
    /// Calendar months (period 1).
    Months,
}

impl Unit {
    /// Wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Minutes => "MINUTES",
            Self::Hours => "HOURS",
            Self::Days => "DAYS",
            Self::Weeks => "WEEKS",
            Self::Months => "MONTHS",
        }
    }
    /// Parses the wire spelling.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Minutes,
            Self::Hours,
            Self::Days,
            Self::Weeks,
            Self::Months,
        ]
        .into_iter()
        .find(|u| u.as_str() == text)
    }
}

/// A supported (unit, period) pair.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Granularity {
    /// Unit.
    pub unit: Unit,
    /// Number of units per candle.
    pub period: u32,
}

/// Every granularity the service offers, finest first.
pub const GRANULARITIES: [Granularity; 9] = [
    Granularity {
        unit: Unit::Minutes,
        period: 1,
    },
    Granularity {
        unit: Unit::Minutes,
        period: 5,
    },
    Granularity {
        unit: Unit::Minutes,
        period: 15,
    },
    Granularity {
        unit: Unit::Minutes,
        period: 30,
    },
    Granularity {
        unit: Unit::Hours,
        period: 1,
    },
    Granularity {
        unit: Unit::Hours,
        period: 4,
    },
    Granularity {
        unit: Unit::Days,
        period: 1,
    },
    Granularity {
        unit: Unit::Weeks,
        period: 1,
    },
    Granularity {
        unit: Unit::Months,
        period: 1,
    },
];

/// Why a unit or period was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GranularityError {
    /// Not one of the units.
    #[error("invalid unit")]
    InvalidUnit,
    /// Not a period offered for the unit.
    #[error("invalid period")]
    InvalidPeriod,
}

impl Granularity {
    /// Checks a unit and period against the offered list.
    pub fn new(unit: Unit, period: u32) -> Result<Self, GranularityError> {
        let g = Self { unit, period };
        if GRANULARITIES.contains(&g) {
            Ok(g)
        } else {
            Err(GranularityError::InvalidPeriod)
        }
    }

    /// Index in [`GRANULARITIES`].
    pub fn index(self) -> usize {
        GRANULARITIES.iter().position(|g| *g == self).unwrap_or(0)
    }

    /// Start of the period containing `t`.
    pub fn start_of(self, t: Timestamp) -> Timestamp {
        let fixed = |len: i64| Timestamp(t.0.div_euclid(len) * len);
        match self.unit {
            Unit::Minutes => fixed(NANOS_PER_MINUTE * i64::from(self.period)),
            Unit::Hours => fixed(60 * NANOS_PER_MINUTE * i64::from(self.period)),
            Unit::Days => fixed(NANOS_PER_DAY),
            Unit::Weeks => {
                // 1970-01-01 was a Thursday: Monday-based weeks are offset by 3 days.
                let days = t.0.div_euclid(NANOS_PER_DAY);
                let monday = days - (days + 3).rem_euclid(7);
                Timestamp(monday * NANOS_PER_DAY)
            }
            Unit::Months => {
                let (y, m, _) = civil_from_days(t.0.div_euclid(NANOS_PER_DAY));
                Timestamp(days_from_civil(y, m, 1) * NANOS_PER_DAY)
            }
        }
    }

    /// Start of the period after the one starting at `start`.
    pub fn next(self, start: Timestamp) -> Timestamp {
        match self.unit {
            Unit::Minutes => Timestamp(start.0 + NANOS_PER_MINUTE * i64::from(self.period)),
            Unit::Hours => Timestamp(start.0 + 60 * NANOS_PER_MINUTE * i64::from(self.period)),
            Unit::Days => Timestamp(start.0 + NANOS_PER_DAY),
            Unit::Weeks => Timestamp(start.0 + 7 * NANOS_PER_DAY),
            Unit::Months => {
                let (y, m, _) = civil_from_days(start.0.div_euclid(NANOS_PER_DAY));
                let (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
                Timestamp(days_from_civil(y, m, 1) * NANOS_PER_DAY)
            }
        }
    }

    /// Start of the period before the one starting at `start`.
    pub fn previous(self, start: Timestamp) -> Timestamp {
        self.start_of(Timestamp(start.0 - 1))
    }
}

pub use matchbook_core::calendar::{civil_from_days, days_from_civil};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(y: i64, m: u32, d: u32, h: i64, min: i64) -> Timestamp {
        Timestamp(days_from_civil(y, m, d) * NANOS_PER_DAY + (h * 60 + min) * NANOS_PER_MINUTE)
    }

    #[test]
    fn calendar_boundaries() {
        let week = Granularity::new(Unit::Weeks, 1).expect("offered");
        // 2026-11-22 is a Sunday; its week started Monday 2026-11-16.
        assert_eq!(
            week.start_of(at(2026, 11, 22, 23, 59)),
            at(2026, 11, 16, 0, 0)
        );
        assert_eq!(
            week.start_of(at(2026, 11, 23, 0, 0)),
            at(2026, 11, 23, 0, 0)
        );
        let month = Granularity::new(Unit::Months, 1).expect("offered");
        assert_eq!(month.start_of(at(2024, 2, 29, 12, 0)), at(2024, 2, 1, 0, 0));
        assert_eq!(month.next(at(2024, 12, 1, 0, 0)), at(2025, 1, 1, 0, 0));
        assert_eq!(month.previous(at(2025, 3, 1, 0, 0)), at(2025, 2, 1, 0, 0));
        let four_hours = Granularity::new(Unit::Hours, 4).expect("offered");
        assert_eq!(
            four_hours.start_of(at(2026, 1, 1, 7, 59)),
            at(2026, 1, 1, 4, 0)
        );
        assert_eq!(
            Granularity::new(Unit::Minutes, 7),
            Err(GranularityError::InvalidPeriod)
        );
        assert_eq!(
            Granularity::new(Unit::Weeks, 2),
            Err(GranularityError::InvalidPeriod)
        );
        assert_eq!(Unit::parse("HOURS"), Some(Unit::Hours));
        assert_eq!(Unit::parse("hours"), None);
    }

    proptest! {
        #[test]
        fn dates_round_trip(days in -100_000i64..100_000) {
            let (y, m, d) = civil_from_days(days);
            prop_assert_eq!(days_from_civil(y, m, d), days);
        }

        #[test]
        fn a_time_lies_in_its_period(t in 0i64..4_000_000_000_000_000_000, g in 0usize..9) {
            let g = GRANULARITIES[g];
            let start = g.start_of(Timestamp(t));
            prop_assert!(start.0 <= t && t < g.next(start).0);
            prop_assert_eq!(g.start_of(start), start);
            prop_assert_eq!(g.previous(g.next(start)), start);
        }
    }
}
