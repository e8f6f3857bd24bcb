//! Wire spellings, defined once: each enum an adapter reads or writes as text has one
//! spelling per value here ([`WireName`]), and REST, the streams, Python and FIX read
//! them from it instead of spelling the values again.

use crate::order::{OrderType, Side, StpMode, TimeInForce, TriggerRef};

/// An enum whose every value has one wire spelling.
pub trait WireName: Copy + Sized + 'static {
    /// What is spelled (in a refusal: "side", "order type").
    const WHAT: &'static str;
    /// Every value, in the order of their codes.
    const ALL: &'static [Self];
    /// The value's spelling.
    fn wire_name(self) -> &'static str;
    /// A short form clients also send for it (`GTC` for `GOOD_TILL_CANCELLED`), if any;
    /// read, never written.
    fn wire_alias(self) -> Option<&'static str> {
        None
    }
    /// The value spelled `text` (or its short form), if any.
    fn from_wire(text: &str) -> Option<Self> {
        (Self::ALL.iter().copied()).find(|v| v.wire_name() == text || v.wire_alias() == Some(text))
    }
    /// Every spelling, in the order of [`WireName::ALL`].
    fn wire_names() -> Vec<&'static str> {
        Self::ALL.iter().map(|v| v.wire_name()).collect()
    }
    /// Every spelling read: the spellings, then the short forms.
    fn wire_names_read() -> Vec<&'static str> {
        let aliases = Self::ALL.iter().filter_map(|v| v.wire_alias());
        Self::wire_names().into_iter().chain(aliases).collect()
    }
}

impl WireName for Side {
    const WHAT: &'static str = "side";
    const ALL: &'static [Self] = &[Self::Buy, Self::Sell];
    fn wire_name(self) -> &'static str {
        self.as_str()
    }
}

impl WireName for OrderType {
    const WHAT: &'static str = "order type";
    const ALL: &'static [Self] = &OrderType::ALL;
    fn wire_name(self) -> &'static str {
        self.as_str()
    }
}

impl WireName for TimeInForce {
    const WHAT: &'static str = "time in force";
    const ALL: &'static [Self] = &[
        Self::GoodTillCancelled,
        Self::ImmediateOrCancelled,
        Self::FillOrKill,
        Self::PostOnly,
        Self::GoodTillTime,
    ];
    fn wire_name(self) -> &'static str {
        self.as_str()
    }
    fn wire_alias(self) -> Option<&'static str> {
        Some(match self {
            Self::GoodTillCancelled => "GTC",
            Self::ImmediateOrCancelled => "IOC",
            Self::FillOrKill => "FOK",
            Self::PostOnly => "PO",
            Self::GoodTillTime => "GTT",
        })
    }
}

impl WireName for TriggerRef {
    const WHAT: &'static str = "trigger reference";
    const ALL: &'static [Self] = &[Self::LastPrice, Self::MarkPrice];
    fn wire_name(self) -> &'static str {
        self.as_str()
    }
}

impl WireName for StpMode {
    const WHAT: &'static str = "self-trade prevention";
    const ALL: &'static [Self] = &[
        Self::None,
        Self::CancelNewest,
        Self::CancelOldest,
        Self::CancelBoth,
    ];
    fn wire_name(self) -> &'static str {
        match self {
            Self::None => "NONE",
            Self::CancelNewest => "CANCEL_NEWEST",
            Self::CancelOldest => "CANCEL_OLDEST",
            Self::CancelBoth => "CANCEL_BOTH",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trips<T: WireName + PartialEq + std::fmt::Debug>() {
        let names = T::wire_names_read();
        let distinct: std::collections::BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(
            distinct.len(),
            names.len(),
            "{}: one spelling per value",
            T::WHAT
        );
        for &value in T::ALL {
            assert_eq!(T::from_wire(value.wire_name()), Some(value));
            if let Some(alias) = value.wire_alias() {
                assert_eq!(T::from_wire(alias), Some(value));
            }
        }
        assert_eq!(T::from_wire("NO_SUCH_VALUE"), None);
    }

    #[test]
    fn every_spelling_names_one_value() {
        round_trips::<Side>();
        round_trips::<OrderType>();
        round_trips::<TimeInForce>();
        round_trips::<TriggerRef>();
        round_trips::<StpMode>();
    }
}
