//! Futures money paths: mark price, initial and maintenance margin, the margin check and
//! reservation at order entry, and the settlement of a fill into both accounts' positions,
//! USD cash, fees and open interest.

use super::{Position, ppm_of};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::event::{Event, EventSink};
use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, CurrencyId, InstrumentId};
use crate::order::{NewOrder, Side};

/// Money of one account across its futures positions, in USD balance units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MarginState {
    /// USD available + locked.
    pub cash: i128,
    /// Unrealised PnL of every position at mark.
    pub unrealised: i128,
    /// Initial margin of the positions at mark.
    pub position_margin: i128,
    /// Initial margin reserved by open futures orders.
    pub order_margin: i128,
    /// Maintenance margin of the positions at mark.
    pub maintenance: i128,
}

impl MarginState {
    /// Cash plus unrealised PnL.
    pub fn equity(&self) -> i128 {
        self.cash + self.unrealised
    }
    /// Initial margin of positions and orders.
    pub fn used(&self) -> i128 {
        self.position_margin + self.order_margin
    }
    /// Equity less margin used.
    pub fn available(&self) -> i128 {
        self.equity() - self.used()
    }
}

/// What the settlement of one side of a fill produced, for its events.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
pub(crate) struct SideResult {
    pub(crate) realised: i64,
}

impl Engine {
    /// Mark price of futures market `m`: the book's mid (or last trade, or the index),
    /// clamped to the collar around the index when one is set.
    pub(crate) fn mark_price(&self, m: usize) -> Option<Price> {
        let market = &self.futures.markets[m];
        let book = &self.books[usize::from(market.instrument.0)];
        let raw = match book.top() {
            (Some(bid), Some(ask)) => Some((bid.0 + ask.0).div_euclid(2)),
            _ => book.last_price.map(|p| p.0),
        }
        .or(market.index.map(|p| p.0))?;
        Some(Price(match market.index {
            Some(index) => {
                let band = market.collar_band(index);
                raw.clamp(index.0 - band, index.0 + band)
            }
            None => raw,
        }))
    }

    /// USD balance units of `lots x price` in a futures instrument.
    #[inline]
    fn usd(&self, instrument: InstrumentId, lots: i64, price: Price) -> i128 {
        self.quote_value(instrument, price, Qty(lots))
    }

    /// Initial margin (USD units) of `amount` at `price` in futures market `m`.
    pub(crate) fn initial_margin(&self, m: usize, amount: Qty, price: Price) -> i128 {
        let market = &self.futures.markets[m];
        ppm_of(
            self.usd(market.instrument, amount.0, price),
            market.initial_ppm,
        )
    }

    /// Cash, unrealised PnL and margins of an account over every futures market.
    pub fn margin_state(&self, account: AccountId) -> MarginState {
        let mut state = MarginState {
            order_margin: i128::from(self.futures.account(account).order_margin),
            ..MarginState::default()
        };
        if let (Some(market), Ok(record)) =
            (self.futures.markets.first(), self.accounts.account(account))
        {
            let b = record.balances.get(market.collateral);
            state.cash = i128::from(b.available) + i128::from(b.locked);
        }
        for (m, market) in self.futures.markets.iter().enumerate() {
            let Some(p) = self.futures.position(account, m).filter(|p| p.size != 0) else {
                continue;
            };
            let mark = self.mark_price(m).unwrap_or_else(|| p.entry_price());
            let value = self.usd(market.instrument, p.size.abs(), mark);
            let quote_unit =
                i128::from(self.settlements[usize::from(market.instrument.0)].quote_unit);
            state.unrealised += p.unrealised(mark) * quote_unit;
            state.position_margin += ppm_of(value, market.initial_ppm);
            state.maintenance += ppm_of(value, market.maintenance_ppm);
        }
        state
    }

    /// Lots an order on `side` may still fill without taking the position past flat.
    #[inline]
    pub(crate) fn reduce_room(&self, account: AccountId, m: usize, side: Side) -> i64 {
        let size = self.futures.position(account, m).map_or(0, |p| p.size);
        match side {
            Side::Sell => size.max(0),
            Side::Buy => (-size).max(0),
        }
    }

