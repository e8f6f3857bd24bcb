//! A field added at the end of a saved record in a later format: an image written before
//! it existed simply ends where the field would start, and reads as the field's default.
//! Only for the last field of the outermost record (postcard writes no field names or
//! lengths, so an earlier field could not be told apart from what follows it); a file cut
//! short elsewhere is caught by its checksum before decoding.

use serde::{Deserialize, Deserializer};

/// Reads the field, or its default when the encoded record has ended.
pub fn deserialize<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(T::deserialize(deserializer).unwrap_or_default())
}
