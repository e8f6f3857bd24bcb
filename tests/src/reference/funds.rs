//! The reference engine's money: accounts with per-currency (available, locked) pairs, the
//! fee account, reservations, fill settlement, fee tiers from a plain list of past trades,
//! and the admin and transfer commands. Mirrors the engine's documented rules one by one.

use matchbook::{AccountId, AccountKind, CurrencyId, EngineError, Event, HolderId};

use super::RefEngine;

/// An account of the reference engine.
#[derive(Debug, Clone)]
pub struct RefAccount {
    /// Owner.
    pub holder: usize,
    /// Default self-trade prevention.
    pub stp: matchbook::StpMode,
    /// Name.
    pub name: String,
    /// Closed or not.
    pub closed: bool,
    /// Kind.
    pub kind: AccountKind,
    /// In de-risk.
    pub derisk: bool,
    /// (available, locked) per currency.
    pub balances: Vec<(i64, i64)>,
    /// BLP minimum per currency.
    pub blp: Vec<i64>,
}

/// One tier: from `volume`, (maker, taker) millionths.
#[derive(Debug, Clone, Copy)]
pub struct RefTier {
    /// Lower bound in volume-currency units.
    pub volume: i128,
    /// Maker rate.
    pub maker_ppm: u32,
    /// Taker rate.
    pub taker_ppm: u32,
}

/// Money settings of the reference engine.
#[derive(Debug, Clone)]
pub struct RefFunds {
    /// Whether orders reserve and settle.
    pub enforce: bool,
    /// Number of currencies.
    pub currencies: usize,
    /// Spot fee tiers, ascending (the model's instruments all quote in the volume currency).
    pub tiers: Vec<RefTier>,
    /// Fees collected per currency.
    pub fees: Vec<i64>,
    /// Every (holder, day, volume) ever traded.
    pub volume_log: Vec<(usize, i64, i128)>,
    /// Next transfer number.
    pub next_transfer: u64,
}

const DAY: i64 = 86_400 * 1_000_000_000;

pub(super) fn fee_for(amount: i64, ppm: u32) -> i64 {
    let product = i128::from(amount) * i128::from(ppm);
    ((product + 999_999) / 1_000_000) as i64
}

impl RefEngine {
    pub(super) fn new_account(&mut self, holder: usize, name: String, kind: AccountKind) -> usize {
        let n = self.funds.currencies;
        self.accounts.push(RefAccount {
            holder,
            stp: matchbook::StpMode::None,
            name,
            closed: false,
            kind,
            derisk: false,
            balances: vec![(0, 0); n],
            blp: vec![0; n],
        });
        self.accounts.len() - 1
    }

    pub(super) fn balance_event(&mut self, account: usize, currency: usize) {
        let (available, locked) = self.accounts[account].balances[currency];
        self.events.push(Event::BalanceChanged {
            account: AccountId(account as u32),
            currency: CurrencyId(currency as u16),
            available,
            locked,
        });
    }

    /// Moves `amount` from available to locked (negative: back) and reports it.
    pub(super) fn lock(&mut self, account: usize, currency: usize, amount: i64) {
        let b = &mut self.accounts[account].balances[currency];
        b.0 -= amount;
        b.1 += amount;
        self.balance_event(account, currency);
    }

    /// (maker, taker) rates of a holder today: the tier of its last-30-days volume.
    pub(super) fn rates(&self, holder: usize) -> (u32, u32) {
        let today = self.now.0.div_euclid(DAY);
        let volume: i128 = self
            .funds
            .volume_log
            .iter()
            .filter(|(h, d, _)| *h == holder && *d <= today && *d > today - 30)
            .map(|(_, _, v)| v)
            .sum();
        let tier = self
            .funds
            .tiers
            .iter()
            .rev()
            .find(|t| t.volume <= volume)
            .copied()
            .unwrap_or(self.funds.tiers[0]);
        (tier.maker_ppm, tier.taker_ppm)
    }

