//! History query rules of spec 4.2, 4.3 and 8: time windows with their defaults, the 30-day
//! limit, page sizes and cursors; and the errors they raise.

use matchbook_core::Timestamp;

/// Nanoseconds in a day.
pub const DAY: i64 = 86_400_000_000_000;
/// Longest window a history query may cover.
pub const MAX_WINDOW: i64 = 30 * DAY;
/// Largest and default page size.
pub const MAX_PAGE_SIZE: usize = 100;
/// Records one page of an account's order or trade history reads at most. A page that
/// reaches it ends early, short or empty, with a cursor where the walk stopped: reads run on
/// the market stage, and without a bound one request could hold it for as long as the
/// account's history is long (about 9 ms for 480,000 orders, every other reader and every
/// stream waiting behind it).
pub const MAX_RECORDS_READ: usize = 10_000;
/// Orders a lookup by client id reads at most, newest first (about 1 ms), when the
/// history's client-id index does not name the order: in a store just loaded (until its
/// next order builds the index), or for an id reused by a newer order already forgotten.
/// Open orders are found by the engine, which indexes their client ids.
pub const MAX_RECORDS_READ_BY_CLIENT_ID: usize = 100_000;

/// Why a history or market-data query was refused. Codes 5xxx (market data).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum QueryError {
    /// A time in the future where the past is required.
    #[error("invalid time")]
    InvalidTime,
    /// `to` before `from`.
    #[error("invalid time range")]
    InvalidTimeRange,
    /// Window longer than 30 days.
    #[error("time range too big")]
    TimeRangeTooBig,
    /// A cursor that does not belong to this query.
    #[error("invalid cursor")]
    InvalidCursor,
    /// Page size outside 0..=100.
    #[error("page size out of range")]
    InvalidPageSize,
    /// No such record within the lookup window.
    #[error("not found")]
    NotFound,
    /// No such instrument.
    #[error("invalid instrument code")]
    UnknownInstrument,
}

impl QueryError {
    /// Stable numeric code.
    pub const fn code(self) -> u16 {
        match self {
            Self::InvalidTime => 5001,
            Self::InvalidTimeRange => 5002,
            Self::TimeRangeTooBig => 5003,
            Self::InvalidCursor => 5004,
            Self::InvalidPageSize => 5005,
            Self::NotFound => 5006,
            Self::UnknownInstrument => 5007,
        }
    }
    /// Wire code (the addendum's names).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidTime => "INVALID_TIME",
            Self::InvalidTimeRange => "INVALID_TIME_RANGE",
            Self::TimeRangeTooBig => "ACCOUNT_HISTORY_TIME_RANGE_TOO_BIG",
            Self::InvalidCursor => "INVALID_CURSOR",
            Self::InvalidPageSize => "INVALID_QUERY",
            Self::NotFound => "NOT_FOUND",
            Self::UnknownInstrument => "INVALID_INSTRUMENT_CODE",
        }
    }
}

/// Midnight UTC at the start of the day containing `t`.
pub fn midnight(t: Timestamp) -> Timestamp {
    Timestamp(t.0.div_euclid(DAY) * DAY)
}

/// The window of a trade-history query (spec 4.3): neither bound: from 7 days ago at
/// midnight UTC to now; only `to`: the 7 days before it; only `from`: the smaller of 7 days
/// after it and now. `from` may not be in the future, `to` may not precede `from`, and the
/// window is at most 30 days.
pub fn trade_window(
    from: Option<Timestamp>,
    to: Option<Timestamp>,
    now: Timestamp,
) -> Result<(Timestamp, Timestamp), QueryError> {
    // A client's bound may lie anywhere in `i64` (years 1700 to 2262): saturate.
    let (from, to) = match (from, to) {
        (None, None) => (midnight(Timestamp(now.0.saturating_sub(7 * DAY))), now),
        (None, Some(to)) => (Timestamp(to.0.saturating_sub(7 * DAY)), to),
        (Some(from), None) => (from, Timestamp(from.0.saturating_add(7 * DAY).min(now.0))),
        (Some(from), Some(to)) => (from, to),
    };
    check_window(from, to, now)
}

/// The window of an order-history query (spec 4.2): explicit bounds as given; a missing
/// `from` looks back `default_lookback` from `to` (or now).
pub fn order_window(
    from: Option<Timestamp>,
    to: Option<Timestamp>,
    default_lookback: i64,
    now: Timestamp,
) -> Result<(Timestamp, Timestamp), QueryError> {
    let to_or_now = to.unwrap_or(now);
    let from = from.unwrap_or(Timestamp(to_or_now.0.saturating_sub(default_lookback)));
    check_window(from, to_or_now, now)
}

