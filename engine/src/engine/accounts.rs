//! Holders and accounts as far as order entry needs them: ownership, the default
//! self-trade prevention mode, and the per-holder count of open orders.

use crate::error::EngineError;
use crate::ids::{AccountId, HolderId};
use crate::order::StpMode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AccountRecord {
    pub(crate) holder: HolderId,
    pub(crate) stp: StpMode,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HolderRecord {
    pub(crate) main: AccountId,
    pub(crate) open_orders: u32,
}

/// Registry of holders and accounts; ids are dense indices assigned in creation order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Accounts {
    pub(crate) accounts: Vec<AccountRecord>,
    pub(crate) holders: Vec<HolderRecord>,
}

impl Accounts {
    pub(crate) fn account(&self, id: AccountId) -> Result<&AccountRecord, EngineError> {
        self.accounts
            .get(id.0 as usize)
            .ok_or(EngineError::UnknownAccount)
    }

    pub(crate) fn account_mut(&mut self, id: AccountId) -> Result<&mut AccountRecord, EngineError> {
        self.accounts
            .get_mut(id.0 as usize)
            .ok_or(EngineError::UnknownAccount)
    }

    pub(crate) fn holder_mut(&mut self, id: HolderId) -> &mut HolderRecord {
        &mut self.holders[id.0 as usize]
    }

    pub(crate) fn holder(&self, id: HolderId) -> Result<&HolderRecord, EngineError> {
        self.holders
            .get(id.0 as usize)
            .ok_or(EngineError::UnknownHolder)
    }

    pub(crate) fn create_holder(&mut self) -> (HolderId, AccountId) {
        let holder = HolderId(self.holders.len() as u32);
        let main = self.add_account(holder);
        self.holders.push(HolderRecord {
            main,
            open_orders: 0,
        });
        (holder, main)
    }

    pub(crate) fn add_account(&mut self, holder: HolderId) -> AccountId {
        let id = AccountId(self.accounts.len() as u32);
        self.accounts.push(AccountRecord {
            holder,
            stp: StpMode::None,
        });
        id
    }
}
