//! Identifiers: small integer handles used inside the engine, the time type, and the
//! deterministic UUIDs that name orders and trades at the edges.
//!
//! An order's UUID carries its store slot and its order number, so resolving a UUID back to
//! the order needs no hash table: decode, index the store, compare the order number.

use std::fmt;
use std::str::FromStr;

/// An account (main account or subaccount).
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
pub struct AccountId(pub u32);

/// An account holder: owns a main account and its subaccounts.
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
pub struct HolderId(pub u32);

/// An instrument, as its index in the engine's instrument table.
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
pub struct InstrumentId(pub u16);

/// A currency, interned at start-up to its index in the currency table.
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
pub struct CurrencyId(pub u16);

/// Nanoseconds since the Unix epoch. Time is an input to the engine, never read from a clock.
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
pub struct Timestamp(pub i64);

impl Timestamp {
    /// Milliseconds since the epoch (floor).
    pub const fn millis(self) -> i64 {
        self.0.div_euclid(1_000_000)
    }
    /// Builds a timestamp from milliseconds since the epoch.
    pub const fn from_millis(ms: i64) -> Self {
        Self(ms.saturating_mul(1_000_000))
    }
}

/// A live handle to an order: its engine-wide order number plus the store slot it occupies.
/// The number is unique over the engine's life; the slot is reused after the order ends.
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
pub struct OrderRef {
    /// Order number, 1-based, assigned in acceptance order.
    pub id: u64,
    /// Store slot while the order is live.
    pub slot: u32,
}

/// A trade number, 1-based, assigned in execution order.
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
pub struct TradeId(pub u64);

const KIND_ORDER: u128 = 1;
const KIND_TRADE: u128 = 2;
const KIND_TRANSFER: u128 = 3;
const KIND_ACCOUNT: u128 = 4;
const KIND_HOLDER: u128 = 5;

/// A 128-bit UUID (RFC 9562 version 8 layout) printed in the usual 8-4-4-4-12 form.
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
pub struct Uuid(pub u128);

/// Why a UUID string or value was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UuidError {
    /// Not 36 characters of hex digits and dashes in the 8-4-4-4-12 layout.
    #[error("malformed uuid")]
    Malformed,
    /// A well-formed UUID that this engine did not issue (or issued for another kind).
    #[error("uuid not issued by this engine")]
    Foreign,
}

impl Uuid {
    /// Spreads a 122-bit payload around the version (8) and variant (0b10) bits.
    const fn from_payload(p: u128) -> Self {
        let low = p & ((1 << 62) - 1);
        let mid = (p >> 62) & 0xfff;
        let high = p >> 74;
        Self(low | (0b10 << 62) | (mid << 64) | (8 << 76) | (high << 80))
    }

    /// Inverse of [`Uuid::from_payload`]; `None` when version or variant bits differ.
    const fn payload(self) -> Option<u128> {
        let v = self.0;
        if (v >> 76) & 0xf != 8 || (v >> 62) & 0b11 != 0b10 {
            return None;
        }
        Some((v & ((1 << 62) - 1)) | (((v >> 64) & 0xfff) << 62) | ((v >> 80) << 74))
    }

    fn encode(kind: u128, number: u64, slot: u32) -> Self {
        Self::from_payload(u128::from(number) | (u128::from(slot) << 64) | (kind << 96))
    }

    fn decode(self, kind: u128) -> Result<(u64, u32), UuidError> {
        let p = self.payload().ok_or(UuidError::Foreign)?;
        if (p >> 96) != kind {
            return Err(UuidError::Foreign);
        }
        Ok((p as u64, (p >> 64) as u32))
    }

    /// The number inside a UUID of `kind` that names no slot (trades, accounts, holders):
    /// one with slot bits set was never issued, and must not alias the one without them.
    fn decode_number(self, kind: u128) -> Result<u64, UuidError> {
        match self.decode(kind)? {
            (number, 0) => Ok(number),
            _ => Err(UuidError::Foreign),
        }
    }

    /// The UUID of an order.
    pub fn of_order(order: OrderRef) -> Self {
        Self::encode(KIND_ORDER, order.id, order.slot)
    }
    /// The order handle inside an order UUID.
    pub fn order_ref(self) -> Result<OrderRef, UuidError> {
        self.decode(KIND_ORDER)
            .map(|(id, slot)| OrderRef { id, slot })
    }
    /// The UUID of a trade.
    pub fn of_trade(trade: TradeId) -> Self {
        Self::encode(KIND_TRADE, trade.0, 0)
    }
    /// The trade number inside a trade UUID.
    pub fn trade_id(self) -> Result<TradeId, UuidError> {
        self.decode_number(KIND_TRADE).map(TradeId)
    }
    /// The UUID of a transfer number.
    pub fn of_transfer(number: u64) -> Self {
        Self::encode(KIND_TRANSFER, number, 0)
    }