fn check_window(
    from: Timestamp,
    to: Timestamp,
    now: Timestamp,
) -> Result<(Timestamp, Timestamp), QueryError> {
    if from > now {
        return Err(QueryError::InvalidTime);
    }
    if to < from {
        return Err(QueryError::InvalidTimeRange);
    }
    if !within_window(from, to) {
        return Err(QueryError::TimeRangeTooBig);
    }
    Ok((from, to))
}

/// Whether `from..=to` (with `from <= to`) spans at most [`MAX_WINDOW`]; a span too wide
/// for an `i64` does not.
pub fn within_window(from: Timestamp, to: Timestamp) -> bool {
    to.0.checked_sub(from.0)
        .is_some_and(|span| span <= MAX_WINDOW)
}

/// Checks a page size (0..=100; `None` means 100).
pub fn page_size(requested: Option<usize>) -> Result<usize, QueryError> {
    match requested {
        None => Ok(MAX_PAGE_SIZE),
        Some(n) if n <= MAX_PAGE_SIZE => Ok(n),
        Some(_) => Err(QueryError::InvalidPageSize),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Timestamp = Timestamp(1_767_225_600_000_000_000 + 15 * 3_600_000_000_000);

    #[test]
    fn trade_window_defaults_follow_the_spec_table() {
        let (from, to) = trade_window(None, None, NOW).expect("default");
        assert_eq!((from, to), (Timestamp(midnight(NOW).0 - 7 * DAY), NOW));
        let t = Timestamp(NOW.0 - 2 * DAY);
        assert_eq!(
            trade_window(None, Some(t), NOW),
            Ok((Timestamp(t.0 - 7 * DAY), t))
        );
        let f = Timestamp(NOW.0 - 10 * DAY);
        assert_eq!(
            trade_window(Some(f), None, NOW),
            Ok((f, Timestamp(f.0 + 7 * DAY)))
        );
        let f = Timestamp(NOW.0 - DAY);
        assert_eq!(
            trade_window(Some(f), None, NOW),
            Ok((f, NOW)),
            "capped at now"
        );
    }

    #[test]
    fn trade_window_errors() {
        assert_eq!(
            trade_window(Some(Timestamp(NOW.0 + 1)), None, NOW),
            Err(QueryError::InvalidTime)
        );
        assert_eq!(
            trade_window(Some(NOW), Some(Timestamp(NOW.0 - 1)), NOW),
            Err(QueryError::InvalidTimeRange)
        );
        let f = Timestamp(NOW.0 - 31 * DAY);
        assert_eq!(
            trade_window(Some(f), Some(NOW), NOW),
            Err(QueryError::TimeRangeTooBig)
        );
        assert!(
            trade_window(Some(Timestamp(NOW.0 - 30 * DAY)), Some(NOW), NOW).is_ok(),
            "30 days exactly is allowed"
        );
        assert_eq!(page_size(Some(101)), Err(QueryError::InvalidPageSize));
        assert_eq!(page_size(Some(0)), Ok(0));
        assert_eq!(page_size(None), Ok(100));
    }

    /// Fails on the code before: `to - from` overflowed (a panic with overflow checks; in a
    /// release build it wrapped below the limit and a window of 560 years was accepted), and
    /// so did the default `to` of a `from` near the end of `i64`.
    #[test]
    fn windows_at_the_ends_of_the_clock_are_refused_not_wrapped() {
        let year_1700 = Timestamp(-8_520_336_000_000_000_000);
        let year_2255 = Timestamp(9_000_000_000_000_000_000);
        assert_eq!(
            trade_window(Some(year_1700), Some(year_2255), NOW),
            Err(QueryError::TimeRangeTooBig)
        );
        assert_eq!(
            order_window(Some(year_1700), Some(year_2255), DAY, NOW),
            Err(QueryError::TimeRangeTooBig)
        );
        assert_eq!(
            trade_window(Some(Timestamp(i64::MAX - DAY)), None, NOW),
            Err(QueryError::InvalidTime)
        );
        assert!(!within_window(Timestamp(i64::MIN), Timestamp(i64::MAX)));
        assert!(within_window(NOW, Timestamp(NOW.0 + MAX_WINDOW)));
    }

    #[test]
    fn order_window_uses_the_lookback() {
        assert_eq!(
            order_window(None, None, DAY, NOW),
            Ok((Timestamp(NOW.0 - DAY), NOW))
        );
        assert_eq!(
            order_window(Some(Timestamp(NOW.0 - 40 * DAY)), None, DAY, NOW),
            Err(QueryError::TimeRangeTooBig)
        );
    }
}
