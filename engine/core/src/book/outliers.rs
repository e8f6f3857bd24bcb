//! The levels of one side that lie beyond its ladder's dense window: an ordered map from
//! price key (smaller is better) to level index that does not allocate in steady state. The
//! keys are kept sorted in fixed chunks of [`CHUNK`] (a chunk splits when full and is
//! recycled when empty), the chunks in a sorted list of their ids: an insert or a removal
//! moves at most a chunk's entries and a list of chunk ids, and memory is taken only when
//! the map grows past its largest size so far. An ordered tree allocated a node on every
//! split; one sorted vector moved half the far levels on every insert.

/// Entries per chunk.
const CHUNK: usize = 64;
/// Chunks the first insert makes room for (64 KiB).
const FIRST_ROOM: usize = 64;
/// Entries per chunk laid down by a run: room left for inserts before a split.
const FILL: usize = CHUNK * 3 / 4;

#[derive(Debug, Clone)]
struct Chunk {
    len: usize,
    entries: [(i64, u32); CHUNK],
}

impl Chunk {
    fn keys(&self) -> &[(i64, u32)] {
        &self.entries[..self.len]
    }

    fn search(&self, key: i64) -> Result<usize, usize> {
        self.keys().binary_search_by(|e| e.0.cmp(&key))
    }
}

const EMPTY_CHUNK: Chunk = Chunk {
    len: 0,
    entries: [(0, 0); CHUNK],
};

/// Levels beyond the window, ordered by key.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outliers {
    /// Every chunk ever used; those not in `order` are free.
    chunks: Vec<Chunk>,
    /// Ids of the chunks in use, in key order (each non-empty).
    order: Vec<u32>,
    free: Vec<u32>,
    len: usize,
}

