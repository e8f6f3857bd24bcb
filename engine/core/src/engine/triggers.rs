//! Held trigger orders: stops, take-profits and trailing stops wait off the book for their
//! reference price (last trade, or a future's mark) to reach their trigger; a trailing
//! order's trigger first follows each new best reference price. A triggered order goes
//! through the checks of a new order at that moment (instrument state, price, size,
//! reduce-only, and the funds of the types that reserve only now); a refusal ends it with
//! its reason. One trigger is entered at a time, and prices are checked again after each,
//! so cascades are deterministic; each trigger fires once, so they are bounded.

use super::Engine;
use super::place::{check_min_size, check_price};
use crate::error::EngineError;
use crate::event::{CancelReason, Event, EventSink};
use crate::fixed::{Price, Qty};
use crate::ids::{InstrumentId, OrderRef};
use crate::order::{LiveState, NewOrder, OrderType, Side, TimeInForce, Trail, TriggerRef};
use crate::refdata::InstrumentState;

/// A trailing order's terms and the best reference price it has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trailing {
    /// Distance of the trigger from `extreme`.
    pub(crate) trail: Trail,
    /// A trailing stop-limit's limit offset past its trigger (0 for a trailing market).
    pub(crate) limit_offset: Price,
    /// Highest reference seen (a sell) or lowest (a buy) since entry.
    pub(crate) extreme: Price,
}

const REFERENCES: [TriggerRef; 2] = [TriggerRef::LastPrice, TriggerRef::MarkPrice];

impl Engine {
    /// The current value of an instrument's reference price.
    pub(crate) fn reference_price(&self, b: usize, reference: TriggerRef) -> Option<Price> {
        match reference {
            TriggerRef::LastPrice => self.books[b].last_price,
            TriggerRef::MarkPrice => self.settlements[b]
                .futures
                .and_then(|m| self.mark_price(usize::from(m))),
        }
    }

    /// A new trailing order's terms and first trigger, from the reference price now.
    pub(super) fn trailing_entry(&self, o: &NewOrder) -> Result<(Trailing, Price), EngineError> {
        let trail = o.trail.ok_or(EngineError::InvalidTrail)?;
        let extreme = self
            .reference_price(usize::from(o.instrument.0), o.trigger_ref)
            .ok_or(EngineError::NoReferencePrice)?;
        let trigger = trail.trigger(o.side, extreme);
        let terms = Trailing {
            trail,
            limit_offset: o.limit_offset.unwrap_or_default(),
            extreme,
        };
        Ok((terms, trigger))
    }

    /// Parks an accepted trigger order until its trigger is reached.
    pub(super) fn hold_trigger(&mut self, slot: u32, trailing: Option<Trailing>) {
        let o = &mut self.orders[slot as usize];
        o.state = LiveState::PendingTrigger;
        let rising = o.order_type.fires_rising(o.side);
        let (trigger, id, reference) = (o.trigger_price, o.id, o.trigger_ref);
        let book = &mut self.books[usize::from(o.instrument.0)];
        book.settled_at = None;
        let held = book.held_mut(reference);
        held.hold(&mut self.held_at, rising, trigger, id, slot);
        if let Some(terms) = trailing {
            held.track(&mut self.held_at, rising, terms.extreme, id, slot);
            self.trails.insert(OrderRef { id, slot }, terms);
        }
    }

    /// Takes a held order out of its queues (it is being cancelled or fired); returns its
    /// trailing terms, if it trails.
    pub(super) fn unhold(&mut self, slot: u32) -> Option<Trailing> {
        let o = &self.orders[slot as usize];
        let rising = o.order_type.fires_rising(o.side);
        let (id, reference) = (o.id, o.trigger_ref);
        let held = self.books[usize::from(o.instrument.0)].held_mut(reference);
        held.release(&mut self.held_at, rising, slot);
        let terms = self.trails.remove(OrderRef { id, slot })?;
        held.untrack(&mut self.held_at, rising, slot);
        Some(terms)
    }

    /// Enters every held order of `instrument` whose trigger its reference prices have
    /// reached, one at a time: last-price triggers before mark-price ones, rising before
    /// falling, nearest trigger first, ties by age. Trailing triggers follow each new
    /// price before it is compared. Always inlined: the common case is the check alone,
    /// and a call around it cost more than the check.
    #[inline(always)]
    pub(super) fn run_triggers<S: EventSink>(&mut self, instrument: InstrumentId, sink: &mut S) {
        let book = &self.books[usize::from(instrument.0)];
        // The common cases, nothing held or the last price where it was when nothing was
        // due, cost a length read and a comparison.
        let settled = book.on_last.len() == 0 || book.settled_at == Some(book.last_price);
        if !settled || book.on_mark.len() > 0 {
            self.enter_due_triggers(instrument, sink);
        }
    }

