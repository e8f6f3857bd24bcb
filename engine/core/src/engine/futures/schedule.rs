//! Time-driven and operator-driven futures work: funding premiums sampled each minute and
//! settled on the instrument's schedule, dated futures expiring, index prices, margin calls
//! (de-risk) and liquidation. Everything fires from commands and their times, never from a
//! clock, so a replay repeats it exactly.

use super::{MINUTE, RATE_SCALE};
use crate::engine::{Applied, Engine};
use crate::error::EngineError;
use crate::event::{CancelReason, Event, EventSink};
use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, CurrencyId, InstrumentId, Timestamp};
use crate::order::{NewOrder, OrderType, Side, TimeInForce};
use crate::refdata::InstrumentState;

fn next_boundary(t: Timestamp, period: i64) -> Timestamp {
    Timestamp((t.0.div_euclid(period) + 1) * period)
}

impl Engine {
    /// Runs every scheduled futures task due at the engine's time (called before each
    /// command; one comparison when nothing is due).
    #[inline]
    pub(crate) fn run_futures_schedule<S: EventSink>(&mut self, sink: &mut S) {
        if self.now >= self.futures.next_due && !self.futures.markets.is_empty() {
            self.run_due(sink);
        }
    }

    #[inline(never)]
    fn run_due<S: EventSink>(&mut self, sink: &mut S) {
        let now = self.now;
        if !self.futures.scheduled {
            // The first command starts the clocks: the first sample at the next minute,
            // the first settlement at the next period boundary.
            self.futures.scheduled = true;
            for market in &mut self.futures.markets {
                if let Some(f) = &mut market.funding {
                    f.next_sample = next_boundary(now, MINUTE);
                    f.next_settlement = next_boundary(now, f.period);
                }
            }
        }
        for m in 0..self.futures.markets.len() {
            if self.futures.markets[m].expiry.is_some_and(|at| {
                at <= now
                    && self.instruments[usize::from(self.futures.markets[m].instrument.0)].state
                        != InstrumentState::Closed
            }) {
                self.expire_market(m, sink);
                continue;
            }
            let mut settlements = 0;
            while let Some(f) = &self.futures.markets[m].funding {
                let (sample, settle) = (f.next_sample, f.next_settlement);
                if sample <= now && sample < settle {
                    self.sample_premium(m, sample);
                } else if settle <= now && settlements == crate::limits::MAX_SETTLEMENTS_PER_COMMAND
                {
                    self.skip_unfunded_periods(m);
                } else if settle <= now {
                    self.settle_funding(m, sink);
                    settlements += 1;
                } else {
                    break;
                }
            }
        }
        self.futures.next_due = self
            .futures
            .markets
            .iter()
            .flat_map(|market| {
                let funding = market
                    .funding
                    .as_ref()
                    .map(|f| f.next_sample.min(f.next_settlement));
                let expiry = market.expiry.filter(|&at| at > now);
                funding.into_iter().chain(expiry)
            })
            .min()
            .unwrap_or(Timestamp(i64::MAX));
    }

    /// Premium of mark over index, in 1e-8 (0 without an index or a mark).
    fn premium(&self, m: usize) -> i64 {
        match (self.futures.markets[m].index, self.mark_price(m)) {
            (Some(index), Some(mark)) if index.0 > 0 => {
                (i128::from(mark.0 - index.0) * i128::from(RATE_SCALE) / i128::from(index.0)) as i64
            }
            _ => 0,
        }
    }

    /// Moves a market's funding clock past every whole period that ended by now, paying
    /// none of them (the bound on settlements per command was reached): the open period
    /// starts afresh at the boundary at or before now.
    fn skip_unfunded_periods(&mut self, m: usize) {
        let now = self.now;
        if let Some(f) = &mut self.futures.markets[m].funding {
            f.next_settlement = next_boundary(now, f.period);
            f.next_sample =
                next_boundary(now, MINUTE).max(Timestamp(f.next_settlement.0 - f.period));
            f.premium_sum = 0;
            f.samples = 0;
        }
    }

