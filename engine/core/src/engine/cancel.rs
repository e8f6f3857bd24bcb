//! Cancels: by order id, by client id (the account's newest live order with it), many at
//! once (all, per instrument, a list of ids or client ids), and good-till-time expiry.

use super::{Applied, Engine};
use crate::command::CancelScope;
use crate::error::EngineError;
use crate::event::{CancelReason, EventSink};
use crate::ids::{AccountId, OrderRef, Uuid};
use crate::order::Order;

impl Engine {
    /// The account's newest live order carrying `client_id` (the engine's client-id index:
    /// the order a cancel by that client id would end).
    pub fn order_by_client_id(&self, account: AccountId, client_id: Uuid) -> Option<&Order> {
        let slot = *self.client_index.get(&(account, client_id))?;
        self.orders.get(slot as usize)
    }

    /// Slot of a live order owned by `account`; someone else's order is "not found".
    pub(super) fn owned_slot(
        &self,
        account: AccountId,
        order: OrderRef,
    ) -> Result<u32, EngineError> {
        self.order(order)
            .filter(|o| o.account == account)
            .map(|_| order.slot)
            .ok_or(EngineError::OrderNotFound)
    }

    pub(super) fn cancel_one<S: EventSink>(
        &mut self,
        account: AccountId,
        order: OrderRef,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        let slot = self.owned_slot(account, order)?;
        self.cancel_live(slot, CancelReason::Requested, sink);
        Ok(Applied {
            order: Some(order),
            ..Applied::default()
        })
    }

    pub(super) fn cancel_by_client_id<S: EventSink>(
        &mut self,
        account: AccountId,
        client_id: Uuid,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        let slot = *self
            .client_index
            .get(&(account, client_id))
            .ok_or(EngineError::OrderNotFound)?;
        let order = self.orders[slot as usize].handle();
        self.cancel_live(slot, CancelReason::Requested, sink);
        Ok(Applied {
            order: Some(order),
            ..Applied::default()
        })
    }

    pub(super) fn cancel_all<S: EventSink>(
        &mut self,
        account: AccountId,
        scope: &CancelScope,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        self.cancel_all_for(account, scope, CancelReason::Requested, sink)
    }

    /// Cancels the account's orders in `scope` for `reason`.
    pub(super) fn cancel_all_for<S: EventSink>(
        &mut self,
        account: AccountId,
        scope: &CancelScope,
        reason: CancelReason,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        self.accounts.account(account)?;
        let mut targets = std::mem::take(&mut self.scratch_slots);
        targets.clear();
        match scope {
            CancelScope::All | CancelScope::Instrument(_) => {
                let only = match scope {
                    CancelScope::Instrument(i) => {
                        self.instrument(*i)?;
                        Some(*i)
                    }
                    _ => None,
                };
                let orders = &self.orders;
                targets
                    .extend(self.account_slots(account).filter(|&slot| {
                        only.is_none_or(|i| i == orders[slot as usize].instrument)
                    }));
                // The chain is newest first: cancel oldest first, as before.
                targets.reverse();
            }
            CancelScope::Orders(_) | CancelScope::ClientIds(_) => {}
        }
        for &slot in &targets {
            self.cancel_if_live(slot, reason, sink);
        }
        // Listed ids are resolved one at a time so duplicates and unknown ids are skipped.
        match scope {
            CancelScope::Orders(list) => {
                for &order in list {
                    if let Ok(slot) = self.owned_slot(account, order) {
                        self.cancel_live(slot, reason, sink);
                    }
                }
            }
            CancelScope::ClientIds(list) => {
                for &client_id in list {
                    if let Some(&slot) = self.client_index.get(&(account, client_id)) {
                        self.cancel_live(slot, reason, sink);
                    }
                }
            }
            CancelScope::All | CancelScope::Instrument(_) => {}
        }
        self.scratch_slots = targets;
        Ok(Applied::default())
    }

    /// Expires every good-till-time order whose time has come, oldest expiry first.
    pub(super) fn expire_due<S: EventSink>(&mut self, sink: &mut S) {
        while let Some((&(at, _), &slot)) = self.expiries.first_key_value() {
            if at > self.now {
                return;
            }
            self.cancel_live(slot, CancelReason::Expired, sink);
        }
    }
}
