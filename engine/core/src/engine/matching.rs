//! Matching: an incoming (or moved, or triggered) order against the opposite side in
//! price-time priority at the maker's price, with self-trade prevention; then the remainder
//! rests or is cancelled (held trigger orders are the triggers module's).

use super::Engine;
use crate::event::{CancelReason, Event, EventSink, Trade};
use crate::fixed::{Notional, Price, Qty};
use crate::ids::{AccountId, InstrumentId, OrderRef, TradeId};
use crate::order::{LiveState, Side, StpMode};

/// What the matching loop reads of its taker on every fill.
struct Taker {
    slot: u32,
    instrument: InstrumentId,
    side: Side,
    /// The worst price it takes.
    limit: Price,
    account: AccountId,
    stp: StpMode,
    reference: OrderRef,
    reduce_only: bool,
}

/// How matching of a taker ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Filled, or no more crossing liquidity.
    Exhausted,
    /// Self-trade prevention cancels the taker.
    SelfTrade,
    /// A reduce-only taker whose position is flat: nothing more may fill.
    PositionClosed,
}

impl Engine {
    /// Matches the order in `slot` (state `Taking`), then rests or cancels its remainder.
    pub(super) fn enter<S: EventSink>(&mut self, slot: u32, sink: &mut S) {
        let o = &self.orders[slot as usize];
        // Most entries (new orders and moves away from the touch) cross nothing: they skip
        // the matching loop, kept out of line, and the state it sets up.
        let crosses = self.books[usize::from(o.instrument.0)].would_take(o.side, o.match_limit());
        let stop = if crosses {
            self.take_liquidity(slot, sink)
        } else {
            Stop::Exhausted
        };
        let o = &self.orders[slot as usize];
        let remaining = o.remaining();
        if remaining.0 == 0 {
            self.release_order(slot, sink);
            if !self.links.is_empty() {
                self.on_end(slot, None, sink);
            }
            self.finish(slot);
            return;
        }
        let rests = !o.order_type.is_market() && o.time_in_force.rests();
        if stop == Stop::Exhausted && rests {
            self.rest(slot, o.instrument, sink);
        } else {
            let reason = match stop {
                Stop::SelfTrade => CancelReason::SelfTrade,
                Stop::Exhausted | Stop::PositionClosed => CancelReason::Unfilled,
            };
            self.end_taker(slot, reason, sink);
        }
    }

    /// Cancels a taker (not on the book) and drops it.
    pub(super) fn end_taker<S: EventSink>(
        &mut self,
        slot: u32,
        reason: CancelReason,
        sink: &mut S,
    ) {
        let o = &self.orders[slot as usize];
        let event = Event::OrderCancelled {
            order: o.handle(),
            account: o.account,
            instrument: o.instrument,
            remaining: o.remaining(),
            reason,
        };
        self.emit(sink, event);
        self.release_order(slot, sink);
        if !self.links.is_empty() {
            self.on_end(slot, Some(reason), sink);
        }
        self.finish(slot);
    }

    /// Puts the order in `slot`, of `instrument`, on the book.
    pub(super) fn rest<S: EventSink>(&mut self, slot: u32, instrument: InstrumentId, sink: &mut S) {
        if !self.displays.is_empty() {
            self.show_first_part(slot);
        }
        let b = usize::from(instrument.0);
        let o = &self.orders[slot as usize];
        // The order it will link behind, asked for now: otherwise that record's miss
        // waits for the level record's, which names it.
        self.hint_record(self.books[b].tail_hint(o.side, o.price));
        let booked = self.books[b].push_back(&mut self.orders, slot);
        let seq = self.emit(
            sink,
            Event::OrderBooked {
                order: booked.order,
                instrument,
                side: booked.side,
                price: booked.price,
                remaining: booked.shown,
            },
        );
        self.book_changed(b, seq, booked.side, booked.price);
    }