    /// Takes the premium samples due up to the next settlement (or now) in one step: the
    /// state cannot change between them, so they are all equal.
    fn sample_premium(&mut self, m: usize, first: Timestamp) {
        let premium = self.premium(m);
        let now = self.now;
        if let Some(f) = &mut self.futures.markets[m].funding {
            let last = now.min(Timestamp(f.next_settlement.0 - 1));
            let count = (last.0 - first.0).div_euclid(MINUTE) + 1;
            f.premium_sum += i128::from(premium) * i128::from(count);
            f.samples += count;
            f.next_sample = Timestamp(first.0 + count * MINUTE);
        }
    }

    /// The rate the current period would settle at: average premium plus the interest
    /// component clamped by the threshold, the whole capped.
    pub(crate) fn funding_estimate(&self, m: usize) -> i64 {
        let Some(f) = &self.futures.markets[m].funding else {
            return 0;
        };
        let premium = if f.samples > 0 {
            (f.premium_sum / i128::from(f.samples)) as i64
        } else {
            self.premium(m)
        };
        let interest = (f.interest - premium).clamp(-f.clamp, f.clamp);
        (premium + interest).clamp(-f.cap, f.cap)
    }

    /// Settles a funding period: each position pays or receives
    /// `-(size) x mark x rate`; payers are rounded up and pay at most the cash they have
    /// available (a payer in de-risk whose positions are not closed would otherwise be
    /// drained below zero, period after period), and the receivers share exactly what was
    /// paid (largest shares first for the rounding remainder), so the payments of a
    /// settlement sum to zero.
    fn settle_funding<S: EventSink>(&mut self, m: usize, sink: &mut S) {
        let rate = self.funding_estimate(m);
        let mark = self.mark_price(m);
        let instrument = self.futures.markets[m].instrument;
        if let Some(f) = &mut self.futures.markets[m].funding {
            f.last_rate = rate;
            f.premium_sum = 0;
            f.samples = 0;
            f.next_settlement = Timestamp(f.next_settlement.0 + f.period);
            f.next_sample = f.next_sample.max(Timestamp(f.next_settlement.0 - f.period));
        }
        let Some(mark) = mark else { return };
        self.emit(
            sink,
            Event::FundingSettled {
                instrument,
                rate,
                mark,
            },
        );
        if rate == 0 {
            return;
        }
        let owed = self.funding_owed(m, mark, rate);
        let collateral = self.futures.markets[m].collateral;
        let payments = self.funding_payments(&owed, collateral);
        let now = self.now;
        for (account, payment) in payments {
            let payment = payment as i64;
            let spill = self.credit_capped(account, collateral, payment);
            self.add_to_fee_pot(collateral, spill);
            let b = self.balance_mut(account, collateral);
            b.updated = now;
            let cash_balance = b.available + b.locked;
            let position = self.futures.position_mut(account, m);
            position.realised += payment;
            position.last_settlement = now;
            let position_id = position.id;
            self.emit(
                sink,
                Event::FundingPaid {
                    account,
                    instrument,
                    position_id,
                    rate,
                    mark,
                    payment,
                    cash_balance,
                },
            );
            self.emit_balance(sink, account, collateral);
            self.check_margin(account, sink);
        }
    }

    /// What each open position of market `m` owes at `mark` and `rate`, exactly (USD
    /// units x 1e8; > 0 pays), in account order.
    fn funding_owed(&self, m: usize, mark: Price, rate: i64) -> Vec<(AccountId, i128)> {
        let instrument = self.futures.markets[m].instrument;
        let mut owed: Vec<(AccountId, i128)> = Vec::new();
        for a in 0..self.futures.account_count() {
            let account = AccountId(a as u32);
            if let Some(p) = self.futures.position(account, m).filter(|p| p.size != 0) {
                let value = self.quote_value(instrument, mark, Qty(p.size.abs()));
                let signed = if p.size > 0 { value } else { -value };
                owed.push((account, signed * i128::from(rate)));
            }
        }
        owed
    }

