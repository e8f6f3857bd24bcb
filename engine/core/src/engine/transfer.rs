//! Transfers between two accounts of one holder (spec 2.5, 4.1, 7): every rule is checked,
//! then the source is debited and the destination credited; if the credit fails the debit is
//! rolled back, so value is never created or lost and a refused transfer changes nothing.

use super::{Applied, Engine};
use crate::account::{AccountKind, AccountState};
use crate::error::EngineError;
use crate::event::{Event, EventSink};
use crate::ids::{AccountId, CurrencyId, HolderId};

impl Engine {
    pub(super) fn transfer<S: EventSink>(
        &mut self,
        holder: HolderId,
        source: AccountId,
        destination: AccountId,
        currency: CurrencyId,
        amount: i64,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        self.check_movement(currency, amount)?;
        if source == destination {
            return Err(EngineError::SameAccount);
        }
        self.accounts
            .holder(holder)
            .map_err(|_| EngineError::PermissionDenied)?;
        let owned = |id: AccountId| {
            self.accounts
                .core(id)
                .ok()
                .filter(|a| a.holder == holder)
                .and_then(|_| self.accounts.account(id).ok())
                .ok_or(EngineError::PermissionDenied)
        };
        let (src, dst) = (owned(source)?, owned(destination)?);
        if src.kind == AccountKind::InstantTrade || dst.kind == AccountKind::InstantTrade {
            return Err(EngineError::InstantTradeAccount);
        }
        if src.derisk || self.futures.account(source).margin_call {
            return Err(EngineError::AccountInDerisk);
        }
        let mut available = src.balances.get(currency).available;
        if self
            .futures
            .markets
            .first()
            .is_some_and(|m| m.collateral == currency)
        {
            // Collateral backing positions and orders stays: only free margin can move.
            let free = self.margin_state(source).available();
            available = available.min(i64::try_from(free.max(0)).unwrap_or(i64::MAX));
        }
        if available < amount {
            return Err(EngineError::InsufficientBalance {
                account: source,
                currency,
                available,
                requested: amount,
            });
        }
        if src.kind == AccountKind::Blp
            && available - amount < src.blp_threshold[usize::from(currency.0)]
        {
            return Err(EngineError::BelowBlpThreshold);
        }

        self.balance_mut(source, currency).available -= amount;
        if let Err(error) = self.credit(destination, currency, amount) {
            self.balance_mut(source, currency).available += amount;
            return Err(error);
        }
        let now = self.now;
        self.balance_mut(source, currency).updated = now;
        self.balance_mut(destination, currency).updated = now;
        self.emit_balance(sink, source, currency);
        self.emit_balance(sink, destination, currency);
        let transfer = self.next_transfer;
        self.next_transfer += 1;
        self.emit(
            sink,
            Event::TransferCompleted {
                transfer,
                holder,
                source,
                destination,
                currency,
                amount,
            },
        );
        Ok(Applied::default())
    }

    /// The credit half of a transfer: refused for a closed account or an overflow.
    fn credit(
        &mut self,
        account: AccountId,
        currency: CurrencyId,
        amount: i64,
    ) -> Result<(), EngineError> {
        if self.accounts.core(account)?.state == AccountState::Closed {
            return Err(EngineError::AccountClosed);
        }
        self.check_room(account, currency, amount)?;
        self.balance_mut(account, currency).available += amount;
        Ok(())
    }
}