    /// The UUID of an account.
    pub fn of_account(account: AccountId) -> Self {
        Self::encode(KIND_ACCOUNT, u64::from(account.0), 0)
    }

    /// The account inside an account UUID.
    pub fn account_id(self) -> Result<AccountId, UuidError> {
        u32::try_from(self.decode_number(KIND_ACCOUNT)?)
            .map(AccountId)
            .map_err(|_| UuidError::Foreign)
    }

    /// The UUID of an account holder.
    pub fn of_holder(holder: HolderId) -> Self {
        Self::encode(KIND_HOLDER, u64::from(holder.0), 0)
    }

    /// The holder inside a holder UUID.
    pub fn holder_id(self) -> Result<HolderId, UuidError> {
        u32::try_from(self.decode_number(KIND_HOLDER)?)
            .map(HolderId)
            .map_err(|_| UuidError::Foreign)
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            (v >> 96) as u32,
            (v >> 80) as u16,
            (v >> 64) as u16,
            (v >> 48) as u16,
            (v & 0xffff_ffff_ffff) as u64
        )
    }
}

impl FromStr for Uuid {
    type Err = UuidError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bytes = text.as_bytes();
        if bytes.len() != 36 {
            return Err(UuidError::Malformed);
        }
        let mut value: u128 = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let dash_here = matches!(i, 8 | 13 | 18 | 23);
            if dash_here {
                if b != b'-' {
                    return Err(UuidError::Malformed);
                }
                continue;
            }
            let digit = (b as char).to_digit(16).ok_or(UuidError::Malformed)?;
            value = (value << 4) | u128::from(digit);
        }
        Ok(Self(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn order_uuid_round_trips_through_text(id in any::<u64>(), slot in any::<u32>()) {
            let order = OrderRef { id, slot };
            let uuid = Uuid::of_order(order);
            let text = uuid.to_string();
            let back: Uuid = text.parse().expect("own output parses");
            prop_assert_eq!(back, uuid);
            prop_assert_eq!(back.order_ref(), Ok(order));
            prop_assert_eq!(back.trade_id(), Err(UuidError::Foreign));
            prop_assert_eq!(&text[14..15], "8");
        }
    }

    #[test]
    fn rejects_malformed_and_foreign_uuids() {
        assert_eq!("xyz".parse::<Uuid>(), Err(UuidError::Malformed));
        assert_eq!(
            "123e4567e89b-12d3-a456-4266141740000".parse::<Uuid>(),
            Err(UuidError::Malformed)
        );
        let v4: Uuid = "123e4567-e89b-42d3-a456-426614174000"
            .parse()
            .expect("valid");
        assert_eq!(v4.order_ref(), Err(UuidError::Foreign));
        let account = Uuid::of_account(AccountId(7));
        assert_eq!(account.account_id(), Ok(AccountId(7)));
        assert_eq!(account.holder_id(), Err(UuidError::Foreign));
        assert_eq!(Uuid::of_holder(HolderId(3)).holder_id(), Ok(HolderId(3)));
        let trade = Uuid::of_trade(TradeId(42));
        assert_eq!(trade.trade_id(), Ok(TradeId(42)));
        assert_eq!(trade.order_ref(), Err(UuidError::Foreign));
    }

    /// Trade, account and holder UUIDs carry no slot: one with slot bits set used to
    /// decode to the same number as the UUID issued, so two strings named one trade.
    #[test]
    fn a_uuid_of_a_numbered_kind_with_slot_bits_is_foreign() {
        let with_slot = |kind, number| Uuid::encode(kind, number, 1);
        assert_eq!(
            with_slot(KIND_TRADE, 42).trade_id(),
            Err(UuidError::Foreign)
        );
        assert_eq!(
            with_slot(KIND_ACCOUNT, 7).account_id(),
            Err(UuidError::Foreign)
        );
        assert_eq!(
            with_slot(KIND_HOLDER, 3).holder_id(),
            Err(UuidError::Foreign)
        );
        assert_eq!(
            with_slot(KIND_ORDER, 9).order_ref(),
            Ok(OrderRef { id: 9, slot: 1 })
        );
    }

    #[test]
    fn timestamp_converts_to_millis() {
        assert_eq!(Timestamp(1_999_999).millis(), 1);
        assert_eq!(Timestamp::from_millis(5).0, 5_000_000);
    }
}
