//! Order entry: validation of a new order against its instrument and account, the
//! pre-trade checks (state, open-order limit, fill-or-kill, post-only), and acceptance.

use super::{Applied, Engine};
use crate::error::EngineError;
use crate::event::{AcceptedOrder, CancelReason, EventSink};
use crate::fixed::{Notional, Price, Qty};
use crate::ids::{AccountId, CurrencyId, OrderRef, Timestamp, Uuid};
use crate::order::{
    LiveState, NIL, NewOrder, Order, OrderType, Side, StpMode, TimeInForce, Trail, TriggerRef,
};
use crate::refdata::{Instrument, InstrumentState};

/// Checks that need only the request, the instrument and the time.
pub(super) fn validate(inst: &Instrument, o: &NewOrder, now: Timestamp) -> Result<(), EngineError> {
    check_amount(o.amount)?;
    let kind = o.order_type;
    if kind.needs_price() && o.price.is_none() {
        return Err(EngineError::MissingPrice);
    }
    if kind.is_trailing() && o.price.is_some() {
        // A trailing order's limit is set when it fires (its trigger plus the offset).
        return Err(EngineError::InvalidPrice);
    }
    // A market-type trigger order may be good till a time while it is held.
    let refused_tif = match o.time_in_force {
        TimeInForce::PostOnly => kind.is_market(),
        TimeInForce::GoodTillTime => kind == OrderType::Market,
        _ => false,
    };
    if refused_tif {
        return Err(EngineError::InvalidTimeInForce);
    }
    let takes_trigger = kind.is_trigger() && !kind.is_trailing();
    if takes_trigger != o.trigger_price.is_some() {
        return Err(EngineError::InvalidTriggerPrice);
    }
    if let Some(trigger) = o.trigger_price {
        check_price(inst, trigger).map_err(|_| EngineError::InvalidTriggerPrice)?;
    }
    check_trail(inst, o)?;
    if let Some(display) = o.display {
        // An iceberg: a resting limit order showing part of its amount.
        let rests = kind == OrderType::Limit && o.time_in_force.rests();
        if !rests || display.0 <= 0 || display >= o.amount {
            return Err(EngineError::InvalidDisplay);
        }
    }
    if o.trigger_ref == TriggerRef::MarkPrice && !(kind.is_trigger() && inst.spec.kind.is_future())
    {
        return Err(EngineError::InvalidTriggerReference);
    }
    if let Some(price) = o.price {
        check_price(inst, price)?;
        check_min_size(inst, price, o.amount)?;
    } else if let Some(trigger) = o.trigger_price {
        // A market-type trigger order is sized at its trigger.
        check_min_size(inst, trigger, o.amount)?;
    }
    match (o.time_in_force, o.expire_at) {
        (TimeInForce::GoodTillTime, Some(at)) if at > now => Ok(()),
        (TimeInForce::GoodTillTime, _) | (_, Some(_)) => Err(EngineError::InvalidExpiry),
        _ => Ok(()),
    }
}

/// A trailing order has a trail (a positive price distance inside the instrument's range,
/// or 1..=9,999 basis points), a trailing stop-limit a limit offset (0 to the range's top);
/// no other order has either.
fn check_trail(inst: &Instrument, o: &NewOrder) -> Result<(), EngineError> {
    let max = inst.max_price.0;
    let trail_ok = match (o.order_type.is_trailing(), o.trail) {
        (true, Some(Trail::Price(p))) => p.0 > 0 && p.0 <= max,
        (true, Some(Trail::Bps(bps))) => (1..10_000).contains(&bps),
        (false, None) => true,
        _ => false,
    };
    let offset_ok = match (o.order_type == OrderType::TrailingStopLimit, o.limit_offset) {
        (true, Some(p)) => (0..=max).contains(&p.0),
        (false, None) => true,
        _ => false,
    };
    if trail_ok && offset_ok {
        Ok(())
    } else {
        Err(EngineError::InvalidTrail)
    }
}

/// Positive and at most [`crate::limits::MAX_ORDER_LOTS`].
pub(super) fn check_amount(amount: Qty) -> Result<(), EngineError> {
    if amount.0 <= 0 {
        return Err(EngineError::InvalidAmount);
    }
    if amount.0 > crate::limits::MAX_ORDER_LOTS {
        return Err(EngineError::AmountTooLarge);
    }
    Ok(())
}

