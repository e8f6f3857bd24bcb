//! The order book of one instrument: two price ladders whose levels are intrusive FIFO queues
//! of orders (prev/next slots into the engine's order store), the held trigger orders, and the
//! last trade price. Cancel by slot is O(1); best bid and ask are O(1).

mod check;
mod image;
mod ladder;
mod outliers;
pub(crate) mod triggers;
pub mod view;

use crate::fixed::{Price, Qty};
use crate::ids::OrderRef;
use crate::order::{LiveState, NIL, OrderStore, Side};
use crate::store::DenseStore;
use ladder::Ladder;
use triggers::HeldTriggers;

/// One price level: a FIFO of orders, the amount it shows and what icebergs hide in it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct Level {
    pub(crate) price: Price,
    /// Visible amount: every order's remaining, an iceberg's shown part only.
    pub(crate) total: Qty,
    pub(crate) count: u32,
    pub(crate) head: u32,
    pub(crate) tail: u32,
    /// Icebergs' reserves behind their shown parts (rebuilt from the orders on restore).
    #[serde(skip)]
    pub(crate) hidden: Qty,
}

/// What the book shows of an order it just queued ([`Book::push_back`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Booked {
    pub(crate) order: OrderRef,
    pub(crate) side: Side,
    pub(crate) price: Price,
    /// Its visible amount: all that remains, or an iceberg's shown part.
    pub(crate) shown: Qty,
}

/// Book of one instrument.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(from = "SavedBook")]
pub(crate) struct Book {
    /// The bid ladder (index 0, `Side::Buy`) and the ask ladder (1, `Side::Sell`), picked
    /// with the side as an index: a branch on the side mispredicted about as often as the
    /// flow changes side, several times a command.
    ladders: [Ladder; 2],
    pub(crate) levels: DenseStore<Level>,
    /// Held trigger orders watching the last trade price.
    pub(crate) on_last: HeldTriggers,
    /// Held trigger orders watching the mark price (futures); not in the legacy image,
    /// which had none.
    #[serde(skip)]
    pub(crate) on_mark: HeldTriggers,
    /// Price of the last trade.
    pub(crate) last_price: Option<Price>,
    /// The last price at which the last-price triggers were last found settled (none due,
    /// none to ratchet); `None` once a trigger has been held since. While the price stays
    /// there, no trigger can be due, so most commands skip the look at the queues.
    #[serde(skip)]
    pub(crate) settled_at: Option<Option<Price>>,
    /// Book sequence: how many commands changed this book (its levels or their queues).
    /// Streams number their book updates with it, one per command, and REST shows it.
    pub(crate) sequence: u64,
    /// Event sequence number of the last change, to count each command once; not saved
    /// (no command is in progress when an image is taken).
    #[serde(skip)]
    pub(crate) changed_at: u64,
    /// Set when a side's best price changed since the engine last looked
    /// (`Engine::book_changed`): only then can the published top be stale, so a command
    /// that leaves both best prices where they were has no top to compare.
    #[serde(skip)]
    pub(crate) top_moved: bool,
}

/// What a book's image of snapshot format 6 and older holds, in its order (the rest
/// starts empty).
#[derive(serde::Deserialize)]
struct SavedBook {
    bids: Ladder,
    asks: Ladder,
    levels: DenseStore<Level>,
    on_last: HeldTriggers,
    last_price: Option<Price>,
    sequence: u64,
}

impl From<SavedBook> for Book {
    fn from(saved: SavedBook) -> Self {
        Self {
            ladders: [saved.bids, saved.asks],
            levels: saved.levels,
            on_last: saved.on_last,
            last_price: saved.last_price,
            sequence: saved.sequence,
            ..Self::default()
        }
    }
}

/// Ladder key of a price: smaller is better on either side (a bid's key is its negated
/// price). Computed without a branch on the side, which is as random as the flow.
#[inline(always)]
pub(crate) fn key(side: Side, price: Price) -> i64 {
    negate_for_bids(side, price.0)
}

/// Price of a ladder key of `side` (the inverse of [`key`]).
#[inline(always)]
fn price_of(side: Side, key: i64) -> Price {
    Price(negate_for_bids(side, key))
}

/// `value` negated on the bid side, kept on the ask side: with `mask` all ones for a bid
/// and zero for an ask, `(value ^ mask) - mask` is `-value` or `value`.
#[inline(always)]
fn negate_for_bids(side: Side, value: i64) -> i64 {
    let mask = i64::from(side == Side::Sell) - 1;
    (value ^ mask).wrapping_sub(mask)
}

impl Book {
    /// The held triggers watching `reference`.
    #[inline]
    pub(crate) fn held(&self, reference: crate::order::TriggerRef) -> &HeldTriggers {
        match reference {
            crate::order::TriggerRef::LastPrice => &self.on_last,
            crate::order::TriggerRef::MarkPrice => &self.on_mark,
        }
    }

