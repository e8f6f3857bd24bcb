//! Amend: change an open order's total amount and/or price in one step. A size-down at the
//! same price keeps queue priority; a price change or a size-up loses it and may trade. Every
//! check runs before anything changes, so a refused amend leaves the order as it was.

use super::place::{check_amount, check_min_size, check_price};
use super::{Applied, Engine};
use crate::error::EngineError;
use crate::event::{Event, EventSink};
use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, CurrencyId, OrderRef};
use crate::order::{LiveState, Side, TimeInForce};
use crate::refdata::InstrumentState;

impl Engine {
    pub(super) fn amend<S: EventSink>(
        &mut self,
        account: AccountId,
        order: OrderRef,
        amount: Option<Qty>,
        price: Option<Price>,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        let AmendPlan {
            slot,
            b,
            side,
            filled,
            new_amount,
            new_price,
            keeps_priority,
            reserve_delta,
        } = self.plan_amend(account, order, amount, price)?;

        let now = self.now;
        let o = &mut self.orders[slot as usize];
        let (state, level, old_amount, old_price) = (o.state, o.level, o.amount, o.price);
        let instrument = o.instrument;
        if state == LiveState::Resting && keeps_priority {
            o.amount = new_amount;
            o.updated = now;
            self.books[b].reduce(level, Qty(old_amount.0 - new_amount.0));
        } else if state == LiveState::Resting {
            self.books[b].unlink(&mut self.orders, slot);
            let o = &mut self.orders[slot as usize];
            o.amount = new_amount;
            o.price = new_price;
            o.state = LiveState::Taking;
            if o.iceberg {
                // Only an iceberg's third line is written: a plain order's stays cold.
                o.shown = crate::fixed::Qty(0);
                o.iceberg = false;
            }
            o.updated = now;
        } else {
            o.amount = new_amount;
            o.price = new_price;
            o.updated = now;
        }
        // What the record now holds, from the values just written (not read back).
        let event = Event::OrderAmended {
            order,
            account,
            instrument,
            price: (new_price.0 != 0).then_some(new_price),
            amount: new_amount,
            remaining: Qty(new_amount.0 - filled.0),
            kept_priority: state != LiveState::Resting || keeps_priority,
        };
        let seq = self.emit(sink, event);
        if let Some((currency, delta)) = reserve_delta.filter(|r| r.1 != 0) {
            self.orders[slot as usize].reserved += delta;
            if self.settlements[b].futures.is_some() {
                self.futures.account_mut(account).order_margin += delta;
            }
            self.lock(account, currency, delta, sink);
        }
        // Amending a resting order to what it already is leaves the book as it was.
        if state == LiveState::Resting && (!keeps_priority || new_amount != old_amount) {
            if keeps_priority {
                self.book_changed(b, seq, side, old_price);
            } else {
                // It left its level: that level changed too, whatever follows.
                self.note_level(b, side, old_price);
                // A move to a price that takes nothing (most moves) goes straight to the
                // back of its new level: matching would find nothing to do.
                if self.books[b].would_take(side, new_price) {
                    self.book_changed(b, seq, side, old_price);
                    self.enter(slot, sink);
                } else {
                    self.rest(slot, instrument, sink);
                }
                self.settle_entries(instrument, sink);
            }
        }
        Ok(Applied {
            order: Some(order),
            ..Applied::default()
        })
    }

