//! One-cancels-the-other pairs and brackets in the reference engine, written from the
//! rules rather than the engine's structure: a pair's first fill or trigger, or the end of
//! one leg for any other reason, cancels the other; a bracket entry that is done (filled,
//! or ended by the market after filling part) places a take-profit limit and a stop-loss
//! for what it filled, as a pair, once the taker that completed it has finished.

use super::*;

/// A bracket entry that is done.
#[derive(Debug, Clone, Copy)]
pub(super) struct RefActivation {
    parent: u64,
    account: AccountId,
    instrument: InstrumentId,
    side: Side,
    amount: i64,
    stp: StpMode,
    exits: BracketExits,
}

impl RefEngine {
    pub(super) fn place_oco(
        &mut self,
        first: &NewOrder,
        second: &NewOrder,
    ) -> Result<(), EngineError> {
        let leg = |o: &NewOrder| {
            o.order_type != OrderType::Market
                && !matches!(
                    o.time_in_force,
                    TimeInForce::ImmediateOrCancelled | TimeInForce::FillOrKill
                )
        };
        if first.account != second.account
            || first.instrument != second.instrument
            || first.side != second.side
            || !leg(first)
            || !leg(second)
        {
            return Err(EngineError::InvalidContingent);
        }
        let mut plans = [self.plan(first)?, self.plan(second)?];
        for plan in &mut plans {
            if plan.trigger_type {
                plan.reservation = None;
            }
        }
        for o in [first, second] {
            if o.order_type == OrderType::Limit
                && o.price
                    .is_some_and(|p| self.would_take(o.instrument, o.side, p.0))
            {
                return Err(EngineError::PostOnlyWouldTake);
            }
        }
        let counted = plans.iter().filter(|p| p.counted).count() as u32;
        if self.holders[plans[0].holder] + counted > self.max_open {
            return Err(EngineError::MaxOpenOrdersExceeded);
        }
        if let (Some((c1, n1)), Some((c2, n2))) = (plans[0].reservation, plans[1].reservation)
            && c1 == c2
            && i128::from(n1) + i128::from(n2)
                > i128::from(self.accounts[first.account.0 as usize].balances[c1].0)
        {
            return Err(EngineError::InsufficientFunds);
        }
        let ids = [self.admit(plans[0]), self.admit(plans[1])];
        self.link(ids, first.instrument, None);
        for (id, plan) in ids.into_iter().zip(plans) {
            self.start(id, plan.refused, plan.trigger_type);
        }
        self.settle_entries(first.instrument);
        Ok(())
    }

    fn link(&mut self, [a, b]: [u64; 2], instrument: InstrumentId, parent: Option<u64>) {
        self.links.insert(a, (Some(b), None));
        self.links.insert(b, (Some(a), None));
        let handle = |id| OrderRef { id, slot: 0 };
        self.events.push(Event::OrdersLinked {
            first: handle(a),
            second: handle(b),
            instrument,
            parent: parent.map(handle),
        });
    }

    pub(super) fn place_bracket(
        &mut self,
        entry: &NewOrder,
        exits: &BracketExits,
    ) -> Result<(), EngineError> {
        let inst = self
            .instruments
            .get(entry.instrument.0 as usize)
            .ok_or(EngineError::UnknownInstrument)?
            .clone();
        for price in [
            Some(exits.take_profit),
            Some(exits.stop_loss),
            exits.stop_limit,
        ]
        .into_iter()
        .flatten()
        {
            self.check_price(&inst, price)?;
        }
        let ordered = match entry.side {
            Side::Buy => exits.take_profit.0 > exits.stop_loss.0,
            Side::Sell => exits.take_profit.0 < exits.stop_loss.0,
        };
        if !ordered {
            return Err(EngineError::InvalidContingent);
        }
        let plan = self.plan(entry)?;
        let id = self.admit(plan);
        self.links.insert(id, (None, Some(*exits)));
        self.events.push(Event::BracketPlaced {
            order: OrderRef { id, slot: 0 },
            instrument: entry.instrument,
            exits: *exits,
        });
        self.start(id, plan.refused, plan.trigger_type);
        self.settle_entries(entry.instrument);
        Ok(())
    }

