//! Order entry in the reference engine: placing (planned by the checks of `checks.rs`,
//! then admitted with its reservation and started), matching a taker against the book by
//! full scans, stop triggers and amends.

use super::*;

impl RefEngine {
    pub(super) fn place(&mut self, o: &NewOrder) -> Result<(), EngineError> {
        let plan = self.plan(o)?;
        let instrument = o.instrument;
        let id = self.admit(plan);
        self.start(id, plan.refused, plan.trigger_type);
        self.settle_entries(instrument);
        Ok(())
    }

    /// Every check of a new order, changing nothing (the engine's order of checks).
    pub(super) fn plan(&self, o: &NewOrder) -> Result<RefPlan, EngineError> {
        let inst = self
            .instruments
            .get(o.instrument.0 as usize)
            .ok_or(EngineError::UnknownInstrument)?
            .clone();
        self.check_terms(o, &inst)?;
        let kind = o.order_type;
        let trigger_type = !matches!(kind, OrderType::Limit | OrderType::Market);
        let trailing = matches!(kind, OrderType::TrailingStop | OrderType::TrailingStopLimit);
        let record = self
            .accounts
            .get(o.account.0 as usize)
            .ok_or(EngineError::UnknownAccount)?;
        if record.closed {
            return Err(EngineError::AccountClosed);
        }
        let (holder, stp) = (record.holder, o.stp.unwrap_or(record.stp));
        if o.order_type == OrderType::Market
            && o.price.is_none()
            && let Some(&best) = self.queue(o.instrument, o.side.opposite()).first()
        {
            Self::check_min_size(&inst, self.orders[best].price.unwrap_or(0), o.amount.0)?;
        }
        let is_counted = counted(o.order_type, o.time_in_force);
        if is_counted && self.holders[holder] >= self.max_open {
            return Err(EngineError::MaxOpenOrdersExceeded);
        }
        let mut order = RefOrder::entering(self.next_order, o, stp);
        // Refused by its time in force: still accepted (funds permitting), then ended.
        let refused = self.refusal(o, &order, stp, trigger_type);
        if spot_reduce_only(o) {
            return Err(EngineError::ReduceOnlyWouldIncrease);
        }
        if trailing {
            let last = inst.last_price.ok_or(EngineError::NoReferencePrice)?;
            order.extreme = last;
            order.trigger = Some(trail_trigger(o.trail, o.side, last));
        }
        let reserves_now = !trigger_type || matches!(kind, OrderType::Stop | OrderType::TakeProfit);
        let reservation = match self.funds.enforce && reserves_now {
            true => Some(self.reservation(o, &inst, stp)?),
            false => None,
        };
        Ok(RefPlan {
            order,
            new: *o,
            refused,
            reservation,
            counted: is_counted,
            holder,
            trigger_type,
        })
    }

    /// Accepts a planned order: its number, events, count and reservation; it is taking.
    pub(super) fn admit(&mut self, plan: RefPlan) -> u64 {
        let (o, mut order) = (plan.new, plan.order);
        order.id = self.next_order;
        self.next_order += 1;
        self.events.push(Event::OrderAccepted(AcceptedOrder {
            order: order.handle(),
            account: o.account,
            instrument: o.instrument,
            side: o.side,
            order_type: o.order_type,
            time_in_force: o.time_in_force,
            stp: order.stp,
            price: o.price,
            trigger_price: order.trigger.map(Price),
            amount: o.amount,
            client_id: o.client_id,
            expire_at: o.expire_at,
        }));
        if o.trail.is_some() || o.display.is_some() {
            self.events.push(Event::OrderTerms {
                order: order.handle(),
                instrument: o.instrument,
                reference: o.trigger_ref,
                trail: o.trail,
                limit_offset: o.limit_offset,
                display: o.display,
            });
        }
        if plan.counted {
            self.holders[plan.holder] += 1;
        }
        if let Some((currency, need)) = plan.reservation.filter(|r| r.1 > 0) {
            order.reserved = need;
            self.lock(o.account.0 as usize, currency, need);
        }
        let id = order.id;
        self.orders.push(order);
        id
    }