    #[inline(never)]
    fn enter_due_triggers<S: EventSink>(&mut self, instrument: InstrumentId, sink: &mut S) {
        let b = usize::from(instrument.0);
        'entries: loop {
            for reference in REFERENCES {
                let held = self.books[b].held(reference);
                if held.len() == 0 {
                    continue;
                }
                let Some(price) = self.reference_price(b, reference) else {
                    continue;
                };
                self.ratchet(b, reference, price, sink);
                let Some((rising, slot)) = self.books[b].held(reference).first_due(price) else {
                    continue;
                };
                if (self.books[b].held_mut(reference)).release(&mut self.held_at, rising, slot) {
                    self.fire(slot, sink);
                }
                continue 'entries;
            }
            self.books[b].settled_at = Some(self.books[b].last_price);
            return;
        }
    }

    /// Moves the trigger of every trailing order `price` is a new best reference for.
    fn ratchet<S: EventSink>(
        &mut self,
        b: usize,
        reference: TriggerRef,
        price: Price,
        sink: &mut S,
    ) {
        while let Some((rising, id, slot)) = self.books[b].held(reference).first_to_ratchet(price) {
            let Some(terms) = self.trails.get_mut(OrderRef { id, slot }) else {
                return;
            };
            terms.extreme = price;
            let o = &mut self.orders[slot as usize];
            let trigger = terms.trail.trigger(o.side, price);
            let old_trigger = std::mem::replace(&mut o.trigger_price, trigger);
            let (handle, instrument) = (o.handle(), o.instrument);
            let held = self.books[b].held_mut(reference);
            held.untrack(&mut self.held_at, rising, slot);
            held.track(&mut self.held_at, rising, price, id, slot);
            if trigger != old_trigger {
                held.release(&mut self.held_at, rising, slot);
                held.hold(&mut self.held_at, rising, trigger, id, slot);
                let event = Event::TriggerMoved {
                    order: handle,
                    instrument,
                    trigger_price: trigger,
                };
                self.emit(sink, event);
            }
        }
    }

    /// Enters a held order whose trigger was reached (already out of its queue).
    fn fire<S: EventSink>(&mut self, slot: u32, sink: &mut S) {
        let trailing = {
            let o = &self.orders[slot as usize];
            let terms = self.trails.remove(o.handle());
            if terms.is_some() {
                let rising = o.order_type.fires_rising(o.side);
                let reference = o.trigger_ref;
                self.books[usize::from(o.instrument.0)]
                    .held_mut(reference)
                    .untrack(&mut self.held_at, rising, slot);
            }
            terms
        };
        let o = &mut self.orders[slot as usize];
        o.state = LiveState::Taking;
        if o.order_type == OrderType::TrailingStopLimit {
            let offset = trailing.map_or(0, |t| t.limit_offset.0);
            o.price = Price(match o.side {
                Side::Buy => o.trigger_price.0.saturating_add(offset),
                Side::Sell => o.trigger_price.0.saturating_sub(offset),
            });
        }
        let event = Event::StopTriggered {
            order: o.handle(),
            instrument: o.instrument,
            trigger_price: o.trigger_price,
            price: o.price(),
        };
        let id = self.orders[slot as usize].id;
        self.emit(sink, event);
        if !self.links.is_empty() {
            // Firing counts as the leg's turn: its OCO peer is cancelled.
            self.resolve_oco(OrderRef { id, slot }, sink);
        }
        let refused = match self.entry_at_trigger(slot, sink) {
            Err(error) => Some(CancelReason::TriggerRefused(error)),
            Ok(()) => self.refused_by_time_in_force(slot),
        };
        match refused {
            Some(reason) => self.end_taker(slot, reason, sink),
            None => self.enter(slot, sink),
        }
    }

    /// A fill-or-kill that cannot fill or a post-only that would take, as the book stands.
    fn refused_by_time_in_force(&self, slot: u32) -> Option<CancelReason> {
        let o = &self.orders[slot as usize];
        let (instrument, side, limit) = (o.instrument, o.side, o.match_limit());
        match o.time_in_force {
            TimeInForce::FillOrKill
                if !self.can_fill(&super::reach::Taker {
                    instrument,
                    side,
                    limit,
                    amount: o.remaining(),
                    account: o.account,
                    stp: o.stp,
                    reduce_only: o.reduce_only,
                }) =>
            {
                Some(CancelReason::FillOrKillUnfilled)
            }
            TimeInForce::PostOnly
                if self.books[usize::from(instrument.0)].would_take(side, limit) =>
            {
                Some(CancelReason::PostOnlyWouldTake)
            }
            _ => None,
        }
    }

    /// The checks of a new order, at trigger time, and the reservation of the types that
    /// reserve only now. Changes nothing when it refuses.
    fn entry_at_trigger<S: EventSink>(
        &mut self,
        slot: u32,
        sink: &mut S,
    ) -> Result<(), EngineError> {
        let o = &self.orders[slot as usize];
        let b = usize::from(o.instrument.0);
        let inst = &self.instruments[b];
        match inst.state {
            InstrumentState::Suspended | InstrumentState::Closed => {
                return Err(EngineError::InstrumentNotTrading);
            }
            InstrumentState::PostOnly if o.time_in_force != TimeInForce::PostOnly => {
                return Err(EngineError::OnlyPostOnlyAllowed);
            }
            _ => {}
        }
        let remaining = o.remaining();
        // A trailing stop-limit always has a limit now, even one of zero (refused below).
        let limit = match o.order_type {
            OrderType::TrailingStopLimit => Some(o.price),
            _ => o.price(),
        };
        match limit {
            Some(limit) => {
                check_price(inst, limit)?;
                check_min_size(inst, limit, remaining)?;
            }
            None => {
                if let Some((touch, _)) = self.books[b].best(o.side.opposite()) {
                    check_min_size(inst, touch, remaining)?;
                }
            }
        }
        let futures = self.settlements[b].futures.map(usize::from);
        if o.reduce_only {
            return match futures {
                Some(m) if self.reduce_room(o.account, m, o.side) > 0 => Ok(()),
                _ => Err(EngineError::ReduceOnlyWouldIncrease),
            };
        }
        // What reserved when placed holds its reservation; the rest reserve now (market
        // types, trailing orders, and OCO trigger legs, whose peer has just freed its own).
        if o.reserved != 0 {
            return Ok(());
        }
        let request = self.request_of(slot);
        let (currency, need) = if let Some(m) = futures {
            let need = self.futures_entry(&request, m)?;
            (self.futures.markets[m].collateral, need)
        } else if self.enforce_balances {
            self.spot_need(&request, self.orders[slot as usize].stp)?
        } else {
            return Ok(());
        };
        let need = need as i64;
        if self.enforce_balances && need > 0 {
            let account = request.account;
            self.orders[slot as usize].reserved = need;
            if futures.is_some() {
                self.futures.account_mut(account).order_margin += need;
            }
            self.lock(account, currency, need, sink);
        }
        Ok(())
    }

    /// A triggered order's remainder as the request a new order would be.
    fn request_of(&self, slot: u32) -> NewOrder {
        let o = &self.orders[slot as usize];
        let mut request = NewOrder::limit(
            o.account,
            o.instrument,
            o.side,
            o.price,
            Qty(o.remaining().0),
        );
        request.price = o.price();
        request.order_type = o.order_type;
        request.time_in_force = o.time_in_force;
        request.stp = Some(o.stp);
        request
    }

    /// Mark-price triggers of every futures market: the mark moves with the book's touch
    /// and the index, so any command may reach them.
    #[inline]
    pub(super) fn run_mark_triggers<S: EventSink>(&mut self, sink: &mut S) {
        for m in 0..self.futures.markets.len() {
            let instrument = self.futures.markets[m].instrument;
            if self.books[usize::from(instrument.0)].on_mark.len() > 0 {
                self.settle_entries(instrument, sink);
            }
        }
    }

    /// A trailing order has its terms, its trigger is where they put it, and it is indexed
    /// by its best reference price; no other order has terms.
    pub(super) fn check_trailing(
        &self,
        o: &crate::order::Order,
    ) -> Result<(), super::integrity::IntegrityError> {
        let terms = self.trails.get(o.handle());
        let Some(t) = terms.filter(|_| o.order_type.is_trailing()) else {
            return match (o.order_type.is_trailing(), terms) {
                (false, None) => Ok(()),
                _ => Err(super::integrity::IntegrityError(
                    "a trailing order without terms, or terms on another order".into(),
                )),
            };
        };
        let rising = o.order_type.fires_rising(o.side);
        let held = self.books[usize::from(o.instrument.0)].held(o.trigger_ref);
        let key = (crate::book::triggers::extreme_key(rising, t.extreme), o.id);
        if t.trail.trigger(o.side, t.extreme) != o.trigger_price
            || held.trail_key(&self.held_at, rising, o.slot) != Some(key)
        {
            return Err(super::integrity::IntegrityError(
                "a trailing order's trigger or index disagrees with its terms".into(),
            ));
        }
        Ok(())
    }
}