/// Positive and inside the instrument's price range.
pub(super) fn check_price(inst: &Instrument, price: Price) -> Result<(), EngineError> {
    if price.0 <= 0 {
        return Err(EngineError::InvalidPrice);
    }
    if price < inst.min_price || price > inst.max_price {
        return Err(EngineError::PriceOutOfRange);
    }
    Ok(())
}

/// Order value (amount x price, in quote currency) at least the instrument's min_size.
pub(super) fn check_min_size(
    inst: &Instrument,
    price: Price,
    amount: Qty,
) -> Result<(), EngineError> {
    if price.notional(amount) < inst.min_size {
        return Err(EngineError::MinSizeNotSatisfied);
    }
    Ok(())
}

/// What the checks of a new order decided, before anything changed.
#[derive(Debug, Clone, Copy)]
pub(super) struct EntryPlan {
    stp: StpMode,
    counted: bool,
    /// Accepted, then ended at once by its time in force.
    refused_at_entry: Option<CancelReason>,
    trailing: Option<(super::triggers::Trailing, Price)>,
    /// Currency and amount reserved at acceptance.
    pub(super) reservation: Option<(CurrencyId, i64)>,
    futures: bool,
}

impl EntryPlan {
    /// Whether it counts against its holder's open-order limit.
    pub(super) fn counted(&self) -> bool {
        self.counted
    }
}

impl Engine {
    pub(super) fn place<S: EventSink>(
        &mut self,
        o: &NewOrder,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        let plan = self.plan_entry(o)?;
        let slot = self.admit(o, &plan, sink);
        let applied = self.start(slot, &plan, sink);
        self.settle_entries(o.instrument, sink);
        Ok(applied)
    }

    /// Every check of a new order, changing nothing: validity, market state, account,
    /// open-order limit, time in force as the book stands, reduce-only, trailing reference
    /// and the reservation (with the funds to cover it).
    #[inline]
    pub(super) fn plan_entry(&self, o: &NewOrder) -> Result<EntryPlan, EngineError> {
        let inst = self.instrument(o.instrument)?;
        validate(inst, o, self.now)?;
        match inst.state {
            InstrumentState::Suspended | InstrumentState::Closed => {
                return Err(EngineError::InstrumentNotTrading);
            }
            InstrumentState::PostOnly if o.time_in_force != TimeInForce::PostOnly => {
                return Err(EngineError::OnlyPostOnlyAllowed);
            }
            _ => {}
        }
        let account = self.accounts.active(o.account)?;
        let holder = account.holder;
        let stp = o.stp.unwrap_or(account.stp);
        let book = &self.books[usize::from(o.instrument.0)];
        if o.order_type == OrderType::Market && o.price.is_none() {
            // A bare market order is sized against the touch it will meet first.
            if let Some((touch, _)) = book.best(o.side.opposite()) {
                check_min_size(inst, touch, o.amount)?;
            }
        }
        let counted = counts_as_open(o.order_type, o.time_in_force);
        if counted && self.accounts.holder(holder)?.open_orders >= self.max_open_orders {
            return Err(EngineError::MaxOpenOrdersExceeded);
        }
        // An order its time in force forbids to enter as the book stands is still accepted
        // (funds permitting) and ended at once, so it has a number and a history record with
        // its rejection, as a triggered stop refused the same way has.
        let refused_at_entry = if o.order_type.is_trigger() {
            None
        } else {
            let limit = match_limit(o);
            match o.time_in_force {
                TimeInForce::FillOrKill
                    if !self.can_fill(&super::reach::Taker {
                        instrument: o.instrument,
                        side: o.side,
                        limit,
                        amount: o.amount,
                        account: o.account,
                        stp,
                        reduce_only: o.reduce_only,
                    }) =>
                {
                    Some(CancelReason::FillOrKillUnfilled)
                }
                TimeInForce::PostOnly if book.would_take(o.side, limit) => {
                    Some(CancelReason::PostOnlyWouldTake)
                }
                _ => None,
            }
        };
        let futures = self.settlements[usize::from(o.instrument.0)].futures;
        if o.reduce_only && futures.is_none() {
            return Err(EngineError::ReduceOnlyWouldIncrease);
        }
        let trailing = if o.order_type.is_trailing() {
            Some(self.trailing_entry(o)?)
        } else {
            None
        };
        let reservation = if !o.order_type.reserves_at_entry() {
            None
        } else if let Some(m) = futures {
            let need = self.futures_entry(o, usize::from(m))?;
            let collateral = self.futures.markets[usize::from(m)].collateral;
            self.enforce_balances.then_some((collateral, need as i64))
        } else if self.enforce_balances {
            let (currency, need) = self.spot_need(o, stp)?;
            Some((currency, need as i64))
        } else {
            None
        };
        Ok(EntryPlan {
            stp,
            counted,
            refused_at_entry,
            trailing,
            reservation,
            futures: futures.is_some(),
        })
    }