    /// Sets an admitted order going: ended if its time in force refused it, held if it
    /// waits for a trigger, else matched.
    pub(super) fn start(&mut self, id: u64, refused: Option<CancelReason>, trigger_type: bool) {
        let i = self.index_of(id);
        if let Some(reason) = refused {
            self.cancel(i, reason);
        } else if trigger_type {
            self.orders[i].place = Where::Pending;
        } else {
            self.enter(i);
        }
    }

    pub(super) fn remove(&mut self, i: usize) -> RefOrder {
        let o = self.orders.remove(i);
        if o.counted() {
            self.holders[self.accounts[o.account.0 as usize].holder] -= 1;
        }
        o
    }

    pub(super) fn cancel(&mut self, i: usize, reason: CancelReason) {
        let o = self.remove(i);
        self.events.push(Event::OrderCancelled {
            order: o.handle(),
            account: o.account,
            instrument: o.instrument,
            remaining: Qty(o.remaining()),
            reason,
        });
        self.release(&o);
        self.on_end(&o, Some(reason));
    }

    /// Unlocks whatever an ended order still reserves.
    pub(super) fn release(&mut self, o: &RefOrder) {
        if o.reserved != 0 {
            let inst = &self.instruments[o.instrument.0 as usize];
            let currency = if o.side == Side::Buy {
                inst.quote
            } else {
                inst.base
            };
            self.lock(o.account.0 as usize, currency, -o.reserved);
        }
    }

    pub(super) fn index_of(&self, id: u64) -> usize {
        self.orders
            .iter()
            .position(|o| o.id == id)
            .expect("live order")
    }

    /// Matches the taking order with number `taker_id`, then rests or cancels it.
    pub(super) fn enter(&mut self, taker_index: usize) {
        let taker_id = self.orders[taker_index].id;
        let mut self_trade = false;
        loop {
            let t = &self.orders[self.index_of(taker_id)];
            if t.remaining() == 0 {
                break;
            }
            let (side, limit, account, stp, instrument) =
                (t.side, t.limit(), t.account, t.stp, t.instrument);
            let Some(&m) = self.queue(instrument, side.opposite()).first() else {
                break;
            };
            let maker_price = self.orders[m].price.unwrap_or(0);
            if !crosses(side, limit, maker_price) {
                break;
            }
            if stp != StpMode::None && self.orders[m].account == account {
                match stp {
                    StpMode::CancelNewest => {
                        self_trade = true;
                        break;
                    }
                    StpMode::CancelOldest => {
                        self.cancel(m, CancelReason::SelfTrade);
                        continue;
                    }
                    _ => {
                        self.cancel(m, CancelReason::SelfTrade);
                        self_trade = true;
                        break;
                    }
                }
            }
            let maker_id = self.fill(taker_id, m, maker_price);
            // A fill of an OCO leg cancels its peer before the sweep goes on.
            self.resolve(maker_id);
            self.resolve(taker_id);
        }
        self.finish_taker(taker_id, self_trade);
    }