    /// Settles one fill; returns (maker fee, taker fee).
    #[allow(clippy::too_many_arguments)] // mirrors one fill's facts, named rather than bundled
    pub(super) fn settle(
        &mut self,
        instrument: usize,
        taker: usize,
        maker: usize,
        taker_buys: bool,
        price: i64,
        qty: i64,
    ) -> (i64, i64) {
        let inst = self.instruments[instrument].clone();
        let (t, m) = (self.orders[taker], self.orders[maker]);
        let (th, mh) = (
            self.accounts[t.account.0 as usize].holder,
            self.accounts[m.account.0 as usize].holder,
        );
        let (maker_ppm, taker_ppm) = (self.rates(mh).0, self.rates(th).1);
        let base_units = qty * inst.base_unit;
        let quote_units = price * qty * inst.quote_unit;
        let (buyer, seller) = if taker_buys {
            (taker, maker)
        } else {
            (maker, taker)
        };
        let (buyer_ppm, seller_ppm) = if taker_buys {
            (taker_ppm, maker_ppm)
        } else {
            (maker_ppm, taker_ppm)
        };
        let buyer_limit = self.orders[buyer].price.unwrap_or(0);
        let consumed = if buyer_limit == 0 {
            quote_units
        } else {
            buyer_limit * qty * inst.quote_unit
        };
        let buyer_fee = fee_for(base_units, buyer_ppm);
        let seller_fee = fee_for(quote_units, seller_ppm);
        self.orders[buyer].reserved -= consumed;
        self.orders[seller].reserved -= base_units;
        let (ba, sa) = (
            self.orders[buyer].account.0 as usize,
            self.orders[seller].account.0 as usize,
        );
        let q = &mut self.accounts[ba].balances[inst.quote];
        q.1 -= consumed;
        q.0 += consumed - quote_units;
        self.accounts[ba].balances[inst.base].0 += base_units - buyer_fee;
        self.accounts[sa].balances[inst.base].1 -= base_units;
        self.accounts[sa].balances[inst.quote].0 += quote_units - seller_fee;
        self.funds.fees[inst.base] += buyer_fee;
        self.funds.fees[inst.quote] += seller_fee;
        let today = self.now.0.div_euclid(DAY);
        self.funds
            .volume_log
            .push((th, today, i128::from(quote_units)));
        self.funds
            .volume_log
            .push((mh, today, i128::from(quote_units)));
        if taker_buys {
            (seller_fee, buyer_fee)
        } else {
            (buyer_fee, seller_fee)
        }
    }

    pub(super) fn check_currency(&self, currency: CurrencyId) -> Result<usize, EngineError> {
        let c = usize::from(currency.0);
        if c < self.funds.currencies {
            Ok(c)
        } else {
            Err(EngineError::UnknownCurrency)
        }
    }

    pub(super) fn create_subaccount(
        &mut self,
        holder: HolderId,
        name: &str,
        kind: AccountKind,
    ) -> Result<(), EngineError> {
        let h = holder.0 as usize;
        if h >= self.holders.len() {
            return Err(EngineError::UnknownHolder);
        }
        if name.trim().is_empty() || name.chars().count() > 64 || name.chars().any(char::is_control)
        {
            return Err(EngineError::InvalidAccountName);
        }
        if self
            .accounts
            .iter()
            .any(|a| a.holder == h && a.name == name)
        {
            return Err(EngineError::AccountNameTaken);
        }
        let account = self.new_account(h, name.to_owned(), kind);
        self.events.push(Event::SubaccountCreated {
            holder,
            account: AccountId(account as u32),
        });
        Ok(())
    }

    pub(super) fn close_subaccount(&mut self, account: AccountId) -> Result<(), EngineError> {
        let a = account.0 as usize;
        let record = self.accounts.get(a).ok_or(EngineError::UnknownAccount)?;
        if record.closed {
            return Err(EngineError::AccountClosed);
        }
        let main = self.accounts.iter().position(|x| x.holder == record.holder);
        if main == Some(a) {
            return Err(EngineError::CannotCloseMain);
        }
        let mut ids: Vec<u64> = self
            .orders
            .iter()
            .filter(|o| o.account == account)
            .map(|o| o.id)
            .collect();
        ids.sort_unstable();
        for id in ids {
            // An OCO leg may have gone with its peer.
            if let Some(i) = self.orders.iter().position(|o| o.id == id) {
                self.cancel(i, matchbook::CancelReason::AccountClosed);
            }
        }
        self.accounts[a].closed = true;
        self.events.push(Event::AccountClosed { account });
        Ok(())
    }

