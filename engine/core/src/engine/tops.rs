//! What a command did to the books, as consumers see it: the book sequence, which rises once
//! per command that changed a book, and the `TopOfBook` events for books whose best bid or
//! ask moved.

use super::Engine;
use crate::event::{Event, EventSink};
use crate::fixed::Price;
use crate::ids::InstrumentId;
use crate::order::Side;

impl Engine {
    /// Records that the level of book `b` at `price` on `side` changed at event `seq`: the
    /// book sequence rises once per command, at its first change. Called after every change of a book's levels, so a
    /// best price that moved (`Book::top_moved`) is always seen in the command that moved
    /// it; only then is the book queued for the top comparison.
    #[inline(always)]
    pub(crate) fn book_changed(&mut self, b: usize, seq: u64, side: Side, price: Price) {
        self.note_level(b, side, price);
        let book = &mut self.books[b];
        if book.changed_at <= self.command_base {
            book.sequence += 1;
        }
        book.changed_at = seq;
        if std::mem::take(&mut book.top_moved) && self.publish_top_of_book && !self.tops[b].dirty {
            self.tops[b].dirty = true;
            self.dirty_books.push(b as u16);
        }
    }

    /// Emits `TopOfBook` for every changed book whose best bid or ask moved, by index.
    /// Always inlined: most commands change no book or one, and the check is all they pay.
    #[inline(always)]
    pub(super) fn publish_tops<S: EventSink>(&mut self, sink: &mut S) {
        if !self.dirty_books.is_empty() {
            self.publish_changed_tops(sink);
        }
    }

    /// The tops of the changed books compared with what was published. Writing the event
    /// is out of line: most changes leave both best prices where they were, and this
    /// function stays small enough to need no stack frame for the event.
    #[inline(never)]
    fn publish_changed_tops<S: EventSink>(&mut self, sink: &mut S) {
        if self.dirty_books.len() > 1 {
            self.dirty_books.sort_unstable();
        }
        for i in 0..self.dirty_books.len() {
            let b = usize::from(self.dirty_books[i]);
            let top = self.books[b].top();
            let published = &mut self.tops[b];
            published.dirty = false;
            if top != published.top {
                published.top = top;
                self.emit_top(b, top, sink);
            }
        }
        self.dirty_books.clear();
    }

    #[inline(never)]
    fn emit_top<S: EventSink>(
        &mut self,
        b: usize,
        (bid, ask): (Option<Price>, Option<Price>),
        sink: &mut S,
    ) {
        let instrument = InstrumentId(b as u16);
        self.emit(
            sink,
            Event::TopOfBook {
                instrument,
                bid,
                ask,
            },
        );
    }
}