    /// Every check of an amend, before anything changes: ownership, the market's state,
    /// the new amount and price, post-only, and (with balances) the reservation it needs.
    #[inline(always)]
    fn plan_amend(
        &self,
        account: AccountId,
        order: OrderRef,
        amount: Option<Qty>,
        price: Option<Price>,
    ) -> Result<AmendPlan, EngineError> {
        if amount.is_none() && price.is_none() {
            return Err(EngineError::EmptyAmend);
        }
        let slot = self.owned_slot(account, order)?;
        let o = &self.orders[slot as usize];
        let inst = self.instrument(o.instrument)?;
        if matches!(
            inst.state,
            InstrumentState::Suspended | InstrumentState::Closed
        ) {
            return Err(EngineError::InstrumentNotTrading);
        }
        let new_amount = amount.unwrap_or(o.amount);
        let new_price = price.unwrap_or(o.price);
        check_amount(new_amount)?;
        if new_amount <= o.filled {
            return Err(EngineError::AmendBelowFilled);
        }
        // A held market-type or trailing trigger order has no limit to move (a trailing
        // stop-limit's is set when it fires); it is sized at its trigger.
        let unpriced = o.state == LiveState::PendingTrigger && !o.order_type.reserves_at_entry();
        if unpriced && price.is_some() {
            return Err(EngineError::InvalidPrice);
        }
        let size_price = if unpriced { o.trigger_price } else { new_price };
        if !unpriced {
            check_price(inst, new_price)?;
        }
        check_min_size(inst, size_price, new_amount)?;
        let price_changed = new_price != o.price;
        let (side, filled) = (o.side, o.filled);
        // An iceberg re-queues on any amend (what it shows is recomputed as it rests).
        let keeps_priority = !price_changed && new_amount <= o.amount && !o.is_iceberg();
        let b = usize::from(o.instrument.0);
        if self.hinting && o.state == LiveState::Resting && price_changed {
            // What the move will write, asked for while the checks run: the records of
            // its queue neighbours and its level (the unlink), and where it goes.
            self.hint_record(o.prev);
            self.hint_record(o.next);
            self.hint_join(b, side, new_price, o.level);
        }
        let must_not_take =
            o.time_in_force == TimeInForce::PostOnly || inst.state == InstrumentState::PostOnly;
        if o.state == LiveState::Resting
            && price_changed
            && must_not_take
            && self.books[b].would_take(o.side, new_price)
        {
            return Err(EngineError::PostOnlyWouldTake);
        }
        // The reservation follows the new price and amount; more of it must be available.
        let reserve_delta =
            self.amend_reservation(account, slot, new_price, new_amount, unpriced)?;
        Ok(AmendPlan {
            slot,
            b,
            side,
            filled,
            new_amount,
            new_price,
            keeps_priority,
            reserve_delta,
        })
    }
    /// The reservation change an amend to `new_price` and `new_amount` makes (none with
    /// balances off or for an unpriced trigger order), refused when more is needed than is
    /// available.
    #[inline(always)]
    fn amend_reservation(
        &self,
        account: AccountId,
        slot: u32,
        new_price: Price,
        new_amount: Qty,
        unpriced: bool,
    ) -> Result<Option<(CurrencyId, i64)>, EngineError> {
        if !self.enforce_balances || unpriced {
            return Ok(None);
        }
        let o = &self.orders[slot as usize];
        let remaining = Qty(new_amount.0 - o.filled.0);
        let (currency, need) = self.reservation(o.instrument, o.side, new_price, remaining, 0);
        let delta = need - i128::from(o.reserved);
        let futures = self.settlements[usize::from(o.instrument.0)]
            .futures
            .is_some();
        // A spot reservation that does not grow needs no look at the balance: what is
        // available never goes below zero (a sell moved in price keeps its reservation).
        if (delta > 0 || futures) && {
            let available = self.accounts.accounts[account.0 as usize]
                .balances
                .get(currency)
                .available;
            delta > i128::from(available)
                || (futures && delta > self.margin_state(account).available())
        } {
            return Err(EngineError::InsufficientFunds);
        }
        Ok(Some((currency, delta as i64)))
    }
}

/// What an amend's checks found: the order, its new terms, whether it keeps its place,
/// and the change of its reservation.
struct AmendPlan {
    slot: u32,
    /// The order's book.
    b: usize,
    side: Side,
    filled: Qty,
    new_amount: Qty,
    new_price: Price,
    keeps_priority: bool,
    reserve_delta: Option<(CurrencyId, i64)>,
}
