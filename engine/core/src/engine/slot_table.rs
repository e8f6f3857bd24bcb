//! Side tables of live orders: terms only some orders have (trailing terms, iceberg
//! displays, contingent links) kept beside the order store, found by the order's slot and
//! checked against its number. Entries live in a slab of their own and each order slot
//! holds the index of its entry, so after warm-up (both slabs at their high-water mark)
//! inserting and removing never allocates, unlike a map by order number, whose nodes come
//! and go with its keys.

use slab::Slab;

use crate::ids::OrderRef;
use crate::order::NIL;

/// Values of type `T` attached to some live orders.
#[derive(Debug, Clone)]
pub(crate) struct SlotTable<T> {
    /// Per order slot: the index of its entry, or `NIL`.
    index: Vec<u32>,
    /// (order, value), densely.
    entries: Slab<(OrderRef, T)>,
}

impl<T> Default for SlotTable<T> {
    fn default() -> Self {
        SlotTable {
            index: Vec::new(),
            entries: Slab::new(),
        }
    }
}

impl<T> SlotTable<T> {
    /// Whether no order has an entry.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many orders have an entry.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    fn entry_of(&self, order: OrderRef) -> Option<usize> {
        let at = *self.index.get(order.slot as usize)?;
        (at != NIL && self.entries[at as usize].0.id == order.id).then_some(at as usize)
    }

    /// The value of `order`.
    #[inline]
    pub(crate) fn get(&self, order: OrderRef) -> Option<&T> {
        self.entry_of(order).map(|at| &self.entries[at].1)
    }

    /// The value of `order`, to change.
    #[inline]
    pub(crate) fn get_mut(&mut self, order: OrderRef) -> Option<&mut T> {
        self.entry_of(order).map(|at| &mut self.entries[at].1)
    }

    /// Whether `order` has a value.
    pub(crate) fn contains(&self, order: OrderRef) -> bool {
        self.entry_of(order).is_some()
    }

    /// Sets the value of `order`; returns the one it replaces. An entry left by an earlier
    /// order of the same slot is replaced too (it cannot be found any more).
    pub(crate) fn insert(&mut self, order: OrderRef, value: T) -> Option<T> {
        let slot = order.slot as usize;
        if self.index.len() <= slot {
            self.index.resize(slot + 1, NIL);
        }
        let at = self.index[slot];
        if at != NIL {
            let old = std::mem::replace(&mut self.entries[at as usize], (order, value));
            return (old.0.id == order.id).then_some(old.1);
        }
        self.index[slot] = self.entries.insert((order, value)) as u32;
        None
    }

    /// Removes the value of `order`.
    #[inline]
    pub(crate) fn remove(&mut self, order: OrderRef) -> Option<T> {
        let at = self.entry_of(order)?;
        self.index[order.slot as usize] = NIL;
        Some(self.entries.remove(at).1)
    }

    /// Removes every entry (keeping the memory).
    pub(crate) fn clear(&mut self) {
        self.index.fill(NIL);
        self.entries.clear();
    }

    /// Every entry, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (OrderRef, &T)> + '_ {
        self.entries
            .iter()
            .map(|(_, (order, value))| (*order, value))
    }

    /// Every entry by order number, for what must not depend on the history of the table
    /// (state hashes, images).
    pub(crate) fn by_number(&self) -> Vec<(OrderRef, &T)> {
        let mut entries: Vec<_> = self.iter().collect();
        entries.sort_unstable_by_key(|(order, _)| order.id);
        entries
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    fn at(id: u64, slot: u32) -> OrderRef {
        OrderRef { id, slot }
    }

    #[test]
    fn a_value_is_found_by_its_order_and_not_by_a_later_order_of_its_slot() {
        let mut table = SlotTable::default();
        assert_eq!(table.insert(at(1, 3), 'a'), None);
        assert_eq!(table.get(at(1, 3)), Some(&'a'));
        assert_eq!(table.get(at(2, 3)), None);
        assert_eq!(table.remove(at(2, 3)), None);
        assert_eq!(table.insert(at(1, 3), 'b'), Some('a'));
        assert_eq!(table.remove(at(1, 3)), Some('b'));
        assert!(table.is_empty());
        assert_eq!(table.get(at(1, 9)), None);
    }

    proptest! {
        /// The table agrees with a map by order number under any inserts and removes of
        /// orders that share slots the way live orders do (one live order per slot).
        #[test]
        fn agrees_with_a_map(ops in proptest::collection::vec((0u32..8, any::<bool>()), 0..200)) {
            let mut table = SlotTable::default();
            let mut model: BTreeMap<u64, (u32, u64)> = BTreeMap::new();
            let mut live: [Option<u64>; 8] = [None; 8];
            for (n, (slot, add)) in ops.into_iter().enumerate() {
                let id = n as u64 + 1;
                match (add, live[slot as usize]) {
                    (true, None) => {
                        live[slot as usize] = Some(id);
                        prop_assert_eq!(table.insert(at(id, slot), id * 10), None);
                        model.insert(id, (slot, id * 10));
                    }
                    (_, Some(old)) => {
                        live[slot as usize] = None;
                        prop_assert_eq!(table.remove(at(old, slot)), Some(old * 10));
                        model.remove(&old);
                    }
                    (false, None) => prop_assert_eq!(table.remove(at(id, slot)), None),
                }
                let seen: Vec<(u64, u32, u64)> = table
                    .by_number()
                    .into_iter()
                    .map(|(o, &v)| (o.id, o.slot, v))
                    .collect();
                let expected: Vec<(u64, u32, u64)> =
                    model.iter().map(|(&id, &(slot, v))| (id, slot, v)).collect();
                prop_assert_eq!(seen, expected);
            }
        }
    }
}