    /// Whether the account is in de-risk, by an operator or by a margin call.
    pub(crate) fn in_derisk(&self, account: AccountId) -> bool {
        self.futures.account(account).margin_call
            || self.accounts.account(account).is_ok_and(|a| a.derisk)
    }

    /// The price a futures market order (one without a limit) is margined at and matches
    /// up to: the mark, or the touch it meets first when there is no mark, plus the collar.
    /// A buy stops there, so a stale book far from the index cannot fill it beyond what its
    /// margin covers.
    pub(crate) fn market_order_bound(&self, m: usize, side: Side) -> Option<Price> {
        let market = &self.futures.markets[m];
        let mark = self.mark_price(m).or_else(|| {
            self.books[usize::from(market.instrument.0)]
                .best(side.opposite())
                .map(|(p, _)| p)
        })?;
        Some(Price(mark.0 + market.collar_band(mark)))
    }

    /// Entry checks of a futures order and the margin it reserves (USD units).
    pub(crate) fn futures_entry(&self, o: &NewOrder, m: usize) -> Result<i128, EngineError> {
        let size = self.futures.position(o.account, m).map_or(0, |p| p.size);
        let reduces = match o.side {
            Side::Buy => size < 0 && o.amount.0 <= -size,
            Side::Sell => size > 0 && o.amount.0 <= size,
        };
        if o.reduce_only {
            // A held trigger order is checked against the position when it fires: a
            // protective stop may be placed before the position it protects exists.
            if !reduces && !o.order_type.is_trigger() {
                return Err(EngineError::ReduceOnlyWouldIncrease);
            }
            return Ok(0);
        }
        if !reduces && self.in_derisk(o.account) {
            return Err(EngineError::AccountInDerisk);
        }
        if !self.enforce_balances {
            return Ok(0);
        }
        let market = &self.futures.markets[m];
        let limit = match o.price {
            Some(p) => p,
            None => self
                .market_order_bound(m, o.side)
                .ok_or(EngineError::InsufficientLiquidity)?,
        };
        // Margin at the worst price a fill may reach, so the fee and the position a fill
        // opens are covered: a buy fills at its limit or below; a sell walks the bids down
        // from the best one, which may stand above its limit (or the mark) while the index
        // has moved.
        let basis = match o.side {
            Side::Buy => limit,
            Side::Sell => self.books[usize::from(market.instrument.0)]
                .best(Side::Buy)
                .map_or(limit, |(bid, _)| bid.max(limit)),
        };
        let need = self.initial_margin(m, o.amount, basis);
        let available = self
            .accounts
            .account(o.account)
            .map(|a| a.balances.get(market.collateral).available)?;
        if need > self.margin_state(o.account).available() || need > i128::from(available) {
            return Err(EngineError::InsufficientFunds);
        }
        Ok(need)
    }

    /// Settles one futures fill: each side's reserved margin is consumed, its position
    /// moves, PnL and its fee go to its USD cash. Returns (maker fee, taker fee).
    pub(crate) fn settle_futures_fill(
        &mut self,
        m: usize,
        taker_slot: u32,
        maker_slot: u32,
        price: Price,
        qty: Qty,
    ) -> (i64, i64) {
        let taker = &self.orders[taker_slot as usize];
        let (taker_account, taker_side, instrument) = (taker.account, taker.side, taker.instrument);
        let maker_account = self.orders[maker_slot as usize].account;
        let s = self.settlements[usize::from(instrument.0)];
        let taker_holder = self.accounts.holder_of(taker_account);
        let maker_holder = self.accounts.holder_of(maker_account);
        let (maker_ppm, taker_ppm) = match s.fee_group {
            Some(g) => (self.rate(maker_holder, g).0, self.rate(taker_holder, g).1),
            None => (0, 0),
        };
        let signed = |side: Side| if side == Side::Buy { qty.0 } else { -qty.0 };
        let (taker_fee, taker_result) =
            self.settle_side(m, taker_slot, signed(taker_side), price, taker_ppm);
        let (maker_fee, maker_result) = self.settle_side(
            m,
            maker_slot,
            signed(taker_side.opposite()),
            price,
            maker_ppm,
        );
        self.futures.pending = [taker_result, maker_result];
        if let Some(g) = s.fee_group {
            let volume = self.usd(instrument, qty.0, price);
            self.add_volume(g, [taker_holder, maker_holder], volume);
        }
        (maker_fee as i64, taker_fee as i64)
    }

