//! Held trigger orders of one book, for one reference price: those that fire when the price
//! rises to their trigger, those that fire when it falls to it, and an index of the trailing
//! ones by the best price each has seen, so a new high or low finds exactly the orders whose
//! trigger it moves. A price that moves no trigger and reaches none costs a look at the
//! first entry of each queue, never a walk over the held orders.
//!
//! Each queue is a binary min-heap in a vector with the position of every entry kept by
//! order slot ([`HeldPositions`], engine-wide: an order waits in one queue and at most one
//! trailing index), so holding, releasing and moving an order is O(log n) and, once the
//! vectors have reached their high-water mark, allocates nothing (a `BTreeMap` allocates
//! and frees nodes as keys come and go). Only the first entry's order is observable; what
//! must not depend on history (hashes, checks) reads the queues sorted.

use std::collections::BTreeMap;

use crate::fixed::Price;
use crate::order::NIL;

/// Key of a held order: (ordering price, order number); the first key is the first due.
pub(crate) type HeldKey = (i64, u64);

/// Which position of an order [`HeldPositions`] keeps.
#[derive(Debug, Clone, Copy)]
enum Queue {
    /// Its place in a trigger queue.
    Trigger = 0,
    /// Its place in a trailing index.
    Trail = 1,
}

/// Where each held order sits in its queues, by order slot.
#[derive(Debug, Clone, Default)]
pub(crate) struct HeldPositions {
    at: Vec<[u32; 2]>,
}

impl HeldPositions {
    #[inline]
    fn get(&self, slot: u32, queue: Queue) -> u32 {
        self.at
            .get(slot as usize)
            .map_or(NIL, |p| p[queue as usize])
    }

    #[inline]
    fn set(&mut self, slot: u32, queue: Queue, at: u32) {
        let slot = slot as usize;
        if self.at.len() <= slot {
            // Grows with the order store only: in steady state every slot is already here.
            self.at.resize(slot + 1, [NIL, NIL]);
        }
        self.at[slot][queue as usize] = at;
    }

    /// Forgets every position (before the queues are rebuilt).
    pub(crate) fn clear(&mut self) {
        self.at.fill([NIL, NIL]);
    }
}

/// A min-heap of (key, slot) whose entries' positions are kept in [`HeldPositions`].
#[derive(Debug, Clone, Default)]
struct KeyedHeap {
    entries: Vec<(HeldKey, u32)>,
}

