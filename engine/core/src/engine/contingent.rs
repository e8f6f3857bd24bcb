//! Contingent orders: one-cancels-the-other pairs and brackets. An OCO pair's legs share
//! an account, instrument and side; the first fill or trigger of one leg cancels the other
//! (the filled leg works on for its remainder), and so does its end for any other reason. A
//! bracket's entry, once done (filled, or ended by the market after filling part; not when
//! its owner cancels it), places its exits sized to what it filled: a take-profit limit and
//! a stop-loss, linked as an OCO pair. Exits are placed after the taker that completed the
//! entry is done matching, never inside its matching loop.

use super::place::{EntryPlan, check_price};
use super::{Applied, Engine};
use crate::error::EngineError;
use crate::event::{CancelReason, Event, EventSink};
use crate::fixed::Qty;
use crate::ids::{AccountId, InstrumentId, OrderRef};
use crate::order::{BracketExits, NewOrder, OrderType, Side, StpMode, TimeInForce};

/// An order's contingent link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Link {
    /// The other leg of its OCO pair.
    pub(crate) peer: Option<OrderRef>,
    /// A bracket entry's exits.
    pub(crate) exits: Option<BracketExits>,
}

/// A bracket entry that is done: its exits are due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Activation {
    parent: OrderRef,
    account: AccountId,
    instrument: InstrumentId,
    /// Side of the exits (the entry's opposite).
    side: Side,
    amount: Qty,
    stp: StpMode,
    exits: BracketExits,
}

/// Whether an entry ended this way places its exits (it did, when filled completely).
fn places_exits(reason: CancelReason) -> bool {
    !matches!(
        reason,
        CancelReason::Requested
            | CancelReason::CancelAllAfter
            | CancelReason::AccountClosed
            | CancelReason::InstrumentClosed
    )
}

/// An OCO leg: not a market order, and one that can wait (neither immediate nor
/// fill-or-kill).
fn can_be_a_leg(o: &NewOrder) -> bool {
    o.order_type != OrderType::Market
        && !matches!(
            o.time_in_force,
            TimeInForce::ImmediateOrCancelled | TimeInForce::FillOrKill
        )
}

impl Engine {
    pub(super) fn place_oco<S: EventSink>(
        &mut self,
        first: &NewOrder,
        second: &NewOrder,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        let same = first.account == second.account
            && first.instrument == second.instrument
            && first.side == second.side;
        if !same || !can_be_a_leg(first) || !can_be_a_leg(second) {
            return Err(EngineError::InvalidContingent);
        }
        let mut plans = [self.plan_entry(first)?, self.plan_entry(second)?];
        for (plan, o) in plans.iter_mut().zip([first, second]) {
            // A trigger leg reserves when it fires, once its peer (cancelled then) has
            // freed what it held: the pair never holds funds for both legs at once.
            if o.order_type.is_trigger() {
                plan.reservation = None;
            }
        }
        let book = &self.books[usize::from(first.instrument.0)];
        for o in [first, second] {
            if o.order_type == OrderType::Limit
                && o.price.is_some_and(|p| book.would_take(o.side, p))
            {
                return Err(EngineError::PostOnlyWouldTake);
            }
        }
        let holder = self.accounts.holder_of(first.account);
        let open = self.accounts.holder(holder)?.open_orders;
        if plans.iter().filter(|p| p.counted()).count() as u32 + open > self.max_open_orders {
            return Err(EngineError::MaxOpenOrdersExceeded);
        }
        self.check_combined_funds(first.account, &plans)?;
        let slots = [
            self.admit(first, &plans[0], sink),
            self.admit(second, &plans[1], sink),
        ];
        let second_leg = self.link_pair(slots, None, sink);
        let applied = self.start(slots[0], &plans[0], sink);
        self.start(slots[1], &plans[1], sink);
        self.settle_entries(first.instrument, sink);
        Ok(Applied {
            linked: Some(second_leg),
            ..applied
        })
    }

    /// Two limit legs reserve as each would alone; together they must fit what is
    /// available.
    fn check_combined_funds(
        &self,
        account: AccountId,
        plans: &[EntryPlan; 2],
    ) -> Result<(), EngineError> {
        if let (Some((c1, n1)), Some((c2, n2))) = (plans[0].reservation, plans[1].reservation)
            && c1 == c2
        {
            let available = self.accounts.account(account)?.balances.get(c1).available;
            if i128::from(n1) + i128::from(n2) > i128::from(available) {
                return Err(EngineError::InsufficientFunds);
            }
        }
        Ok(())
    }

