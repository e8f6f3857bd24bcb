//! A double-ended history buffer in fixed-size chunks: appends at the back, removals at the
//! front, indexing in O(1). History grows for as long as it is retained, and a `VecDeque`
//! that doubles copies everything it holds and faults in a fresh region twice the size each
//! time; chunks are allocated once at their final capacity, so every record is written once
//! and every page is touched once, and dropping from the front frees whole chunks.

use std::collections::VecDeque;

/// Records per chunk (a few hundred KiB for history records: large enough that chunk
/// allocation is rare, small enough that a fresh store costs little).
const CHUNK: usize = 1024;

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct ChunkedDeque<T> {
    /// Full chunks except the last; the first has its first `head` slots emptied.
    chunks: VecDeque<Vec<Option<T>>>,
    /// Emptied slots at the start of the first chunk.
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

    /// Appends at the back.
    pub fn push_back(&mut self, value: T) {
        match self.chunks.back_mut() {
            Some(last) if last.len() < CHUNK => last.push(Some(value)),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(Some(value));
                self.chunks.push_back(chunk);
            }
        }
        self.len += 1;
    }

    /// Removes the front element.
    pub fn pop_front(&mut self) -> Option<T> {
        let first = self.chunks.front_mut()?;
        let value = first.get_mut(self.head)?.take();
        self.head += 1;
        self.len -= 1;
        if self.head == first.len() {
            self.chunks.pop_front();
            self.head = 0;
        }
        value
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
        self.chunks.get(chunk)?.get(slot)?.as_ref()
    }

    /// The element at `index` from the front, to change.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        let (chunk, slot) = self.position(index)?;
        self.chunks.get_mut(chunk)?.get_mut(slot)?.as_mut()
    }

    /// The front element.
    pub fn front(&self) -> Option<&T> {
        self.get(0)
    }

    /// Front to back.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + '_ {
        self.chunks.iter().flatten().flatten()
    }

    /// Front to back from `index` on, without walking the elements before it.
    pub fn iter_from(&self, index: usize) -> impl Iterator<Item = &T> + '_ {
        let at = index.min(self.len) + self.head;
        let (chunk, slot) = (at / CHUNK, at % CHUNK);
        self.chunks
            .range(chunk.min(self.chunks.len())..)
            .enumerate()
            .flat_map(move |(k, c)| {
                let start = if k == 0 { slot.min(c.len()) } else { 0 };
                c[start..].iter().flatten()
            })
    }
}

impl<T> FromIterator<T> for ChunkedDeque<T> {
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

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for ChunkedDeque<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Vec::<T>::deserialize(deserializer)?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a `VecDeque`: the same elements at the same indexes after any mix of
        /// appends and front removals, across chunk boundaries.
        #[test]
        fn behaves_like_a_vecdeque(ops in prop::collection::vec((any::<bool>(), 1usize..3000), 1..12)) {
            let mut chunked = ChunkedDeque::default();
            let mut model = VecDeque::new();
            let mut next = 0u32;
            for (push, n) in ops {
                for _ in 0..n {
                    if push {
                        chunked.push_back(next);
                        model.push_back(next);
                        next += 1;
                    } else {
                        prop_assert_eq!(chunked.pop_front(), model.pop_front());
                    }
                }
                prop_assert_eq!(chunked.len(), model.len());
                prop_assert_eq!(chunked.front(), model.front());
                for i in [0, 1, CHUNK - 1, CHUNK, model.len().saturating_sub(1), model.len()] {
                    prop_assert_eq!(chunked.get(i), model.get(i));
                }
                prop_assert!(chunked.iter().eq(model.iter()));
                prop_assert!(chunked.iter().rev().eq(model.iter().rev()));
                for from in [0, 1, CHUNK - 1, CHUNK + 1, model.len() / 2, model.len(), model.len() + 5] {
                    prop_assert!(chunked.iter_from(from).eq(model.iter().skip(from)));
                }
            }
        }
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