    /// One fill between the taker numbered `taker_id` and the maker at index `m`, at the
    /// maker's price: records, trade and balance events, the maker's end or next part.
    /// The maker's number.
    fn fill(&mut self, taker_id: u64, m: usize, maker_price: i64) -> u64 {
        let ti = self.index_of(taker_id);
        let (side, instrument) = (self.orders[ti].side, self.orders[ti].instrument);
        let qty = self.orders[ti].remaining().min(self.orders[m].visible());
        let (maker_fee, taker_fee) = if self.funds.enforce {
            self.settle(
                instrument.0 as usize,
                ti,
                m,
                side == Side::Buy,
                maker_price,
                qty,
            )
        } else {
            (0, 0)
        };
        self.orders[m].filled += qty;
        self.orders[ti].filled += qty;
        let (maker, taker) = (&self.orders[m], &self.orders[ti]);
        let (maker_account, taker_account) = (maker.account.0 as usize, taker.account.0 as usize);
        self.events.push(Event::Trade(Trade {
            id: TradeId(self.next_trade),
            instrument,
            price: Price(maker_price),
            amount: Qty(qty),
            taker_side: side,
            maker: maker.handle(),
            maker_account: maker.account,
            maker_remaining: Qty(maker.remaining()),
            taker: taker.handle(),
            taker_account: taker.account,
            taker_remaining: Qty(taker.remaining()),
            maker_fee,
            taker_fee,
        }));
        if self.funds.enforce {
            let inst = &self.instruments[instrument.0 as usize];
            let (base, quote) = (inst.base, inst.quote);
            for a in [taker_account, maker_account] {
                self.balance_event(a, base);
                self.balance_event(a, quote);
            }
        }
        self.next_trade += 1;
        self.instruments[instrument.0 as usize].last_price = Some(maker_price);
        let maker_id = self.orders[m].id;
        if self.orders[m].remaining() == 0 {
            let gone = self.remove(m);
            self.release(&gone);
            self.on_end(&gone, None);
        } else if self.orders[m].shown > 0 {
            self.use_shown_part(m, qty);
        }
        maker_id
    }

    /// An iceberg maker's shown part less `qty`; used up, the next part queues at the back.
    fn use_shown_part(&mut self, m: usize, qty: i64) {
        self.orders[m].shown -= qty;
        if self.orders[m].shown == 0 {
            // The shown part is used up: the next one queues at the back.
            let stamp = self.next_stamp;
            self.next_stamp += 1;
            let o = &mut self.orders[m];
            o.shown = o.display.unwrap_or(0).min(o.remaining());
            o.stamp = stamp;
            self.events.push(Event::OrderBooked {
                order: o.handle(),
                instrument: o.instrument,
                side: o.side,
                price: Price(o.price.unwrap_or(0)),
                remaining: Qty(o.shown),
            });
        }
    }

    /// A taker done matching: gone when filled, else resting (a limit order that may) or
    /// cancelled (self-trade prevention, or nothing more to take).
    fn finish_taker(&mut self, taker_id: u64, self_trade: bool) {
        let ti = self.index_of(taker_id);
        let t = &self.orders[ti];
        if t.remaining() == 0 {
            let gone = self.remove(ti);
            self.release(&gone);
            self.on_end(&gone, None);
        } else if !self_trade && !is_market_type(t.order_type) && counted(OrderType::Limit, t.tif) {
            let stamp = self.next_stamp;
            self.next_stamp += 1;
            let t = &mut self.orders[ti];
            t.place = Where::Resting;
            t.stamp = stamp;
            if let Some(display) = t.display {
                t.shown = display.min(t.remaining());
            }
            self.events.push(Event::OrderBooked {
                order: t.handle(),
                instrument: t.instrument,
                side: t.side,
                price: Price(t.price.unwrap_or(0)),
                remaining: Qty(t.visible()),
            });
        } else {
            self.cancel(
                ti,
                if self_trade {
                    CancelReason::SelfTrade
                } else {
                    CancelReason::Unfilled
                },
            );
        }
    }

