//! Query-string parsing: the parameters of one request, the time formats of spec 4.3 and
//! the addendum (ISO 8601 with s/ms/us, epoch s/ms/us and ns for `to`, `YYYY-MM-DD`),
//! booleans, integers and the strict "no unknown parameter" rule of the balances endpoint.

use matchbook::Timestamp;
use matchbook::market::period::days_from_civil;

use crate::error::ApiError;

/// The decoded parameters of one query string, in order.
#[derive(Debug, Default, Clone)]
pub struct Params(Vec<(String, String)>);

impl Params {
    /// Decodes a raw query string (`None` when the URL has none). A parameter given twice
    /// is refused (400 `INVALID_QUERY`): which one counts would be a guess, and a proxy or
    /// filter in front that reads the other would see another request than the engine.
    pub fn parse(raw: Option<&str>) -> Result<Self, ApiError> {
        let Some(raw) = raw else {
            return Ok(Self::default());
        };
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(raw).map_err(|_| ApiError::bad("INVALID_QUERY"))?;
        let mut names: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
        names.sort_unstable();
        if names.windows(2).any(|pair| pair[0] == pair[1]) {
            return Err(ApiError::bad("INVALID_QUERY"));
        }
        Ok(Self(pairs))
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Refuses any parameter outside `allowed` with 400 `UNEXPECTED_PARAMETERS`.
    pub fn only(&self, allowed: &[&str]) -> Result<(), ApiError> {
        if self.0.iter().all(|(k, _)| allowed.contains(&k.as_str())) {
            Ok(())
        } else {
            Err(ApiError::bad("UNEXPECTED_PARAMETERS"))
        }
    }

    /// A time parameter; `allow_nanos` accepts epoch nanoseconds (the `to` bound).
    pub fn time(&self, name: &str, allow_nanos: bool) -> Result<Option<Timestamp>, ApiError> {
        self.get(name)
            .map(|v| parse_time(v, allow_nanos).ok_or(ApiError::bad("INVALID_TIME")))
            .transpose()
    }

    /// A boolean parameter (`true`/`false`).
    pub fn flag(&self, name: &str) -> Result<bool, ApiError> {
        match self.get(name) {
            None => Ok(false),
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(_) => Err(ApiError::bad("INVALID_QUERY")),
        }
    }

    /// A page size parameter (0 to 100, default 100; anything else is `INVALID_QUERY`).
    pub fn page_size(&self, name: &str) -> Result<usize, ApiError> {
        let requested = self
            .integer(name, "INVALID_QUERY")?
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        Ok(matchbook::market::query::page_size(requested)?)
    }

    /// A non-negative integer parameter; garbage is `code`.
    pub fn integer(&self, name: &str, code: &'static str) -> Result<Option<u64>, ApiError> {
        self.get(name)
            .map(|v| {
                if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(ApiError::bad(code));
                }
                v.parse::<u64>().map_err(|_| ApiError::bad(code))
            })
            .transpose()
    }
}

fn digits(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Parses one time value; `None` when it is none of the accepted forms.
pub fn parse_time(text: &str, allow_nanos: bool) -> Option<Timestamp> {
    if let Some(n) = digits(text) {
        // The magnitude tells the unit: seconds until year 5138, then ms, us, ns.
        let nanos = match n {
            0..100_000_000_000 => n.checked_mul(1_000_000_000)?,
            100_000_000_000..100_000_000_000_000 => n.checked_mul(1_000_000)?,
            100_000_000_000_000..100_000_000_000_000_000 => n.checked_mul(1_000)?,
            _ if allow_nanos => n,
            _ => return None,
        };
        return Some(Timestamp(nanos));
    }
    parse_iso(text)
}

fn field(text: &str, range: std::ops::Range<usize>) -> Option<i64> {
    digits(text.get(range)?)
}

fn parse_iso(text: &str) -> Option<Timestamp> {
    let b = text.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (field(text, 0..4)?, field(text, 5..7)?, field(text, 8..10)?);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    let day = days_from_civil(y, m as u32, d as u32);
    if b.len() == 10 {
        return Some(Timestamp(day.checked_mul(86_400_000_000_000)?));
    }
    if b.len() < 19 || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (h, min, s) = (
        field(text, 11..13)?,
        field(text, 14..16)?,
        field(text, 17..19)?,
    );
    if h > 23 || min > 59 || s > 59 {
        return None;
    }
    let mut rest = &text[19..];
    let mut nanos = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let len = frac.bytes().take_while(u8::is_ascii_digit).count();
        // Seconds, milliseconds or microseconds precision (and nanoseconds, harmlessly).
        if !matches!(len, 1..=9) {
            return None;
        }
        nanos = digits(&frac[..len])? * 10i64.pow(9 - len as u32);
        rest = &frac[len..];
    }
    let east = utc_offset(rest)?;
    let secs = day.checked_mul(86_400)? + h * 3_600 + min * 60 + s - east;
    secs.checked_mul(1_000_000_000)?
        .checked_add(nanos)
        .map(Timestamp)
}

