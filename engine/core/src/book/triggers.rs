//! Held trigger orders of one book, for one reference price: those that fire when the price
//! rises to their trigger, those that fire when it falls to it, and an index of the trailing
//! ones by the best price each has seen, so a new high or low finds exactly the orders whose
//! trigger it moves. A price that moves no trigger and reaches none costs two map lookups,
//! never a walk over the held orders.

use std::collections::BTreeMap;

use crate::fixed::Price;

/// Key of a held order: (ordering price, order number); the first key is the first due.
pub(crate) type HeldKey = (i64, u64);

/// Held triggers watching one reference price.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub(crate) struct HeldTriggers {
    /// Fire when the reference rises to the trigger: by (trigger, number), lowest first.
    /// (Serialised first: the legacy image's buy stops.)
    pub(crate) rising: BTreeMap<HeldKey, u32>,
    /// Fire when the reference falls to the trigger: by (-trigger, number), highest first.
    pub(crate) falling: BTreeMap<HeldKey, u32>,
    /// Trailing orders firing rising (buys), by (-lowest reference seen, number): those
    /// whose low a new lower price undercuts come first.
    #[serde(skip)]
    pub(crate) trail_rising: BTreeMap<HeldKey, u32>,
    /// Trailing orders firing falling (sells), by (highest reference seen, number).
    #[serde(skip)]
    pub(crate) trail_falling: BTreeMap<HeldKey, u32>,
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
    /// Holds an order until `trigger` is reached.
    pub(crate) fn hold(&mut self, rising: bool, trigger: Price, id: u64, slot: u32) -> bool {
        let queue = if rising {
            &mut self.rising
        } else {
            &mut self.falling
        };
        queue
            .insert((trigger_key(rising, trigger), id), slot)
            .is_none()
    }

    /// Stops holding an order; returns whether it was held.
    pub(crate) fn release(&mut self, rising: bool, trigger: Price, id: u64) -> bool {
        let queue = if rising {
            &mut self.rising
        } else {
            &mut self.falling
        };
        queue.remove(&(trigger_key(rising, trigger), id)).is_some()
    }

    /// Indexes a trailing order by the best reference it has seen.
    pub(crate) fn track(&mut self, rising: bool, extreme: Price, id: u64, slot: u32) -> bool {
        let index = if rising {
            &mut self.trail_rising
        } else {
            &mut self.trail_falling
        };
        index
            .insert((extreme_key(rising, extreme), id), slot)
            .is_none()
    }

    /// Drops a trailing order from the extreme index.
    pub(crate) fn untrack(&mut self, rising: bool, extreme: Price, id: u64) -> bool {
        let index = if rising {
            &mut self.trail_rising
        } else {
            &mut self.trail_falling
        };
        index.remove(&(extreme_key(rising, extreme), id)).is_some()
    }

    /// The first trailing order whose trigger `reference` moves: a sell whose high is below
    /// it, else a buy whose low is above it. Returns (fires rising, order number, slot).
    pub(crate) fn first_to_ratchet(&self, reference: Price) -> Option<(bool, u64, u32)> {
        let falling = self
            .trail_falling
            .first_key_value()
            .filter(|(k, _)| k.0 < reference.0)
            .map(|(k, &slot)| (false, k.1, slot));
        falling.or_else(|| {
            self.trail_rising
                .first_key_value()
                .filter(|(k, _)| -k.0 > reference.0)
                .map(|(k, &slot)| (true, k.1, slot))
        })
    }

    /// The first order `reference` has reached: rising ones (lowest trigger first) before
    /// falling ones (highest first), ties by age. Returns (fires rising, key).
    pub(crate) fn first_due(&self, reference: Price) -> Option<(bool, HeldKey)> {
        if let Some((&k, _)) = self.rising.first_key_value()
            && k.0 <= reference.0
        {
            return Some((true, k));
        }
        self.falling
            .first_key_value()
            .filter(|(k, _)| -k.0 >= reference.0)
            .map(|(&k, _)| (false, k))
    }

    /// Removes and returns the slot held under `key`.
    pub(crate) fn take(&mut self, rising: bool, key: HeldKey) -> Option<u32> {
        if rising {
            self.rising.remove(&key)
        } else {
            self.falling.remove(&key)
        }
    }

    /// Every held order: rising queue, then falling, in due order.
    pub(crate) fn held(&self) -> impl Iterator<Item = (bool, HeldKey, u32)> + '_ {
        let rising = self.rising.iter().map(|(&k, &s)| (true, k, s));
        rising.chain(self.falling.iter().map(|(&k, &s)| (false, k, s)))
    }

    /// Number of held orders.
    pub(crate) fn len(&self) -> usize {
        self.rising.len() + self.falling.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rising_orders_fire_first_and_lowest_first() {
        let mut held = HeldTriggers::default();
        assert!(held.hold(true, Price(105), 1, 10));
        assert!(held.hold(true, Price(103), 2, 11));
        assert!(held.hold(false, Price(99), 3, 12));
        assert_eq!(held.first_due(Price(102)), None);
        assert_eq!(held.first_due(Price(104)), Some((true, (103, 2))));
        assert_eq!(held.first_due(Price(99)), Some((false, (-99, 3))));
        assert_eq!(held.take(true, (103, 2)), Some(11));
        assert!(held.release(true, Price(105), 1));
        assert!(!held.release(true, Price(105), 1));
        assert_eq!(held.len(), 1);
    }

    #[test]
    fn only_trailing_orders_a_new_extreme_passes_need_moving() {
        let mut held = HeldTriggers::default();
        held.track(false, Price(100), 1, 10);
        held.track(false, Price(110), 2, 11);
        held.track(true, Price(90), 3, 12);
        assert_eq!(held.first_to_ratchet(Price(95)), None);
        assert_eq!(held.first_to_ratchet(Price(100)), None);
        assert_eq!(held.first_to_ratchet(Price(105)), Some((false, 1, 10)));
        assert_eq!(held.first_to_ratchet(Price(85)), Some((true, 3, 12)));
        assert!(held.untrack(false, Price(100), 1));
        assert_eq!(held.first_to_ratchet(Price(105)), None);
    }
}
