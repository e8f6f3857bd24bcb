//! Integrity of a restored engine. A snapshot's checksum proves it was written whole, not
//! that its contents describe a state this engine can reach; matching trusts its indexes
//! (slots, links, ladder bits) without checking them, so a decoded engine is checked here,
//! once, before anything runs on it: its reference data must be the configuration's, and
//! every index must agree with the records it points at.

use std::collections::{BTreeMap, HashSet};

use super::Engine;
use super::place::counts_as_open;
use crate::ids::AccountId;
use crate::order::{LiveState, NIL, Order};

/// Why a decoded engine cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("inconsistent engine state: {0}")]
pub struct IntegrityError(pub String);

/// Whether a restored funding state can be run: once the clocks are started, they lie
/// within the horizon on either side of zero (what the schedule computes from them, now
/// minus the next sample and the next settlement plus a period, then fits an `i64`), and
/// the samples are not past what their sum can hold. A clock at the far past made the
/// first command after the restore overflow.
fn funding_in_range(funding: &super::futures::Funding, scheduled: bool) -> bool {
    let horizon = crate::limits::TIME_HORIZON.0;
    let clock_ok = |t: crate::ids::Timestamp| (-horizon..=2 * horizon).contains(&t.0);
    let clocks_ok =
        !scheduled || (clock_ok(funding.next_sample) && clock_ok(funding.next_settlement));
    let samples_ok = (0..=1i64 << 40).contains(&funding.samples)
        && funding.premium_sum.unsigned_abs()
            <= (funding.samples as u128).saturating_mul(i64::MAX as u128);
    clocks_ok && samples_ok
}

fn fail<T>(what: &str) -> Result<T, IntegrityError> {
    Err(IntegrityError(what.to_owned()))
}

impl Engine {
    /// Checks a decoded engine against `reference`, a fresh engine built from the
    /// configuration it is meant to run: the same reference data, and every order, level,
    /// index, lock and counter consistent with the rest.
    pub fn check_restored(&self, reference: &Engine) -> Result<(), IntegrityError> {
        self.check_clock()?;
        self.check_reference_data(reference)?;
        self.check_accounts()?;
        self.check_orders()?;
        self.check_futures()?;
        self.check_money()
    }

    /// The clock lies where commands can have moved it: from zero (a new engine's) to the
    /// horizon (the latest time a command may carry). A clock near the end of `i64` made
    /// the funding schedule overflow on the first command after the restore.
    fn check_clock(&self) -> Result<(), IntegrityError> {
        if self.now.0 < 0 || self.now > crate::limits::TIME_HORIZON {
            return fail("the engine's clock is out of range");
        }
        Ok(())
    }

