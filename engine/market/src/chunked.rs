//! A double-ended history buffer in fixed-size chunks: appends at the back, removals at the
//! front, indexing in O(1). History grows for as long as it is retained, and a `VecDeque`
//! that doubles copies everything it holds and faults in a fresh region twice the size each
//! time; chunks are allocated once at their final capacity, so every record is written once
//! and every page is touched once, and dropping from the front frees whole chunks.
//!
//! [`ChunkedDeque::share`] makes a copy that shares every chunk (a snapshot's: one
//! reference per chunk, not a copy of every record); the deque then copies a chunk the
//! first time it changes one the copy still holds, and takes it back without a copy once
//! the copy is gone. Chunks it owns alone are changed in place with no atomic operation.

use std::collections::VecDeque;
use std::sync::Arc;

/// Records per chunk (a few hundred KiB for history records: large enough that chunk
/// allocation is rare, small enough that a fresh store costs little and a chunk copied on
/// write is a short pause).
const CHUNK: usize = 1024;

/// One chunk: its records in `own`, or, while a copy may share them, in `shared` (and
/// `own` empty).
#[derive(Debug, Clone)]
struct Chunk<T> {
    own: Vec<Option<T>>,
    shared: Option<Arc<Vec<Option<T>>>>,
}

impl<T> Chunk<T> {
    fn new(own: Vec<Option<T>>) -> Self {
        Self { own, shared: None }
    }

    fn records(&self) -> &[Option<T>] {
        self.shared.as_deref().unwrap_or(&self.own)
    }
}

impl<T: Clone> Chunk<T> {
    /// The records to change: taken back from `shared` first (copied, at full capacity,
    /// if a copy still holds them).
    fn own(&mut self) -> &mut Vec<Option<T>> {
        if let Some(shared) = self.shared.take() {
            self.own = Arc::try_unwrap(shared).unwrap_or_else(|held| {
                let mut copy = Vec::with_capacity(CHUNK.max(held.len()));
                copy.extend(held.iter().cloned());
                copy
            });
            if self.own.capacity() < CHUNK {
                self.own.reserve_exact(CHUNK - self.own.len());
            }
        }
        &mut self.own
    }

    /// A chunk sharing this one's records (which move behind a reference first).
    fn share(&mut self) -> Self {
        let shared = (self.shared)
            .get_or_insert_with(|| Arc::new(std::mem::take(&mut self.own)))
            .clone();
        Self {
            own: Vec::new(),
            shared: Some(shared),
        }
    }
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct ChunkedDeque<T> {
    /// Full chunks except the last; the first one's first `head` slots are gone (emptied,
    /// or, in a shared chunk, left for the copy).
    chunks: VecDeque<Chunk<T>>,
    /// Slots gone at the start of the first chunk.
    head: usize,
    len: usize,
}

impl<T> Default for ChunkedDeque<T> {
    fn default() -> Self {
        Self {
            chunks: VecDeque::new(),
            head: 0,
            len: 0,
        }
    }
}

impl<T> ChunkedDeque<T> {
    /// Elements held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn position(&self, index: usize) -> Option<(usize, usize)> {
        if index >= self.len {
            return None;
        }
        let at = index + self.head;
        Some((at / CHUNK, at % CHUNK))
    }

    /// The element at `index` from the front.
    pub fn get(&self, index: usize) -> Option<&T> {
        let (chunk, slot) = self.position(index)?;
        self.chunks.get(chunk)?.records().get(slot)?.as_ref()
    }

    /// The front element.
    pub fn front(&self) -> Option<&T> {
        self.get(0)
    }

