//! Deterministic hashing: a fixed (unseeded) hasher for lookup tables whose order is never
//! observed, and the streaming state hasher behind `Engine::state_hash`.

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