    /// Links two admitted orders one-cancels-the-other; returns the second's handle.
    fn link_pair<S: EventSink>(
        &mut self,
        slots: [u32; 2],
        parent: Option<OrderRef>,
        sink: &mut S,
    ) -> OrderRef {
        let [a, b] = slots.map(|s| self.orders[s as usize].handle());
        let instrument = self.orders[slots[0] as usize].instrument;
        for (own, peer) in [(a, b), (b, a)] {
            let link = Link {
                peer: Some(peer),
                exits: None,
            };
            self.links.insert(own, link);
        }
        let event = Event::OrdersLinked {
            first: a,
            second: b,
            instrument,
            parent,
        };
        self.emit(sink, event);
        b
    }

    pub(super) fn place_bracket<S: EventSink>(
        &mut self,
        entry: &NewOrder,
        exits: &BracketExits,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        let inst = self.instrument(entry.instrument)?;
        for price in [
            Some(exits.take_profit),
            Some(exits.stop_loss),
            exits.stop_limit,
        ]
        .into_iter()
        .flatten()
        {
            check_price(inst, price)?;
        }
        // A long's profit is above its stop, a short's below.
        let ordered = match entry.side {
            Side::Buy => exits.take_profit > exits.stop_loss,
            Side::Sell => exits.take_profit < exits.stop_loss,
        };
        if !ordered {
            return Err(EngineError::InvalidContingent);
        }
        let plan = self.plan_entry(entry)?;
        let slot = self.admit(entry, &plan, sink);
        let order = self.orders[slot as usize].handle();
        let link = Link {
            peer: None,
            exits: Some(*exits),
        };
        self.links.insert(order, link);
        let event = Event::BracketPlaced {
            order,
            instrument: entry.instrument,
            exits: *exits,
        };
        self.emit(sink, event);
        let applied = self.start(slot, &plan, sink);
        self.settle_entries(entry.instrument, sink);
        Ok(applied)
    }

    /// A linked order filled or fired: its OCO peer is cancelled (at once, so a sweep
    /// cannot fill both).
    pub(super) fn resolve_oco<S: EventSink>(&mut self, order: OrderRef, sink: &mut S) {
        let Some(peer) = self.links.get(order).and_then(|l| l.peer) else {
            return;
        };
        // OCO legs carry no exits: both links go.
        self.links.remove(order);
        self.links.remove(peer);
        if let Some(o) = self.order(peer) {
            let slot = o.slot;
            self.cancel_live(slot, CancelReason::ContingentCancelled, sink);
        }
    }

    /// A linked order is ending (`reason`: how, `None` when it filled completely): its
    /// peer is cancelled, and a bracket entry that filled anything has its exits queued.
    pub(super) fn on_end<S: EventSink>(
        &mut self,
        slot: u32,
        reason: Option<CancelReason>,
        sink: &mut S,
    ) {
        let o = &self.orders[slot as usize];
        let Some(link) = self.links.remove(o.handle()) else {
            return;
        };
        if let Some(exits) = link.exits
            && o.filled.0 > 0
            && reason.is_none_or(places_exits)
        {
            self.activations.push(Activation {
                parent: o.handle(),
                account: o.account,
                instrument: o.instrument,
                side: o.side.opposite(),
                amount: o.filled,
                stp: o.stp,
                exits,
            });
        }
        if let Some(peer) = link.peer {
            self.links.remove(peer);
            if let Some(p) = self.order(peer) {
                let peer_slot = p.slot;
                self.cancel_live(peer_slot, CancelReason::ContingentCancelled, sink);
            }
        }
    }

    /// Triggers of `instrument`, then bracket exits due, until neither has anything left.
    #[inline(always)]
    pub(super) fn settle_entries<S: EventSink>(&mut self, instrument: InstrumentId, sink: &mut S) {
        self.run_triggers(instrument, sink);
        self.run_activations(sink);
    }

    /// Places the exits of every bracket entry that is done, oldest first.
    #[inline(always)]
    pub(super) fn run_activations<S: EventSink>(&mut self, sink: &mut S) {
        if !self.activations.is_empty() {
            self.place_due_exits(sink);
        }
    }