    /// The held triggers watching `reference`, to change.
    #[inline]
    pub(crate) fn held_mut(&mut self, reference: crate::order::TriggerRef) -> &mut HeldTriggers {
        match reference {
            crate::order::TriggerRef::LastPrice => &mut self.on_last,
            crate::order::TriggerRef::MarkPrice => &mut self.on_mark,
        }
    }

    #[inline(always)]
    fn ladder(&self, side: Side) -> &Ladder {
        &self.ladders[side as usize]
    }

    #[inline(always)]
    fn ladder_mut(&mut self, side: Side) -> &mut Ladder {
        &mut self.ladders[side as usize]
    }

    /// Best level of `side`: its price (from its key: the level is not read) and level
    /// index. Always inlined (as the ladder reads under it are): it is a few loads, and
    /// out of line its optional pair went through memory.
    #[inline(always)]
    pub(crate) fn best(&self, side: Side) -> Option<(Price, u32)> {
        self.ladder(side)
            .first()
            .map(|(k, level)| (price_of(side, k), level))
    }

    /// Best price of `side`, from the ladder alone.
    #[inline(always)]
    pub(crate) fn best_price(&self, side: Side) -> Option<Price> {
        self.ladder(side).first_key().map(|k| price_of(side, k))
    }

    /// Sets both ladders' cached best keys from their levels (a decoder that filled the
    /// ladders in directly calls it).
    pub(crate) fn recompute_best(&mut self) {
        for ladder in &mut self.ladders {
            ladder.recompute_best();
        }
    }

    /// Best bid and best ask.
    #[inline]
    pub(crate) fn top(&self) -> (Option<Price>, Option<Price>) {
        (self.best_price(Side::Buy), self.best_price(Side::Sell))
    }

