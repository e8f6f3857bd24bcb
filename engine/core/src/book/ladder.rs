//! One side of a book as a price ladder: a dense window of 4,096 ticks around the touch with a
//! two-level bitset (best level and next level in O(1)), plus a sorted map for levels beyond
//! the window.
//!
//! Prices are handled as keys where a smaller key is a better price (asks: the price; bids:
//! the negated price), so one implementation serves both sides. Invariant: every outlier key
//! lies above the window, so the best level is the window's first set bit whenever the window
//! holds anything. The window is moved (`rebase`) when a level arrives below it or when it
//! empties while outliers remain; moves are rare in practice and cost O(levels moved).
//!
//! Each window slot also remembers the last order of its level, as a hint only (the level
//! record holds the truth): an order joining a level names the record it links behind
//! from the window line it reads anyway, so that record and the level's are fetched
//! together instead of one after the other.

use super::outliers::Outliers;
use crate::order::NIL;

/// Ticks covered by the dense window (64 words of 64 bits, one summary word).
pub(crate) const WINDOW: usize = 4096;
const WORDS: usize = WINDOW / 64;

/// The cached best key of a ladder that holds no level. No price reaches it: prices are
/// positive `i64` ticks, so keys lie strictly between `-i64::MAX` and `i64::MAX`.
const NO_BEST: i64 = i64::MAX;

fn no_best() -> i64 {
    NO_BEST
}

/// Levels of one side, keyed by better-is-smaller price keys, valued by level index.
#[derive(Debug, Clone, serde::Deserialize)]
pub(crate) struct Ladder {
    base: i64,
    #[serde(deserialize_with = "window_slots::deserialize")]
    /// A fixed-size array, not a slice: an index checked against the window (as every
    /// one is, to find it) then needs no second check against a length.
    slots: Box<[WindowSlot; WINDOW]>,
    #[serde(deserialize_with = "bitset_words::deserialize")]
    words: [u64; WORDS],
    summary: u64,
    window_len: usize,
    /// Key of the best level (`NO_BEST` when empty), kept by `insert` and `remove`: the
    /// best price, asked for several times a command (matching, top of book, post-only
    /// checks), is one load instead of a scan of the summary word and a bitset word.
    #[serde(skip, default = "no_best")]
    best: i64,
    outliers: Outliers,
    scratch: Vec<(i64, u32)>,
    /// Unused: kept so that snapshot format 6, which saved every field in order, decodes.
    #[allow(dead_code, reason = "read by format 6's decoder only")]
    scratch_keys: Vec<i64>,
}

/// One tick of the window: its level (`NIL`: none) and that level's last order, as last
/// noted (`NIL`: not known; a hint, never read as state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WindowSlot {
    level: u32,
    tail: u32,
}

/// A window tick without a level.
const EMPTY: WindowSlot = WindowSlot {
    level: NIL,
    tail: NIL,
};

/// A window of empty ticks, built on the heap (32 KB: not through the stack).
fn empty_window() -> Box<[WindowSlot; WINDOW]> {
    match vec![EMPTY; WINDOW].into_boxed_slice().try_into() {
        Ok(window) => window,
        Err(_) => unreachable!("a vector of WINDOW slots has WINDOW slots"),
    }
}

/// Snapshot format 6 (read only): the window's level slots as (tick, slot) pairs of the
/// occupied ticks. Format 7 saves a book's levels in priority order instead
/// (`crate::image::BookImage`) and rebuilds the window.
mod window_slots {
    use super::{WINDOW, WindowSlot, empty_window};

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Box<[WindowSlot; WINDOW]>, D::Error> {
        let occupied: Vec<(u16, u32)> = serde::Deserialize::deserialize(deserializer)?;
        let mut slots = empty_window();
        for (tick, level) in occupied {
            slots
                .get_mut(usize::from(tick))
                .ok_or_else(|| serde::de::Error::custom("window tick out of range"))?
                .level = level;
        }
        Ok(slots)
    }
}

/// Snapshot format 6 (read only): the fixed bitset (serde derives arrays only up to 32
/// elements).
mod bitset_words {
    use super::WORDS;

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<[u64; WORDS], D::Error> {
        let words: Vec<u64> = serde::Deserialize::deserialize(deserializer)?;
        words
            .try_into()
            .map_err(|_| serde::de::Error::custom("bitset of the wrong length"))
    }
}

impl Default for Ladder {
    fn default() -> Self {
        Self {
            base: 0,
            slots: empty_window(),
            words: [0; WORDS],
            summary: 0,
            window_len: 0,
            best: NO_BEST,
            outliers: Outliers::default(),
            scratch: Vec::new(),
            scratch_keys: Vec::new(),
        }
    }
}