/// Seconds east of UTC of a time's zone designator: none or `Z` (UTC), or an offset
/// `+HH:MM`, `-HH:MM` (or without the colon) such as `datetime.isoformat()` writes for a
/// local time: it names the instant exactly, so it is read, not refused.
fn utc_offset(zone: &str) -> Option<i64> {
    let sign = match zone.as_bytes().first() {
        None => return Some(0),
        Some(b'Z') if zone.len() == 1 => return Some(0),
        Some(b'+') => 1,
        Some(b'-') => -1,
        Some(_) => return None,
    };
    let hours_minutes = &zone[1..];
    let (h, m) = match hours_minutes.len() {
        5 if hours_minutes.as_bytes()[2] == b':' => (0..2, 3..5),
        4 => (0..2, 2..4),
        _ => return None,
    };
    let (h, m) = (field(hours_minutes, h)?, field(hours_minutes, m)?);
    if h > 23 || m > 59 {
        return None;
    }
    Some(sign * (h * 3_600 + m * 60))
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_767_225_600_000_000_000; // 2026-01-01T00:00:00Z

    #[test]
    fn accepts_every_documented_form() {
        for (text, want) in [
            ("2026-01-01", T),
            ("2026-01-01T00:00:00Z", T),
            ("2026-01-01T00:00:01.5Z", T + 1_500_000_000),
            ("2026-01-01T00:00:00.123Z", T + 123_000_000),
            ("2026-01-01T00:00:00.123456Z", T + 123_456_000),
            ("2026-01-01T00:00:00+00:00", T),
            ("2026-01-01T02:00:00+02:00", T),
            ("2025-12-31T19:00:00.5-05:00", T + 500_000_000),
            ("2026-01-01T05:30:00+0530", T),
            ("2025-12-31T23:00:00-01:00", T),
            ("1767225600", T),
            ("1767225600123", T + 123_000_000),
            ("1767225600123456", T + 123_456_000),
        ] {
            assert_eq!(parse_time(text, false), Some(Timestamp(want)), "{text}");
        }
        assert_eq!(
            parse_time("1767225600123456789", true),
            Some(Timestamp(T + 123_456_789))
        );
    }

    #[test]
    fn a_parameter_given_twice_is_refused_whatever_its_spelling() {
        for raw in [
            "max_page_size=1&max_page_size=100",
            "from=2026-01-01&to=2026-01-02&from=2026-01-01",
            "max%5Fpage%5Fsize=1&max_page_size=1",
        ] {
            let refused = Params::parse(Some(raw)).expect_err(raw);
            assert_eq!(refused.parts().1, "INVALID_QUERY", "{raw}");
        }
        let one_each = Params::parse(Some("from=1&to=2")).expect("distinct names");
        assert_eq!(
            (one_each.get("from"), one_each.get("to")),
            (Some("1"), Some("2"))
        );
    }

    #[test]
    fn refuses_garbage() {
        for text in [
            "None",
            "",
            "2026-13-01",
            "2026-02-30",
            "2026-01-01T25:00:00Z",
            "2026-01-01T00:00:00+24:00",
            "2026-01-01T00:00:00+02:60",
            "2026-01-01T00:00:00+2:00",
            "2026-01-01T00:00:00+02",
            "2026-01-01T00:00:00Z+01:00",
            "2026-01-01T00:00:00 +01:00",
            "2026-01-01 00:00:00",
            "-5",
            "1e9",
            "99999999999999999999999",
            "2026-01-01T00:00:00.Z",
        ] {
            assert_eq!(parse_time(text, true), None, "{text}");
        }
        assert_eq!(
            parse_time("1767225600123456789", false),
            None,
            "nanoseconds only for `to`"
        );
    }

    #[test]
    fn unknown_parameters_are_named() {
        let p = Params::parse(Some("a=1&b=2")).expect("parses");
        assert!(p.only(&["a", "b"]).is_ok());
        assert!(p.only(&["a"]).is_err());
        assert_eq!(p.get("b"), Some("2"));
    }
}
