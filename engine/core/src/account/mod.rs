//! Account vocabulary shared by the engine and its adapters: account kinds and states, the
//! balance of one currency, an account's balances, and the read-only view of an account.

mod balances;

pub use balances::Balances;

use crate::ids::{AccountId, HolderId, Timestamp};

/// What an account is for.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum AccountKind {
    /// Ordinary trading account.
    #[default]
    Regular,
    /// The account behind instant trades: transfers may neither debit nor credit it.
    InstantTrade,
    /// A liquidity-provider account: transfers out may not take a balance below its threshold.
    Blp,
}

impl AccountKind {
    /// Wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Regular => "regular",
            Self::InstantTrade => "instant-trade",
            Self::Blp => "blp",
        }
    }
    /// Parses the wire spelling.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Regular, Self::InstantTrade, Self::Blp]
            .into_iter()
            .find(|k| k.as_str() == text)
    }
}

/// Whether an account is open.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum AccountState {
    /// Trading, deposits and transfers allowed.
    #[default]
    Active,
    /// Listed, holds no open orders, accepts no deposits, orders or incoming transfers.
    Closed,
}

impl AccountState {
    /// Wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Active => "ACTIVE",
            Self::Closed => "CLOSED",
        }
    }
}

/// One currency's balance of one account, in units of `10^-scale` of the currency
/// (`Engine::balance_scale`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub struct Balance {
    /// Free to trade, withdraw or transfer.
    pub available: i64,
    /// Reserved by open orders.
    pub locked: i64,
    /// Time of the last change (the epoch if never changed).
    pub updated: Timestamp,
}

/// Read-only view of an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountView<'a> {
    /// Id.
    pub id: AccountId,
    /// Owner.
    pub holder: HolderId,
    /// `main` for the main account.
    pub name: &'a str,
    /// Creation time (the epoch for a main account, as the spec's placeholder says).
    pub created: Timestamp,
    /// Active or closed.
    pub state: AccountState,
    /// Kind.
    pub kind: AccountKind,
    /// In de-risk: transfers out are refused.
    pub derisk: bool,
    /// Balances by currency.
    pub balances: &'a Balances,
    /// Minimum balances a BLP account keeps, by currency index.
    pub blp_threshold: &'a [i64],
    /// How many currencies are listed: the length of [`AccountView::dense_balances`].
    pub currencies: usize,
}

impl AccountView<'_> {
    /// One balance per listed currency, by currency index.
    pub fn dense_balances(&self) -> Vec<Balance> {
        self.balances.to_dense(self.currencies)
    }
}
