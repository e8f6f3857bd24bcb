//! Serde for hash maps as a list sorted by key, so that two equal maps encode to the same
//! bytes whatever order their tables happen to hold them in (snapshots of equal states are
//! equal byte for byte).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Writes the entries sorted by key.
pub fn serialize<K, V, H, S>(map: &HashMap<K, V, H>, serializer: S) -> Result<S::Ok, S::Error>
where
    K: Serialize + Ord,
    V: Serialize,
    S: Serializer,
{
    let mut entries: Vec<(&K, &V)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries.serialize(serializer)
}

/// Reads the entries back into a map.
pub fn deserialize<'de, K, V, H, D>(deserializer: D) -> Result<HashMap<K, V, H>, D::Error>
where
    K: Deserialize<'de> + Eq + Hash,
    V: Deserialize<'de>,
    H: BuildHasher + Default,
    D: Deserializer<'de>,
{
    let entries: Vec<(K, V)> = Vec::deserialize(deserializer)?;
    let mut map = HashMap::with_capacity_and_hasher(entries.len(), H::default());
    map.extend(entries);
    Ok(map)
}