impl Outliers {
    /// Number of levels.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn chunk(&self, position: usize) -> &Chunk {
        &self.chunks[self.order[position] as usize]
    }

    /// Position in `order` of the chunk that holds `key` or would take it: the last chunk
    /// whose first key is at most `key` (the first chunk for a smaller key).
    fn position(&self, key: i64) -> usize {
        let after = self.order.partition_point(|&id| {
            let chunk = &self.chunks[id as usize];
            chunk.entries[0].0 <= key
        });
        after.saturating_sub(1)
    }

    /// Level at `key`.
    #[inline(never)]
    pub(crate) fn get(&self, key: i64) -> Option<u32> {
        if self.order.is_empty() {
            return None;
        }
        let chunk = self.chunk(self.position(key));
        chunk.search(key).ok().map(|i| chunk.entries[i].1)
    }

    fn take_chunk(&mut self) -> u32 {
        if let Some(id) = self.free.pop() {
            return id;
        }
        if self.chunks.capacity() == 0 {
            self.chunks.reserve(FIRST_ROOM);
            self.order.reserve(FIRST_ROOM);
            self.free.reserve(FIRST_ROOM);
        }
        self.chunks.push(EMPTY_CHUNK);
        (self.chunks.len() - 1) as u32
    }

    /// Sets the level at `key`.
    #[inline]
    pub(crate) fn insert(&mut self, key: i64, level: u32) {
        if self.order.is_empty() {
            let id = self.take_chunk();
            self.order.push(id);
        }
        let position = self.position(key);
        let mut id = self.order[position] as usize;
        let mut at = match self.chunks[id].search(key) {
            Ok(i) => {
                self.chunks[id].entries[i].1 = level;
                return;
            }
            Err(i) => i,
        };
        if self.chunks[id].len == CHUNK {
            // Split: the upper half goes to a chunk of its own, right after this one.
            let new = self.take_chunk() as usize;
            let half = CHUNK / 2;
            let mut upper = [(0, 0); CHUNK / 2];
            upper.copy_from_slice(&self.chunks[id].entries[half..]);
            self.chunks[new].entries[..half].copy_from_slice(&upper);
            self.chunks[new].len = half;
            self.chunks[id].len = half;
            self.order.insert(position + 1, new as u32);
            if at > half {
                (id, at) = (new, at - half);
            }
        }
        let chunk = &mut self.chunks[id];
        chunk.entries.copy_within(at..chunk.len, at + 1);
        chunk.entries[at] = (key, level);
        chunk.len += 1;
        self.len += 1;
    }

    /// Removes the level at `key`, returning it.
    #[inline]
    pub(crate) fn remove(&mut self, key: i64) -> Option<u32> {
        if self.order.is_empty() {
            return None;
        }
        let position = self.position(key);
        let id = self.order[position] as usize;
        let chunk = &mut self.chunks[id];
        let i = chunk.search(key).ok()?;
        let level = chunk.entries[i].1;
        chunk.entries.copy_within(i + 1..chunk.len, i);
        chunk.len -= 1;
        self.len -= 1;
        if chunk.len == 0 {
            self.order.remove(position);
            self.free.push(id as u32);
        }
        Some(level)
    }

    /// Best (smallest-key) level.
    #[inline]
    pub(crate) fn first(&self) -> Option<(i64, u32)> {
        let id = *self.order.first()?;
        Some(self.chunks[id as usize].entries[0])
    }

    /// The level with the smallest key strictly greater than `key`.
    #[inline]
    pub(crate) fn next_after(&self, key: i64) -> Option<(i64, u32)> {
        if self.order.is_empty() {
            return None;
        }
        let position = self.position(key);
        let chunk = self.chunk(position);
        let i = chunk.keys().partition_point(|e| e.0 <= key);
        if i < chunk.len {
            return Some(chunk.entries[i]);
        }
        let next = self.order.get(position + 1)?;
        Some(self.chunks[*next as usize].entries[0])
    }

    /// Moves every level with `low <= key < high` into `into` (best first), keeping the
    /// rest: a chunk at a time, each copied out and closed up once. (Rare: the ladder's
    /// window moved.)
    pub(crate) fn take_range(&mut self, low: i64, high: i64, into: &mut Vec<(i64, u32)>) {
        if self.order.is_empty() || low >= high {
            return;
        }
        let mut position = self.position(low);
        while let Some(&id) = self.order.get(position) {
            let chunk = &mut self.chunks[id as usize];
            let keys = chunk.keys();
            let from = keys.partition_point(|e| e.0 < low);
            let to = keys.partition_point(|e| e.0 < high);
            let ends_here = to < keys.len();
            into.extend_from_slice(&keys[from..to]);
            chunk.entries.copy_within(to..chunk.len, from);
            chunk.len -= to - from;
            self.len -= to - from;
            if chunk.len == 0 {
                self.order.remove(position);
                self.free.push(id);
            } else {
                position += 1;
            }
            if ends_here {
                break;
            }
        }
    }

    /// Adds the levels of `run` (keys strictly increasing, none held yet). A run below every
    /// key held or above every one is laid down in whole chunks, as a window move hands
    /// over the levels it leaves; any other goes in one level at a time.
    pub(crate) fn insert_run(&mut self, run: &[(i64, u32)]) {
        let (Some(first), Some(last)) = (run.first(), run.last()) else {
            return;
        };
        let below = self.first().is_none_or(|(k, _)| last.0 < k);
        let above = self.last_key().is_none_or(|k| first.0 > k);
        if !below && !above {
            for &(key, level) in run {
                self.insert(key, level);
            }
            return;
        }
        let held = self.order.len();
        for part in run.chunks(FILL) {
            let id = self.take_chunk();
            let chunk = &mut self.chunks[id as usize];
            chunk.entries[..part.len()].copy_from_slice(part);
            chunk.len = part.len();
            self.order.push(id);
        }
        self.len += run.len();
        if below {
            // The new chunks were pushed after the ones held: turn them to the front.
            let added = self.order.len() - held;
            self.order.rotate_right(added);
        }
    }

    /// Largest key held.
    fn last_key(&self) -> Option<i64> {
        let chunk = self.chunk(self.order.len().checked_sub(1)?);
        Some(chunk.entries[chunk.len - 1].0)
    }

    /// Number of levels with `low <= key < high`, counting no further than `limit`.
    pub(crate) fn count_range(&self, low: i64, high: i64, limit: usize) -> usize {
        if self.order.is_empty() || low >= high {
            return 0;
        }
        let mut count = 0;
        for &id in &self.order[self.position(low)..] {
            let keys = self.chunks[id as usize].keys();
            if keys[0].0 >= high || count >= limit {
                break;
            }
            let from = keys.partition_point(|e| e.0 < low);
            count += keys[from..].partition_point(|e| e.0 < high);
        }
        count.min(limit)
    }

    /// Levels best first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (i64, u32)> + '_ {
        (self.order.iter()).flat_map(|&id| self.chunks[id as usize].keys().iter().copied())
    }
}

