//! Fixed-point numbers: prices in ticks and amounts in lots, scaled by the instrument's
//! precision, with a strict decimal-string grammar at the edge and exact printing back.
//!
//! The grammar is `digits ('.' digits)?`: no sign, exponent, underscore, whitespace, leading
//! or trailing dot. `rust_decimal` accepts several of those, so parsing is done here by hand
//! and never rounds: more decimals than allowed is an error, not a rounding.

use std::fmt;

/// Largest number of decimal places any scale may use (10^36 still fits an i128).
pub const MAX_DECIMALS: u8 = 36;

/// Why a decimal string was refused. Codes are stable (1100-1199: decimal input).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ParseDecimalError {
    /// The string was empty.
    #[error("empty number")]
    Empty,
    /// A leading `+` or `-`.
    #[error("sign not allowed")]
    Sign,
    /// An exponent such as `1e5`.
    #[error("exponent not allowed")]
    Exponent,
    /// A digit separator such as `1_000`.
    #[error("underscore not allowed")]
    Underscore,
    /// Spaces, tabs or newlines anywhere.
    #[error("whitespace not allowed")]
    Whitespace,
    /// A dot with no digit on one side (`1.`, `.5`) or more than one dot.
    #[error("malformed decimal point")]
    MalformedPoint,
    /// Any other character.
    #[error("invalid character")]
    InvalidCharacter,
    /// More fractional digits than the scale allows.
    #[error("too many decimal places")]
    TooManyDecimals,
    /// The value does not fit the fixed-point range.
    #[error("number too large")]
    Overflow,
}

impl ParseDecimalError {
    /// The error with the bound it broke, for a value parsed at `decimals` places: the
    /// places allowed, or the largest value that fits (`number too large (at most
    /// 92233720368.54775807)`); the other errors are about spelling and need no bound.
    pub fn with_bound(self, decimals: u8) -> String {
        match self {
            Self::TooManyDecimals => format!("{self} (at most {decimals})"),
            Self::Overflow => {
                let largest = format_scaled(i128::from(i64::MAX), decimals);
                format!("{self} (at most {largest})")
            }
            _ => self.to_string(),
        }
    }

    /// Stable numeric code of this error.
    pub const fn code(self) -> u16 {
        match self {
            Self::Empty => 1101,
            Self::Sign => 1102,
            Self::Exponent => 1103,
            Self::Underscore => 1104,
            Self::Whitespace => 1105,
            Self::MalformedPoint => 1106,
            Self::InvalidCharacter => 1107,
            Self::TooManyDecimals => 1108,
            Self::Overflow => 1109,
        }
    }
}

/// Parses `text` as a non-negative decimal with at most `decimals` fractional digits and
/// returns it scaled by `10^decimals`.
pub fn parse_scaled(text: &str, decimals: u8) -> Result<i64, ParseDecimalError> {
    let value = parse_scaled_wide(text, decimals)?;
    i64::try_from(value).map_err(|_| ParseDecimalError::Overflow)
}

/// As [`parse_scaled`] but into an `i128`, for notional values (price x amount scale).
pub fn parse_scaled_wide(text: &str, decimals: u8) -> Result<i128, ParseDecimalError> {
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return Err(ParseDecimalError::Empty);
    }
    // Classify every byte first so the most telling error wins over position accidents.
    let mut dots = 0usize;
    for &b in bytes {
        match b {
            b'0'..=b'9' => {}
            b'.' => dots += 1,
            b'+' | b'-' => return Err(ParseDecimalError::Sign),
            b'e' | b'E' => return Err(ParseDecimalError::Exponent),
            b'_' => return Err(ParseDecimalError::Underscore),
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                return Err(ParseDecimalError::Whitespace);
            }
            _ => return Err(ParseDecimalError::InvalidCharacter),
        }
    }
    let (int_part, frac_part) = match text.split_once('.') {
        None => (bytes, &b""[..]),
        Some((i, f)) => (i.as_bytes(), f.as_bytes()),
    };
    if dots > 1 || int_part.is_empty() || (dots == 1 && frac_part.is_empty()) {
        return Err(ParseDecimalError::MalformedPoint);
    }
    let decimals = decimals.min(MAX_DECIMALS);
    if frac_part.len() > usize::from(decimals) {
        return Err(ParseDecimalError::TooManyDecimals);
    }
    let mut value: i128 = 0;
    for &b in int_part.iter().chain(frac_part) {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(i128::from(b - b'0')))
            .ok_or(ParseDecimalError::Overflow)?;
    }
    let pad = u32::from(decimals) - frac_part.len() as u32;
    value = value
        .checked_mul(10i128.pow(pad))
        .ok_or(ParseDecimalError::Overflow)?;
    Ok(value)
}

