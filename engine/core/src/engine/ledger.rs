//! Spot funds: what an order reserves, the settlement of each fill between the two accounts
//! and the fee account, releases when an order ends, and traded volume for fee tiers.
//!
//! Units: balances are integers in `10^-scale` of their currency, where a currency's scale is
//! at least its precision, the transfer precision of the spec (8, or 3 for SHIB, PEPE and
//! BTT) and whatever its instruments need (amount precision for a base, amount plus market
//! precision for a quote), so settling price x amount is exact and never rounds.

use super::Engine;
use crate::account::Balance;
use crate::error::EngineError;
use crate::event::{Event, EventSink};
use crate::fees::{self, FeeGroup};
use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, CurrencyId, HolderId, InstrumentId};
use crate::order::Side;
use crate::refdata::{Currency, Instrument};

/// How an instrument's traded value is counted in its fee group's volume currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
pub(crate) enum Conversion {
    /// The quote currency is the volume currency.
    Direct,
    /// Multiply by the last price of `via` (base = quote currency, quote = volume currency),
    /// then scale by `10^exp` (negative: divide).
    ByPrice { via: InstrumentId, exp: i32 },
    /// Divide by the last price of `via` (base = volume currency, quote = quote currency),
    /// after scaling by `10^exp`.
    ByInversePrice { via: InstrumentId, exp: i32 },
    /// No price path: the volume is not counted.
    Uncounted,
}

/// Per-instrument settlement constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct Settlement {
    pub(crate) base: CurrencyId,
    pub(crate) quote: CurrencyId,
    /// Base balance units per lot.
    pub(crate) base_unit: i64,
    /// Quote balance units per (tick x lot).
    pub(crate) quote_unit: i64,
    pub(crate) fee_group: Option<usize>,
    pub(crate) conversion: Conversion,
    /// Futures market index: the instrument settles into positions and USD margin.
    pub(crate) futures: Option<u16>,
}

impl Settlement {
    /// Currency an open order on `side` holds reserved: the quote for a buy and for any
    /// futures order (its margin), the base for a spot sell.
    #[inline]
    pub(crate) fn reserve_currency(&self, side: Side) -> CurrencyId {
        if side == Side::Buy || self.futures.is_some() {
            self.quote
        } else {
            self.base
        }
    }
}

/// Decimal places a transfer keeps for a currency (spec 2.5).
pub fn transfer_decimals(code: &str) -> u8 {
    if matches!(code, "SHIB" | "PEPE" | "BTT") {
        3
    } else {
        8
    }
}

/// Balance scale of every currency: precision, transfer decimals and instrument needs.
pub(crate) fn balance_scales(currencies: &[Currency], instruments: &[Instrument]) -> Vec<u8> {
    let mut scales: Vec<u8> = currencies
        .iter()
        .map(|c| c.precision.max(transfer_decimals(&c.code)))
        .collect();
    for i in instruments {
        let (ap, mp) = (i.spec.amount_precision, i.spec.market_precision);
        let base = &mut scales[usize::from(i.base.0)];
        *base = (*base).max(ap);
        let quote = &mut scales[usize::from(i.quote.0)];
        *quote = (*quote).max(ap + mp);
    }
    scales
}

fn pow10(exp: u8) -> i64 {
    10i64.pow(u32::from(exp))
}

pub(crate) fn settlements(
    instruments: &[Instrument],
    scales: &[u8],
    groups: &[FeeGroup],
) -> Vec<Settlement> {
    instruments
        .iter()
        .map(|i| {
            let (ap, mp) = (i.spec.amount_precision, i.spec.market_precision);
            let group_id = if i.spec.kind.is_future() {
                fees::FUTURES_GROUP
            } else {
                fees::SPOT_GROUP
            };
            let fee_group = groups.iter().position(|g| g.spec.id == group_id);
            let conversion = fee_group.map_or(Conversion::Uncounted, |g| {
                conversion(i.quote, groups[g].volume_currency, instruments, scales)
            });
            Settlement {
                base: i.base,
                quote: i.quote,
                base_unit: pow10(scales[usize::from(i.base.0)] - ap),
                quote_unit: pow10(scales[usize::from(i.quote.0)] - ap - mp),
                fee_group,
                conversion,
                futures: None,
            }
        })
        .collect()
}

