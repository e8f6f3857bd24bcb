//! Request bodies. Fields a handler cannot do without are marked required in the
//! description but still read as options, so that a missing one gets the spec's own
//! error code (`MISSING_SIDE`, `INVALID_AMOUNT`...) rather than a generic refusal.

use serde::Deserialize;
use utoipa::ToSchema;

use super::{Flag, Numeric, basis_points_schema, flag_schema, numeric_schema};
pub use super::{OrderTypeName, SideName, TimeInForceName, TriggerReferenceName};
use crate::auth::keys::Scope;

/// Schema of the optional `time_in_force` field: each accepted spelling.
fn time_in_force_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            Type::String,
            Type::Null,
        ]))
        .enum_values(Some(
            <matchbook::TimeInForce as matchbook::wire_name::WireName>::wire_names_read(),
        ))
        .description(Some(
            "GOOD_TILL_CANCELLED (default), IMMEDIATE_OR_CANCELLED, FILL_OR_KILL, POST_ONLY, \
             GOOD_TILL_TIME, or the short forms GTC, IOC, FOK, PO, GTT",
        ))
        .into()
}

/// `PUT /v1/account/orders/{order_id}` (and by client id): an open order's new total
/// amount and/or limit price, at least one.
#[derive(Debug, Deserialize, ToSchema)]
pub struct AmendOrderRequest {
    /// New total amount (what already filled counts in it).
    #[schema(schema_with = numeric_schema)]
    pub amount: Option<Numeric>,
    /// New limit price.
    #[schema(schema_with = numeric_schema)]
    pub price: Option<Numeric>,
}

/// `POST /v1/account/orders`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateOrderRequest {
    /// Instrument such as `BTC_EUR`.
    #[schema(required = true)]
    pub instrument_code: Option<String>,
    /// Order type.
    #[serde(rename = "type")]
    #[schema(required = true)]
    pub order_type: Option<OrderTypeName>,
    /// Side.
    #[schema(required = true)]
    pub side: Option<SideName>,
    /// Amount in the base currency.
    #[schema(schema_with = numeric_schema, required = true)]
    pub amount: Option<Numeric>,
    /// Limit price (required except for market orders).
    #[schema(schema_with = numeric_schema)]
    pub price: Option<Numeric>,
    /// Trigger of a stop or take-profit order (a trailing order computes its own).
    #[schema(schema_with = numeric_schema)]
    pub trigger_price: Option<Numeric>,
    /// Extension: what a trigger order watches, `LAST_PRICE` (default) or `MARK_PRICE`
    /// (futures).
    pub trigger_reference: Option<TriggerReferenceName>,
    /// Extension: a trailing order's distance from the best price seen, as a price.
    #[schema(schema_with = numeric_schema)]
    pub trailing_offset: Option<Numeric>,
    /// Extension: a trailing order's distance in basis points (1-9999), instead of
    /// `trailing_offset`: a whole number, sent as a JSON number or as its digits.
    #[schema(schema_with = basis_points_schema)]
    pub trailing_offset_bps: Option<Numeric>,
    /// Extension: a trailing stop-limit's limit, this far past its trigger when it fires.
    #[schema(schema_with = numeric_schema)]
    pub limit_offset: Option<Numeric>,
    /// Extension: an iceberg limit order's displayed amount (below `amount`); the book
    /// shows this much at a time.
    #[schema(schema_with = numeric_schema)]
    pub display_amount: Option<Numeric>,
    /// Extension: makes the order a bracket's entry: once it is done, a take-profit limit
    /// at this price is placed for what it filled (with `stop_loss_price`).
    #[schema(schema_with = numeric_schema)]
    pub take_profit_price: Option<Numeric>,
    /// Extension: a bracket's stop-loss trigger (with `take_profit_price`).
    #[schema(schema_with = numeric_schema)]
    pub stop_loss_price: Option<Numeric>,
    /// Extension: a bracket's stop-loss limit once triggered (absent: a stop-market).
    #[schema(schema_with = numeric_schema)]
    pub stop_loss_limit_price: Option<Numeric>,
    /// Extension: makes the order the first leg of a one-cancels-the-other pair with this
    /// second leg (same instrument, side and time in force).
    pub oco_order: Option<OcoLegRequest>,
    /// Client order id (a UUID); one is made up when absent.
    #[schema(format = "uuid")]
    pub client_id: Option<String>,
    /// Time in force.
    #[schema(schema_with = time_in_force_schema)]
    pub time_in_force: Option<TimeInForceName>,
    /// Post-only (with the default time in force); also read as `post_only` or `postOnly`,
    /// the spellings client libraries send.
    #[serde(alias = "post_only", alias = "postOnly")]
    #[schema(schema_with = flag_schema)]
    pub is_post_only: Option<Flag>,
    /// Expiry of a good-till-time order (ISO 8601).
    pub expire_after: Option<String>,
    /// Futures: never take the position past flat.
    #[schema(schema_with = flag_schema)]
    pub reduce_only: Option<Flag>,
}

