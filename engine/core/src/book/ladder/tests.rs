//! The ladder against a sorted map, and what its window moves cost.

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

/// A ladder of `n` levels at keys 0, 1, ... (level index = key).
fn ladder_of(n: i64) -> Ladder {
    let mut ladder = Ladder::default();
    for key in 0..n {
        ladder.insert(key, key as u32);
    }
    ladder
}

/// SECURITY "still open" (fails on the code before: 2,000 moves of the window, each
/// re-filing the 2,000 levels, 100 us a command in the engine): a level far better than
/// the window, added and removed in a loop, moves the window only as fast as the map
/// operations pay for, and the ladder still answers as a sorted map throughout.
#[test]
fn a_far_better_level_added_and_removed_does_not_move_the_window_each_time() {
    let mut ladder = ladder_of(2_000);
    let mut moves = 0;
    for round in 0..1_000 {
        let base = ladder.base;
        assert!(ladder.insert(-100_000, 9_999));
        assert_eq!(ladder.first(), Some((-100_000, 9_999)), "round {round}");
        moves += usize::from(ladder.base != base);
        let base = ladder.base;
        assert!(ladder.remove(-100_000));
        assert_eq!(ladder.first(), Some((0, 0)), "round {round}");
        moves += usize::from(ladder.base != base);
    }
    // Paid for by the 4,000 operations (the book's and the loop's) and the allowance.
    assert!(moves <= 4, "{moves} window moves");
    let paid = 4_000 + FREE_MOVES as u64 * moves as u64;
    assert!(ladder.carried() <= paid, "{} carried", ladder.carried());
    assert_eq!(ladder.checked_entries().map(|e| e.len()), Ok(2_000));
    assert_eq!(ladder.iter().count(), 2_000);
}

/// A market that moves for good (each new level better than the last, the old ones
/// staying) takes the window with it: the moves cost about a level per new level.
#[test]
fn the_window_follows_a_best_that_keeps_moving() {
    let mut ladder = ladder_of(3_000);
    for key in (-6_000..0).rev() {
        assert!(ladder.insert(key, (key + 10_000) as u32));
    }
    assert!(
        ladder.window_index(-6_000).is_some(),
        "the best is in the window"
    );
    assert!(
        ladder.carried() <= 9_000 + 10 * FREE_MOVES as u64,
        "{}",
        ladder.carried()
    );
    let entries = ladder.checked_entries().expect("in shape");
    assert_eq!(entries.len(), 9_000);
    assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
}