impl KeyedHeap {
    #[inline]
    fn first(&self) -> Option<(HeldKey, u32)> {
        self.entries.first().copied()
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    /// Adds `slot` under `key`; false if the slot is already in this heap.
    fn push(&mut self, key: HeldKey, slot: u32, pos: &mut HeldPositions, queue: Queue) -> bool {
        if self.position(slot, pos, queue).is_some() {
            return false;
        }
        self.entries.push((key, slot));
        self.sift_up(self.entries.len() - 1, pos, queue);
        true
    }

    /// Where `slot` is in this heap.
    #[inline]
    fn position(&self, slot: u32, pos: &HeldPositions, queue: Queue) -> Option<usize> {
        let at = pos.get(slot, queue) as usize;
        self.entries
            .get(at)
            .is_some_and(|e| e.1 == slot)
            .then_some(at)
    }

    /// Takes `slot` out; returns its key.
    fn remove(&mut self, slot: u32, pos: &mut HeldPositions, queue: Queue) -> Option<HeldKey> {
        let at = self.position(slot, pos, queue)?;
        let (key, _) = self.entries.swap_remove(at);
        pos.set(slot, queue, NIL);
        if at < self.entries.len() {
            let moved = self.sift_up(at, pos, queue);
            self.sift_down(moved, pos, queue);
        }
        Some(key)
    }

    /// Moves the entry at `at` towards the root while it is smaller than its parent;
    /// records every position it passes. Returns where it stopped.
    fn sift_up(&mut self, mut at: usize, pos: &mut HeldPositions, queue: Queue) -> usize {
        let entry = self.entries[at];
        while at > 0 {
            let parent = (at - 1) / 2;
            if self.entries[parent].0 <= entry.0 {
                break;
            }
            self.entries[at] = self.entries[parent];
            pos.set(self.entries[at].1, queue, at as u32);
            at = parent;
        }
        self.entries[at] = entry;
        pos.set(entry.1, queue, at as u32);
        at
    }

    /// Moves the entry at `at` towards the leaves while a child is smaller.
    fn sift_down(&mut self, mut at: usize, pos: &mut HeldPositions, queue: Queue) {
        let entry = self.entries[at];
        let n = self.entries.len();
        loop {
            let left = 2 * at + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.entries[right].0 < self.entries[left].0 {
                right
            } else {
                left
            };
            if self.entries[child].0 >= entry.0 {
                break;
            }
            self.entries[at] = self.entries[child];
            pos.set(self.entries[at].1, queue, at as u32);
            at = child;
        }
        self.entries[at] = entry;
        pos.set(entry.1, queue, at as u32);
    }

    /// The entries in key order.
    fn sorted(&self) -> Vec<(HeldKey, u32)> {
        let mut entries = self.entries.clone();
        entries.sort_unstable();
        entries
    }

    /// Records every entry's position (after the entries were set without them); refuses
    /// an entry naming a slot at or past `slots`, the order store's size.
    fn reindex(
        &mut self,
        pos: &mut HeldPositions,
        queue: Queue,
        slots: usize,
    ) -> Result<(), String> {
        if self.entries.iter().any(|&(_, slot)| slot as usize >= slots) {
            return Err("a held trigger names a slot past the order store".into());
        }
        self.entries.sort_unstable();
        for (at, &(_, slot)) in self.entries.iter().enumerate() {
            pos.set(slot, queue, at as u32);
        }
        Ok(())
    }

    /// The heap order holds and every entry's recorded position is its own.
    fn check(&self, pos: &HeldPositions, queue: Queue) -> Result<(), String> {
        for (at, &(key, slot)) in self.entries.iter().enumerate() {
            if at > 0 && self.entries[(at - 1) / 2].0 > key {
                return Err("a held-trigger queue is out of order".into());
            }
            if pos.get(slot, queue) as usize != at {
                return Err("a held order's recorded queue position is not its own".into());
            }
        }
        Ok(())
    }

    fn from_sorted(map: BTreeMap<HeldKey, u32>) -> Self {
        // Ascending order is a valid min-heap; positions are recorded by `reindex`.
        KeyedHeap {
            entries: map.into_iter().collect(),
        }
    }
}

/// Held triggers watching one reference price.
#[derive(Debug, Clone, Default)]
pub(crate) struct HeldTriggers {
    /// Fire when the reference rises to the trigger: by (trigger, number), lowest first.
    rising: KeyedHeap,
    /// Fire when the reference falls to the trigger: by (-trigger, number), highest first.
    falling: KeyedHeap,
    /// Trailing orders firing rising (buys), by (-lowest reference seen, number): those
    /// whose low a new lower price undercuts come first.
    trail_rising: KeyedHeap,
    /// Trailing orders firing falling (sells), by (highest reference seen, number).
    trail_falling: KeyedHeap,
}

/// Snapshot format 6 saved a book's stop queues as two maps (the legacy image's buy stops
/// first); they become heaps whose positions [`HeldTriggers::reindex`] records.
impl<'de> serde::Deserialize<'de> for HeldTriggers {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Legacy {
            rising: BTreeMap<HeldKey, u32>,
            falling: BTreeMap<HeldKey, u32>,
        }
        let legacy = Legacy::deserialize(deserializer)?;
        Ok(HeldTriggers {
            rising: KeyedHeap::from_sorted(legacy.rising),
            falling: KeyedHeap::from_sorted(legacy.falling),
            ..HeldTriggers::default()
        })
    }
}

/// The ordering key of a trigger in the queue of its direction.
#[inline]
pub(crate) fn trigger_key(rising: bool, trigger: Price) -> i64 {
    if rising { trigger.0 } else { -trigger.0 }
}

/// The key of a trailing order's best reference so far in the index of its direction.
#[inline]
pub(crate) fn extreme_key(rising: bool, extreme: Price) -> i64 {
    if rising { -extreme.0 } else { extreme.0 }
}

impl HeldTriggers {
    #[inline]
    fn queue_mut(&mut self, rising: bool) -> &mut KeyedHeap {
        if rising {
            &mut self.rising
        } else {
            &mut self.falling
        }
    }

    #[inline]
    fn trail_index(&self, rising: bool) -> &KeyedHeap {
        if rising {
            &self.trail_rising
        } else {
            &self.trail_falling
        }
    }

    #[inline]
    fn trail_index_mut(&mut self, rising: bool) -> &mut KeyedHeap {
        if rising {
            &mut self.trail_rising
        } else {
            &mut self.trail_falling
        }
    }

