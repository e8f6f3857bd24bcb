//! A book to and from its saved image: the levels and their priority order per side. The
//! ladders' windows and bitsets are rebuilt from that order, and the stop queues by the
//! engine from its orders.

use super::{Book, Level, key};
use crate::fixed::{Price, Qty};
use crate::image::{BookImage, LevelImage};
use crate::order::Side;
use crate::store::DenseStore;

impl Book {
    /// The book's image; `published_top` is the engine's record of its last published top.
    pub(crate) fn image(
        &self,
        published_top: (Option<Price>, Option<Price>),
    ) -> Result<BookImage, String> {
        let side = |side: Side| self.ladder(side).iter().map(|(_, level)| level).collect();
        Ok(BookImage {
            levels: self.levels.to_image(|l| LevelImage {
                price: l.price,
                total: l.total,
                count: l.count,
                head: l.head,
                tail: l.tail,
            })?,
            bids: side(Side::Buy),
            asks: side(Side::Sell),
            last_price: self.last_price,
            sequence: self.sequence,
            published_top,
        })
    }

    /// Rebuilds a book (without its stop queues) from an image. Each side must list
    /// distinct levels strictly best first; whether the levels and orders agree is left to
    /// the engine's integrity check.
    pub(crate) fn from_image(image: BookImage) -> Result<Self, String> {
        let mut book = Book {
            levels: DenseStore::from_image(image.levels, |l| Level {
                price: l.price,
                total: l.total,
                count: l.count,
                head: l.head,
                tail: l.tail,
                hidden: Qty(0),
            })?,
            last_price: image.last_price,
            sequence: image.sequence,
            ..Book::default()
        };
        for (side, levels) in [(Side::Buy, image.bids), (Side::Sell, image.asks)] {
            let mut previous = None;
            for level in levels {
                let (price, tail) = book
                    .levels
                    .get(level as usize)
                    .map(|l| (l.price, l.tail))
                    .ok_or("a side lists a missing level")?;
                let k = key(side, price);
                if previous.is_some_and(|p| p >= k) {
                    return Err("a side's levels are not in strict priority order".into());
                }
                previous = Some(k);
                book.ladder_mut(side).insert(k, level);
                book.ladder_mut(side).note_tail(k, tail);
            }
        }
        // The engine restores the published top beside the book.
        book.top_moved = false;
        Ok(book)
    }
}