    pub(super) fn deposit(
        &mut self,
        account: AccountId,
        currency: CurrencyId,
        amount: i64,
    ) -> Result<(), EngineError> {
        let c = self.check_currency(currency)?;
        if amount <= 0 {
            return Err(EngineError::InvalidAmount);
        }
        let a = account.0 as usize;
        let record = self
            .accounts
            .get_mut(a)
            .ok_or(EngineError::UnknownAccount)?;
        if record.closed {
            return Err(EngineError::AccountClosed);
        }
        record.balances[c].0 = record.balances[c]
            .0
            .checked_add(amount)
            .ok_or(EngineError::InvalidAmount)?;
        self.balance_event(a, c);
        Ok(())
    }

    pub(super) fn withdraw(
        &mut self,
        account: AccountId,
        currency: CurrencyId,
        amount: i64,
    ) -> Result<(), EngineError> {
        let c = self.check_currency(currency)?;
        if amount <= 0 {
            return Err(EngineError::InvalidAmount);
        }
        let a = account.0 as usize;
        let record = self
            .accounts
            .get_mut(a)
            .ok_or(EngineError::UnknownAccount)?;
        if record.balances[c].0 < amount {
            return Err(EngineError::InsufficientFunds);
        }
        record.balances[c].0 -= amount;
        self.balance_event(a, c);
        Ok(())
    }

    pub(super) fn set_blp(
        &mut self,
        account: AccountId,
        currency: CurrencyId,
        amount: i64,
    ) -> Result<(), EngineError> {
        let c = self.check_currency(currency)?;
        if amount < 0 {
            return Err(EngineError::InvalidAmount);
        }
        let record = self
            .accounts
            .get_mut(account.0 as usize)
            .ok_or(EngineError::UnknownAccount)?;
        if record.kind != AccountKind::Blp {
            return Err(EngineError::NotBlpAccount);
        }
        record.blp[c] = amount;
        self.events.push(Event::BlpThresholdSet {
            account,
            currency,
            amount,
        });
        Ok(())
    }

    pub(super) fn transfer(
        &mut self,
        holder: HolderId,
        source: AccountId,
        destination: AccountId,
        currency: CurrencyId,
        amount: i64,
    ) -> Result<(), EngineError> {
        let c = self.check_currency(currency)?;
        if amount <= 0 {
            return Err(EngineError::InvalidAmount);
        }
        if source == destination {
            return Err(EngineError::SameAccount);
        }
        let h = holder.0 as usize;
        if h >= self.holders.len() {
            return Err(EngineError::PermissionDenied);
        }
        let owned = |id: AccountId| {
            self.accounts
                .get(id.0 as usize)
                .filter(|a| a.holder == h)
                .ok_or(EngineError::PermissionDenied)
        };
        let (src, dst) = (owned(source)?, owned(destination)?);
        if src.kind == AccountKind::InstantTrade || dst.kind == AccountKind::InstantTrade {
            return Err(EngineError::InstantTradeAccount);
        }
        if src.derisk {
            return Err(EngineError::AccountInDerisk);
        }
        let available = src.balances[c].0;
        if available < amount {
            return Err(EngineError::InsufficientBalance {
                account: source,
                currency,
                available,
                requested: amount,
            });
        }
        if src.kind == AccountKind::Blp && available - amount < src.blp[c] {
            return Err(EngineError::BelowBlpThreshold);
        }
        if dst.closed {
            return Err(EngineError::AccountClosed);
        }
        let (s, d) = (source.0 as usize, destination.0 as usize);
        let credited = self.accounts[d].balances[c]
            .0
            .checked_add(amount)
            .ok_or(EngineError::InvalidAmount)?;
        self.accounts[s].balances[c].0 -= amount;
        self.accounts[d].balances[c].0 = credited;
        self.balance_event(s, c);
        self.balance_event(d, c);
        let transfer = self.funds.next_transfer;
        self.funds.next_transfer += 1;
        self.events.push(Event::TransferCompleted {
            transfer,
            holder,
            source,
            destination,
            currency,
            amount,
        });
        Ok(())
    }
}