/// Prints a scaled integer with exactly `decimals` fractional digits (`12345, 2` -> `123.45`).
pub fn format_scaled(value: i128, decimals: u8) -> String {
    Scaled { value, decimals }.to_string()
}

/// A scaled integer that displays itself as a decimal, without allocating until written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scaled {
    /// The integer value in units of `10^-decimals`.
    pub value: i128,
    /// Number of fractional digits.
    pub decimals: u8,
}

impl fmt::Display for Scaled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.value < 0 { "-" } else { "" };
        let magnitude = self.value.unsigned_abs();
        if self.decimals == 0 {
            return write!(f, "{sign}{magnitude}");
        }
        let unit = 10u128.pow(u32::from(self.decimals));
        write!(
            f,
            "{sign}{}.{:0width$}",
            magnitude / unit,
            magnitude % unit,
            width = usize::from(self.decimals)
        )
    }
}

/// A price in ticks of `10^-market_precision` quote currency.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Price(pub i64);

/// An amount in lots of `10^-amount_precision` base currency.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Qty(pub i64);

/// Price x amount, in units of `10^-(market_precision + amount_precision)` quote currency.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Notional(pub i128);

impl Price {
    /// The notional value of `qty` at this price.
    #[inline]
    pub fn notional(self, qty: Qty) -> Notional {
        Notional(i128::from(self.0) * i128::from(qty.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_plain_and_fractional_values() {
        assert_eq!(parse_scaled("0", 2), Ok(0));
        assert_eq!(parse_scaled("123", 2), Ok(12300));
        assert_eq!(parse_scaled("123.4", 2), Ok(12340));
        assert_eq!(parse_scaled("123.45", 2), Ok(12345));
        assert_eq!(parse_scaled("0.00000001", 8), Ok(1));
        assert_eq!(parse_scaled("007.10", 2), Ok(710));
    }

    #[test]
    fn a_range_error_names_the_largest_value_and_a_precision_error_the_places() {
        let too_large = ParseDecimalError::Overflow;
        assert_eq!(parse_scaled("100000000000", 8), Err(too_large));
        assert_eq!(
            too_large.with_bound(8),
            "number too large (at most 92233720368.54775807)"
        );
        let too_fine = ParseDecimalError::TooManyDecimals;
        assert_eq!(parse_scaled("1.000000001", 8), Err(too_fine));
        assert_eq!(
            too_fine.with_bound(8),
            "too many decimal places (at most 8)"
        );
        assert_eq!(ParseDecimalError::Sign.with_bound(8), "sign not allowed");
    }

    #[test]
    fn rejects_each_bad_form_with_its_own_error() {
        use ParseDecimalError::*;
        let cases = [
            ("", Empty),
            ("-1", Sign),
            ("+1.5", Sign),
            ("1e5", Exponent),
            ("1E5", Exponent),
            ("1_000", Underscore),
            (" 1", Whitespace),
            ("1 ", Whitespace),
            ("1\t", Whitespace),
            ("1.", MalformedPoint),
            (".5", MalformedPoint),
            ("1.2.3", MalformedPoint),
            (".", MalformedPoint),
            ("1,5", InvalidCharacter),
            ("abc", InvalidCharacter),
            ("NaN", InvalidCharacter),
            ("1.234", TooManyDecimals),
            ("99999999999999999999", Overflow),
            ("9223372036854775807.01", Overflow),
        ];
        for (text, want) in cases {
            assert_eq!(parse_scaled(text, 2), Err(want), "input {text:?}");
        }
    }

    #[test]
    fn largest_value_parses_and_one_more_overflows() {
        assert_eq!(parse_scaled("9223372036854775807", 0), Ok(i64::MAX));
        assert_eq!(
            parse_scaled("9223372036854775808", 0),
            Err(ParseDecimalError::Overflow)
        );
        assert_eq!(
            parse_scaled("92233720368547758.08", 2),
            Err(ParseDecimalError::Overflow)
        );
    }

    #[test]
    fn prints_with_exact_precision() {
        assert_eq!(format_scaled(12345, 2), "123.45");
        assert_eq!(format_scaled(5, 3), "0.005");
        assert_eq!(format_scaled(100, 2), "1.00");
        assert_eq!(format_scaled(7, 0), "7");
        assert_eq!(format_scaled(-150, 2), "-1.50");
        assert_eq!(format_scaled(0, 4), "0.0000");
    }

    proptest! {
        #[test]
        fn print_then_parse_round_trips(value in 0i64..=i64::MAX, decimals in 0u8..=12) {
            let text = format_scaled(i128::from(value), decimals);
            prop_assert_eq!(parse_scaled(&text, decimals), Ok(value));
        }

        #[test]
        fn parse_agrees_with_rust_decimal_on_valid_input(int in 0u64..1_000_000_000, frac in 0u32..10_000) {
            let text = format!("{int}.{frac:04}");
            let ours = parse_scaled(&text, 4).map(|v| v as i128);
            let theirs: rust_decimal::Decimal = text.parse().map_err(|_| ()).unwrap_or_default();
            prop_assert_eq!(ours, Ok(theirs.mantissa()));
        }

        #[test]
        fn never_panics_on_arbitrary_text(text in ".{0,40}", decimals in 0u8..=30) {
            let _ = parse_scaled(&text, decimals);
        }
    }
}

/// Why a transfer amount was refused (spec section 7 texts: `amount is required.` and
/// `invalid amount.`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TransferAmountError {
    /// Empty or absent.
    #[error("amount is required.")]
    Missing,
    /// Anything else that is not a positive amount.
    #[error("invalid amount.")]
    Invalid,
}

/// Parses a transfer amount as spec 2.5 describes it: digits and at most one decimal
/// point, truncated (never rounded) to `keep` decimals as the spec says, returned in units of
/// `10^-scale` (`scale >= keep`). Zero is invalid. The spec's pattern `[0-9,.]` lets a comma
/// through, but `1,5` is one and a half to some users and fifteen to others, so any comma is
/// refused rather than read one way: an amount is never read as other than its writer meant.
pub fn parse_transfer_amount(text: &str, keep: u8, scale: u8) -> Result<i64, TransferAmountError> {
    if text.is_empty() {
        return Err(TransferAmountError::Missing);
    }
    if !text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(TransferAmountError::Invalid);
    }
    let (int_part, frac_part) = text.split_once('.').unwrap_or((text, ""));
    if frac_part.contains('.') || (int_part.is_empty() && frac_part.is_empty()) || keep > scale {
        return Err(TransferAmountError::Invalid);
    }
    let kept = &frac_part[..frac_part.len().min(usize::from(keep))];
    let mut value: i128 = 0;
    for b in int_part.bytes().chain(kept.bytes()) {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(i128::from(b - b'0')))
            .ok_or(TransferAmountError::Invalid)?;
    }
    let pad = u32::from(scale) - kept.len() as u32;
    let value = value
        .checked_mul(10i128.pow(pad))
        .and_then(|v| i64::try_from(v).ok())
        .ok_or(TransferAmountError::Invalid)?;
    if value == 0 {
        return Err(TransferAmountError::Invalid);
    }
    Ok(value)
}