    fn settle_side(
        &mut self,
        m: usize,
        slot: u32,
        delta: i64,
        price: Price,
        fee_ppm: u32,
    ) -> (i128, SideResult) {
        let o = &self.orders[slot as usize];
        let (account, limit, reserved, instrument) = (o.account, o.price, o.reserved, o.instrument);
        let market_price = if limit.0 == 0 { price } else { limit };
        let consumed = (self
            .initial_margin(m, Qty(delta.abs()), market_price)
            .min(i128::from(reserved))) as i64;
        self.orders[slot as usize].reserved -= consumed;
        self.futures.account_mut(account).order_margin -= consumed;
        let now = self.now;
        let quote_unit = i128::from(self.settlements[usize::from(instrument.0)].quote_unit);
        let fee = ppm_of(self.usd(instrument, delta.abs(), price), i64::from(fee_ppm));
        let next_id = self.futures.next_position;
        let position = self.futures.position_mut(account, m);
        let before = position.size;
        let (pnl, new_id) = position.apply(delta, price);
        if new_id {
            position.id = next_id;
            position.opened = now;
            position.realised = 0;
        }
        let realised = crate::limits::clamp_units(pnl * quote_unit - fee);
        position.realised = position.realised.saturating_add(realised);
        let after = position.size;
        if new_id {
            self.futures.next_position += 1;
        }
        let market = &mut self.futures.markets[m];
        market.open_interest += after.max(0) - before.max(0);
        let collateral = market.collateral;
        let b = self.balance_mut(account, collateral);
        b.locked -= consumed;
        b.updated = now;
        self.fees_collected[usize::from(collateral.0)] += fee as i64;
        self.credit_pnl(account, collateral, consumed + realised);
        (fee, SideResult { realised })
    }

    /// Adds `amount` (realised PnL, possibly negative) to an account's available cash. A
    /// loss larger than the cash (a position left open past its bankruptcy price: closing
    /// it is the operator's `liquidate`) takes the cash to zero and the exchange absorbs the
    /// rest from the fees it collected in that currency, so no balance goes negative and
    /// money is still conserved; that pot may go below zero, which is the exchange's loss.
    pub(crate) fn credit_pnl(&mut self, account: AccountId, collateral: CurrencyId, amount: i64) {
        let amount = i128::from(amount);
        // In i128: a loss beyond the cash takes the account to zero and the fee account
        // pays the rest; a gain past the balance cap goes to the fee account too. Units
        // are conserved and no balance can leave its integer type.
        let b = self.balance_mut(account, collateral);
        let shortfall = (-(i128::from(b.available) + amount)).max(0);
        let spill = self.credit_capped(
            account,
            collateral,
            crate::limits::clamp_units(amount + shortfall),
        );
        self.add_to_fee_pot(collateral, spill - shortfall);
    }

    /// Emits a futures fill's balances and positions: taker USD and position, then maker's.
    pub(crate) fn emit_futures_fill<S: EventSink>(
        &mut self,
        m: usize,
        taker: AccountId,
        maker: AccountId,
        sink: &mut S,
    ) {
        let collateral = self.futures.markets[m].collateral;
        let pending = self.futures.pending;
        for (account, result) in [(taker, pending[0]), (maker, pending[1])] {
            self.emit_balance(sink, account, collateral);
            self.emit_position(m, account, result.realised, sink);
        }
    }

    /// Emits the current state of one position.
    pub(crate) fn emit_position<S: EventSink>(
        &mut self,
        m: usize,
        account: AccountId,
        realised: i64,
        sink: &mut S,
    ) {
        let p = self
            .futures
            .position(account, m)
            .copied()
            .unwrap_or(Position::default());
        let instrument = self.futures.markets[m].instrument;
        self.emit(
            sink,
            Event::PositionChanged {
                account,
                instrument,
                position_id: p.id,
                size: p.size,
                entry_price: p.entry_price(),
                realised,
            },
        );
    }
}