    pub(super) fn amend(
        &mut self,
        account: AccountId,
        id: u64,
        amount: Option<Qty>,
        price: Option<Price>,
    ) -> Result<(), EngineError> {
        if amount.is_none() && price.is_none() {
            return Err(EngineError::EmptyAmend);
        }
        let i = self.find(account, id)?;
        let o = self.orders[i];
        let inst = self.instruments[o.instrument.0 as usize].clone();
        if matches!(
            inst.state,
            InstrumentState::Suspended | InstrumentState::Closed
        ) {
            return Err(EngineError::InstrumentNotTrading);
        }
        let new_amount = amount.map_or(o.amount, |a| a.0);
        let new_price = price.map(|p| p.0).or(o.price).unwrap_or(0);
        if new_amount <= 0 {
            return Err(EngineError::InvalidAmount);
        }
        if new_amount <= o.filled {
            return Err(EngineError::AmendBelowFilled);
        }
        // Market-type and trailing trigger orders have no limit to amend; sized at trigger.
        let unpriced = o.place == Where::Pending
            && !matches!(o.order_type, OrderType::Stop | OrderType::TakeProfit);
        if unpriced && price.is_some() {
            return Err(EngineError::InvalidPrice);
        }
        if !unpriced {
            self.check_price(&inst, Price(new_price))?;
        }
        let size_price = if unpriced {
            o.trigger.unwrap_or(0)
        } else {
            new_price
        };
        Self::check_min_size(&inst, size_price, new_amount)?;
        let price_changed = Some(new_price) != o.price;
        let keeps = !price_changed && new_amount <= o.amount && o.shown == 0;
        let must_not_take =
            o.tif == TimeInForce::PostOnly || inst.state == InstrumentState::PostOnly;
        if o.place == Where::Resting
            && price_changed
            && must_not_take
            && self.would_take(o.instrument, o.side, new_price)
        {
            return Err(EngineError::PostOnlyWouldTake);
        }
        let delta = match self.funds.enforce && !unpriced {
            true => Some(self.amend_delta(account, &o, &inst, (new_price, new_amount))?),
            false => None,
        };
        let resting = o.place == Where::Resting;
        let m = &mut self.orders[i];
        m.amount = new_amount;
        if !unpriced {
            m.price = Some(new_price);
        }
        if resting && !keeps {
            m.place = Where::Taking;
            m.shown = 0;
        }
        self.events.push(Event::OrderAmended {
            order: m.handle(),
            account,
            instrument: m.instrument,
            price: m.price.map(Price),
            amount: Qty(m.amount),
            remaining: Qty(m.remaining()),
            kept_priority: !resting || keeps,
        });
        if let Some((currency, delta)) = delta.filter(|d| d.1 != 0) {
            self.orders[i].reserved += delta;
            self.lock(account.0 as usize, currency, delta);
        }
        if resting && !keeps {
            self.enter(i);
            self.settle_entries(o.instrument);
        }
        Ok(())
    }

    /// How much more (or less) an amend to `new_price` and `new_amount` reserves, in which
    /// currency; refused when more is needed than the account has available.
    fn amend_delta(
        &self,
        account: AccountId,
        o: &RefOrder,
        inst: &RefInstrument,
        (new_price, new_amount): (i64, i64),
    ) -> Result<(usize, i64), EngineError> {
        let remaining = new_amount - o.filled;
        let (currency, need) = match o.side {
            Side::Buy => (inst.quote, new_price * remaining * inst.quote_unit),
            Side::Sell => (inst.base, remaining * inst.base_unit),
        };
        let delta = need - o.reserved;
        if delta > self.accounts[account.0 as usize].balances[currency].0 {
            return Err(EngineError::InsufficientFunds);
        }
        Ok((currency, delta))
    }
}

impl RefOrder {
    /// The record of new order `o`, number `id`, as it enters (taking, nothing filled).
    pub(super) fn entering(id: u64, o: &NewOrder, stp: StpMode) -> Self {
        RefOrder {
            id,
            account: o.account,
            instrument: o.instrument,
            side: o.side,
            order_type: o.order_type,
            tif: o.time_in_force,
            stp,
            price: o.price.map(|p| p.0),
            trigger: o.trigger_price.map(|p| p.0),
            amount: o.amount.0,
            filled: 0,
            client_id: o.client_id,
            expire_at: o.expire_at,
            place: Where::Taking,
            stamp: 0,
            reserved: 0,
            trail: o.trail,
            limit_offset: o.limit_offset.map_or(0, |p| p.0),
            extreme: 0,
            display: o.display.map(|d| d.0),
            shown: 0,
        }
    }
}