    /// An iceberg about to rest shows its first part (nothing for an order without a
    /// display).
    #[cold]
    fn show_first_part(&mut self, slot: u32) {
        let o = &mut self.orders[slot as usize];
        if let Some(display) = self.displays.get(o.handle()) {
            o.shown = Qty(display.0.min(o.remaining().0));
            o.iceberg = true;
        }
    }

    /// The matching loop proper: one maker per iteration, best level first, FIFO inside it.
    #[inline(never)]
    fn take_liquidity<S: EventSink>(&mut self, taker_slot: u32, sink: &mut S) -> Stop {
        let taker = self.taker(taker_slot);
        let b = usize::from(taker.instrument.0);
        loop {
            let remaining = self.orders[taker_slot as usize].remaining();
            if remaining.0 == 0 {
                return Stop::Exhausted;
            }
            let Some((price, level)) = self.books[b].best(taker.side.opposite()) else {
                return Stop::Exhausted;
            };
            if !taker.side.crosses(taker.limit, price) {
                return Stop::Exhausted;
            }
            let maker_slot = self.books[b].levels[level as usize].head;
            let maker = &self.orders[maker_slot as usize];
            // The next maker in the queue and its account links: misses of their own on a
            // deep book, now on their way while this fill is settled; this maker's links
            // came that way, so its neighbours' (what ending it rewrites) can be named.
            if self.hinting {
                self.hint_record(maker.next);
                self.account_chains.hint(maker.next);
                self.account_chains.hint_neighbours(maker_slot);
            }
            if taker.stp != StpMode::None && maker.account == taker.account {
                match self.prevent_self_trade(taker.stp, maker_slot, sink) {
                    Some(stop) => return stop,
                    None => continue,
                }
            }
            let mut qty = Qty(remaining.0.min(maker.visible().0));
            if taker.reduce_only || maker.reduce_only {
                match self.reduce_only_fill(&taker, maker_slot, qty, sink) {
                    Ok(room) => qty = room,
                    Err(Some(stop)) => return stop,
                    Err(None) => continue,
                }
            }
            self.fill(&taker, maker_slot, level, price, qty, sink);
        }
    }

    /// The taker's terms the loop reads on every fill.
    #[inline(always)]
    fn taker(&self, slot: u32) -> Taker {
        let taker = &self.orders[slot as usize];
        let (instrument, side, limit) = (taker.instrument, taker.side, taker.match_limit());
        // A futures market buy matches up to the price it was margined at.
        let limit = match self.settlements[usize::from(instrument.0)].futures {
            Some(m) if side == Side::Buy && limit.0 == i64::MAX => self
                .market_order_bound(usize::from(m), side)
                .unwrap_or(limit),
            _ => limit,
        };
        Taker {
            slot,
            instrument,
            side,
            limit,
            account: taker.account,
            stp: taker.stp,
            reference: taker.handle(),
            reduce_only: taker.reduce_only,
        }
    }

    /// Self-trade prevention against the maker in `maker_slot`: how matching stops, or
    /// `None` to go on with the next maker (the oldest was cancelled).
    #[cold]
    fn prevent_self_trade<S: EventSink>(
        &mut self,
        stp: StpMode,
        maker_slot: u32,
        sink: &mut S,
    ) -> Option<Stop> {
        match stp {
            StpMode::CancelNewest => Some(Stop::SelfTrade),
            StpMode::CancelOldest => {
                self.cancel_live(maker_slot, CancelReason::SelfTrade, sink);
                None
            }
            StpMode::CancelBoth | StpMode::None => {
                self.cancel_live(maker_slot, CancelReason::SelfTrade, sink);
                Some(Stop::SelfTrade)
            }
        }
    }