    /// Levels of `side`, best first.
    pub(crate) fn levels_of(&self, side: Side) -> impl Iterator<Item = &Level> + '_ {
        self.ladder(side)
            .iter()
            .map(move |(_, level)| &self.levels[level as usize])
    }

    /// Number of price levels on `side`.
    pub(crate) fn depth(&self, side: Side) -> usize {
        self.ladder(side).len()
    }

    /// The level of `side` at `price` and its last order, as the ladder last noted them
    /// (`NIL`: none known): what an order joining that level will update and link
    /// behind, named without reading the level, so that both records can be fetched at
    /// once.
    #[inline(always)]
    pub(crate) fn join_hint(&self, side: Side, price: Price) -> (u32, u32) {
        self.ladder(side).join_hint(key(side, price))
    }

    /// The last order of the level of `side` at `price` ([`Book::join_hint`]).
    #[inline(always)]
    pub(crate) fn tail_hint(&self, side: Side, price: Price) -> u32 {
        self.join_hint(side, price).1
    }

    /// Address of level `level`'s record, for a hint (0 past the store's room).
    #[inline]
    pub(crate) fn level_address(&self, level: u32) -> usize {
        self.levels.record_address(level as usize)
    }

    /// True when an order on `side` limited at `limit` would take liquidity.
    #[inline]
    pub(crate) fn would_take(&self, side: Side, limit: Price) -> bool {
        self.best_price(side.opposite())
            .is_some_and(|price| side.crosses(limit, price))
    }

    /// Appends an order to the back of its price level and marks it resting; returns
    /// what the book now shows of it. Always inlined, as `unlink` is: a call's saved
    /// registers and reloads cost about a fifth of the work. The order's record is looked
    /// up once (its links are written while it is at hand: finding the level needs the
    /// book only), then the old last order's.
    #[inline(always)]
    pub(crate) fn push_back(&mut self, orders: &mut OrderStore, slot: u32) -> Booked {
        let order = &mut orders[slot as usize];
        order.state = LiveState::Resting;
        let booked = Booked {
            order: order.handle(),
            side: order.side,
            price: order.price,
            shown: order.visible(),
        };
        let remaining = order.remaining();
        let (level_idx, old_tail) =
            self.join(booked.side, booked.price, slot, remaining, booked.shown);
        order.prev = old_tail;
        order.next = NIL;
        order.level = level_idx;
        if old_tail != NIL {
            orders[old_tail as usize].next = slot;
        }
        booked
    }

    /// Puts `slot` last in the level of `side` at `price` (made if there is none), with
    /// its amounts; returns the level and the order it now follows (`NIL`: none).
    #[inline(always)]
    fn join(
        &mut self,
        side: Side,
        price: Price,
        slot: u32,
        remaining: Qty,
        visible: Qty,
    ) -> (u32, u32) {
        let k = key(side, price);
        let level_idx = match self.ladder(side).get(k) {
            Some(level) => level,
            None => {
                let level = self.levels.insert(Level {
                    price,
                    total: Qty(0),
                    count: 0,
                    head: NIL,
                    tail: NIL,
                    hidden: Qty(0),
                });
                self.top_moved |= self.ladder_mut(side).insert(k, level);
                level
            }
        };
        let level = &mut self.levels[level_idx as usize];
        let old_tail = level.tail;
        level.tail = slot;
        if old_tail == NIL {
            level.head = slot;
        }
        level.total.0 += visible.0;
        level.hidden.0 += remaining.0 - visible.0;
        level.count += 1;
        self.ladder_mut(side).note_tail(k, slot);
        (level_idx, old_tail)
    }

    /// Takes a resting order out of its level; removes the level when it empties.
    #[inline(always)]
    pub(crate) fn unlink(&mut self, orders: &mut OrderStore, slot: u32) {
        // Its own links are cleared while the record is at hand: one look-up.
        let order = &mut orders[slot as usize];
        let (prev, next, level_idx, side, remaining, visible) = (
            order.prev,
            order.next,
            order.level,
            order.side,
            order.remaining(),
            order.visible(),
        );
        order.prev = NIL;
        order.next = NIL;
        order.level = NIL;
        let level = &mut self.levels[level_idx as usize];
        // The head's `prev` is never read (see `Order::prev`), so taking the head out
        // leaves its successor's record alone: a fill ends the head, and on a deep book
        // that record is a miss the matching loop would wait for on every fill.
        let head = level.head == slot;
        if head {
            level.head = next;
        } else {
            orders[prev as usize].next = next;
        }
        if next == NIL {
            level.tail = if head { NIL } else { prev };
        } else if !head {
            orders[next as usize].prev = prev;
        }
        level.total.0 -= visible.0;
        level.hidden.0 -= remaining.0 - visible.0;
        level.count -= 1;
        let price = level.price;
        if level.count == 0 {
            self.levels.remove(level_idx);
            self.top_moved |= self.ladder_mut(side).remove(key(side, price));
        } else if next == NIL {
            // The last order left: the one before it is last now.
            self.ladder_mut(side).note_tail(key(side, price), prev);
        }
    }

    /// Lowers a level's total after a resting order shrank by `qty` (a fill or a size-down).
    #[inline]
    pub(crate) fn reduce(&mut self, level: u32, qty: Qty) {
        self.levels[level as usize].total.0 -= qty.0;
    }

    /// Shows `shown` more of an iceberg whose shown part just filled, and moves it to the
    /// back of its level: a replenished part queues behind what was there.
    pub(crate) fn replenish(&mut self, orders: &mut OrderStore, slot: u32, shown: Qty) {
        let (level_idx, prev, next) = {
            let o = &orders[slot as usize];
            (o.level, o.prev, o.next)
        };
        let level = &mut self.levels[level_idx as usize];
        level.total.0 += shown.0;
        level.hidden.0 -= shown.0;
        orders[slot as usize].shown = shown;
        if next == NIL {
            return;
        }
        // Unlink from where it is (it has a successor, so it is not the tail)...
        if level.head == slot {
            level.head = next;
        } else {
            orders[next as usize].prev = prev;
            orders[prev as usize].next = next;
        }
        // ...and append behind the tail.
        let tail = level.tail;
        orders[tail as usize].next = slot;
        level.tail = slot;
        let price = level.price;
        let o = &mut orders[slot as usize];
        self.ladder_mut(o.side).note_tail(key(o.side, price), slot);
        o.prev = tail;
        o.next = NIL;
    }

    /// The level of `side` at `price`, if there is one.
    pub(crate) fn level_at(&self, side: Side, price: Price) -> Option<&Level> {
        let index = self.ladder(side).get(key(side, price))?;
        self.levels.get(index as usize)
    }

    /// Whether `amount` can be filled against the opposite side within `limit`, counting
    /// whole levels (no self-trade rules).
    pub(crate) fn can_fill(&self, side: Side, limit: Price, amount: Qty) -> bool {
        let mut need = amount.0;
        for level in self.levels_of(side.opposite()) {
            if !side.crosses(limit, level.price) {
                return false;
            }
            need -= level.total.0 + level.hidden.0;
            if need <= 0 {
                return true;
            }
        }
        false
    }
}

/// A vacant slot's level has price 0 (prices are positive); `head` links the free list.
impl crate::store::StoreRecord for Level {
    fn vacancy(next: u32) -> Self {
        Self {
            head: next,
            ..<Self as crate::persist::slab_image::Filler>::filler()
        }
    }
    #[inline]
    fn is_vacant(&self) -> bool {
        self.price.0 == 0
    }
    #[inline]
    fn next_vacant(&self) -> u32 {
        self.head
    }
    #[inline]
    fn vacate(&mut self, next: u32) {
        self.price = Price(0);
        self.head = next;
    }
}

impl crate::persist::slab_image::Filler for Level {
    fn filler() -> Self {
        Self {
            price: Price(0),
            total: Qty(0),
            count: 0,
            head: NIL,
            tail: NIL,
            hidden: Qty(0),
        }
    }
}