impl Ladder {
    #[inline]
    fn window_index(&self, key: i64) -> Option<usize> {
        // One unsigned compare covers both ends: a key below the base wraps to an offset
        // past the window, as prices stay within `limits::MAX_PRICE` (10^18) and a
        // ladder's keys and base within 2^63 of each other.
        let offset = key.wrapping_sub(self.base);
        if (offset as u64) < WINDOW as u64 {
            Some(offset as usize)
        } else {
            None
        }
    }

    /// Number of levels.
    pub(crate) fn len(&self) -> usize {
        self.window_len + self.outliers.len()
    }

    /// Level index at `key`.
    #[inline(always)]
    pub(crate) fn get(&self, key: i64) -> Option<u32> {
        match self.window_index(key) {
            Some(i) => {
                let level = self.slots[i].level;
                (level != NIL).then_some(level)
            }
            None => self.outliers.get(key),
        }
    }

    /// The level at `key` and its last order, as last noted (`NIL`: no level in the
    /// window there, or not known). A hint: the level record says for sure.
    #[inline(always)]
    pub(crate) fn join_hint(&self, key: i64) -> (u32, u32) {
        match self.window_index(key) {
            Some(i) => (self.slots[i].level, self.slots[i].tail),
            None => (NIL, NIL),
        }
    }

    /// Notes `tail` as the last order of the level at `key` (nothing outside the window).
    #[inline(always)]
    pub(crate) fn note_tail(&mut self, key: i64, tail: u32) {
        if let Some(i) = self.window_index(key) {
            self.slots[i].tail = tail;
        }
    }

    /// Adds a level at a key that holds none; returns whether it is the new best.
    #[inline]
    pub(crate) fn insert(&mut self, key: i64, level: u32) -> bool {
        if self.window_len == 0 && self.outliers.is_empty() {
            self.base = key - (WINDOW as i64) / 4;
        } else if key < self.base {
            self.rebase(key - (WINDOW as i64) / 4);
        }
        match self.window_index(key) {
            Some(i) => self.set(i, level),
            None => {
                self.outliers.insert(key, level);
            }
        }
        let better = key < self.best;
        self.best = self.best.min(key);
        better
    }

    /// Removes the level at `key` (which must exist); returns whether it was the best.
    #[inline]
    pub(crate) fn remove(&mut self, key: i64) -> bool {
        match self.window_index(key) {
            Some(i) => {
                self.clear(i);
                if self.window_len == 0
                    && let Some((first, _)) = self.outliers.first()
                {
                    self.rebase(first - (WINDOW as i64) / 4);
                }
            }
            None => {
                self.outliers.remove(key);
            }
        }
        let was_best = key == self.best;
        if was_best {
            self.best = self.scan_first().map_or(NO_BEST, |(k, _)| k);
        }
        was_best
    }

    /// Best (smallest-key) level.
    #[inline(always)]
    pub(crate) fn first(&self) -> Option<(i64, u32)> {
        let key = self.first_key()?;
        // The best level lies in the window whenever the ladder holds one (module doc).
        match self.window_index(key) {
            Some(i) => Some((key, self.slots[i].level)),
            None => self.outliers.first(),
        }
    }

    /// Best (smallest) key, without reading the level.
    #[inline(always)]
    pub(crate) fn first_key(&self) -> Option<i64> {
        (self.best != NO_BEST).then_some(self.best)
    }

    /// Best level found from the bitset and the outliers, not the cached key.
    fn scan_first(&self) -> Option<(i64, u32)> {
        if self.summary != 0 {
            let w = self.summary.trailing_zeros() as usize;
            let i = w * 64 + self.words[w].trailing_zeros() as usize;
            return Some((self.base + i as i64, self.slots[i].level));
        }
        self.outliers.first()
    }

    /// Sets the cached best key from the levels held (after a decoder filled them in
    /// without `insert`).
    pub(crate) fn recompute_best(&mut self) {
        self.best = self.scan_first().map_or(NO_BEST, |(k, _)| k);
    }

    /// The first level with a key strictly greater than `key`.
    #[inline]
    pub(crate) fn next_after(&self, key: i64) -> Option<(i64, u32)> {
        if let Some(i) = self.window_index(key) {
            if let Some(j) = self.next_set_after(i) {
                return Some((self.base + j as i64, self.slots[j].level));
            }
            return self.outliers.first();
        }
        self.outliers.next_after(key)
    }