    /// After a fill or a trigger of `id`: its OCO peer is cancelled.
    pub(super) fn resolve(&mut self, id: u64) {
        let Some(&(Some(peer), _)) = self.links.get(&id) else {
            return;
        };
        self.links.remove(&id);
        self.links.remove(&peer);
        if let Some(i) = self.orders.iter().position(|o| o.id == peer) {
            self.cancel(i, CancelReason::ContingentCancelled);
        }
    }

    /// An order ended (`None`: filled completely): its peer goes, its exits come due.
    pub(super) fn on_end(&mut self, o: &RefOrder, reason: Option<CancelReason>) {
        let Some((peer, exits)) = self.links.remove(&o.id) else {
            return;
        };
        let by_market = !matches!(
            reason,
            Some(
                CancelReason::Requested
                    | CancelReason::CancelAllAfter
                    | CancelReason::AccountClosed
                    | CancelReason::InstrumentClosed
            )
        );
        if let Some(exits) = exits
            && o.filled > 0
            && by_market
        {
            self.activations.push(RefActivation {
                parent: o.id,
                account: o.account,
                instrument: o.instrument,
                side: o.side.opposite(),
                amount: o.filled,
                stp: o.stp,
                exits,
            });
        }
        if let Some(peer) = peer {
            self.links.remove(&peer);
            if let Some(i) = self.orders.iter().position(|p| p.id == peer) {
                self.cancel(i, CancelReason::ContingentCancelled);
            }
        }
    }

    /// Triggers, then bracket exits due.
    pub(super) fn settle_entries(&mut self, instrument: InstrumentId) {
        self.run_triggers(instrument);
        self.run_activations();
    }

    pub(super) fn run_activations(&mut self) {
        while !self.activations.is_empty() {
            let a = self.activations.remove(0);
            self.activate(a);
            self.run_triggers(a.instrument);
        }
    }

    fn activate(&mut self, a: RefActivation) {
        // A spot sell exit sells no more base than the account holds (a buy entry's fee in
        // the base leaves it short of what filled).
        let amount = if a.side == Side::Sell && self.funds.enforce {
            let inst = &self.instruments[a.instrument.0 as usize];
            let held = self.accounts[a.account.0 as usize].balances[inst.base].0;
            a.amount.min(held / inst.base_unit.max(1))
        } else {
            a.amount
        };
        let mut take_profit = NewOrder::limit(
            a.account,
            a.instrument,
            a.side,
            a.exits.take_profit,
            Qty(amount),
        );
        take_profit.stp = Some(a.stp);
        let mut stop_loss = take_profit;
        stop_loss.order_type = if a.exits.stop_limit.is_some() {
            OrderType::Stop
        } else {
            OrderType::StopMarket
        };
        stop_loss.price = a.exits.stop_limit;
        stop_loss.trigger_price = Some(a.exits.stop_loss);
        // Both checked before either is admitted: the stop-loss reserves when it fires.
        let exits = [take_profit, stop_loss];
        let plans = exits.map(|o| self.plan(&o));
        let mut admitted: [Option<(u64, RefPlan)>; 2] = [None, None];
        for (i, (o, plan)) in exits.iter().zip(plans).enumerate() {
            match plan {
                Ok(mut plan) => {
                    if plan.trigger_type {
                        plan.reservation = None;
                    }
                    admitted[i] = Some((self.admit(plan), plan));
                }
                Err(error) => self.refuse_exit(o, error),
            }
        }
        if let [Some((first, _)), Some((second, _))] = admitted {
            self.link([first, second], a.instrument, Some(a.parent));
        }
        for (id, plan) in admitted.into_iter().flatten() {
            if self.orders.iter().any(|o| o.id == id) {
                self.start(id, plan.refused, plan.trigger_type);
            }
        }
    }

    /// An exit the checks refused: accepted, then ended with the reason.
    fn refuse_exit(&mut self, o: &NewOrder, error: EngineError) {
        let record = &self.accounts[o.account.0 as usize];
        let (holder, stp) = (record.holder, o.stp.unwrap_or(record.stp));
        let order = RefOrder {
            trail: None,
            limit_offset: 0,
            display: None,
            ..RefOrder::entering(self.next_order, o, stp)
        };
        let plan = RefPlan {
            order,
            new: *o,
            refused: None,
            reservation: None,
            counted: counted(o.order_type, o.time_in_force),
            holder,
            trigger_type: false,
        };
        let id = self.admit(plan);
        let i = self.index_of(id);
        self.cancel(i, CancelReason::TriggerRefused(error));
    }
}
