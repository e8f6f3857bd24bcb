//! One side of a book as a depth-limited session follows it: its levels by rank, the rank
//! of the window's last level kept between changes, and the change of the window that a
//! change of levels makes, found in time proportional to that change (not to the depth:
//! a session at a depth of hundreds costs no more a book update than one at depth 1).

use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Included, Unbounded};

/// A side's levels by rank (best first) and its window: the best `depth` of them.
#[derive(Debug)]
pub(super) struct SideWindow {
    depth: usize,
    /// Most levels kept (the depth the book was read to): worse ones are let go, as a
    /// level below that depth was never read, so that a session's copy of a deep book
    /// whose far levels keep changing stays the size of what it read.
    cap: usize,
    /// Rank -> amount resting (the price for asks, its negation for bids).
    levels: BTreeMap<i64, i64>,
    /// Rank of the `depth`-th best level; none while the side has fewer (all are shown).
    edge: Option<i64>,
}

/// The levels one change touched, by rank: amount before and after (none: no level).
type Touched = BTreeMap<i64, (Option<i64>, Option<i64>)>;

impl SideWindow {
    /// A side of `levels` (rank, amount), shown `depth` (at least 1) levels deep, keeping
    /// at most `cap` (at least `depth`) levels.
    pub(super) fn new(
        depth: usize,
        cap: usize,
        levels: impl IntoIterator<Item = (i64, i64)>,
    ) -> Self {
        let depth = depth.max(1);
        let mut side = Self {
            depth,
            cap: cap.max(depth),
            levels: levels.into_iter().filter(|l| l.1 > 0).collect(),
            edge: None,
        };
        side.let_go_beyond_cap();
        side.edge = side.levels.keys().nth(depth - 1).copied();
        side
    }

    /// Most levels kept.
    pub(super) fn cap(&self) -> usize {
        self.cap
    }

    /// Levels kept now.
    #[cfg(test)]
    pub(super) fn kept(&self) -> usize {
        self.levels.len()
    }

    fn let_go_beyond_cap(&mut self) {
        while self.levels.len() > self.cap {
            self.levels.pop_last();
        }
    }

    /// Levels shown.
    pub(super) fn depth(&self) -> usize {
        self.depth
    }

    /// The levels shown, best first.
    pub(super) fn window(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        (self.levels.iter().take(self.depth)).map(|(&rank, &amount)| (rank, amount))
    }

    /// Applies `changes` (rank, amount after; 0: gone) and returns the change of the
    /// window: levels that left it (amount 0), entered it, or changed inside it.
    pub(super) fn apply(&mut self, changes: &[(i64, i64)]) -> Vec<(i64, i64)> {
        let touched = self.touch(changes);
        let old_edge = self.edge;
        let inside = |edge: Option<i64>, rank: i64| edge.is_none_or(|e| rank <= e);
        let (mut came, mut went) = (0, 0);
        for (&rank, &(before, after)) in &touched {
            match after {
                Some(amount) => self.levels.insert(rank, amount),
                None => self.levels.remove(&rank),
            };
            match (before, after) {
                (None, Some(_)) if inside(old_edge, rank) => came += 1,
                (Some(_), None) if inside(old_edge, rank) => went += 1,
                _ => {}
            }
        }
        let new_edge = self.edge_after(old_edge, came, went);
        self.edge = new_edge;
        let mut change = Vec::new();
        for (&rank, &(before, after)) in &touched {
            let shown_before = before.filter(|_| inside(old_edge, rank));
            match after.filter(|_| inside(new_edge, rank)) {
                Some(amount) if shown_before != Some(amount) => change.push((rank, amount)),
                None if shown_before.is_some() => change.push((rank, 0)),
                _ => {}
            }
        }
        // Levels no change named that crossed the window's edge as it moved.
        let untouched = |rank: &i64| !touched.contains_key(rank);
        let (range, entering) = match (old_edge, new_edge) {
            (Some(old), Some(new)) if new > old => ((Excluded(old), Included(new)), true),
            (Some(old), Some(new)) if new < old => ((Excluded(new), Included(old)), false),
            (Some(old), None) => ((Excluded(old), Unbounded), true),
            (None, Some(new)) => ((Excluded(new), Unbounded), false),
            _ => {
                self.let_go_beyond_cap();
                return change;
            }
        };
        for (&rank, &amount) in self.levels.range(range).filter(|(r, _)| untouched(r)) {
            change.push((rank, if entering { amount } else { 0 }));
        }
        // Only now: the levels that crossed the edge were read above.
        self.let_go_beyond_cap();
        change
    }

    /// Each level `changes` names once, with its amount before and its last amount after
    /// (a sweep names a level for each it took: looked up by rank, not searched).
    fn touch(&self, changes: &[(i64, i64)]) -> Touched {
        let mut touched = Touched::new();
        for &(rank, amount) in changes {
            let after = (amount > 0).then_some(amount);
            let before = self.levels.get(&rank).copied();
            touched.entry(rank).or_insert((before, after)).1 = after;
        }
        touched
    }

    /// The window's edge once `came` levels arrived and `went` left at or before the old
    /// edge: a walk from it of as many levels as that moved it.
    fn edge_after(&self, old: Option<i64>, came: usize, went: usize) -> Option<i64> {
        let Some(old) = old else {
            // Every level was shown: the edge is as many levels from the end as the side
            // now has more than its depth (no more than arrived).
            let beyond = self.levels.len().checked_sub(self.depth)?;
            return self.levels.keys().nth_back(beyond).copied();
        };
        let shown = self.depth + came - went;
        if shown >= self.depth {
            let back = shown - self.depth;
            self.levels.range(..=old).map(|(&r, _)| r).nth_back(back)
        } else {
            let more = self.depth - shown;
            let mut after = self
                .levels
                .range((Excluded(old), Unbounded))
                .map(|(&r, _)| r);
            after.nth(more - 1)
        }
    }

    /// The edge as a walk from the best level finds it (for checks).
    #[cfg(test)]
    pub(super) fn edge_walked(&self) -> Option<i64> {
        self.levels.keys().nth(self.depth - 1).copied()
    }

    #[cfg(test)]
    pub(super) fn edge(&self) -> Option<i64> {
        self.edge
    }
}