    /// Levels in priority order, best first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (i64, u32)> + '_ {
        let mut cursor = self.first();
        std::iter::from_fn(move || {
            let here = cursor?;
            cursor = self.next_after(here.0);
            Some(here)
        })
    }

    #[inline]
    fn set(&mut self, i: usize, level: u32) {
        self.slots[i] = WindowSlot { level, tail: NIL };
        self.words[i / 64] |= 1 << (i % 64);
        self.summary |= 1 << (i / 64);
        self.window_len += 1;
    }

    #[inline]
    fn clear(&mut self, i: usize) {
        self.slots[i] = EMPTY;
        let w = i / 64;
        self.words[w] &= !(1 << (i % 64));
        if self.words[w] == 0 {
            self.summary &= !(1 << w);
        }
        self.window_len -= 1;
    }

    #[inline]
    fn next_set_after(&self, i: usize) -> Option<usize> {
        let start = i + 1;
        if start >= WINDOW {
            return None;
        }
        let w = start / 64;
        let in_word = self.words[w] & (!0u64 << (start % 64));
        if in_word != 0 {
            return Some(w * 64 + in_word.trailing_zeros() as usize);
        }
        let above = if w + 1 >= WORDS {
            0
        } else {
            self.summary & (!0u64 << (w + 1))
        };
        if above == 0 {
            return None;
        }
        let w2 = above.trailing_zeros() as usize;
        Some(w2 * 64 + self.words[w2].trailing_zeros() as usize)
    }

    /// Every (key, level) the ladder holds, best first, after checking that the window's
    /// slots, bitset, summary word and count agree and that every outlier lies above the
    /// window: the shape the O(1) lookups rely on, which a decoded snapshot must have.
    pub(crate) fn checked_entries(&self) -> Result<Vec<(i64, u32)>, String> {
        if self.base > i64::MAX - WINDOW as i64 || self.window_len > WINDOW {
            return Err("ladder window out of shape".into());
        }
        // Sized from what is there, never from a decoded count.
        let mut entries = Vec::with_capacity(self.window_len + self.outliers.len());
        for (w, &word) in self.words.iter().enumerate() {
            if (word != 0) != ((self.summary >> w) & 1 == 1) {
                return Err("ladder summary disagrees with its bitset".into());
            }
            for bit in 0..64 {
                let i = w * 64 + bit;
                let occupied = self.slots[i].level != NIL;
                if occupied != ((word >> bit) & 1 == 1) {
                    return Err("ladder bitset disagrees with its slots".into());
                }
                if occupied {
                    entries.push((self.base + i as i64, self.slots[i].level));
                }
            }
        }
        if entries.len() != self.window_len {
            return Err("ladder level count disagrees with its window".into());
        }
        let end = self.base + WINDOW as i64;
        for (key, level) in self.outliers.iter() {
            if key < end || level == NIL {
                return Err("ladder outlier inside or below the window".into());
            }
            entries.push((key, level));
        }
        if self.first_key() != entries.first().map(|&(k, _)| k) {
            return Err("ladder best key disagrees with its levels".into());
        }
        Ok(entries)
    }

    /// Clears the bitset without touching the slots (integrity tests corrupt it).
    #[cfg(test)]
    pub(crate) fn clear_bits_for_test(&mut self) {
        self.words = [0; WORDS];
        self.summary = 0;
    }

    /// Moves the window to start at `new_base`, re-homing every level.
    fn rebase(&mut self, new_base: i64) {
        let mut moved = std::mem::take(&mut self.scratch);
        moved.clear();
        while self.summary != 0 {
            let w = self.summary.trailing_zeros() as usize;
            let i = w * 64 + self.words[w].trailing_zeros() as usize;
            moved.push((self.base + i as i64, self.slots[i].level));
            self.clear(i);
        }
        self.base = new_base;
        let end = new_base.saturating_add(WINDOW as i64);
        self.outliers.take_range(new_base, end, &mut moved);
        for &(key, level) in &moved {
            match self.window_index(key) {
                Some(i) => self.set(i, level),
                None => {
                    self.outliers.insert(key, level);
                }
            }
        }
        self.scratch = moved;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// The ladder behaves as a sorted map under any insert/remove mix, including keys far
        /// outside the window that force rebases.
        #[test]
        fn behaves_like_a_sorted_map(ops in proptest::collection::vec((any::<bool>(), -20_000i64..20_000), 1..400)) {
            let mut ladder = Ladder::default();
            let mut model: BTreeMap<i64, u32> = BTreeMap::new();
            for (n, (insert, key)) in ops.into_iter().enumerate() {
                if insert && !model.contains_key(&key) {
                    ladder.insert(key, n as u32);
                    model.insert(key, n as u32);
                } else if !insert && let Some((&k, _)) = model.range(key..).next() {
                    ladder.remove(k);
                    model.remove(&k);
                }
                prop_assert_eq!(ladder.len(), model.len());
                prop_assert_eq!(ladder.first(), model.first_key_value().map(|(&k, &v)| (k, v)));
                prop_assert_eq!(ladder.first_key(), model.first_key_value().map(|(&k, _)| k));
                prop_assert_eq!(ladder.checked_entries().map(|e| e.len()), Ok(model.len()));
                let all: Vec<_> = ladder.iter().collect();
                let want: Vec<_> = model.iter().map(|(&k, &v)| (k, v)).collect();
                prop_assert_eq!(all, want);
                for (&k, &v) in &model {
                    prop_assert_eq!(ladder.get(k), Some(v));
                }
            }
        }
    }
}
