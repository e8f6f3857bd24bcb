//! `parse_inputs`: every text parser that sees client input (decimals at every scale,
//! transfer amounts, times, enumerations, JSON bodies): each refuses or succeeds without
//! panicking, and a decimal that parses prints back to a text that parses to the same value.

use matchbook::fixed::{format_scaled, parse_scaled, parse_transfer_amount};

/// Runs every parser over the input as text.
pub fn parse_inputs(data: &[u8]) {
    let _ = matchbook_rest::body::Body::parse(data);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for decimals in [0u8, 2, 5, 8, 18, 30] {
        if let Ok(value) = parse_scaled(text, decimals) {
            assert!(value >= 0, "{text:?} parsed negative");
            let printed = format_scaled(i128::from(value), decimals);
            assert_eq!(
                parse_scaled(&printed, decimals).ok(),
                Some(value),
                "{text:?} -> {printed:?}"
            );
        }
        for keep in 0..=decimals.min(8) {
            if let Ok(value) = parse_transfer_amount(text, keep, decimals) {
                assert!(value > 0, "{text:?} transfer amount {value}");
            }
        }
    }
    for nanos in [false, true] {
        let _ = matchbook_rest::params::parse_time(text, nanos);
    }
    let _ = matchbook::AccountKind::parse(text);
    let _ = matchbook::InstrumentState::parse(text);
    let _ = matchbook::market::period::Unit::parse(text);
}