fn conversion(
    from: CurrencyId,
    to: CurrencyId,
    instruments: &[Instrument],
    scales: &[u8],
) -> Conversion {
    if from == to {
        return Conversion::Direct;
    }
    let (s_from, s_to) = (
        i32::from(scales[usize::from(from.0)]),
        i32::from(scales[usize::from(to.0)]),
    );
    for (n, x) in instruments.iter().enumerate() {
        let via = InstrumentId(n as u16);
        let mp = i32::from(x.spec.market_precision);
        if x.base == from && x.quote == to {
            return Conversion::ByPrice {
                via,
                exp: s_to - s_from - mp,
            };
        }
        if x.base == to && x.quote == from {
            return Conversion::ByInversePrice {
                via,
                exp: s_to + mp - s_from,
            };
        }
    }
    Conversion::Uncounted
}

fn scale_by(value: i128, exp: i32) -> i128 {
    if exp >= 0 {
        value.saturating_mul(10i128.pow(exp as u32))
    } else {
        value / 10i128.pow((-exp) as u32)
    }
}

impl Engine {
    /// Quote balance units of `price x amount` in `instrument`.
    #[inline]
    pub(super) fn quote_value(&self, instrument: InstrumentId, price: Price, amount: Qty) -> i128 {
        price.notional(amount).0
            * i128::from(self.settlements[usize::from(instrument.0)].quote_unit)
    }

    /// Currency and amount (balance units) an order reserves: quote at its limit for a buy,
    /// base for a sell. A market buy without a limit reserves `market_cost`.
    #[inline]
    pub(super) fn reservation(
        &self,
        instrument: InstrumentId,
        side: Side,
        limit: Price,
        amount: Qty,
        market_cost: i128,
    ) -> (CurrencyId, i128) {
        let s = &self.settlements[usize::from(instrument.0)];
        if let Some(m) = s.futures {
            return (s.quote, self.initial_margin(usize::from(m), amount, limit));
        }
        match side {
            Side::Buy if limit.0 == 0 => (s.quote, market_cost),
            Side::Buy => (s.quote, self.quote_value(instrument, limit, amount)),
            Side::Sell => (s.base, i128::from(amount.0) * i128::from(s.base_unit)),
        }
    }

    /// Balance of one account in one currency, mutable.
    #[inline]
    pub(super) fn balance_mut(&mut self, account: AccountId, currency: CurrencyId) -> &mut Balance {
        self.accounts.accounts[account.0 as usize]
            .balances
            .get_mut(currency)
    }

    /// Refuses a credit of `amount` that would take the balance (available and locked) past
    /// [`crate::limits::MAX_BALANCE`].
    pub(super) fn check_room(
        &self,
        account: AccountId,
        currency: CurrencyId,
        amount: i64,
    ) -> Result<(), EngineError> {
        let b = self.accounts.accounts[account.0 as usize]
            .balances
            .get(currency);
        let after = i128::from(b.available) + i128::from(b.locked) + i128::from(amount);
        if after > i128::from(crate::limits::MAX_BALANCE) {
            return Err(EngineError::BalanceLimitExceeded);
        }
        Ok(())
    }

    /// Credits `amount` (at most the cap's worth) to available, keeping available and
    /// locked together at or below [`crate::limits::MAX_BALANCE`]; returns what did not
    /// fit, for the caller to give to the fee account (a credit cannot be refused halfway
    /// through a match).
    #[inline]
    pub(super) fn credit_capped(
        &mut self,
        account: AccountId,
        currency: CurrencyId,
        amount: i64,
    ) -> i128 {
        credit_capped_in(self.balance_mut(account, currency), amount)
    }

    /// Adds to the exchange's fee account in `currency`, kept inside the balance range.
    #[inline]
    pub(super) fn add_to_fee_pot(&mut self, currency: CurrencyId, amount: i128) {
        let pot = &mut self.fees_collected[usize::from(currency.0)];
        *pot = crate::limits::clamp_units(i128::from(*pot) + amount);
    }

