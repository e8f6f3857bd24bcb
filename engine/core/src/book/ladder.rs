//! One side of a book as a price ladder: a dense window of 4,096 ticks around the touch with a
//! two-level bitset (best level and next level in O(1)), plus two sorted maps for the levels
//! outside it: those better than the window (`ahead`) and those past it (`outliers`).
//!
//! Prices are handled as keys where a smaller key is a better price (asks: the price; bids:
//! the negated price), so one implementation serves both sides. Invariant: every `ahead` key
//! lies below the window and every outlier key above it. The window follows the best level
//! (`recentre`) when the best leaves it, but no faster than levels are added and removed: a
//! move costs the levels it carries between the window and the maps, and is made only when
//! the ladder's operations since the last one have paid for it (beyond a small free
//! allowance). So no order, however far inside the spread, can make each command re-file the
//! whole window (a bid far above the best, placed and cancelled in a loop, did that: two moves
//! of every level a command), while a market that moves for good takes the window with it,
//! as the levels it adds on the way pay for the levels left behind.
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

/// Levels a window move may carry between the window and the maps without credit: a small
/// window follows the best at once, as it always did.
const FREE_MOVES: usize = 64;

/// The most credit kept: enough for any one move (every level of the window out, a window's
/// worth in), so a spell of ladder operations cannot bank moves for a burst of them.
const MAX_CREDIT: u64 = 2 * WINDOW as u64;

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
    /// Levels past the window.
    outliers: Outliers,
    scratch: Vec<(i64, u32)>,
    /// Unused: kept so that snapshot format 6, which saved every field in order, decodes.
    #[allow(dead_code, reason = "read by format 6's decoder only")]
    scratch_keys: Vec<i64>,
    /// Levels better than the window.
    #[serde(skip)]
    ahead: Outliers,
    /// Levels added and removed, ever (wrapping).
    #[serde(skip)]
    operations: u64,
    /// The count of `operations` before which no move is priced again.
    #[serde(skip)]
    retry_at: u64,
    /// Where in `operations` the credit for window moves starts: the credit is what came
    /// after it, at most `MAX_CREDIT`.
    #[serde(skip)]
    spent: u64,
    /// Levels carried between the window and the maps by window moves, ever.
    #[serde(skip)]
    carried: u64,
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
            ahead: Outliers::default(),
            operations: 0,
            retry_at: 0,
            spent: 0,
            carried: 0,
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
        self.window_len + self.ahead.len() + self.outliers.len()
    }

    /// The map that holds `key` when the window does not: `ahead` below it, else `outliers`.
    fn side_map(&self, key: i64) -> &Outliers {
        if key < self.base {
            &self.ahead
        } else {
            &self.outliers
        }
    }

    fn side_map_mut(&mut self, key: i64) -> &mut Outliers {
        if key < self.base {
            &mut self.ahead
        } else {
            &mut self.outliers
        }
    }

    /// Level index at `key`.
    #[inline(always)]
    pub(crate) fn get(&self, key: i64) -> Option<u32> {
        match self.window_index(key) {
            Some(i) => {
                let level = self.slots[i].level;
                (level != NIL).then_some(level)
            }
            None => self.side_map(key).get(key),
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
        self.operations = self.operations.wrapping_add(1);
        if self.best == NO_BEST {
            self.base = key - (WINDOW as i64) / 4;
        }
        let better = key < self.best;
        self.best = self.best.min(key);
        match self.window_index(key) {
            Some(i) => self.set(i, level),
            None => {
                self.side_map_mut(key).insert(key, level);
                self.follow_best();
            }
        }
        better
    }

    /// Removes the level at `key` (which must exist); returns whether it was the best.
    #[inline]
    pub(crate) fn remove(&mut self, key: i64) -> bool {
        self.operations = self.operations.wrapping_add(1);
        let was_best = key == self.best;
        let in_window = match self.window_index(key) {
            Some(i) => {
                self.clear(i);
                true
            }
            None => {
                self.side_map_mut(key).remove(key);
                false
            }
        };
        if was_best {
            self.best = self.scan_first().map_or(NO_BEST, |(k, _)| k);
        }
        // A map was used, or the window emptied: the best may lie outside it.
        if !in_window || self.window_len == 0 {
            self.follow_best();
        }
        was_best
    }

    /// Moves the window to the best level when the best lies outside it and the move is
    /// paid for.
    #[cold]
    #[inline(never)]
    fn follow_best(&mut self) {
        if self.best != NO_BEST && self.window_index(self.best).is_none() {
            self.recentre();
        }
    }

    /// Moves the window to put the best level a quarter of the way in, if the credit covers
    /// the levels the move carries between the window and the maps. A move found too dear
    /// is not priced again until the credit could have grown to cover it: pricing reads the
    /// bitset and the maps, which no command should do each time.
    fn recentre(&mut self) {
        if self.retry_at.wrapping_sub(self.operations) as i64 > 0 {
            return;
        }
        let base = self.best - (WINDOW as i64) / 4;
        let end = base + WINDOW as i64;
        let credit = self.operations.wrapping_sub(self.spent).min(MAX_CREDIT) as usize;
        let room = credit + FREE_MOVES;
        let leaving = self.window_len - self.window_count_in(base, end);
        // Counted one past the room at most: enough to tell that the move is not paid for.
        let arriving = (self.ahead.count_range(base, end, room + 1))
            + (self.outliers.count_range(base, end, room + 1));
        let cost = leaving + arriving;
        if cost <= room {
            let left = credit.saturating_sub(cost) as u64;
            self.spent = self.operations.wrapping_sub(left);
            self.carried += cost as u64;
            self.rebase(base);
        } else {
            self.retry_at = self.operations.wrapping_add((cost - room) as u64);
        }
    }

    /// Window levels whose keys lie in `low..high`, counted a bitset word at a time.
    fn window_count_in(&self, low: i64, high: i64) -> usize {
        let end = self.base + WINDOW as i64;
        let to = (high.clamp(self.base, end) - self.base) as usize;
        let mut i = (low.clamp(self.base, end) - self.base) as usize;
        let mut count = 0;
        while i < to {
            let word_end = (i / 64 + 1) * 64;
            let width = word_end.min(to) - i;
            let bits = self.words[i / 64] >> (i % 64);
            let mask = if width == 64 { !0 } else { (1u64 << width) - 1 };
            count += (bits & mask).count_ones() as usize;
            i += width;
        }
        count
    }

    /// Levels carried between the window and the maps by window moves so far.
    #[cfg(test)]
    pub(crate) fn carried(&self) -> u64 {
        self.carried
    }

    /// Best (smallest-key) level.
    #[inline(always)]
    pub(crate) fn first(&self) -> Option<(i64, u32)> {
        let key = self.first_key()?;
        match self.window_index(key) {
            Some(i) => Some((key, self.slots[i].level)),
            None => self.side_map(key).first(),
        }
    }

    /// Best (smallest) key, without reading the level.
    #[inline(always)]
    pub(crate) fn first_key(&self) -> Option<i64> {
        (self.best != NO_BEST).then_some(self.best)
    }

    /// Best level found from the maps and the bitset, not the cached key.
    fn scan_first(&self) -> Option<(i64, u32)> {
        (self.ahead.first())
            .or_else(|| self.window_first())
            .or_else(|| self.outliers.first())
    }

    /// The window's best level.
    fn window_first(&self) -> Option<(i64, u32)> {
        if self.summary == 0 {
            return None;
        }
        let w = self.summary.trailing_zeros() as usize;
        let i = w * 64 + self.words[w].trailing_zeros() as usize;
        Some((self.base + i as i64, self.slots[i].level))
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
        if key < self.base {
            return (self.ahead.next_after(key))
                .or_else(|| self.window_first())
                .or_else(|| self.outliers.first());
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
    /// slots, bitset, summary word and count agree and that every map entry lies on its side
    /// of the window: the shape the O(1) lookups rely on, which a decoded snapshot must have.
    pub(crate) fn checked_entries(&self) -> Result<Vec<(i64, u32)>, String> {
        if self.base > i64::MAX - WINDOW as i64 || self.window_len > WINDOW {
            return Err("ladder window out of shape".into());
        }
        // Sized from what is there, never from a decoded count.
        let mut entries = Vec::with_capacity(self.len());
        for (key, level) in self.ahead.iter() {
            if key >= self.base || level == NIL {
                return Err("ladder level ahead of the window lies in it".into());
            }
            entries.push((key, level));
        }
        let ahead = entries.len();
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
        if entries.len() - ahead != self.window_len {
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

    /// Empties the window into `into`, best first, a bitset word at a time.
    fn drain_window(&mut self, into: &mut Vec<(i64, u32)>) {
        while self.summary != 0 {
            let w = self.summary.trailing_zeros() as usize;
            let mut word = std::mem::take(&mut self.words[w]);
            while word != 0 {
                let i = w * 64 + word.trailing_zeros() as usize;
                into.push((self.base + i as i64, self.slots[i].level));
                self.slots[i] = EMPTY;
                word &= word - 1;
            }
            self.summary &= !(1 << w);
        }
        self.window_len = 0;
    }

    /// Moves the window to start at `new_base`, re-homing every level: the window's levels
    /// that fall before or past the new window go to the maps as runs (they lie between
    /// what each map keeps), the maps' levels inside it to the window.
    fn rebase(&mut self, new_base: i64) {
        let mut moved = std::mem::take(&mut self.scratch);
        moved.clear();
        self.drain_window(&mut moved);
        let from_window = moved.len();
        self.base = new_base;
        let end = new_base.saturating_add(WINDOW as i64);
        self.ahead.take_range(new_base, end, &mut moved);
        self.outliers.take_range(new_base, end, &mut moved);
        let before = moved[..from_window].partition_point(|e| e.0 < new_base);
        let past = moved[..from_window].partition_point(|e| e.0 < end);
        self.ahead.insert_run(&moved[..before]);
        self.outliers.insert_run(&moved[past..from_window]);
        for &(key, level) in moved[before..past].iter().chain(&moved[from_window..]) {
            match self.window_index(key) {
                Some(i) => self.set(i, level),
                // Not reached (these keys lie in the new window); kept rather than lost.
                None => self.side_map_mut(key).insert(key, level),
            }
        }
        self.scratch = moved;
    }
}

#[cfg(test)]
mod tests;
