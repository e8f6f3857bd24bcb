//! What a command did to the books, as consumers see it: the book sequence, which rises once
//! per command that changed a book, and the `TopOfBook` events for books whose best bid or
//! ask moved.

use super::Engine;
use crate::event::{Event, EventSink};
use crate::ids::InstrumentId;

impl Engine {
    /// Records that book `b` changed at event `seq`: the book sequence rises once per
    /// command, at its first change.
    #[inline]
    pub(crate) fn book_changed(&mut self, b: usize, seq: u64) {
        let book = &mut self.books[b];
        if book.changed_at <= self.command_base {
            book.sequence += 1;
        }
        book.changed_at = seq;
        if self.publish_top_of_book && !self.tops[b].dirty {
            self.tops[b].dirty = true;
            self.dirty_books.push(b as u16);
        }
    }

    /// Emits `TopOfBook` for every changed book whose best bid or ask moved, by index.
    #[inline]
    pub(super) fn publish_tops<S: EventSink>(&mut self, sink: &mut S) {
        if !self.dirty_books.is_empty() {
            self.publish_changed_tops(sink);
        }
    }

    #[inline(never)]
    fn publish_changed_tops<S: EventSink>(&mut self, sink: &mut S) {
        if self.dirty_books.len() > 1 {
            self.dirty_books.sort_unstable();
        }
        for i in 0..self.dirty_books.len() {
            let b = self.dirty_books[i];
            let book = &self.books[usize::from(b)];
            let top = book.top();
            let published = &mut self.tops[usize::from(b)];
            published.dirty = false;
            if top != published.top {
                published.top = top;
                self.emit(
                    sink,
                    Event::TopOfBook {
                        instrument: InstrumentId(b),
                        bid: top.0,
                        ask: top.1,
                    },
                );
            }
        }
        self.dirty_books.clear();
    }
}