#[cfg(test)]
mod transfer_amount_tests {
    use super::*;

    #[test]
    fn truncates_to_the_transfer_precision() {
        assert_eq!(parse_transfer_amount("1.123456789", 8, 8), Ok(112_345_678));
        assert_eq!(
            parse_transfer_amount("1.123456789", 8, 10),
            Ok(11_234_567_800)
        );
        assert_eq!(
            parse_transfer_amount("12.3456", 3, 3),
            Ok(12_345),
            "SHIB keeps 3 decimals"
        );
        for comma in ["1,5", "1,000.5", "1,000", ",5", "1.5,"] {
            assert_eq!(
                parse_transfer_amount(comma, 8, 8),
                Err(TransferAmountError::Invalid),
                "{comma}: a comma is refused, never dropped"
            );
        }
        assert_eq!(parse_transfer_amount(".5", 8, 8), Ok(50_000_000));
        assert_eq!(parse_transfer_amount("5.", 8, 8), Ok(500_000_000));
    }

    #[test]
    fn refuses_what_the_spec_refuses() {
        use TransferAmountError::*;
        for (text, want) in [
            ("", Missing),
            ("-1", Invalid),
            ("1e5", Invalid),
            ("abc", Invalid),
            (" 1", Invalid),
            ("1.2.3", Invalid),
            (".", Invalid),
            (",", Invalid),
            ("0", Invalid),
            ("0.000000001", Invalid),
            ("99999999999999999999999", Invalid),
        ] {
            assert_eq!(parse_transfer_amount(text, 8, 8), Err(want), "{text:?}");
        }
    }
}