    /// Emits the current value of a balance.
    #[inline]
    pub(super) fn emit_balance<S: EventSink>(
        &mut self,
        sink: &mut S,
        account: AccountId,
        currency: CurrencyId,
    ) {
        let b = self.accounts.accounts[account.0 as usize]
            .balances
            .get(currency);
        self.emit_balance_as(sink, account, currency, b);
    }

    /// Emits `b` as the balance of `account` in `currency` (a caller that just wrote it
    /// reports it without looking it up again).
    #[inline]
    fn emit_balance_as<S: EventSink>(
        &mut self,
        sink: &mut S,
        account: AccountId,
        currency: CurrencyId,
        b: Balance,
    ) {
        self.emit(
            sink,
            Event::BalanceChanged {
                account,
                currency,
                available: b.available,
                locked: b.locked,
            },
        );
    }

    /// Moves `amount` between available (negative: back) and locked, and reports it.
    #[inline]
    pub(super) fn lock<S: EventSink>(
        &mut self,
        account: AccountId,
        currency: CurrencyId,
        amount: i64,
        sink: &mut S,
    ) {
        let now = self.now;
        let b = self.balance_mut(account, currency);
        b.available -= amount;
        b.locked += amount;
        b.updated = now;
        // Reported from the entry just written: a second look-up of the same balance cost
        // as much as the change.
        let written = *b;
        self.emit_balance_as(sink, account, currency, written);
    }

    /// Releases what an ending order still reserves.
    #[inline]
    pub(super) fn release_order<S: EventSink>(&mut self, slot: u32, sink: &mut S) {
        if !self.enforce_balances {
            // Book only: nothing is reserved, and the order's second cache line stays cold.
            return;
        }
        let o = &mut self.orders[slot as usize];
        let (reserved, account, side, instrument) = (o.reserved, o.account, o.side, o.instrument);
        if reserved == 0 {
            return;
        }
        o.reserved = 0;
        let s = self.settlements[usize::from(instrument.0)];
        let currency = s.reserve_currency(side);
        if s.futures.is_some() {
            self.futures.account_mut(account).order_margin -= reserved;
        }
        self.lock(account, currency, -reserved, sink);
    }

    /// Settles one fill: the taker's and the maker's base and quote balances, the fees into
    /// the fee account, the reservations consumed, and both holders' traded volume.
    /// Returns (maker fee, taker fee).
    #[inline]
    pub(super) fn settle_fill(
        &mut self,
        taker_slot: u32,
        maker_slot: u32,
        price: Price,
        qty: Qty,
    ) -> (i64, i64) {
        let taker = &self.orders[taker_slot as usize];
        let maker = &self.orders[maker_slot as usize];
        let (instrument, taker_side) = (taker.instrument, taker.side);
        if let Some(m) = self.settlements[usize::from(instrument.0)].futures {
            return self.settle_futures_fill(usize::from(m), taker_slot, maker_slot, price, qty);
        }
        let (taker_account, maker_account) = (taker.account, maker.account);
        let taker_limit = taker.price;
        let s = self.settlements[usize::from(instrument.0)];
        let base_units = qty.0 * s.base_unit;
        let quote_units = (price.notional(qty).0 * i128::from(s.quote_unit)) as i64;
        let taker_holder = self.accounts.holder_of(taker_account);
        let maker_holder = self.accounts.holder_of(maker_account);
        let (maker_ppm, taker_ppm) = match s.fee_group {
            Some(g) => (self.rate(maker_holder, g).0, self.rate(taker_holder, g).1),
            None => (0, 0),
        };
        let now = self.now;
        // Buyer: pays quote from its reservation (a limit buyer reserved at its limit and gets
        // the price improvement back), receives base less its fee.
        let (buyer_slot, buyer, buyer_ppm, buyer_limit) = match taker_side {
            Side::Buy => (taker_slot, taker_account, taker_ppm, taker_limit),
            Side::Sell => (maker_slot, maker_account, maker_ppm, price),
        };
        let (seller_slot, seller, seller_ppm) = match taker_side {
            Side::Buy => (maker_slot, maker_account, maker_ppm),
            Side::Sell => (taker_slot, taker_account, taker_ppm),
        };
        let consumed = if buyer_limit.0 == 0 {
            quote_units
        } else {
            (buyer_limit.notional(qty).0 * i128::from(s.quote_unit)) as i64
        };
        let buyer_fee = fees::fee_for(base_units, buyer_ppm);
        let seller_fee = fees::fee_for(quote_units, seller_ppm);
        self.orders[buyer_slot as usize].reserved -= consumed;
        self.orders[seller_slot as usize].reserved -= base_units;
        let q = self.balance_mut(buyer, s.quote);
        q.locked -= consumed;
        q.available += consumed - quote_units;
        q.updated = now;
        // Each balance is looked up once: the credit and its time go to the same entry.
        let b = self.balance_mut(buyer, s.base);
        let spill_base = credit_capped_in(b, base_units - buyer_fee);
        b.updated = now;
        let b = self.balance_mut(seller, s.base);
        b.locked -= base_units;
        b.updated = now;
        let b = self.balance_mut(seller, s.quote);
        let spill_quote = credit_capped_in(b, quote_units - seller_fee);
        b.updated = now;
        self.add_to_fee_pot(s.base, i128::from(buyer_fee) + spill_base);
        self.add_to_fee_pot(s.quote, i128::from(seller_fee) + spill_quote);
        if let Some(g) = s.fee_group {
            let volume = self.volume_value(s.conversion, i128::from(quote_units));
            self.add_volume(g, [taker_holder, maker_holder], volume);
        }
        match taker_side {
            Side::Buy => (seller_fee, buyer_fee),
            Side::Sell => (buyer_fee, seller_fee),
        }
    }