    /// Holds the order in `slot` until `trigger` is reached; false if it is already held.
    pub(crate) fn hold(
        &mut self,
        pos: &mut HeldPositions,
        rising: bool,
        trigger: Price,
        id: u64,
        slot: u32,
    ) -> bool {
        let key = (trigger_key(rising, trigger), id);
        self.queue_mut(rising).push(key, slot, pos, Queue::Trigger)
    }

    /// Stops holding the order in `slot`; returns whether it was held.
    pub(crate) fn release(&mut self, pos: &mut HeldPositions, rising: bool, slot: u32) -> bool {
        (self.queue_mut(rising))
            .remove(slot, pos, Queue::Trigger)
            .is_some()
    }

    /// Indexes a trailing order by the best reference it has seen.
    pub(crate) fn track(
        &mut self,
        pos: &mut HeldPositions,
        rising: bool,
        extreme: Price,
        id: u64,
        slot: u32,
    ) -> bool {
        let key = (extreme_key(rising, extreme), id);
        self.trail_index_mut(rising)
            .push(key, slot, pos, Queue::Trail)
    }

    /// Drops a trailing order from the extreme index.
    pub(crate) fn untrack(&mut self, pos: &mut HeldPositions, rising: bool, slot: u32) -> bool {
        (self.trail_index_mut(rising))
            .remove(slot, pos, Queue::Trail)
            .is_some()
    }

    /// The key a trailing order is indexed under, if it is.
    pub(crate) fn trail_key(
        &self,
        pos: &HeldPositions,
        rising: bool,
        slot: u32,
    ) -> Option<HeldKey> {
        let index = self.trail_index(rising);
        let at = index.position(slot, pos, Queue::Trail)?;
        Some(index.entries[at].0)
    }

    /// The first trailing order whose trigger `reference` moves: a sell whose high is below
    /// it, else a buy whose low is above it. Returns (fires rising, order number, slot).
    #[inline]
    pub(crate) fn first_to_ratchet(&self, reference: Price) -> Option<(bool, u64, u32)> {
        let falling = (self.trail_falling.first())
            .filter(|(k, _)| k.0 < reference.0)
            .map(|(k, slot)| (false, k.1, slot));
        falling.or_else(|| {
            (self.trail_rising.first())
                .filter(|(k, _)| -k.0 > reference.0)
                .map(|(k, slot)| (true, k.1, slot))
        })
    }

    /// The first order `reference` has reached: rising ones (lowest trigger first) before
    /// falling ones (highest first), ties by age. Returns (fires rising, slot).
    #[inline]
    pub(crate) fn first_due(&self, reference: Price) -> Option<(bool, u32)> {
        if let Some((k, slot)) = self.rising.first()
            && k.0 <= reference.0
        {
            return Some((true, slot));
        }
        (self.falling.first())
            .filter(|(k, _)| -k.0 >= reference.0)
            .map(|(_, slot)| (false, slot))
    }

    /// Every held order: rising queue, then falling, in due order.
    pub(crate) fn held(&self) -> Vec<(bool, HeldKey, u32)> {
        let rising = self.rising.sorted().into_iter().map(|(k, s)| (true, k, s));
        let falling = self
            .falling
            .sorted()
            .into_iter()
            .map(|(k, s)| (false, k, s));
        rising.chain(falling).collect()
    }