/// Snapshot format 6 (read only) saved them as a map of key to level.
impl<'de> serde::Deserialize<'de> for Outliers {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map: std::collections::BTreeMap<i64, u32> =
            serde::Deserialize::deserialize(deserializer)?;
        let mut outliers = Outliers::default();
        for (key, level) in map {
            outliers.insert(key, level);
        }
        Ok(outliers)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Against an ordered map: inserts, removals, lookups, the best, the next after a
        /// key, a range counted, moved out and put back as a run; keys dense enough to split
        /// and empty chunks.
        #[test]
        fn behaves_like_an_ordered_map(
            ops in proptest::collection::vec((0u8..4, -300i64..300, any::<u32>()), 1..1500),
            (low, high) in (-300i64..300, -300i64..300),
        ) {
            let (mut mine, mut model) = (Outliers::default(), BTreeMap::new());
            for (op, key, level) in ops {
                match op {
                    0 | 1 => {
                        mine.insert(key, level);
                        model.insert(key, level);
                    }
                    2 => prop_assert_eq!(mine.remove(key), model.remove(&key)),
                    _ => {
                        let next = model.range(key + 1..).next().map(|(&k, &v)| (k, v));
                        prop_assert_eq!(mine.next_after(key), next);
                    }
                }
                prop_assert_eq!(mine.get(key), model.get(&key).copied());
                prop_assert_eq!(mine.first(), model.first_key_value().map(|(&k, &v)| (k, v)));
                prop_assert_eq!(mine.len(), model.len());
            }
            let all: Vec<(i64, u32)> = model.iter().map(|(&k, &v)| (k, v)).collect();
            prop_assert_eq!(mine.iter().collect::<Vec<_>>(), all);
            let in_range = if low < high { model.range(low..high).count() } else { 0 };
            prop_assert_eq!(mine.count_range(low, high, usize::MAX), in_range);
            prop_assert_eq!(mine.count_range(low, high, 3), in_range.min(3));
            let mut taken = Vec::new();
            mine.take_range(low, high, &mut taken);
            let want: Vec<(i64, u32)> = if low < high {
                model.range(low..high).map(|(&k, &v)| (k, v)).collect()
            } else {
                Vec::new()
            };
            prop_assert_eq!(&taken, &want);
            for (k, _) in &want {
                model.remove(k);
            }
            let rest: Vec<(i64, u32)> = model.iter().map(|(&k, &v)| (k, v)).collect();
            prop_assert_eq!(mine.iter().collect::<Vec<_>>(), rest);
            // What was taken goes back as a run (below, above or among what is left).
            mine.insert_run(&taken);
            model.extend(taken.iter().copied());
            let all: Vec<(i64, u32)> = model.iter().map(|(&k, &v)| (k, v)).collect();
            prop_assert_eq!(mine.iter().collect::<Vec<_>>(), all);
            prop_assert_eq!(mine.len(), model.len());
            for (&k, &v) in &model {
                prop_assert_eq!(mine.get(k), Some(v));
            }
        }

        /// Runs laid below and above what is held (several chunks each) behave as the same
        /// levels inserted one at a time, under the inserts and removals that follow.
        #[test]
        fn runs_laid_at_either_end_behave_as_inserts(
            held in proptest::collection::btree_set(0i64..1_000, 0..200),
            below in 0usize..300,
            above in 0usize..300,
            ops in proptest::collection::vec((any::<bool>(), -400i64..1_400), 0..300),
        ) {
            let mut mine = Outliers::default();
            let mut model = BTreeMap::new();
            for &key in &held {
                mine.insert(key, key as u32);
                model.insert(key, key as u32);
            }
            let low: Vec<(i64, u32)> = (0..below as i64).map(|i| (i - 400, i as u32)).collect();
            let high: Vec<(i64, u32)> = (0..above as i64).map(|i| (1_000 + i, i as u32)).collect();
            for run in [&low, &high] {
                mine.insert_run(run);
                model.extend(run.iter().copied());
            }
            for (insert, key) in ops {
                if insert {
                    mine.insert(key, 7);
                    model.insert(key, 7);
                } else {
                    prop_assert_eq!(mine.remove(key), model.remove(&key));
                }
                prop_assert_eq!(mine.first(), model.first_key_value().map(|(&k, &v)| (k, v)));
            }
            let all: Vec<(i64, u32)> = model.iter().map(|(&k, &v)| (k, v)).collect();
            prop_assert_eq!(mine.iter().collect::<Vec<_>>(), all);
            prop_assert_eq!(mine.len(), model.len());
        }
    }
}
