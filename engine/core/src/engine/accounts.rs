//! Holders and accounts: ownership, names, kinds, state, de-risk flag, BLP thresholds, the
//! compact per-currency balances, and the per-holder count of open orders.

use crate::account::{AccountKind, AccountState, AccountView, Balances};
use crate::error::EngineError;
use crate::ids::{AccountId, HolderId, Timestamp};
use crate::order::StpMode;

/// Name of every holder's main account.
pub const MAIN_ACCOUNT_NAME: &str = "main";

/// What order entry reads for every order, kept dense (8 bytes an account) apart from the
/// rest of the record so that the accounts of a busy book stay in the first-level cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct AccountCore {
    pub(crate) holder: HolderId,
    pub(crate) stp: StpMode,
    pub(crate) state: AccountState,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct AccountRecord {
    pub(crate) name: String,
    pub(crate) created: Timestamp,
    pub(crate) kind: AccountKind,
    pub(crate) derisk: bool,
    pub(crate) balances: Balances,
    pub(crate) blp_threshold: Vec<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct HolderRecord {
    pub(crate) accounts: Vec<AccountId>,
    pub(crate) open_orders: u32,
}

/// Registry of holders and accounts; ids are dense indices assigned in creation order.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub(crate) struct Accounts {
    pub(crate) core: Vec<AccountCore>,
    pub(crate) accounts: Vec<AccountRecord>,
    pub(crate) holders: Vec<HolderRecord>,
    pub(crate) currencies: usize,
}

impl Accounts {
    pub(crate) fn new(currencies: usize) -> Self {
        Self {
            currencies,
            ..Self::default()
        }
    }

    pub(crate) fn core(&self, id: AccountId) -> Result<&AccountCore, EngineError> {
        self.core
            .get(id.0 as usize)
            .ok_or(EngineError::UnknownAccount)
    }

    pub(crate) fn core_mut(&mut self, id: AccountId) -> Result<&mut AccountCore, EngineError> {
        self.core
            .get_mut(id.0 as usize)
            .ok_or(EngineError::UnknownAccount)
    }

    /// Holder of an account known to exist.
    #[inline]
    pub(crate) fn holder_of(&self, id: AccountId) -> HolderId {
        self.core[id.0 as usize].holder
    }

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

    /// An account that is not closed.
    pub(crate) fn active(&self, id: AccountId) -> Result<&AccountCore, EngineError> {
        let account = self.core(id)?;
        if account.state == AccountState::Closed {
            return Err(EngineError::AccountClosed);
        }
        Ok(account)
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
        self.holders.push(HolderRecord {
            accounts: Vec::new(),
            open_orders: 0,
        });
        let main = self.add_account(
            holder,
            MAIN_ACCOUNT_NAME.to_owned(),
            Timestamp(0),
            AccountKind::Regular,
        );
        (holder, main)
    }

    pub(crate) fn add_account(
        &mut self,
        holder: HolderId,
        name: String,
        created: Timestamp,
        kind: AccountKind,
    ) -> AccountId {
        let id = AccountId(self.accounts.len() as u32);
        self.core.push(AccountCore {
            holder,
            stp: StpMode::None,
            state: AccountState::Active,
        });
        self.accounts.push(AccountRecord {
            name,
            created,
            kind,
            derisk: false,
            balances: Balances::default(),
            blp_threshold: vec![0; self.currencies],
        });
        self.holders[holder.0 as usize].accounts.push(id);
        id
    }

    pub(crate) fn view(&self, id: AccountId) -> Result<AccountView<'_>, EngineError> {
        let (a, core) = (self.account(id)?, self.core(id)?);
        Ok(AccountView {
            id,
            holder: core.holder,
            name: &a.name,
            created: a.created,
            state: core.state,
            kind: a.kind,
            derisk: a.derisk,
            balances: &a.balances,
            blp_threshold: &a.blp_threshold,
            currencies: self.currencies,
        })
    }
}