    /// Futures reduce-only: `qty` cut to what takes neither side past flat. `Err(Some)`
    /// stops matching (the taker's position is flat), `Err(None)` goes on with the next
    /// maker (this one was flat and is cancelled).
    #[cold]
    fn reduce_only_fill<S: EventSink>(
        &mut self,
        taker: &Taker,
        maker_slot: u32,
        mut qty: Qty,
        sink: &mut S,
    ) -> Result<Qty, Option<Stop>> {
        let maker = &self.orders[maker_slot as usize];
        let (maker_account, maker_reduce_only) = (maker.account, maker.reduce_only);
        let b = usize::from(taker.instrument.0);
        let Some(m) = self.settlements[b].futures.map(usize::from) else {
            return Ok(qty);
        };
        if taker.reduce_only {
            let room = self.reduce_room(taker.account, m, taker.side);
            if room == 0 {
                return Err(Some(Stop::PositionClosed));
            }
            qty.0 = qty.0.min(room);
        }
        if maker_reduce_only {
            let room = self.reduce_room(maker_account, m, taker.side.opposite());
            if room == 0 {
                self.cancel_live(maker_slot, CancelReason::Unfilled, sink);
                return Err(None);
            }
            qty.0 = qty.0.min(room);
        }
        Ok(qty)
    }

    /// One fill of `qty` at `price` between the taker and the maker at the head of
    /// `level`: both records, the trade and its balances, the book, and the maker's end or
    /// its iceberg's next part.
    #[inline(always)]
    fn fill<S: EventSink>(
        &mut self,
        taker: &Taker,
        maker_slot: u32,
        level: u32,
        price: Price,
        qty: Qty,
        sink: &mut S,
    ) {
        let b = usize::from(taker.instrument.0);
        let (maker_fee, taker_fee) = if self.enforce_balances {
            self.settle_fill(taker.slot, maker_slot, price, qty)
        } else {
            (0, 0)
        };
        let notional = price.notional(qty);
        let (maker_ref, maker_account, maker_remaining, replenish) =
            self.fill_maker(maker_slot, notional, qty);
        let taker_remaining = self.fill_taker(taker.slot, notional, qty);
        let id = TradeId(self.next_trade);
        self.next_trade += 1;
        let seq = self.emit(
            sink,
            Event::Trade(Trade {
                id,
                instrument: taker.instrument,
                price,
                amount: qty,
                taker_side: taker.side,
                maker: maker_ref,
                maker_account,
                maker_remaining,
                taker: taker.reference,
                taker_account: taker.account,
                taker_remaining,
                maker_fee,
                taker_fee,
            }),
        );
        if self.enforce_balances {
            self.emit_fill_balances(taker.instrument, taker.account, maker_account, sink);
        }
        let book = &mut self.books[b];
        book.last_price = Some(price);
        book.reduce(level, qty);
        if maker_remaining.0 == 0 {
            book.unlink(&mut self.orders, maker_slot);
        }
        // After the unlink: the level it may have emptied is part of this change.
        self.book_changed(b, seq, taker.side.opposite(), price);
        if maker_remaining.0 == 0 {
            self.release_order(maker_slot, sink);
            if !self.links.is_empty() {
                self.on_end(maker_slot, None, sink);
            }
            self.finish(maker_slot);
        } else if replenish {
            self.replenish(maker_slot, sink);
        }
        if !self.links.is_empty() {
            // A fill of an OCO leg cancels its peer before the sweep goes on.
            self.resolve_oco(maker_ref, sink);
            self.resolve_oco(taker.reference, sink);
        }
    }

    /// The maker's record after a fill of `qty` for `notional`: its handle, account and
    /// remaining amount, and whether its iceberg's shown part is used up.
    #[inline(always)]
    fn fill_maker(
        &mut self,
        maker_slot: u32,
        notional: Notional,
        qty: Qty,
    ) -> (OrderRef, AccountId, Qty, bool) {
        let now = self.now;
        let maker = &mut self.orders[maker_slot as usize];
        maker.filled.0 += qty.0;
        if maker.remaining().0 > 0 {
            // These sit in the record's second line, read again only while the order
            // lives: a filled maker is removed below, so its second line stays cold.
            maker.filled_notional.0 += notional.0;
            maker.updated = now;
        }
        // An iceberg whose shown part is used up shows its next part (below).
        let replenish = maker.iceberg && {
            maker.shown.0 -= qty.0;
            maker.shown.0 == 0
        };
        (maker.handle(), maker.account, maker.remaining(), replenish)
    }

