//! Serde for a `Slab` that restores it exactly: the same keys occupied and the same order
//! of vacant keys, so a restored engine hands out the same slots (and therefore the same
//! order handles) as the one that was saved. `slab`'s own serde rebuilds the free list in
//! key order, which would make a replay from a snapshot diverge from a replay from empty.
//!
//! The free list is read by inserting fillers into a copy until its capacity is used up:
//! the keys come out in exactly the order the original would hand them out. Keys beyond the
//! original's last entry come out ascending, which is what the original would do too, so
//! the restored slab behaves identically even if it ends up with more (vacant) entries.
//!
//! The engine's own stores are no longer slabs (`crate::store` hands slots out in the same
//! order without slab's per-look-up tag check); this stays as the model they are tested
//! against, and their blank records are [`Filler`]s.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use slab::Slab;

use crate::image::SlabImage;

/// A value that can stand in a slot while the free list is read or rebuilt.
pub trait Filler {
    /// Any value; it is always replaced or removed before the slab is used.
    fn filler() -> Self;
}

/// The occupied entries (converted by `record`) and the vacant keys in hand-out order.
pub fn to_image<'a, T, U>(
    slab: &'a Slab<T>,
    mut record: impl FnMut(&'a T) -> U,
) -> Result<SlabImage<U>, String>
where
    T: Clone + Filler,
{
    let vacant_in_order = fill_vacancies(&mut slab.clone())
        .into_iter()
        .map(key_u32)
        .collect::<Result<_, String>>()?;
    let occupied = slab
        .iter()
        .map(|(key, value)| Ok((key_u32(key)?, record(value))))
        .collect::<Result<_, String>>()?;
    Ok(SlabImage {
        occupied,
        vacant_in_order,
    })
}

fn key_u32(key: usize) -> Result<u32, String> {
    u32::try_from(key).map_err(|_| "slab key beyond u32".to_owned())
}

/// Rebuilds the slab from an image (records converted by `record`); refuses images whose
/// keys overlap or leave holes.
pub fn from_image<T: Filler, U>(
    image: SlabImage<U>,
    mut record: impl FnMut(U) -> T,
) -> Result<Slab<T>, String> {
    let total = image.occupied.len() + image.vacant_in_order.len();
    let mut seen = vec![false; total];
    let keys = image
        .occupied
        .iter()
        .map(|(key, _)| *key)
        .chain(image.vacant_in_order.iter().copied());
    for key in keys {
        match seen.get_mut(key as usize) {
            Some(slot) if !*slot => *slot = true,
            _ => return Err("slab image keys overlap or leave a hole".to_owned()),
        }
    }
    let mut slab = Slab::with_capacity(total);
    for _ in 0..total {
        slab.insert(T::filler());
    }
    for (key, value) in image.occupied {
        slab[key as usize] = record(value);
    }
    // Removing in reverse hand-out order leaves the first to hand out on top of the list.
    for &key in image.vacant_in_order.iter().rev() {
        slab.remove(key as usize);
    }
    Ok(slab)
}

/// Reserves room for `additional` more entries and writes all of it now, keeping the
/// order in which vacant keys are handed out (fillers inserted until the capacity is used,
/// then removed in reverse, as [`from_image`] does): a slot's first use later neither
/// grows the slab nor faults a fresh page in on the caller's path.
pub fn reserve_touched<T: Filler>(slab: &mut Slab<T>, additional: usize) {
    slab.reserve(additional);
    for key in fill_vacancies(slab).into_iter().rev() {
        slab.remove(key);
    }
}

/// Inserts fillers until the slab's capacity is used up; returns their keys, which are
/// the vacant keys in the order the slab would have handed them out.
fn fill_vacancies<T: Filler>(slab: &mut Slab<T>) -> Vec<usize> {
    let mut keys = Vec::with_capacity(slab.capacity() - slab.len());
    while slab.len() < slab.capacity() {
        keys.push(slab.insert(T::filler()));
    }
    keys
}

/// Serde `serialize_with`: the slab as its image.
pub fn serialize<T, S>(slab: &Slab<T>, serializer: S) -> Result<S::Ok, S::Error>
where
    T: Serialize + Clone + Filler,
    S: Serializer,
{
    to_image(slab, |value| value)
        .map_err(serde::ser::Error::custom)?
        .serialize(serializer)
}

/// Serde `deserialize_with`: the slab from its image.
pub fn deserialize<'de, T, D>(deserializer: D) -> Result<Slab<T>, D::Error>
where
    T: Deserialize<'de> + Filler,
    D: Deserializer<'de>,
{
    from_image(SlabImage::<T>::deserialize(deserializer)?, |value| value).map_err(D::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    impl Filler for u64 {
        fn filler() -> Self {
            u64::MAX
        }
    }

    #[derive(Serialize, Deserialize)]
    struct Holder(#[serde(with = "super")] Slab<u64>);

    proptest! {
        /// A touched reservation hands out the same keys as the slab would have without
        /// it, and makes room without growing.
        #[test]
        fn a_touched_reservation_keeps_the_hand_out_order(
            ops in proptest::collection::vec((any::<bool>(), 0usize..64), 1..200),
            extra in 0usize..100,
        ) {
            let mut plain = Slab::new();
            for (insert, k) in ops {
                if insert || plain.is_empty() {
                    plain.insert(k as u64);
                } else if let Some(key) = plain.iter().map(|(key, _)| key).nth(k % plain.len()) {
                    plain.remove(key);
                }
            }
            let mut touched = plain.clone();
            reserve_touched(&mut touched, extra);
            let capacity = touched.capacity();
            prop_assert!(capacity >= plain.len() + extra);
            prop_assert_eq!(touched.len(), plain.len());
            let n = capacity - plain.len();
            prop_assert_eq!(next_keys(&mut touched, n), next_keys(&mut plain, n));
            prop_assert_eq!(touched.capacity(), capacity, "no growth");
        }
    }

    /// Keys the next `n` inserts would get.
    fn next_keys(slab: &mut Slab<u64>, n: usize) -> Vec<usize> {
        (0..n).map(|_| slab.insert(0)).collect()
    }

    proptest! {
        #[test]
        fn a_restored_slab_hands_out_the_same_keys(
            ops in proptest::collection::vec((any::<bool>(), 0usize..64), 0..300),
        ) {
            let mut slab = Slab::new();
            for (i, (insert, pick)) in ops.into_iter().enumerate() {
                let keys: Vec<usize> = slab.iter().map(|(k, _)| k).collect();
                if insert || keys.is_empty() {
                    slab.insert(i as u64);
                } else {
                    slab.remove(keys[pick % keys.len()]);
                }
            }
            let bytes = postcard::to_stdvec(&Holder(slab.clone())).expect("encode");
            let Holder(mut restored) = postcard::from_bytes(&bytes).expect("decode");
            let original: Vec<_> = slab.iter().map(|(k, v)| (k, *v)).collect();
            let copy: Vec<_> = restored.iter().map(|(k, v)| (k, *v)).collect();
            prop_assert_eq!(original, copy);
            let n = slab.capacity() + 8;
            prop_assert_eq!(next_keys(&mut slab, n), next_keys(&mut restored, n));
        }
    }

    #[test]
    fn overlapping_keys_are_refused() {
        let image = (vec![(0u32, 5u64)], vec![0u32]);
        let bytes = postcard::to_stdvec(&image).expect("encode");
        assert!(postcard::from_bytes::<Holder>(&bytes).is_err());
    }
}