    /// Front to back.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + '_ {
        let head = self.head;
        self.chunks
            .iter()
            .enumerate()
            .flat_map(move |(k, c)| {
                let records = c.records();
                records[if k == 0 { head.min(records.len()) } else { 0 }..].iter()
            })
            .flatten()
    }

    /// Front to back from `index` on, without walking the elements before it.
    pub fn iter_from(&self, index: usize) -> impl Iterator<Item = &T> + '_ {
        let at = index.min(self.len) + self.head;
        let (chunk, slot) = (at / CHUNK, at % CHUNK);
        self.chunks
            .range(chunk.min(self.chunks.len())..)
            .enumerate()
            .flat_map(move |(k, c)| {
                let records = c.records();
                let start = if k == 0 { slot.min(records.len()) } else { 0 };
                records[start..].iter().flatten()
            })
    }
}

impl<T: Clone> ChunkedDeque<T> {
    /// A copy sharing every chunk with this deque (see the module documentation).
    pub fn share(&mut self) -> Self {
        Self {
            chunks: self.chunks.iter_mut().map(Chunk::share).collect(),
            head: self.head,
            len: self.len,
        }
    }

    /// Appends at the back.
    pub fn push_back(&mut self, value: T) {
        match self.chunks.back_mut() {
            Some(last) if last.records().len() < CHUNK => last.own().push(Some(value)),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(Some(value));
                self.chunks.push_back(Chunk::new(chunk));
            }
        }
        self.len += 1;
    }

    /// Removes the front element. From a chunk a live copy shares, the element is cloned
    /// and left in place (the chunk goes once the front passes it): no chunk is copied
    /// for it.
    pub fn pop_front(&mut self) -> Option<T> {
        let first = self.chunks.front_mut()?;
        let value = match &first.shared {
            // Only this deque can add a holder, so a count of one stays one.
            Some(shared) if Arc::strong_count(shared) > 1 => shared.get(self.head)?.clone(),
            _ => first.own().get_mut(self.head)?.take(),
        };
        self.head += 1;
        self.len -= 1;
        if self.head == first.records().len() {
            self.chunks.pop_front();
            self.head = 0;
        }
        value
    }

    /// The element at `index` from the front, to change.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        let (chunk, slot) = self.position(index)?;
        self.chunks.get_mut(chunk)?.own().get_mut(slot)?.as_mut()
    }
}

impl<T: Clone> FromIterator<T> for ChunkedDeque<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut deque = Self::default();
        for item in items {
            deque.push_back(item);
        }
        deque
    }
}

