//! Account administration: subaccounts (create, close), deposits, withdrawals, de-risk and
//! BLP thresholds. These come from the admin surface, never from trading keys.

use super::{Applied, Engine};
use crate::account::{AccountKind, AccountState};
use crate::error::EngineError;
use crate::event::{CancelReason, Event, EventSink};
use crate::ids::{AccountId, CurrencyId, HolderId};

/// Longest subaccount name accepted.
pub const MAX_ACCOUNT_NAME: usize = 64;

impl Engine {
    pub(super) fn check_currency(&self, currency: CurrencyId) -> Result<(), EngineError> {
        if usize::from(currency.0) < self.currencies.len() {
            Ok(())
        } else {
            Err(EngineError::UnknownCurrency)
        }
    }

    /// A known currency and a positive amount: what deposits, withdrawals and transfers need.
    pub(super) fn check_movement(
        &self,
        currency: CurrencyId,
        amount: i64,
    ) -> Result<(), EngineError> {
        self.check_currency(currency)?;
        if amount <= 0 {
            return Err(EngineError::InvalidAmount);
        }
        Ok(())
    }

    pub(super) fn create_subaccount<S: EventSink>(
        &mut self,
        holder: HolderId,
        name: &str,
        kind: AccountKind,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        let record = self.accounts.holder(holder)?;
        let printable = name.chars().all(|c| !c.is_control());
        if name.trim().is_empty() || name.chars().count() > MAX_ACCOUNT_NAME || !printable {
            return Err(EngineError::InvalidAccountName);
        }
        if record
            .accounts
            .iter()
            .any(|a| self.accounts.accounts[a.0 as usize].name == name)
        {
            return Err(EngineError::AccountNameTaken);
        }
        let account = self
            .accounts
            .add_account(holder, name.to_owned(), self.now, kind);
        self.emit(sink, Event::SubaccountCreated { holder, account });
        Ok(Applied {
            account: Some(account),
            ..Applied::default()
        })
    }

    pub(super) fn close_subaccount<S: EventSink>(
        &mut self,
        account: AccountId,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        let record = self.accounts.active(account)?;
        if self.accounts.holder(record.holder)?.accounts.first() == Some(&account) {
            return Err(EngineError::CannotCloseMain);
        }
        let mut targets = std::mem::take(&mut self.scratch_slots);
        targets.clear();
        targets.extend(self.account_slots(account));
        targets.reverse();
        for &slot in &targets {
            self.cancel_if_live(slot, CancelReason::AccountClosed, sink);
        }
        self.scratch_slots = targets;
        self.accounts.core[account.0 as usize].state = AccountState::Closed;
        self.emit(sink, Event::AccountClosed { account });
        Ok(Applied::default())
    }

    pub(super) fn deposit<S: EventSink>(
        &mut self,
        account: AccountId,
        currency: CurrencyId,
        amount: i64,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        self.check_movement(currency, amount)?;
        self.accounts.active(account)?;
        self.check_room(account, currency, amount)?;
        let now = self.now;
        let b = self.balance_mut(account, currency);
        b.available += amount;
        b.updated = now;
        self.emit_balance(sink, account, currency);
        Ok(Applied::default())
    }

    pub(super) fn withdraw<S: EventSink>(
        &mut self,
        account: AccountId,
        currency: CurrencyId,
        amount: i64,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        self.check_movement(currency, amount)?;
        self.accounts.account(account)?;
        let now = self.now;
        let b = self.balance_mut(account, currency);
        if b.available < amount {
            return Err(EngineError::InsufficientFunds);
        }
        b.available -= amount;
        b.updated = now;
        self.emit_balance(sink, account, currency);
        Ok(Applied::default())
    }

    pub(super) fn set_derisk<S: EventSink>(
        &mut self,
        account: AccountId,
        on: bool,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        self.accounts.account_mut(account)?.derisk = on;
        self.emit(sink, Event::DeriskChanged { account, on });
        Ok(Applied::default())
    }

    pub(super) fn set_blp_threshold<S: EventSink>(
        &mut self,
        account: AccountId,
        currency: CurrencyId,
        amount: i64,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        self.check_currency(currency)?;
        if amount < 0 {
            return Err(EngineError::InvalidAmount);
        }
        let record = self.accounts.account_mut(account)?;
        if record.kind != AccountKind::Blp {
            return Err(EngineError::NotBlpAccount);
        }
        record.blp_threshold[usize::from(currency.0)] = amount;
        self.emit(
            sink,
            Event::BlpThresholdSet {
                account,
                currency,
                amount,
            },
        );
        Ok(Applied::default())
    }
}