    /// The payment of each account of `owed` (negative pays), in `collateral`'s balance
    /// units: payers' shares rounded up and capped by their available cash, receivers
    /// sharing exactly what was paid.
    fn funding_payments(
        &self,
        owed: &[(AccountId, i128)],
        collateral: CurrencyId,
    ) -> Vec<(AccountId, i128)> {
        let scale = i128::from(RATE_SCALE);
        // What each payer pays: its exact share rounded up, capped by its available cash.
        let due = |engine: &Self, account: AccountId, o: i128| -> i128 {
            let available = engine
                .accounts
                .account(account)
                .map_or(0, |a| a.balances.get(collateral).available.max(0));
            ((o + scale - 1) / scale).min(i128::from(available))
        };
        let paid: i128 = owed
            .iter()
            .filter(|(_, o)| *o > 0)
            .map(|&(account, o)| due(self, account, o))
            .sum();
        let receivable: i128 = owed.iter().filter(|(_, o)| *o < 0).map(|(_, o)| -o).sum();
        // (account, payment, remainder of the exact share) in account order.
        let mut payments: Vec<(AccountId, i128, i128)> = owed
            .iter()
            .map(|&(account, o)| match o {
                o if o > 0 => (account, -due(self, account, o), 0),
                o if receivable > 0 => (account, paid * -o / receivable, paid * -o % receivable),
                _ => (account, 0, 0),
            })
            .collect();
        let received: i128 = (0..owed.len())
            .filter(|&i| owed[i].1 < 0)
            .map(|i| payments[i].1)
            .sum();
        let leftover = paid - received;
        if leftover > 0 {
            // Largest remainders first, then account order: deterministic.
            let mut receivers: Vec<usize> = (0..owed.len()).filter(|&i| owed[i].1 < 0).collect();
            receivers.sort_by(|&a, &b| payments[b].2.cmp(&payments[a].2).then(a.cmp(&b)));
            for &i in receivers.iter().cycle().take(leftover as usize) {
                payments[i].1 += 1;
            }
        }
        payments
            .into_iter()
            .map(|(account, payment, _)| (account, payment))
            .collect()
    }

    /// A dated future reaches expiry: open orders cancelled, positions closed at the final
    /// mark (no fee), the instrument closed.
    fn expire_market<S: EventSink>(&mut self, m: usize, sink: &mut S) {
        let instrument = self.futures.markets[m].instrument;
        let slots: Vec<u32> = self
            .orders
            .iter()
            .filter(|(_, o)| o.instrument == instrument)
            .map(|(slot, _)| slot as u32)
            .collect();
        for slot in slots {
            self.cancel_if_live(slot, CancelReason::InstrumentClosed, sink);
        }
        let mark = self.mark_price(m);
        let collateral = self.futures.markets[m].collateral;
        let quote_unit = i128::from(self.settlements[usize::from(instrument.0)].quote_unit);
        let now = self.now;
        for a in 0..self.futures.account_count() {
            let account = AccountId(a as u32);
            let Some(p) = self
                .futures
                .position(account, m)
                .copied()
                .filter(|p| p.size != 0)
            else {
                continue;
            };
            let price = mark.unwrap_or_else(|| p.entry_price());
            let position = self.futures.position_mut(account, m);
            let (pnl, _) = position.apply(-p.size, price);
            let realised = crate::limits::clamp_units(pnl * quote_unit);
            position.realised = position.realised.saturating_add(realised);
            self.balance_mut(account, collateral).updated = now;
            self.credit_pnl(account, collateral, realised);
            self.emit_balance(sink, account, collateral);
            self.emit_position(m, account, realised, sink);
            self.check_margin(account, sink);
        }
        self.futures.markets[m].open_interest = 0;
        self.instruments[usize::from(instrument.0)].state = InstrumentState::Closed;
        self.emit(
            sink,
            Event::InstrumentStateChanged {
                instrument,
                state: InstrumentState::Closed,
            },
        );
    }