    /// Adds traded volume (in the group's volume currency) to both holders' windows.
    #[inline]
    pub(super) fn add_volume(&mut self, group: usize, holders: [HolderId; 2], volume: i128) {
        let day = fees::day_of(self.now);
        for holder in holders {
            let w = self.volumes.get_mut(holder, group);
            w.roll(day, &self.fee_groups[group]);
            w.add(day, volume, &self.fee_groups[group]);
        }
    }

    /// Emits the four balances a fill touched: taker base and quote, then maker base and
    /// quote (a futures fill: each side's USD balance and position).
    #[inline]
    pub(super) fn emit_fill_balances<S: EventSink>(
        &mut self,
        instrument: InstrumentId,
        taker: AccountId,
        maker: AccountId,
        sink: &mut S,
    ) {
        let s = self.settlements[usize::from(instrument.0)];
        if let Some(m) = s.futures {
            self.emit_futures_fill(usize::from(m), taker, maker, sink);
            return;
        }
        for account in [taker, maker] {
            self.emit_balance(sink, account, s.base);
            self.emit_balance(sink, account, s.quote);
        }
    }

    /// (maker, taker) rates in millionths for a holder in a fee group, at the current day.
    #[inline]
    pub(super) fn rate(&mut self, holder: HolderId, group: usize) -> (u32, u32) {
        let day = fees::day_of(self.now);
        let g = &self.fee_groups[group];
        let w = self.volumes.get_mut(holder, group);
        w.roll(day, g);
        let tier = g.tiers[w.tier];
        (tier.maker_ppm, tier.taker_ppm)
    }

    /// Traded value in quote units converted to the fee group's volume currency units.
    fn volume_value(&self, conversion: Conversion, quote_units: i128) -> i128 {
        let last = |via: InstrumentId| {
            self.books[usize::from(via.0)]
                .last_price
                .map(|p| i128::from(p.0))
        };
        match conversion {
            Conversion::Direct => quote_units,
            Conversion::ByPrice { via, exp } => {
                last(via).map_or(0, |p| scale_by(quote_units * p, exp))
            }
            Conversion::ByInversePrice { via, exp } => last(via)
                .filter(|&p| p > 0)
                .map_or(0, |p| scale_by(quote_units, exp) / p),
            Conversion::Uncounted => 0,
        }
    }
}

/// Credits `amount` to `b`'s available balance up to the cap (see
/// [`Engine::credit_capped`]); returns what did not fit.
#[inline]
fn credit_capped_in(b: &mut Balance, amount: i64) -> i128 {
    let room =
        i128::from(crate::limits::MAX_BALANCE) - i128::from(b.available) - i128::from(b.locked);
    let credited = i128::from(amount).min(room);
    b.available = (i128::from(b.available) + credited) as i64;
    i128::from(amount) - credited
}
