//! Account answers (spec 2.2, 2.4, 2.5 and 2.8).

use serde::Serialize;
use utoipa::ToSchema;

/// One currency's balance.
#[derive(Debug, Serialize, ToSchema)]
pub struct BalanceBody {
    /// Currency.
    pub currency_code: String,
    /// Free to trade or move.
    pub available: String,
    /// Reserved by open orders.
    pub locked: String,
    /// Last change.
    pub time: String,
}

/// Futures margin of an account, in USD (zero without futures).
#[derive(Debug, Serialize, ToSchema)]
pub struct MarginBody {
    /// Collateral plus unrealised PnL.
    pub account_equity: String,
    /// Equity not used as margin.
    pub margin_available: String,
    /// Margin held by positions and orders.
    pub margin_used: String,
}

/// `GET /v1/account/balances`.
#[derive(Debug, Serialize, ToSchema)]
pub struct BalancesBody {
    /// The account.
    pub account_id: String,
    /// Margin.
    #[serde(flatten)]
    pub margin: MarginBody,
    /// Currencies ever used.
    pub balances: Vec<BalanceBody>,
}

/// One account of a holder.
#[derive(Debug, Serialize, ToSchema)]
pub struct SubaccountBody {
    /// The account.
    pub account_id: String,
    /// `ACTIVE` or `CLOSED`.
    pub state: &'static str,
    /// Name.
    pub name: String,
    /// Creation time.
    pub created: String,
    /// Margin.
    #[serde(flatten)]
    pub margin: MarginBody,
    /// Balances (none for a closed account).
    pub balances: Vec<BalanceBody>,
}

/// `GET /v1/subaccounts`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SubaccountsBody {
    /// The holder.
    pub account_holder: String,
    /// Main account first.
    pub subaccounts: Vec<SubaccountBody>,
}

/// Running 30-day volume in one fee group.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunningVolumeBody {
    /// `SPOT` or `FUTURES`.
    pub fee_group_id: String,
    /// Volume.
    #[schema(value_type = f64)]
    pub volume: serde_json::Value,
    /// Currency it is counted in.
    pub currency: String,
}

/// The active tier in one fee group.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActiveTierBody {
    /// `SPOT` or `FUTURES`.
    pub fee_group_id: String,
    /// Lower volume bound of the tier.
    #[schema(value_type = f64)]
    pub volume: serde_json::Value,
    /// Maker fee in percent.
    pub maker_fee: String,
    /// Taker fee in percent.
    pub taker_fee: String,
}

/// `GET /v1/account/fees`.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountFeesBody {
    /// The account.
    pub account_id: String,
    /// Per fee group.
    pub running_volumes: Vec<RunningVolumeBody>,
    /// Per fee group.
    pub active_fee_tiers: Vec<ActiveTierBody>,
}

/// A completed transfer.
#[derive(Debug, Serialize, ToSchema)]
pub struct TransferRecord {
    /// Holder.
    pub account_holder: String,
    /// Transfer id.
    pub transfer_id: String,
    /// Source.
    pub source_account_id: String,
    /// Destination.
    pub destination_account_id: String,
    /// Currency.
    pub currency: String,
    /// Amount.
    pub amount: String,
    /// Time.
    pub time: String,
}

/// `POST /v1/subaccounts/transfers`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TransferBody {
    /// The transfer.
    pub transfer: TransferRecord,
}
