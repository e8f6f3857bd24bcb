//! Hashing: a fixed (unseeded) hasher for lookup tables keyed by the engine's own small
//! integers, a keyed one for tables keyed by what clients choose, and the streaming state
//! hasher behind `Engine::state_hash`. Neither table's order is ever observed (snapshots
//! and the state hash sort their entries), so a per-process seed changes no output.

use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hasher with no random seed, for small integer keys.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

const K: u64 = 0x517c_c1b7_2722_0a95;

impl Hasher for IdHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(K);
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

/// `BuildHasher` for [`IdHasher`].
pub type IdBuildHasher = BuildHasherDefault<IdHasher>;

/// `BuildHasher` for keys a client chooses (client order ids): SipHash with a random key
/// per table, so nobody can construct ids that all land in one bucket. [`IdHasher`] is
/// not safe there: it is invertible step by step, and ids that collide completely are
/// computed in two lines (see the test below).
pub type ClientKeyBuildHasher = std::hash::RandomState;

/// FNV-1a over a canonical byte encoding of the state: stable across runs and platforms.
#[derive(Debug, Clone, Copy)]
pub struct StateHasher(u64);

impl Default for StateHasher {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl StateHasher {
    /// Adds bytes.
    pub fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    /// Adds an integer (little-endian, fixed width).
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    /// Adds a signed integer.
    pub fn i64(&mut self, v: i64) {
        self.bytes(&v.to_le_bytes());
    }
    /// Adds a wide integer.
    pub fn i128(&mut self, v: i128) {
        self.bytes(&v.to_le_bytes());
    }
    /// Adds an optional integer with a presence tag.
    pub fn opt_i64(&mut self, v: Option<i64>) {
        match v {
            None => self.bytes(&[0]),
            Some(x) => {
                self.bytes(&[1]);
                self.i64(x);
            }
        }
    }
    /// The digest so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{AccountId, Uuid};
    use std::hash::BuildHasher;

    /// Client ids that all hash alike under [`IdHasher`] for one account: the low word is
    /// free, the high word cancels what the low word did to the state.
    fn colliding_ids(account: u32, n: u64) -> Vec<Uuid> {
        let step = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(K);
        let after_account = step(0, u64::from(account));
        (0..n)
            .map(|lo| {
                let hi = step(after_account, lo).rotate_left(5) ^ 0x5eed;
                Uuid((u128::from(hi) << 64) | u128::from(lo))
            })
            .collect()
    }

    #[test]
    fn crafted_client_ids_collide_under_the_fixed_hasher_but_not_under_the_keyed_one() {
        let ids = colliding_ids(7, 1_000);
        let fixed = IdBuildHasher::default();
        let first = fixed.hash_one((AccountId(7), ids[0]));
        assert!(
            ids.iter()
                .all(|&id| fixed.hash_one((AccountId(7), id)) == first),
            "the construction collides under the fixed hasher"
        );
        let keyed = ClientKeyBuildHasher::default();
        let distinct: std::collections::BTreeSet<u64> = ids
            .iter()
            .map(|&id| keyed.hash_one((AccountId(7), id)))
            .collect();
        assert_eq!(
            distinct.len(),
            ids.len(),
            "no collision under the keyed hasher"
        );
    }

    #[test]
    fn the_engine_indexes_client_ids_with_the_keyed_hasher() {
        // The client-id table of an engine: its hasher must not be the fixed one.
        let engine = crate::Engine::new(crate::demo::config()).expect("demo");
        let ids = colliding_ids(0, 64);
        let distinct: std::collections::BTreeSet<u64> = ids
            .iter()
            .map(|&id| engine.client_index_hasher().hash_one((AccountId(0), id)))
            .collect();
        assert_eq!(distinct.len(), ids.len());
    }
}
