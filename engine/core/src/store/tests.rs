//! The store against `slab::Slab` as the model: the same slots handed out, the same
//! records found, the same image, through inserts, removals, touched reservations and
//! restores (with orders; levels differ only in how they mark a vacancy).

use proptest::prelude::*;
use slab::Slab;

use super::*;
use crate::order::{Order, OrderStore};
use crate::persist::slab_image::{self, Filler};

/// One step of a run.
#[derive(Debug, Clone)]
enum Step {
    Insert,
    /// Removes the occupied slot at this position among the occupied (mod their count).
    Remove(usize),
    /// A touched reservation of this many more.
    Reserve(usize),
    /// An image taken and restored.
    Restore,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => Just(Step::Insert),
        3 => (0usize..64).prop_map(Step::Remove),
        1 => (0usize..40).prop_map(Step::Reserve),
        1 => Just(Step::Restore),
    ]
}

fn order(id: u64) -> Order {
    Order {
        id,
        ..Order::filler()
    }
}

/// The model's image, as the slab-based store made it.
fn slab_image_of(slab: &Slab<Order>) -> SlabImage<u64> {
    slab_image::to_image(slab, |o| o.id).expect("image")
}

fn restored(image: SlabImage<u64>) -> OrderStore {
    OrderStore::from_image(image, order).expect("restore")
}

proptest! {
    #[test]
    fn the_store_behaves_as_the_slab(steps in prop::collection::vec(step(), 1..250)) {
        let (mut model, mut store) = (Slab::<Order>::with_capacity(4), OrderStore::with_capacity(4));
        let mut next_id = 1u64;
        for step in steps {
            match step {
                Step::Insert => {
                    let expected = model.insert(order(next_id));
                    prop_assert_eq!(store.vacant_key(), expected);
                    prop_assert_eq!(store.insert(order(next_id)) as usize, expected);
                    next_id += 1;
                }
                Step::Remove(pick) => {
                    let keys: Vec<usize> = model.iter().map(|(k, _)| k).collect();
                    if let Some(&key) = keys.get(pick % keys.len().max(1)) {
                        model.remove(key);
                        store.remove(key as u32);
                    }
                }
                Step::Reserve(extra) => {
                    slab_image::reserve_touched(&mut model, extra);
                    store.reserve_touched(extra);
                }
                Step::Restore => {
                    let image = store.to_image(|o| o.id).expect("image");
                    store = restored(image);
                    model = slab_image::from_image(slab_image_of(&model), order).expect("model");
                }
            }
            prop_assert_eq!(store.len(), model.len());
            prop_assert_eq!(store.to_image(|o| o.id).expect("image"), slab_image_of(&model));
            let ids = |it: &mut dyn Iterator<Item = (usize, u64)>| it.collect::<Vec<_>>();
            prop_assert_eq!(
                ids(&mut store.iter().map(|(k, o)| (k, o.id))),
                ids(&mut model.iter().map(|(k, o)| (k, o.id)))
            );
            for slot in 0..store.slots() + 2 {
                prop_assert_eq!(store.get(slot).map(|o| o.id), model.get(slot).map(|o| o.id));
                prop_assert_eq!(store.contains(slot), model.contains(slot));
            }
        }
    }
}

#[test]
fn an_image_with_overlapping_or_missing_slots_is_refused() {
    let overlap = SlabImage {
        occupied: vec![(0u32, 5u64)],
        vacant_in_order: vec![0],
    };
    assert!(OrderStore::from_image(overlap, order).is_err());
    let hole = SlabImage {
        occupied: vec![(2u32, 5u64)],
        vacant_in_order: vec![0],
    };
    assert!(OrderStore::from_image(hole, order).is_err());
}

#[test]
fn an_image_holding_an_order_with_id_zero_is_refused() {
    let image = SlabImage {
        occupied: vec![(0u32, 0u64)],
        vacant_in_order: vec![],
    };
    assert!(OrderStore::from_image(image, order).is_err());
}

#[test]
fn a_record_address_names_the_slot_and_nothing_past_the_room() {
    let mut store = OrderStore::with_capacity(8);
    let first = store.insert(order(1));
    let second = store.insert(order(2));
    let (a, b) = (
        store.record_address(first as usize),
        store.record_address(second as usize),
    );
    assert_eq!(a, &store[first as usize] as *const Order as usize);
    assert_eq!(b - a, std::mem::size_of::<Order>());
    assert_eq!(store.record_address(store.slots().max(8) + 1), 0);
}