    /// The configuration-derived parts equal the reference's (instrument states and the
    /// live state of futures markets aside).
    fn check_reference_data(&self, reference: &Engine) -> Result<(), IntegrityError> {
        fn settings(e: &Engine) -> impl PartialEq + '_ {
            let instruments: Vec<_> = e
                .instruments
                .iter()
                .map(|i| {
                    (
                        &i.spec,
                        i.base,
                        i.quote,
                        i.min_size,
                        i.min_price,
                        i.max_price,
                    )
                })
                .collect();
            let markets: Vec<_> = e.futures.markets.iter().map(|m| m.settings()).collect();
            (
                (&e.currencies, instruments, &e.scales, &e.settlements),
                (&e.fee_groups, markets, &e.futures.by_instrument),
                (e.max_open_orders, e.enforce_balances, e.publish_top_of_book),
            )
        }
        if settings(self) != settings(reference) {
            return fail("made with another configuration");
        }
        let n = self.instruments.len();
        if self.books.len() != n || self.tops.len() != n {
            return fail("books do not match the instruments");
        }
        if !self.dirty_books.is_empty() || self.tops.iter().any(|t| t.dirty) {
            return fail("captured in the middle of a command");
        }
        if self.fees_collected.len() != self.currencies.len() {
            return fail("fee accounts do not match the currencies");
        }
        Ok(())
    }

    /// Holders own their accounts exactly once; per-account arrays have one entry per
    /// currency; each holder has a volume window per fee group.
    fn check_accounts(&self) -> Result<(), IntegrityError> {
        let a = &self.accounts;
        let currencies = self.currencies.len();
        if a.currencies != currencies || a.core.len() != a.accounts.len() {
            return fail("account tables disagree");
        }
        if a.accounts.len() > u32::MAX as usize || a.holders.len() > u32::MAX as usize {
            return fail("too many accounts");
        }
        if a.accounts.iter().any(|r| {
            r.balances
                .highest_currency()
                .is_some_and(|c| usize::from(c.0) >= currencies)
                || r.blp_threshold.len() != currencies
        }) {
            return fail("an account's balances do not match the currencies");
        }
        let mut owned = vec![false; a.core.len()];
        for (h, holder) in a.holders.iter().enumerate() {
            if holder.accounts.is_empty() {
                return fail("a holder without a main account");
            }
            for &account in &holder.accounts {
                let i = account.0 as usize;
                match a.core.get(i) {
                    Some(core) if core.holder.0 as usize == h && !owned[i] => owned[i] = true,
                    _ => return fail("a holder lists an account it does not own"),
                }
            }
        }
        if owned.iter().any(|o| !o) {
            return fail("an account without a holder");
        }
        if self.volumes.holders() != a.holders.len() {
            return fail("traded volumes do not match the holders");
        }
        if self.volumes.groups() != self.fee_groups.len() {
            return fail("traded volumes do not match the fee groups");
        }
        for windows in self.volumes.iter() {
            for (window, group) in windows.iter().zip(&self.fee_groups) {
                window.check(group).map_err(IntegrityError)?;
            }
        }
        Ok(())
    }

    /// Every live order is well formed, counted once by its holder, and reachable from
    /// exactly the indexes it belongs in: its book level or stop queue, the expiry queue and
    /// the client-id chains.
    fn check_orders(&self) -> Result<(), IntegrityError> {
        let mut ids = HashSet::with_capacity(self.orders.len());
        let mut open_per_holder = vec![0u32; self.accounts.holders.len()];
        let (mut resting, mut stops, mut with_expiry, mut with_client_id) = (0, 0, 0, 0);
        let mut icebergs = 0usize;
        for (slot, o) in self.orders.iter() {
            let Some(instrument) = self.instruments.get(usize::from(o.instrument.0)) else {
                return fail("an order on an unknown instrument");
            };
            let Some(core) = self.accounts.core.get(o.account.0 as usize) else {
                return fail("an order of an unknown account");
            };
            self.check_order_identity(slot, o, &mut ids)?;
            match o.state {
                LiveState::Resting => resting += 1,
                LiveState::PendingTrigger if o.order_type.is_trigger() => stops += 1,
                _ => return fail("an order is neither resting nor waiting for its trigger"),
            }
            if o.order_type.is_trigger()
                && !o.order_type.is_trailing()
                && (o.trigger_price < instrument.min_price
                    || o.trigger_price > instrument.max_price)
            {
                return fail("a stop order's trigger is out of range");
            }
            self.check_trailing(o)?;
            self.check_iceberg(o)?;
            icebergs += usize::from(o.is_iceberg());
            open_per_holder[core.holder.0 as usize] += 1;
            if let Some(at) = o.expire_at() {
                with_expiry += 1;
                if self.expiries.get(&(at, o.id)) != Some(&(slot as u32)) {
                    return fail("an order with an expiry is not in the expiry queue");
                }
            }
            with_client_id += usize::from(o.client_id().is_some());
        }
        if self.expiries.len() != with_expiry {
            return fail("the expiry queue names orders that do not expire then");
        }
        if open_per_holder
            .iter()
            .zip(&self.accounts.holders)
            .any(|(&n, holder)| n != holder.open_orders)
        {
            return fail("a holder's open-order count disagrees with its orders");
        }
        let (in_books, in_stop_queues) = self.check_books()?;
        let tracked: usize = (self.books.iter())
            .map(|b| b.on_last.tracked() + b.on_mark.tracked())
            .sum();
        self.check_links()?;
        if tracked != self.trails.len() || icebergs != self.displays.len() {
            return fail("the trailing index names orders that do not trail");
        }
        if in_books != resting || in_stop_queues != stops {
            return fail("an order is in no book level or stop queue");
        }
        if self.chained_client_ids()? != with_client_id {
            return fail("an order with a client id is not in its chain");
        }
        if self.chained_account_orders()? != self.orders.len() {
            return fail("a live order is not in its account's chain");
        }
        Ok(())
    }

    /// Every book's structure against the orders, and its last price in range: how many
    /// orders rest in the books and wait in their stop queues.
    fn check_books(&self) -> Result<(usize, usize), IntegrityError> {
        let (mut in_books, mut in_stop_queues) = (0, 0);
        for (i, (book, instrument)) in self.books.iter().zip(&self.instruments).enumerate() {
            let counts = book
                .check(
                    &self.orders,
                    &self.held_at,
                    crate::ids::InstrumentId(i as u16),
                    (instrument.min_price, instrument.max_price),
                )
                .map_err(IntegrityError)?;
            in_books += counts.resting;
            in_stop_queues += counts.stops;
        }
        if self.books.iter().zip(&self.instruments).any(|(book, i)| {
            book.last_price
                .is_some_and(|p| p < i.min_price || p > i.max_price)
        }) {
            return fail("a last trade price is out of range");
        }
        Ok((in_books, in_stop_queues))
    }

    /// An order's slot, number, amounts and type: where it sits, unique and in range.
    fn check_order_identity(
        &self,
        slot: usize,
        o: &Order,
        ids: &mut HashSet<u64>,
    ) -> Result<(), IntegrityError> {
        if o.slot as usize != slot
            || o.id == 0
            || o.id >= self.next_order
            || !ids.insert(o.id)
            || o.amount.0 <= 0
            || o.filled.0 < 0
            || o.filled.0 >= o.amount.0
            || o.reserved < 0
            || (!self.enforce_balances && o.reserved != 0)
            || !counts_as_open(o.order_type, o.time_in_force)
        {
            return fail("an order's identity, amounts or type are out of range");
        }
        Ok(())
    }

    /// Walks every account's chain of live orders from its newest; returns how many orders
    /// they hold (each chain lists only its account's orders, newest first, without loops).
    fn chained_account_orders(&self) -> Result<usize, IntegrityError> {
        let heads = self.account_chains.heads();
        if heads.len() > self.accounts.core.len() {
            return fail("order chains for accounts that do not exist");
        }
        let mut chained = 0usize;
        for (account, &newest) in heads.iter().enumerate() {
            let (mut slot, mut newer) = (newest, NIL);
            while slot != NIL {
                let Some(o) = self.orders.get(slot as usize) else {
                    return fail("an account's order chain names a missing order");
                };
                let link = self.account_chains.link_of(slot);
                let older_id = self.orders.get(link.older as usize).map(|x| x.id);
                if o.account.0 as usize != account
                    || link.newer != newer
                    || older_id.is_some_and(|id| id >= o.id)
                {
                    return fail("an account's order chain links another account's order");
                }
                chained += 1;
                if chained > self.orders.len() {
                    return fail("an account's order chain loops");
                }
                (newer, slot) = (slot, link.older);
            }
        }
        Ok(chained)
    }

    /// Walks every client-id chain from its newest order; returns how many orders they hold.
    fn chained_client_ids(&self) -> Result<usize, IntegrityError> {
        let mut chained = 0usize;
        for (&(account, client_id), &newest) in &self.client_index {
            let (mut slot, mut newer) = (newest, NIL);
            while slot != NIL {
                let Some(o) = self.orders.get(slot as usize) else {
                    return fail("a client-id chain names a missing order");
                };
                if o.account != account
                    || o.client_id() != Some(client_id)
                    || o.client_newer != newer
                {
                    return fail("a client-id chain links an order of another key");
                }
                chained += 1;
                if chained > self.orders.len() {
                    return fail("a client-id chain loops");
                }
                (newer, slot) = (slot, o.client_older);
            }
        }
        Ok(chained)
    }

    /// Positions fit the account table, sum to zero per market, and match the market's
    /// open interest; position numbers were handed out.
    fn check_futures(&self) -> Result<(), IntegrityError> {
        let f = &self.futures;
        let markets = f.markets.len();
        let accounts = self.accounts.core.len();
        let fits = if markets == 0 {
            f.positions.is_empty()
        } else {
            f.positions.len().is_multiple_of(markets) && f.positions.len() / markets <= accounts
        };
        if !fits || f.accounts.len() > accounts {
            return fail("futures tables do not match the accounts");
        }
        for (m, market) in f.markets.iter().enumerate() {
            let instrument = &self.instruments[usize::from(market.instrument.0)];
            if market
                .index
                .is_some_and(|p| p < instrument.min_price || p > instrument.max_price)
            {
                return fail("an index price is out of range");
            }
            if market
                .funding
                .as_ref()
                .is_some_and(|funding| !funding_in_range(funding, f.scheduled))
            {
                return fail("a funding clock or its samples are out of range");
            }
            let (mut net, mut long) = (0i128, 0i128);
            for p in f.positions.iter().skip(m).step_by(markets) {
                if p.id >= f.next_position || (p.size != 0 && p.id == 0) {
                    return fail("a position number was never handed out");
                }
                net += i128::from(p.size);
                long += i128::from(p.size.max(0));
            }
            if net != 0 || long != i128::from(market.open_interest) {
                return fail("positions do not balance to the open interest");
            }
        }
        Ok(())
    }

    /// No balance is negative or larger than a balance can hold once unlocked, every lock
    /// is exactly what open orders reserve, and futures order margin is what futures orders
    /// reserve.
    fn check_money(&self) -> Result<(), IntegrityError> {
        let mut reserved: BTreeMap<(AccountId, usize), i128> = BTreeMap::new();
        let mut margin: BTreeMap<AccountId, i128> = BTreeMap::new();
        for (_, o) in self.orders.iter() {
            let s = &self.settlements[usize::from(o.instrument.0)];
            let currency = s.reserve_currency(o.side);
            *reserved
                .entry((o.account, usize::from(currency.0)))
                .or_default() += i128::from(o.reserved);
            if s.futures.is_some() {
                *margin.entry(o.account).or_default() += i128::from(o.reserved);
            }
        }
        // Only a futures collateral's fee pot can go below zero: it absorbs the losses of
        // positions closed past their bankruptcy price.
        let collateral = |c: usize| {
            self.futures
                .markets
                .iter()
                .any(|m| usize::from(m.collateral.0) == c)
        };
        if (self.fees_collected.iter().enumerate()).any(|(c, &fee)| fee < 0 && !collateral(c)) {
            return fail("a negative fee account");
        }
        for (a, record) in self.accounts.accounts.iter().enumerate() {
            let account = AccountId(a as u32);
            for (c, b) in record.balances.dense(self.currencies.len()).enumerate() {
                let locked = reserved.get(&(account, c)).copied().unwrap_or(0);
                if b.available < 0
                    || b.locked < 0
                    || b.available.checked_add(b.locked).is_none()
                    || i128::from(b.locked) != locked
                {
                    return fail(
                        "a balance is out of range or its lock is not what orders reserve",
                    );
                }
            }
            let order_margin = i128::from(self.futures.account(account).order_margin);
            if order_margin != margin.get(&account).copied().unwrap_or(0) {
                return fail("futures order margin is not what futures orders reserve");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
