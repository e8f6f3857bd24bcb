//! Dense record stores by slot (live orders, price levels): every record in one vector,
//! vacant slots chained into a free list through their own records and handed out in
//! exactly `slab`'s order (the last slot freed first, then new slots ascending), so the
//! images and handles are those the slab-based stores made.
//!
//! Why not `slab::Slab`: its entry is an enum, so every look-up by slot checks the tag
//! beside the bounds, and matching looks orders and levels up by slot a dozen times a
//! command (2.6 % of exchange-core's instructions, 4.1 % of deep-book's, measured in
//! BENCHMARKS.md). Here a record marks itself vacant (an order by id 0, a level by price
//! 0), which only the look-ups that may meet a vacancy read ([`DenseStore::get`]); the
//! rest index straight in.

use std::ops::{Index, IndexMut};

use crate::image::SlabImage;

/// A record a [`DenseStore`] holds: it can stand vacant in its slot, linking to the next
/// vacant one.
pub(crate) trait StoreRecord: Sized {
    /// A vacant record linking to `next`.
    fn vacancy(next: u32) -> Self;
    /// Whether the record stands vacant.
    fn is_vacant(&self) -> bool;
    /// The vacant slot after this vacant record's.
    fn next_vacant(&self) -> u32;
    /// Marks the record vacant, linking to `next` (its other fields are left as they are).
    fn vacate(&mut self, next: u32);
}

/// Records by slot. Not comparable: vacant records keep what their last occupant left.
#[derive(Debug, Clone)]
pub(crate) struct DenseStore<T> {
    /// Every slot handed out or reserved; a vacant one links to the next vacant slot
    /// (`records.len()`: a new slot at the end).
    records: Vec<T>,
    /// The vacant slot handed out next (`records.len()`: a new one).
    free: u32,
    /// Occupied slots.
    len: usize,
}

impl<T> Default for DenseStore<T> {
    fn default() -> Self {
        Self {
            records: Vec::new(),
            free: 0,
            len: 0,
        }
    }
}

fn slot_u32(slot: usize) -> Result<u32, String> {
    u32::try_from(slot).map_err(|_| "store slot beyond u32".to_owned())
}