    /// Accepts a planned order: its record, `OrderAccepted` and its reservation.
    #[inline]
    pub(super) fn admit<S: EventSink>(
        &mut self,
        o: &NewOrder,
        plan: &EntryPlan,
        sink: &mut S,
    ) -> u32 {
        // A trailing order starts at the trigger its plan computed.
        let trigger = plan.trailing.map_or(o.trigger_price, |(_, t)| Some(t));
        let slot = self.accept(o, trigger, plan.stp, plan.counted, sink);
        if let Some((currency, need)) = plan.reservation.filter(|r| r.1 > 0) {
            self.orders[slot as usize].reserved = need;
            if plan.futures {
                self.futures.account_mut(o.account).order_margin += need;
            }
            self.lock(o.account, currency, need, sink);
        }
        slot
    }

    /// Sets an admitted order going: ended at once when its time in force refused it, held
    /// when it waits for a trigger, else matched (and rested or ended).
    #[inline]
    pub(super) fn start<S: EventSink>(
        &mut self,
        slot: u32,
        plan: &EntryPlan,
        sink: &mut S,
    ) -> Applied {
        let o = &self.orders[slot as usize];
        let (handle, trigger) = (o.handle(), o.order_type.is_trigger());
        if let Some(reason) = plan.refused_at_entry {
            self.end_taker(slot, reason, sink);
            return Applied {
                order: Some(handle),
                rejected: reason.refusal(),
                ..Applied::default()
            };
        }
        if trigger {
            self.hold_trigger(slot, plan.trailing.map(|(terms, _)| terms));
        } else {
            self.enter(slot, sink);
        }
        Applied {
            order: Some(handle),
            ..Applied::default()
        }
    }

    /// What a spot order reserves (quote for a buy, base for a sell), checked against the
    /// account's available balance: a market buy the cost of taking its amount now (under
    /// the buyer's self-trade prevention `stp`).
    #[inline]
    pub(super) fn spot_need(
        &self,
        o: &NewOrder,
        stp: StpMode,
    ) -> Result<(CurrencyId, i128), EngineError> {
        let market_cost = match (o.side, o.price) {
            (Side::Buy, None) => self.market_buy_cost(o.instrument, o.amount, o.account, stp),
            _ => 0,
        };
        let (currency, need) = self.reservation(
            o.instrument,
            o.side,
            o.price.unwrap_or_default(),
            o.amount,
            market_cost,
        );
        let available = self.accounts.accounts[o.account.0 as usize]
            .balances
            .get(currency)
            .available;
        if need > i128::from(available) {
            return Err(EngineError::InsufficientFunds);
        }
        Ok((currency, need))
    }