    /// Sets an index price; margins of that market's position holders are re-checked.
    pub(crate) fn set_index_price<S: EventSink>(
        &mut self,
        instrument: InstrumentId,
        price: Price,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        let m = self
            .futures
            .market_of(instrument)
            .ok_or(EngineError::NotFutures)?;
        let inst = &self.instruments[usize::from(instrument.0)];
        // The market's own price range bounds the index too, so the collar and margin
        // arithmetic around it stays far from overflow.
        if price.0 <= 0 || price < inst.min_price || price > inst.max_price {
            return Err(EngineError::InvalidPrice);
        }
        self.futures.markets[m].index = Some(price);
        self.emit(sink, Event::IndexPriceSet { instrument, price });
        for a in 0..self.futures.account_count() {
            let account = AccountId(a as u32);
            if self
                .futures
                .position(account, m)
                .is_some_and(|p| p.size != 0)
            {
                self.check_margin(account, sink);
            }
        }
        Ok(Applied::default())
    }

    /// Puts an account into de-risk when its equity is below maintenance margin, and takes
    /// it out when it is back above (an operator's de-risk stays until lifted).
    pub(crate) fn check_margin<S: EventSink>(&mut self, account: AccountId, sink: &mut S) {
        let state = self.margin_state(account);
        let call = state.maintenance > 0 && state.equity() < state.maintenance;
        let was = self.futures.account(account).margin_call;
        if call == was {
            return;
        }
        let manual = self.accounts.account(account).is_ok_and(|a| a.derisk);
        self.futures.account_mut(account).margin_call = call;
        if !manual {
            self.emit(sink, Event::DeriskChanged { account, on: call });
        }
    }

    /// Cancels an account's futures orders and closes its positions with reduce-only
    /// market orders against the book.
    pub(crate) fn liquidate<S: EventSink>(
        &mut self,
        account: AccountId,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        self.accounts.core(account)?;
        let slots: Vec<u32> = self
            .orders
            .iter()
            .filter(|(_, o)| o.account == account && self.futures.market_of(o.instrument).is_some())
            .map(|(slot, _)| slot as u32)
            .collect();
        for slot in slots {
            self.cancel_if_live(slot, CancelReason::Requested, sink);
        }
        for m in 0..self.futures.markets.len() {
            let Some(p) = self
                .futures
                .position(account, m)
                .copied()
                .filter(|p| p.size != 0)
            else {
                continue;
            };
            let instrument = self.futures.markets[m].instrument;
            if self.instruments[usize::from(instrument.0)].state != InstrumentState::Active {
                continue;
            }
            let order = NewOrder {
                order_type: OrderType::Market,
                price: None,
                reduce_only: true,
                ..NewOrder::limit(
                    account,
                    instrument,
                    if p.size > 0 { Side::Sell } else { Side::Buy },
                    Price(0),
                    Qty(p.size.abs()),
                )
            }
            .with_tif(TimeInForce::ImmediateOrCancelled);
            // A book too thin to close it all leaves the rest open, still in de-risk.
            let _ = self.place(&order, sink);
        }
        self.check_margin(account, sink);
        Ok(Applied::default())
    }

    /// Re-checks the margin of every account with a position (after time moved).
    pub(crate) fn check_all_margins<S: EventSink>(&mut self, sink: &mut S) {
        for a in 0..self.futures.account_count() {
            let account = AccountId(a as u32);
            if (0..self.futures.markets.len()).any(|m| {
                self.futures
                    .position(account, m)
                    .is_some_and(|p| p.size != 0)
            }) || self.futures.account(account).margin_call
            {
                self.check_margin(account, sink);
            }
        }
    }

    /// Next funding settlement time of futures market `m`, if it has funding.
    pub(crate) fn next_funding(&self, m: usize) -> Option<Timestamp> {
        let f = self.futures.markets[m].funding.as_ref()?;
        Some(if self.futures.scheduled {
            f.next_settlement
        } else {
            next_boundary(self.now, f.period)
        })
    }
}