    /// Number of held orders.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.rising.len() + self.falling.len()
    }

    /// Number of trailing orders indexed.
    pub(crate) fn tracked(&self) -> usize {
        self.trail_rising.len() + self.trail_falling.len()
    }

    /// Records the positions of queues decoded without them (snapshot format 6), whose
    /// entries must name slots below `slots` (the order store's size): positions are
    /// kept by slot, so a decoded slot of billions would size them to match.
    pub(crate) fn reindex(&mut self, pos: &mut HeldPositions, slots: usize) -> Result<(), String> {
        self.rising.reindex(pos, Queue::Trigger, slots)?;
        self.falling.reindex(pos, Queue::Trigger, slots)?;
        self.trail_rising.reindex(pos, Queue::Trail, slots)?;
        self.trail_falling.reindex(pos, Queue::Trail, slots)
    }

    /// Every queue is a heap and every position recorded for its entries is theirs.
    pub(crate) fn check(&self, pos: &HeldPositions) -> Result<(), String> {
        self.rising.check(pos, Queue::Trigger)?;
        self.falling.check(pos, Queue::Trigger)?;
        self.trail_rising.check(pos, Queue::Trail)?;
        self.trail_falling.check(pos, Queue::Trail)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn rising_orders_fire_first_and_lowest_first() {
        let (mut held, mut pos) = (HeldTriggers::default(), HeldPositions::default());
        assert!(held.hold(&mut pos, true, Price(105), 1, 10));
        assert!(held.hold(&mut pos, true, Price(103), 2, 11));
        assert!(held.hold(&mut pos, false, Price(99), 3, 12));
        assert!(!held.hold(&mut pos, true, Price(104), 2, 11));
        assert_eq!(held.first_due(Price(102)), None);
        assert_eq!(held.first_due(Price(104)), Some((true, 11)));
        assert_eq!(held.first_due(Price(99)), Some((false, 12)));
        assert!(held.release(&mut pos, true, 11));
        assert!(held.release(&mut pos, true, 10));
        assert!(!held.release(&mut pos, true, 10));
        assert!(
            !held.release(&mut pos, true, 12),
            "held falling, not rising"
        );
        assert_eq!(held.len(), 1);
        assert_eq!(held.check(&pos), Ok(()));
    }

    #[test]
    fn only_trailing_orders_a_new_extreme_passes_need_moving() {
        let (mut held, mut pos) = (HeldTriggers::default(), HeldPositions::default());
        held.track(&mut pos, false, Price(100), 1, 10);
        held.track(&mut pos, false, Price(110), 2, 11);
        held.track(&mut pos, true, Price(90), 3, 12);
        assert_eq!(held.first_to_ratchet(Price(95)), None);
        assert_eq!(held.first_to_ratchet(Price(100)), None);
        assert_eq!(held.first_to_ratchet(Price(105)), Some((false, 1, 10)));
        assert_eq!(held.first_to_ratchet(Price(85)), Some((true, 3, 12)));
        assert_eq!(held.trail_key(&pos, false, 10), Some((100, 1)));
        assert!(held.untrack(&mut pos, false, 10));
        assert_eq!(held.first_to_ratchet(Price(105)), None);
        assert_eq!(held.check(&pos), Ok(()));
    }

    /// One step on the queues: hold, release, or (re)hold at a new trigger, on slots 0..32.
    fn step() -> impl Strategy<Value = (u8, bool, i64, u32)> {
        (0u8..3, any::<bool>(), -50i64..50, 0u32..32)
    }

    proptest! {
        /// The heaps agree with ordered maps: the same first due order for any price, the
        /// same contents, under any mix of holds and releases (as cancels and trailing
        /// moves make them), and their positions stay their own.
        #[test]
        fn heaps_agree_with_ordered_maps(steps in proptest::collection::vec(step(), 0..300)) {
            let (mut held, mut pos) = (HeldTriggers::default(), HeldPositions::default());
            let mut model: [BTreeMap<HeldKey, u32>; 2] = Default::default();
            let mut where_held: [Option<(bool, HeldKey)>; 32] = [None; 32];
            for (n, (op, rising, trigger, slot)) in steps.into_iter().enumerate() {
                let id = n as u64;
                if let Some((was_rising, key)) = where_held[slot as usize].take() {
                    prop_assert!(held.release(&mut pos, was_rising, slot));
                    model[usize::from(was_rising)].remove(&key);
                }
                if op > 0 {
                    prop_assert!(held.hold(&mut pos, rising, Price(trigger), id, slot));
                    let key = (trigger_key(rising, Price(trigger)), id);
                    model[usize::from(rising)].insert(key, slot);
                    where_held[slot as usize] = Some((rising, key));
                }
                held.check(&pos).map_err(TestCaseError::fail)?;
                for price in [-60, -10, 0, 10, 60] {
                    let expected = (model[1].first_key_value())
                        .filter(|(k, _)| k.0 <= price)
                        .map(|(_, &s)| (true, s))
                        .or_else(|| {
                            (model[0].first_key_value())
                                .filter(|(k, _)| -k.0 >= price)
                                .map(|(_, &s)| (false, s))
                        });
                    prop_assert_eq!(held.first_due(Price(price)), expected);
                }
                let listed: Vec<_> = (model[1].iter().map(|(&k, &s)| (true, k, s)))
                    .chain(model[0].iter().map(|(&k, &s)| (false, k, s)))
                    .collect();
                prop_assert_eq!(held.held(), listed);
            }
        }
    }
}