/// Extension: the second leg of a one-cancels-the-other pair.
#[derive(Debug, Deserialize, ToSchema)]
pub struct OcoLegRequest {
    /// Its type (`LIMIT` or a trigger type; not `MARKET`).
    #[serde(rename = "type")]
    #[schema(required = true)]
    pub order_type: Option<OrderTypeName>,
    /// Its limit price.
    #[schema(schema_with = numeric_schema)]
    pub price: Option<Numeric>,
    /// Its trigger.
    #[schema(schema_with = numeric_schema)]
    pub trigger_price: Option<Numeric>,
    /// Its amount (absent: the first leg's).
    #[schema(schema_with = numeric_schema)]
    pub amount: Option<Numeric>,
}

/// `POST /v1/subaccounts/transfers` (spec 2.5).
#[derive(Debug, Deserialize, ToSchema)]
pub struct TransferRequest {
    /// Amount to move.
    #[schema(schema_with = numeric_schema, required = true)]
    pub amount: Option<Numeric>,
    /// Currency code.
    #[schema(required = true)]
    pub currency: Option<String>,
    /// Account the funds leave (a UUID).
    #[schema(required = true)]
    pub source_account_id: Option<String>,
    /// Account the funds reach (a UUID).
    #[schema(required = true)]
    pub destination_account_id: Option<String>,
}

/// `POST /admin/subaccounts`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateSubaccountRequest {
    /// Holder (a UUID).
    #[schema(required = true)]
    pub holder_id: Option<String>,
    /// Account name.
    #[schema(required = true)]
    pub name: Option<String>,
    /// `regular` (default), `instant-trade` or `blp`.
    pub kind: Option<String>,
}

/// `POST /admin/deposits`, `/admin/withdrawals` and `/admin/blp-threshold`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FundsRequest {
    /// Account (a UUID).
    #[schema(required = true)]
    pub account_id: Option<String>,
    /// Currency code.
    #[schema(required = true)]
    pub currency: Option<String>,
    /// Amount.
    #[schema(schema_with = numeric_schema, required = true)]
    pub amount: Option<Numeric>,
}

/// `POST /admin/derisk`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct DeriskRequest {
    /// Account (a UUID).
    #[schema(required = true)]
    pub account_id: Option<String>,
    /// De-risk on or off.
    #[schema(schema_with = flag_schema, required = true)]
    pub on: Option<Flag>,
}

/// `POST /admin/keys`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateKeyRequest {
    /// Account the key acts for (a UUID).
    #[schema(required = true)]
    pub account_id: Option<String>,
    /// Scopes, at least one (each kept once); `ADMIN` only alone.
    #[schema(required = true)]
    pub scopes: Option<Vec<Scope>>,
}

/// `POST /admin/keys/revoke`: the key by its text or by its digest (as the key file and
/// the configuration hold it), one of the two.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RevokeKeyRequest {
    /// The key text.
    pub key: Option<String>,
    /// Lower-case hex SHA-256 of the key text (64 digits).
    pub digest: Option<String>,
}

/// `POST /admin/instruments/{instrument_code}/state`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct InstrumentStateRequest {
    /// `ACTIVE`, `POST_ONLY`, `SUSPENDED` or `CLOSED`.
    #[schema(required = true)]
    pub state: Option<String>,
}

/// `POST /admin/time/advance`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct AdvanceTimeRequest {
    /// Seconds to move the clock forward.
    #[schema(schema_with = numeric_schema, required = true)]
    pub seconds: Option<Numeric>,
}

/// `POST /admin/index-price`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct IndexPriceRequest {
    /// Futures instrument.
    #[schema(required = true)]
    pub instrument_code: Option<String>,
    /// Index price.
    #[schema(schema_with = numeric_schema, required = true)]
    pub price: Option<Numeric>,
}

/// `POST /admin/liquidate`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct AccountRequest {
    /// Account (a UUID).
    #[schema(required = true)]
    pub account_id: Option<String>,
}
