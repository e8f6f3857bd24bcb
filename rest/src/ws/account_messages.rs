//! The frames of the private `ACCOUNT_HISTORY` channel: the snapshots a subscriber gets
//! first (active orders, recent inactive orders, balances) and one `ACCOUNT_UPDATE` per
//! change of an order of the account, with the balances it moved.

use serde::Serialize;

use super::messages::Stamp;
use crate::wire::account::BalanceBody;
use crate::wire::orders::{FeeBody, OrderBody, OrderWithTrades, TradeBody};

/// `ACTIVE_ORDERS_SNAPSHOT` or `INACTIVE_ORDERS_SNAPSHOT`.
#[derive(Debug, Serialize)]
pub struct OrdersSnapshotFrame {
    /// `ACCOUNT_HISTORY`.
    pub channel_name: &'static str,
    /// Which snapshot.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The account.
    pub account_id: String,
    /// Orders with their trades, newest first.
    pub orders: Vec<OrderWithTrades>,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// `BALANCES_SNAPSHOT`.
#[derive(Debug, Serialize)]
pub struct BalancesSnapshotFrame {
    /// `ACCOUNT_HISTORY`.
    pub channel_name: &'static str,
    /// `BALANCES_SNAPSHOT`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The account.
    pub account_id: String,
    /// Every currency the account has held.
    pub balances: Vec<BalanceBody>,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// A balance after an update moved it.
#[derive(Debug, Clone, Serialize)]
pub struct BalanceDelta {
    /// Currency.
    pub currency_code: String,
    /// Available after the update.
    pub new_available: String,
    /// Locked after the update.
    pub new_locked: String,
}

/// What moved funds in an update, by the contract's names (each the balance after it).
#[derive(Debug, Default, Serialize)]
pub struct BalanceMoves {
    /// Reserved for an order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locked: Option<BalanceDelta>,
    /// Released by an order that ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlocked: Option<BalanceDelta>,
    /// Paid for a fill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spent: Option<BalanceDelta>,
    /// Received from a fill (net of its fee) or a funding payment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credited: Option<BalanceDelta>,
    /// Paid as a funding payment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deducted: Option<BalanceDelta>,
}

/// One update of an account: `type` says which, and only its fields are written.
#[derive(Debug, Default, Serialize)]
pub struct AccountUpdate {
    /// `ORDER_CREATED`, `ORDER_REJECTED`, `ORDER_CLOSED`, `STOP_ORDER_TRIGGERED`,
    /// `TRADE_SETTLED` or `FUNDING_PAYMENT`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The account.
    pub account_id: String,
    /// Event sequence number.
    pub sequence: u64,
    /// The order concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_id: Option<String>,
    /// The order as it stands after the update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<OrderBody>,
    /// `TRADE_SETTLED`: the fill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trade: Option<TradeBody>,
    /// `TRADE_SETTLED`: its fee.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fee: Option<FeeBody>,
    /// `ORDER_CLOSED` and `ORDER_REJECTED`: what filled before the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filled_amount: Option<String>,
    /// `ORDER_CLOSED` and `ORDER_REJECTED`: why it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// The market.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instrument_code: Option<String>,
    /// `FUNDING_PAYMENT`: the position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position_id: Option<String>,
    /// `FUNDING_PAYMENT`: the rate settled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub funding_rate: Option<String>,
    /// `FUNDING_PAYMENT`: the mark price used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mark_price: Option<String>,
    /// `FUNDING_PAYMENT`: received (negative: paid), in USD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<String>,
    /// The balances it moved.
    #[serde(flatten)]
    pub moves: BalanceMoves,
    /// When.
    #[serde(flatten)]
    pub stamp: Option<Stamp>,
}

/// `ACCOUNT_UPDATE`.
#[derive(Debug, Serialize)]
pub struct AccountUpdateFrame {
    /// `ACCOUNT_HISTORY`.
    pub channel_name: &'static str,
    /// `ACCOUNT_UPDATE`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The account.
    pub account_id: String,
    /// Event sequence number.
    pub sequence: u64,
    /// The update.
    pub update: AccountUpdate,
    /// When.
    #[serde(flatten)]
    pub stamp: Stamp,
}
