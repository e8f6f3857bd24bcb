//! Serde for `Decimal` as its exact 16-byte form: `rust_decimal`'s own serde reads back
//! through `deserialize_any` (text or number), which a compact binary format cannot offer.

use rust_decimal::Decimal;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Writes the 16 bytes.
pub fn serialize<S: Serializer>(value: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
    value.serialize().serialize(serializer)
}

/// Reads the 16 bytes back (any bit pattern is some decimal; out-of-range scales clamp).
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Decimal, D::Error> {
    <[u8; 16]>::deserialize(deserializer).map(Decimal::deserialize)
}