    /// The taker's record after a fill of `qty` for `notional`: its remaining amount.
    #[inline(always)]
    fn fill_taker(&mut self, taker_slot: u32, notional: Notional, qty: Qty) -> Qty {
        let now = self.now;
        let taker = &mut self.orders[taker_slot as usize];
        taker.filled.0 += qty.0;
        taker.filled_notional.0 += notional.0;
        taker.updated = now;
        taker.remaining()
    }

    /// Shows an iceberg's next part at the back of its level, as a new booking.
    fn replenish<S: EventSink>(&mut self, slot: u32, sink: &mut S) {
        let o = &self.orders[slot as usize];
        let display = self
            .displays
            .get(o.handle())
            .copied()
            .unwrap_or(o.remaining());
        let shown = Qty(display.0.min(o.remaining().0));
        let (instrument, side, price, handle) = (o.instrument, o.side, o.price, o.handle());
        let b = usize::from(instrument.0);
        self.books[b].replenish(&mut self.orders, slot, shown);
        let event = Event::OrderBooked {
            order: handle,
            instrument,
            side,
            price,
            remaining: shown,
        };
        let seq = self.emit(sink, event);
        self.book_changed(b, seq, side, price);
    }

    /// Cancels the order in `slot` unless it has already ended: a list of slots taken
    /// before a mass cancel may name the other leg of an OCO pair, cancelled with its peer.
    pub(super) fn cancel_if_live<S: EventSink>(
        &mut self,
        slot: u32,
        reason: CancelReason,
        sink: &mut S,
    ) {
        if self.orders.contains(slot as usize) {
            self.cancel_live(slot, reason, sink);
        }
    }

    /// Cancels a live order (resting or pending trigger), emits the event, drops it.
    pub(super) fn cancel_live<S: EventSink>(
        &mut self,
        slot: u32,
        reason: CancelReason,
        sink: &mut S,
    ) {
        let o = &self.orders[slot as usize];
        let (instrument, handle, account, remaining) =
            (o.instrument, o.handle(), o.account, o.remaining());
        let (side, price) = (o.side, o.price);
        let b = usize::from(instrument.0);
        let resting = o.state == LiveState::Resting;
        match o.state {
            LiveState::Resting => self.books[b].unlink(&mut self.orders, slot),
            LiveState::PendingTrigger => {
                self.unhold(slot);
            }
            LiveState::Taking => {}
        }
        let seq = self.emit(
            sink,
            Event::OrderCancelled {
                order: handle,
                account,
                instrument,
                remaining,
                reason,
            },
        );
        // A held stop or an incoming order's remainder was never on the book.
        if resting {
            self.book_changed(b, seq, side, price);
        }
        self.release_order(slot, sink);
        if !self.links.is_empty() {
            self.on_end(slot, Some(reason), sink);
        }
        self.finish(slot);
    }

    /// An iceberg has its display and shows no more than it; no other order has one.
    pub(super) fn check_iceberg(
        &self,
        o: &crate::order::Order,
    ) -> Result<(), super::integrity::IntegrityError> {
        match (self.displays.get(o.handle()), o.is_iceberg()) {
            (Some(display), true) if o.shown <= *display && o.shown <= o.remaining() => Ok(()),
            (None, false) => Ok(()),
            _ => Err(super::integrity::IntegrityError(
                "an iceberg without its display, or a display on another order".into(),
            )),
        }
    }
}
