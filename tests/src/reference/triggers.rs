//! Held trigger orders in the reference engine, by full scans: after every taker, each
//! trailing order whose best price the last trade passed moves its trigger (sells with the
//! lowest high first, then buys with the highest low), then the first due order fires:
//! rising triggers (buy stops, sell take-profits) lowest first, then falling ones highest
//! first, ties by number. A fired order is checked as a new order at that moment.

use super::*;

/// Orders that fire when the price rises to their trigger (the others fire falling).
pub(super) fn fires_rising(order_type: OrderType, side: Side) -> bool {
    let take_profit = matches!(
        order_type,
        OrderType::TakeProfit | OrderType::TakeProfitMarket
    );
    (side == Side::Buy) != take_profit
}

/// Types that enter as market orders.
pub(super) fn is_market_type(order_type: OrderType) -> bool {
    matches!(
        order_type,
        OrderType::Market
            | OrderType::StopMarket
            | OrderType::TakeProfitMarket
            | OrderType::TrailingStop
    )
}

/// Reduce-only on a spot market (every market of the model).
pub(super) fn spot_reduce_only(o: &NewOrder) -> bool {
    o.reduce_only
}

/// A trailing trigger: the trail below the high for a sell, above the low for a buy, a
/// basis-point trail rounded away from the price.
pub(super) fn trail_trigger(trail: Option<Trail>, side: Side, extreme: i64) -> i64 {
    let distance = match trail {
        Some(Trail::Price(p)) => p.0,
        Some(Trail::Bps(bps)) => {
            let exact = i128::from(extreme) * i128::from(bps);
            ((exact + 9_999) / 10_000) as i64
        }
        None => 0,
    };
    match side {
        Side::Sell => extreme - distance,
        Side::Buy => extreme + distance,
    }
}

impl RefEngine {
    pub(super) fn run_triggers(&mut self, instrument: InstrumentId) {
        loop {
            let Some(last) = self.instruments[instrument.0 as usize].last_price else {
                return;
            };
            self.ratchet(instrument, last);
            let held = |o: &&RefOrder, rising: bool| {
                o.place == Where::Pending
                    && o.instrument == instrument
                    && fires_rising(o.order_type, o.side) == rising
            };
            let rising = (self.orders.iter())
                .filter(|o| held(o, true) && o.trigger.unwrap_or(0) <= last)
                .min_by_key(|o| (o.trigger, o.id))
                .map(|o| o.id);
            let falling = (self.orders.iter())
                .filter(|o| held(o, false) && o.trigger.unwrap_or(0) >= last)
                .min_by_key(|o| (-o.trigger.unwrap_or(0), o.id))
                .map(|o| o.id);
            let Some(id) = rising.or(falling) else { return };
            let i = self.index_of(id);
            self.fire(i);
        }
    }

    fn ratchet(&mut self, instrument: InstrumentId, last: i64) {
        let trailing = |o: &RefOrder, side| {
            o.place == Where::Pending
                && o.instrument == instrument
                && o.trail.is_some()
                && o.side == side
        };
        let mut sells: Vec<(i64, u64)> = (self.orders.iter())
            .filter(|o| trailing(o, Side::Sell) && o.extreme < last)
            .map(|o| (o.extreme, o.id))
            .collect();
        sells.sort_unstable();
        let mut buys: Vec<(i64, u64)> = (self.orders.iter())
            .filter(|o| trailing(o, Side::Buy) && o.extreme > last)
            .map(|o| (-o.extreme, o.id))
            .collect();
        buys.sort_unstable();
        for (_, id) in sells.into_iter().chain(buys) {
            let i = self.index_of(id);
            let o = &mut self.orders[i];
            o.extreme = last;
            let trigger = trail_trigger(o.trail, o.side, last);
            if Some(trigger) != o.trigger {
                o.trigger = Some(trigger);
                let order = o.handle();
                self.events.push(Event::TriggerMoved {
                    order,
                    instrument,
                    trigger_price: Price(trigger),
                });
            }
        }
    }

    fn fire(&mut self, i: usize) {
        let o = &mut self.orders[i];
        o.place = Where::Taking;
        let trigger = o.trigger.unwrap_or(0);
        if o.order_type == OrderType::TrailingStopLimit {
            o.price = Some(match o.side {
                Side::Buy => trigger + o.limit_offset,
                Side::Sell => trigger - o.limit_offset,
            });
        }
        let o = *o;
        self.events.push(Event::StopTriggered {
            order: o.handle(),
            instrument: o.instrument,
            trigger_price: Price(trigger),
            price: o.price.map(Price),
        });
        // Firing is the leg's turn: its OCO peer is cancelled first.
        self.resolve(o.id);
        let i = self.index_of(o.id);
        if let Err(error) = self.entry_at_trigger(i) {
            self.cancel(i, CancelReason::TriggerRefused(error));
            return;
        }
        match o.tif {
            TimeInForce::FillOrKill
                if !self.can_fill(
                    o.instrument,
                    o.side,
                    o.limit(),
                    o.remaining(),
                    o.account,
                    o.stp,
                ) =>
            {
                self.cancel(i, CancelReason::FillOrKillUnfilled);
            }
            TimeInForce::PostOnly if self.would_take(o.instrument, o.side, o.limit()) => {
                self.cancel(i, CancelReason::PostOnlyWouldTake);
            }
            _ => self.enter(i),
        }
    }

    /// The checks of a new order when a held one fires, and the reservation of the types
    /// that reserve only then.
    fn entry_at_trigger(&mut self, i: usize) -> Result<(), EngineError> {
        let o = self.orders[i];
        let inst = self.instruments[o.instrument.0 as usize].clone();
        match inst.state {
            InstrumentState::Suspended | InstrumentState::Closed => {
                return Err(EngineError::InstrumentNotTrading);
            }
            InstrumentState::PostOnly if o.tif != TimeInForce::PostOnly => {
                return Err(EngineError::OnlyPostOnlyAllowed);
            }
            _ => {}
        }
        match o.price {
            Some(limit) => {
                self.check_price(&inst, Price(limit))?;
                Self::check_min_size(&inst, limit, o.remaining())?;
            }
            None => {
                if let Some(&best) = self.queue(o.instrument, o.side.opposite()).first() {
                    let touch = self.orders[best].price.unwrap_or(0);
                    Self::check_min_size(&inst, touch, o.remaining())?;
                }
            }
        }
        // What reserved when placed keeps it; the rest (market types, trailing orders, OCO
        // trigger legs) reserve now.
        if o.reserved != 0 || !self.funds.enforce {
            return Ok(());
        }
        let (currency, need) = match (o.side, o.price) {
            (Side::Buy, Some(p)) => (
                inst.quote,
                i128::from(p) * i128::from(o.remaining()) * i128::from(inst.quote_unit),
            ),
            (Side::Buy, None) => (
                inst.quote,
                self.market_buy_cost(o.instrument, o.remaining(), o.account, o.stp),
            ),
            (Side::Sell, _) => (
                inst.base,
                i128::from(o.remaining()) * i128::from(inst.base_unit),
            ),
        };
        if need > i128::from(self.accounts[o.account.0 as usize].balances[currency].0) {
            return Err(EngineError::InsufficientFunds);
        }
        if need > 0 {
            self.orders[i].reserved = need as i64;
            self.lock(o.account.0 as usize, currency, need as i64);
        }
        Ok(())
    }
}