impl<T: StoreRecord> DenseStore<T> {
    /// An empty store with room for `capacity` records.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            records: Vec::with_capacity(capacity),
            ..Self::default()
        }
    }

    /// Occupied slots.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Slots that exist, occupied or vacant: a slot below it indexes a record.
    #[inline]
    pub(crate) fn slots(&self) -> usize {
        self.records.len()
    }

    /// Address of the record in `slot`, for a hint (0 past the room the store has):
    /// nothing is read through it.
    #[inline]
    pub(crate) fn record_address(&self, slot: usize) -> usize {
        if slot < self.records.capacity() {
            self.records.as_ptr() as usize + slot * std::mem::size_of::<T>()
        } else {
            0
        }
    }

    /// The record in `slot`, if one is there.
    #[inline]
    pub(crate) fn get(&self, slot: usize) -> Option<&T> {
        self.records.get(slot).filter(|r| !r.is_vacant())
    }

    /// The record in `slot`, if one is there, mutable.
    #[inline]
    pub(crate) fn get_mut(&mut self, slot: usize) -> Option<&mut T> {
        self.records.get_mut(slot).filter(|r| !r.is_vacant())
    }

    /// Whether `slot` holds a record.
    #[inline]
    pub(crate) fn contains(&self, slot: usize) -> bool {
        self.get(slot).is_some()
    }

    /// The slot the next insert takes.
    #[inline]
    pub(crate) fn vacant_key(&self) -> usize {
        self.free as usize
    }

    /// Stores `record` (which is not vacant) in the next vacant slot, which it returns.
    #[inline]
    pub(crate) fn insert(&mut self, record: T) -> u32 {
        debug_assert!(!record.is_vacant(), "inserting a vacant record");
        let slot = self.free;
        let s = slot as usize;
        if s == self.records.len() {
            self.records.push(record);
            self.free = slot + 1;
        } else {
            self.free = self.records[s].next_vacant();
            self.records[s] = record;
        }
        self.len += 1;
        slot
    }

    /// Frees `slot` (which holds a record): it is the next handed out.
    #[inline]
    pub(crate) fn remove(&mut self, slot: u32) {
        let record = &mut self.records[slot as usize];
        debug_assert!(!record.is_vacant(), "removing a vacant slot");
        record.vacate(self.free);
        self.free = slot;
        self.len -= 1;
    }

    /// (slot, record) of every record, ascending by slot.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        self.records
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.is_vacant())
    }

    /// (slot, record) of every record, ascending by slot, mutable.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (usize, &mut T)> {
        (self.records.iter_mut().enumerate()).filter(|(_, r)| !r.is_vacant())
    }

    /// Makes room for `additional` more records and writes it now (vacant records chained
    /// behind the present free list, ascending), so a slot's first use neither grows the
    /// vector nor faults a fresh page in; slots are handed out in the same order as
    /// without it.
    pub(crate) fn reserve_touched(&mut self, additional: usize) {
        // The same growth as `Slab::reserve`, so the capacity (and an image) match it.
        if self.records.capacity() - self.len < additional {
            let vacant = self.records.len() - self.len;
            self.records.reserve(additional - vacant);
        }
        // The free list's end names `records.len()`, the first record pushed here.
        while self.records.len() < self.records.capacity() {
            let next = self.records.len() as u32 + 1;
            self.records.push(T::vacancy(next));
        }
    }

    /// The occupied records (converted by `record`) and the vacant slots in hand-out
    /// order, as the slab-based store's image listed them: the slots that exist (room
    /// not yet written is left out; a restored store hands it out in the same order).
    pub(crate) fn to_image<'a, U>(
        &'a self,
        record: impl FnMut(&'a T) -> U,
    ) -> Result<SlabImage<U>, String> {
        let mut vacant_in_order = Vec::with_capacity(self.records.len() - self.len);
        let mut slot = self.free as usize;
        while slot < self.records.len() {
            vacant_in_order.push(slot_u32(slot)?);
            slot = self.records[slot].next_vacant() as usize;
        }
        let mut record = record;
        let occupied = (self.iter())
            .map(|(slot, r)| Ok((slot_u32(slot)?, record(r))))
            .collect::<Result<_, String>>()?;
        Ok(SlabImage {
            occupied,
            vacant_in_order,
        })
    }

    /// Rebuilds the store from an image (records converted by `record`); refuses images
    /// whose slots overlap or leave holes, or that list a record standing vacant.
    pub(crate) fn from_image<U>(
        image: SlabImage<U>,
        mut record: impl FnMut(U) -> T,
    ) -> Result<Self, String> {
        const OVERLAP: &str = "store image slots overlap or leave a hole";
        let total = image.occupied.len() + image.vacant_in_order.len();
        let total_u32 = slot_u32(total)?;
        let mut records: Vec<Option<T>> = std::iter::repeat_with(|| None).take(total).collect();
        for (slot, value) in image.occupied {
            let value = record(value);
            if value.is_vacant() {
                return Err("a store image lists a vacant record as occupied".to_owned());
            }
            match records.get_mut(slot as usize) {
                Some(entry @ None) => *entry = Some(value),
                _ => return Err(OVERLAP.to_owned()),
            }
        }
        let links = (image.vacant_in_order.iter().skip(1).copied()).chain([total_u32]);
        for (&slot, next) in image.vacant_in_order.iter().zip(links) {
            match records.get_mut(slot as usize) {
                Some(entry @ None) => *entry = Some(T::vacancy(next)),
                _ => return Err(OVERLAP.to_owned()),
            }
        }
        // Exactly `total` records of room, as the slab-based store had.
        let mut store = Vec::with_capacity(total);
        store.extend(records.into_iter().flatten());
        Ok(Self {
            records: store,
            free: image.vacant_in_order.first().copied().unwrap_or(total_u32),
            len: total - image.vacant_in_order.len(),
        })
    }
}

impl<T> Index<usize> for DenseStore<T> {
    type Output = T;
    #[inline]
    fn index(&self, slot: usize) -> &T {
        &self.records[slot]
    }
}

impl<T> IndexMut<usize> for DenseStore<T> {
    #[inline]
    fn index_mut(&mut self, slot: usize) -> &mut T {
        &mut self.records[slot]
    }
}

impl<'de, T> serde::Deserialize<'de> for DenseStore<T>
where
    T: StoreRecord + serde::Deserialize<'de>,
{
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let image = SlabImage::<T>::deserialize(deserializer)?;
        Self::from_image(image, |r| r).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;