impl<T: serde::Serialize> serde::Serialize for ChunkedDeque<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.len))?;
        for item in self.iter() {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

impl<'de, T: serde::Deserialize<'de> + Clone> serde::Deserialize<'de> for ChunkedDeque<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Vec::<T>::deserialize(deserializer)?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a step of the property test does.
    #[derive(Debug, Clone)]
    enum Step {
        Push(usize),
        Pop(usize),
        /// Adds to the element at this index (taken modulo the length).
        Change(usize),
        /// Takes a copy, to be checked against the model as it was then.
        Copy,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (1usize..3000).prop_map(Step::Push),
            (1usize..3000).prop_map(Step::Pop),
            any::<usize>().prop_map(Step::Change),
            Just(Step::Copy),
        ]
    }

    fn same(chunked: &ChunkedDeque<u32>, model: &VecDeque<u32>) -> Result<(), TestCaseError> {
        prop_assert_eq!(chunked.len(), model.len());
        prop_assert_eq!(chunked.front(), model.front());
        for i in [
            0,
            1,
            CHUNK - 1,
            CHUNK,
            model.len().saturating_sub(1),
            model.len(),
        ] {
            prop_assert_eq!(chunked.get(i), model.get(i));
        }
        prop_assert!(chunked.iter().eq(model.iter()));
        prop_assert!(chunked.iter().rev().eq(model.iter().rev()));
        for from in [
            0,
            1,
            CHUNK - 1,
            CHUNK + 1,
            model.len() / 2,
            model.len(),
            model.len() + 5,
        ] {
            prop_assert!(chunked.iter_from(from).eq(model.iter().skip(from)));
        }
        Ok(())
    }

    proptest! {
        /// Against a `VecDeque`: the same elements at the same indexes after any mix of
        /// appends, front removals and changes, across chunk boundaries; and every copy
        /// taken on the way keeps what it held then, whatever the original does after.
        #[test]
        fn behaves_like_a_vecdeque_and_copies_stay_as_taken(steps in prop::collection::vec(step(), 1..16)) {
            let mut chunked = ChunkedDeque::default();
            let mut model = VecDeque::new();
            let mut copies = Vec::new();
            let mut next = 0u32;
            for step in steps {
                match step {
                    Step::Push(n) => for _ in 0..n {
                        chunked.push_back(next);
                        model.push_back(next);
                        next += 1;
                    },
                    Step::Pop(n) => for _ in 0..n {
                        prop_assert_eq!(chunked.pop_front(), model.pop_front());
                    },
                    Step::Change(at) if !model.is_empty() => {
                        let at = at % model.len();
                        let changed = chunked.get_mut(at).map(|v| { *v += 1_000_000; *v });
                        model[at] += 1_000_000;
                        prop_assert_eq!(changed, Some(model[at]));
                    }
                    Step::Change(_) => prop_assert!(chunked.get_mut(0).is_none()),
                    Step::Copy => copies.push((chunked.share(), model.clone())),
                }
                same(&chunked, &model)?;
            }
            for (copy, then) in &copies {
                same(copy, then)?;
            }
        }
    }

    #[test]
    fn a_copy_shares_its_chunks_until_one_is_changed() {
        let mut deque: ChunkedDeque<u64> = (0..3 * CHUNK as u64).collect();
        let copy = deque.share();
        let shared = |a: &ChunkedDeque<u64>, b: &ChunkedDeque<u64>| {
            let same = |(x, y): (&Chunk<u64>, &Chunk<u64>)| match (&x.shared, &y.shared) {
                (Some(x), Some(y)) => Arc::ptr_eq(x, y),
                _ => false,
            };
            a.chunks
                .iter()
                .zip(&b.chunks)
                .filter(|&pair| same(pair))
                .count()
        };
        assert_eq!(shared(&deque, &copy), 3, "a copy is references");
        if let Some(v) = deque.get_mut(CHUNK + 1) {
            *v = 7;
        }
        assert_eq!(
            shared(&deque, &copy),
            2,
            "the changed chunk alone is copied"
        );
        assert_eq!(copy.get(CHUNK + 1), Some(&(CHUNK as u64 + 1)));
        assert_eq!(deque.pop_front(), Some(0));
        assert_eq!(shared(&deque, &copy), 2, "a removal copies nothing");
        assert_eq!(copy.front(), Some(&0));
        // Once the copy is gone, a chunk is taken back as it is.
        let held = deque.chunks[2].records().as_ptr();
        drop(copy);
        assert_eq!(deque.pop_front(), Some(1));
        assert!(deque.chunks[0].shared.is_none(), "taken back by a removal");
        if let Some(v) = deque.get_mut(2 * CHUNK - 1) {
            *v = 8;
        }
        assert_eq!(deque.chunks[2].own.as_ptr(), held, "not copied");
        // A plain clone is a copy of its own.
        let mut other = deque.clone();
        if let Some(v) = other.get_mut(2 * CHUNK - 1) {
            *v = 9;
        }
        assert_eq!(
            deque.get(2 * CHUNK - 1),
            Some(&8),
            "the clone changed its own"
        );
    }

    #[test]
    fn serialises_as_its_elements_in_order() {
        let mut deque: ChunkedDeque<u64> = (0..2500).collect();
        for _ in 0..1500 {
            deque.pop_front();
        }
        let bytes = postcard::to_stdvec(&deque).expect("encode");
        let back: ChunkedDeque<u64> = postcard::from_bytes(&bytes).expect("decode");
        assert!(back.iter().copied().eq(1500..2500));
        assert_eq!(back.get(0), Some(&1500));
    }
}