    #[cold]
    #[inline(never)]
    fn place_due_exits<S: EventSink>(&mut self, sink: &mut S) {
        while !self.activations.is_empty() {
            let a = self.activations.remove(0);
            self.activate(a, sink);
            self.run_triggers(a.instrument, sink);
        }
    }

    /// A bracket's exits: a take-profit limit and a stop-loss, as an OCO pair. An exit the
    /// checks of a new order refuse is recorded, ended with its reason.
    fn activate<S: EventSink>(&mut self, a: Activation, sink: &mut S) {
        let mut take_profit = NewOrder::limit(
            a.account,
            a.instrument,
            a.side,
            a.exits.take_profit,
            self.exit_amount(&a),
        );
        take_profit.stp = Some(a.stp);
        let mut stop_loss = take_profit;
        stop_loss.order_type = match a.exits.stop_limit {
            Some(_) => OrderType::Stop,
            None => OrderType::StopMarket,
        };
        stop_loss.price = a.exits.stop_limit;
        stop_loss.trigger_price = Some(a.exits.stop_loss);
        // Both checked against the account before either is admitted: the stop-loss
        // reserves only when it fires (after the take-profit, cancelled then, has freed
        // what it holds), so what the take-profit reserves now is no reason to refuse it.
        let exits = [take_profit, stop_loss];
        let plans = exits.map(|o| self.plan_entry(&o));
        let mut admitted: [Option<(u32, EntryPlan)>; 2] = [None, None];
        for (i, (o, plan)) in exits.iter().zip(plans).enumerate() {
            match plan {
                Ok(mut plan) => {
                    if o.order_type.is_trigger() {
                        plan.reservation = None;
                    }
                    admitted[i] = Some((self.admit(o, &plan, sink), plan));
                }
                Err(error) => self.refuse_exit(o, error, sink),
            }
        }
        if let [Some((first, _)), Some((second, _))] = admitted {
            self.link_pair([first, second], Some(a.parent), sink);
        }
        let admitted =
            admitted.map(|a| a.map(|(slot, plan)| (self.orders[slot as usize].handle(), plan)));
        for (handle, plan) in admitted.into_iter().flatten() {
            // The take-profit may have filled at once and cancelled the stop-loss.
            if let Some(o) = self.order(handle) {
                let slot = o.slot;
                self.start(slot, &plan, sink);
            }
        }
    }

    /// What the exits sell or buy: what the entry filled, and on a spot market no more base
    /// than the account holds (a buy's fee in the base leaves it a little short of what
    /// filled; the exits sell what it has).
    fn exit_amount(&self, a: &Activation) -> Qty {
        let s = &self.settlements[usize::from(a.instrument.0)];
        if a.side == Side::Buy || s.futures.is_some() || !self.enforce_balances {
            return a.amount;
        }
        let available = self
            .accounts
            .account(a.account)
            .map_or(0, |v| v.balances.get(s.base).available);
        Qty(a.amount.0.min(available / s.base_unit.max(1)))
    }

    /// Records a bracket exit the checks refused: accepted, then ended with the reason.
    fn refuse_exit<S: EventSink>(&mut self, o: &NewOrder, error: EngineError, sink: &mut S) {
        let stp = o.stp.unwrap_or_default();
        let counted = super::place::counts_as_open(o.order_type, o.time_in_force);
        let slot = self.accept(o, o.trigger_price, stp, counted, sink);
        self.end_taker(slot, CancelReason::TriggerRefused(error), sink);
    }
}

impl Engine {
    /// Every link names a live order, peers name each other, and only an order without a
    /// peer carries exits; no exits are due between commands.
    pub(super) fn check_links(&self) -> Result<(), super::integrity::IntegrityError> {
        let fail = |what: &str| Err(super::integrity::IntegrityError(what.into()));
        if !self.activations.is_empty() {
            return fail("bracket exits left due between commands");
        }
        for (order, link) in self.links.iter() {
            if self.order(order).is_none() {
                return fail("a contingent link of an order that is not live");
            }
            if let Some(peer) = link.peer {
                let back = self.links.get(peer).and_then(|l| l.peer);
                if self.order(peer).is_none() || back != Some(order) || link.exits.is_some() {
                    return fail("one-cancels-the-other legs that do not name each other");
                }
            }
        }
        Ok(())
    }
}
