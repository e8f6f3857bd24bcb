//! Wire formatting: ISO 8601 UTC times (milliseconds, or nanoseconds for `*_nanos` fields)
//! and fixed-point values as decimal strings.

use matchbook::Timestamp;
use matchbook::fixed::format_scaled;
use matchbook::market::period::civil_from_days;

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const NANOS_PER_DAY: i64 = 86_400 * NANOS_PER_SECOND;

fn split(t: Timestamp) -> (String, i64) {
    let days = t.0.div_euclid(NANOS_PER_DAY);
    let in_day = t.0.rem_euclid(NANOS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let secs = in_day / NANOS_PER_SECOND;
    let head = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60
    );
    (head, in_day % NANOS_PER_SECOND)
}

/// `2026-11-22T21:20:32.123Z`.
pub fn iso_ms(t: Timestamp) -> String {
    let (head, nanos) = split(t);
    format!("{head}.{:03}Z", nanos / 1_000_000)
}

/// `2026-11-22T21:20:32.123456789Z`.
pub fn iso_nanos(t: Timestamp) -> String {
    let (head, nanos) = split(t);
    format!("{head}.{nanos:09}Z")
}

/// The time a candle is known by, in REST and streams alike: its period's last millisecond
/// (`end`, the start of the next period, less 1 ms).
pub fn candle_time(end: Timestamp) -> Timestamp {
    Timestamp(end.0 - 1_000_000)
}

/// A scaled integer as a decimal string with exactly `decimals` places.
pub fn decimal(value: impl Into<i128>, decimals: u8) -> String {
    format_scaled(value.into(), decimals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_times_in_utc() {
        let t = Timestamp(1_767_225_600_123_456_789);
        assert_eq!(iso_ms(t), "2026-01-01T00:00:00.123Z");
        assert_eq!(iso_nanos(t), "2026-01-01T00:00:00.123456789Z");
        assert_eq!(iso_ms(Timestamp(0)), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            iso_ms(Timestamp(1_767_225_600_000_000_000 - 1)),
            "2025-12-31T23:59:59.999Z"
        );
        assert_eq!(decimal(12_345i64, 2), "123.45");
    }
}
