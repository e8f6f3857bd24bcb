//! State-hash checkpoints between the nodes of a group: each records (command number,
//! state hash) at fixed command numbers; a follower compares its own with the leader's.
//! Equal hashes at the same command mean equal states; one difference means this node's
//! state is not the leader's, and it must stop.

/// How a follower's checkpoints compare with the leader's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compared {
    /// No command in common.
    Nothing,
    /// Every common command has equal hashes; the highest of them.
    Equal(u64),
    /// The first common command whose hashes differ.
    Differs {
        /// The command.
        seq: u64,
        /// This node's hash after it.
        mine: u64,
        /// The leader's.
        theirs: u64,
    },
}

/// Compares this node's checkpoints with the leader's (each a list of (command, hash)).
pub(crate) fn compare(mine: &[(u64, u64)], theirs: &[(u64, u64)]) -> Compared {
    let mut highest = None;
    for &(seq, hash) in mine {
        match theirs.iter().find(|c| c.0 == seq) {
            Some(&(_, other)) if other != hash => {
                return Compared::Differs {
                    seq,
                    mine: hash,
                    theirs: other,
                };
            }
            Some(_) => highest = highest.max(Some(seq)),
            None => {}
        }
    }
    highest.map_or(Compared::Nothing, Compared::Equal)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn equal_hashes_at_common_commands_are_equal_and_one_difference_is_found() {
        let leader = [(100, 7), (200, 8), (300, 9)];
        assert_eq!(
            compare(&[(200, 8), (300, 9)], &leader),
            Compared::Equal(300)
        );
        assert_eq!(
            compare(&[(300, 9), (400, 1)], &leader),
            Compared::Equal(300)
        );
        assert_eq!(compare(&[(400, 1)], &leader), Compared::Nothing);
        assert_eq!(
            compare(&[(100, 7), (200, 5), (300, 9)], &leader),
            Compared::Differs {
                seq: 200,
                mine: 5,
                theirs: 8
            }
        );
    }

    proptest! {
        /// Against a map: a difference is reported if and only if some common command's
        /// hashes differ; otherwise the highest common command.
        #[test]
        fn compare_agrees_with_a_map(
            mine in proptest::collection::btree_map(0u64..50, 0u64..3, 0..20),
            theirs in proptest::collection::btree_map(0u64..50, 0u64..3, 0..20),
        ) {
            let common: Vec<u64> = mine.keys().filter(|k| theirs.contains_key(k)).copied().collect();
            let differs = common.iter().find(|k| mine[k] != theirs[k]);
            let m: Vec<(u64, u64)> = mine.into_iter().collect();
            let t: Vec<(u64, u64)> = theirs.into_iter().collect();
            let got = compare(&m, &t);
            match (differs, common.last()) {
                (Some(&seq), _) => {
                    let found = matches!(got, Compared::Differs { seq: s, .. } if s == seq);
                    prop_assert!(found, "{:?} where {} differs", got, seq);
                }
                (None, Some(&last)) => prop_assert_eq!(got, Compared::Equal(last)),
                (None, None) => prop_assert_eq!(got, Compared::Nothing),
            }
        }
    }
}