    /// Creates the live order record and emits `OrderAccepted`, with `trigger_price` in
    /// place of the request's (passed apart so the request is not copied to change it).
    pub(super) fn accept<S: EventSink>(
        &mut self,
        o: &NewOrder,
        trigger_price: Option<Price>,
        stp: StpMode,
        counted: bool,
        sink: &mut S,
    ) -> u32 {
        let id = self.next_order;
        self.next_order += 1;
        let slot = self.orders.vacant_key() as u32;
        let handle = OrderRef { id, slot };
        self.orders.insert(Order {
            id,
            slot,
            account: o.account,
            instrument: o.instrument,
            side: o.side,
            order_type: o.order_type,
            time_in_force: o.time_in_force,
            stp,
            state: LiveState::Taking,
            reduce_only: o.reduce_only,
            trigger_ref: o.trigger_ref,
            iceberg: false,
            price: o.price.unwrap_or_default(),
            trigger_price: trigger_price.unwrap_or_default(),
            reserved: 0,
            amount: o.amount,
            filled: Qty(0),
            filled_notional: Notional(0),
            extras: Order::extras_for(o.client_id.is_some(), o.expire_at.is_some()),
            client_id: o.client_id.unwrap_or_default(),
            expire_at: o.expire_at.unwrap_or_default(),
            shown: Qty(0),
            created: self.now,
            updated: self.now,
            sequence: 0,
            prev: NIL,
            next: NIL,
            level: NIL,
            client_older: NIL,
            client_newer: NIL,
        });
        let seq = self.emit(
            sink,
            crate::event::Event::OrderAccepted(AcceptedOrder {
                order: handle,
                account: o.account,
                instrument: o.instrument,
                side: o.side,
                order_type: o.order_type,
                time_in_force: o.time_in_force,
                stp,
                price: o.price,
                trigger_price,
                amount: o.amount,
                client_id: o.client_id,
                expire_at: o.expire_at,
            }),
        );
        self.orders[slot as usize].sequence = seq;
        if o.trigger_ref != TriggerRef::LastPrice || o.trail.is_some() || o.display.is_some() {
            let event = crate::event::Event::OrderTerms {
                order: handle,
                instrument: o.instrument,
                reference: o.trigger_ref,
                trail: o.trail,
                limit_offset: o.limit_offset,
                display: o.display,
            };
            self.emit(sink, event);
        }
        if let Some(display) = o.display {
            self.displays.insert(handle, display);
        }
        if counted {
            let holder = self.accounts.holder_of(o.account);
            self.accounts.holder_mut(holder).open_orders += 1;
            self.account_chains.link(o.account, slot);
            if let Some(client_id) = o.client_id {
                self.link_client_id(slot, client_id);
            }
            if let Some(at) = o.expire_at {
                self.expiries.insert((at, id), slot);
            }
        }
        slot
    }

    /// Makes `slot` the newest live order for its (account, client id).
    fn link_client_id(&mut self, slot: u32, client_id: Uuid) {
        let account = self.orders[slot as usize].account;
        if let Some(older) = self.client_index.insert((account, client_id), slot) {
            self.orders[older as usize].client_newer = slot;
            self.orders[slot as usize].client_older = older;
        }
    }

    /// Removes `slot` from the client-id chains.
    pub(super) fn unlink_client_id(&mut self, slot: u32) {
        let o = &self.orders[slot as usize];
        let Some(client_id) = o.client_id() else {
            return;
        };
        let (account, older, newer) = (o.account, o.client_older, o.client_newer);
        if older != NIL {
            self.orders[older as usize].client_newer = newer;
        }
        if newer != NIL {
            self.orders[newer as usize].client_older = older;
        } else if older != NIL {
            self.client_index.insert((account, client_id), older);
        } else {
            self.client_index.remove(&(account, client_id));
        }
    }

    /// Slots of an account's live orders, newest first.
    pub(super) fn account_slots(&self, account: AccountId) -> impl Iterator<Item = u32> + '_ {
        self.account_chains.slots(account)
    }

    /// Drops a live order that has ended: indexes, open-order count, then the slot.
    pub(super) fn finish(&mut self, slot: u32) {
        let o = &self.orders[slot as usize];
        let displayed = (!self.displays.is_empty()).then_some(o.handle());
        if counts_as_open(o.order_type, o.time_in_force) {
            let (account, expiry) = (o.account, o.expire_at().map(|at| (at, o.id)));
            // Asked here, from the first line's flag: most orders have no client id, and
            // this runs on every cancel and every filled maker.
            if o.extras & Order::HAS_CLIENT_ID != 0 {
                self.unlink_client_id(slot);
            }
            self.account_chains.unlink(account, slot);
            if let Some(key) = expiry {
                self.expiries.remove(&key);
            }
            let holder = self.accounts.holder_of(account);
            self.accounts.holder_mut(holder).open_orders -= 1;
        }
        self.orders.remove(slot);
        if let Some(order) = displayed {
            self.displays.remove(order);
        }
    }
}

/// Whether an order of this type and time in force counts against the open-order limit
/// (it can rest or wait for a trigger).
pub(super) fn counts_as_open(order_type: OrderType, tif: TimeInForce) -> bool {
    order_type.is_trigger() || (order_type == OrderType::Limit && tif.rests())
}

/// Matching bound of a request (see `Order::match_limit`).
fn match_limit(o: &NewOrder) -> Price {
    match (o.price, o.side) {
        (Some(p), _) => p,
        (None, Side::Buy) => Price(i64::MAX),
        (None, Side::Sell) => Price(i64::MIN),
    }
}
