//! The account's dead-man switch over REST (an extension; clients written for the public
//! exchange, such as `cryptoxlib-aio`, arm it so): `POST /v1/account/orders/cancel-all-after`
//! with `{"timeout": MS}` arms or re-arms it, `DELETE` turns it off. Unless it is armed
//! again within the timeout, every open order of the account is cancelled. The stream's
//! `CANCEL_ALL_AFTER` sets the same switch ([`crate::entry::dead_man`]).

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::caller::Caller;
use crate::auth::keys::Scope;
use crate::body::Body;
use crate::entry::dead_man::{SwitchSet, set_cancel_all_after, timeout_millis};
use crate::error::ApiError;
use crate::state::Shared;
use crate::wire::{Numeric, numeric_schema};

/// `POST /v1/account/orders/cancel-all-after`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CancelAllAfterRequest {
    /// Milliseconds until the account's open orders are cancelled (0: off).
    #[schema(schema_with = numeric_schema, required = true)]
    pub timeout: Option<Numeric>,
}

/// The switch as set.
#[derive(Debug, Serialize, ToSchema)]
pub struct CancelAllAfterBody {
    /// The timeout set, in milliseconds (0: off).
    pub timeout: u64,
    /// When the account's open orders will be cancelled (absent: off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel_at: Option<String>,
}

/// Arms (or re-arms) the account's dead-man switch: `{"timeout": MS}`, 0 turns it off.
#[utoipa::path(post, path = "/v1/account/orders/cancel-all-after", tag = "orders", security(("api_key" = [])),
    request_body = CancelAllAfterRequest,
    responses((status = 200, body = CancelAllAfterBody),
        (status = 400, body = crate::error::ErrorBody), (status = 401, body = crate::error::ErrorBody),
        (status = 403, body = crate::error::ErrorBody), (status = 429, body = crate::error::ErrorBody)))]
pub async fn arm(
    State(state): State<Shared>,
    caller: Caller,
    bytes: Bytes,
) -> Result<Json<CancelAllAfterBody>, ApiError> {
    caller.require(&[Scope::Trade])?;
    caller.limit_key(&state)?;
    let request: CancelAllAfterRequest = Body::read(&bytes)?;
    let millis = timeout_millis(request.timeout.as_ref().map(|Numeric(text)| text.as_str()))?;
    let set = set_cancel_all_after(&state, caller.0.account, millis).await?;
    Ok(answer(set))
}

/// Turns the account's dead-man switch off.
#[utoipa::path(delete, path = "/v1/account/orders/cancel-all-after", tag = "orders", security(("api_key" = [])),
    responses((status = 200, body = CancelAllAfterBody),
        (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody),
        (status = 429, body = crate::error::ErrorBody)))]
pub async fn disarm(
    State(state): State<Shared>,
    caller: Caller,
) -> Result<Json<CancelAllAfterBody>, ApiError> {
    caller.require(&[Scope::Trade])?;
    caller.limit_key(&state)?;
    let set = set_cancel_all_after(&state, caller.0.account, 0).await?;
    Ok(answer(set))
}

fn answer(set: SwitchSet) -> Json<CancelAllAfterBody> {
    Json(CancelAllAfterBody {
        timeout: set.timeout,
        cancel_at: set.cancel_at,
    })
}
