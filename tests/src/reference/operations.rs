//! Commands of the reference engine that are not an order's entry or amend: holders,
//! account settings, market states, cancels by scope and dead-man switches.

use super::*;

impl RefEngine {
    pub(super) fn create_holder(&mut self) -> Result<(), EngineError> {
        let holder = self.holders.len();
        self.holders.push(0);
        let account = self.new_account(holder, "main".into(), matchbook::AccountKind::Regular);
        self.events.push(Event::HolderCreated {
            holder: matchbook::HolderId(holder as u32),
            main_account: AccountId(account as u32),
        });
        Ok(())
    }

    pub(super) fn set_derisk(&mut self, account: AccountId, on: bool) -> Result<(), EngineError> {
        let a = self
            .accounts
            .get_mut(account.0 as usize)
            .ok_or(EngineError::UnknownAccount)?;
        a.derisk = on;
        self.events.push(Event::DeriskChanged { account, on });
        Ok(())
    }

    pub(super) fn set_stp(&mut self, account: AccountId, mode: StpMode) -> Result<(), EngineError> {
        let a = self
            .accounts
            .get_mut(account.0 as usize)
            .ok_or(EngineError::UnknownAccount)?;
        a.stp = mode;
        self.events.push(Event::StpModeSet { account, mode });
        Ok(())
    }

    pub(super) fn set_instrument_state(
        &mut self,
        instrument: InstrumentId,
        state: InstrumentState,
    ) -> Result<(), EngineError> {
        let i = self
            .instruments
            .get_mut(instrument.0 as usize)
            .ok_or(EngineError::UnknownInstrument)?;
        i.state = state;
        self.events
            .push(Event::InstrumentStateChanged { instrument, state });
        Ok(())
    }

    /// Cancels the account's orders in `scope` (those it names that it owns and are open).
    pub(super) fn cancel_all(
        &mut self,
        account: AccountId,
        scope: &CancelScope,
    ) -> Result<(), EngineError> {
        if account.0 as usize >= self.accounts.len() {
            return Err(EngineError::UnknownAccount);
        }
        match scope {
            CancelScope::All => self.cancel_account_orders(account, None, CancelReason::Requested),
            CancelScope::Instrument(i) => {
                if i.0 as usize >= self.instruments.len() {
                    return Err(EngineError::UnknownInstrument);
                }
                self.cancel_account_orders(account, Some(*i), CancelReason::Requested);
            }
            CancelScope::Orders(list) => {
                for order in list {
                    if let Ok(i) = self.find(account, order.id) {
                        self.cancel(i, CancelReason::Requested);
                    }
                }
            }
            CancelScope::ClientIds(list) => {
                for &client_id in list {
                    if let Some(i) = self.newest_with_client_id(account, client_id) {
                        self.cancel(i, CancelReason::Requested);
                    }
                }
            }
        }
        Ok(())
    }

    /// Arms (`timeout` from now) or disarms (0) the account's dead-man switch.
    pub(super) fn set_cancel_all_after(
        &mut self,
        account: AccountId,
        timeout: u64,
    ) -> Result<(), EngineError> {
        if account.0 as usize >= self.accounts.len() {
            return Err(EngineError::UnknownAccount);
        }
        let deadline = match timeout {
            0 => None,
            t => Some(
                i64::try_from(t)
                    .ok()
                    .and_then(|t| self.now.0.checked_add(t))
                    .filter(|&at| at <= matchbook::limits::TIME_HORIZON.0)
                    .map(Timestamp)
                    .ok_or(EngineError::TimeOutOfRange)?,
            ),
        };
        match deadline {
            Some(at) => self.switches.insert(account, at),
            None => self.switches.remove(&account),
        };
        self.events
            .push(Event::CancelAllAfterSet { account, deadline });
        Ok(())
    }
}
