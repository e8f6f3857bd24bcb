//! The one mapping from every error of the engine, its queries, the runtime and this adapter
//! to an HTTP status and the spec's `{"error": CODE}` body (spec section 7 and the
//! addendum's codes).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use matchbook::EngineError;
use matchbook::market::query::QueryError;
use matchbook::runtime::RuntimeError;
use serde::Serialize;

/// The `error` text of a 500 (spec section 7).
pub const SERVER_ERROR: &str = "Server error.";

/// An error body (spec 2.1).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Upper-case code or the spec's message text.
    pub error: String,
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// The engine refused the command.
    #[error("engine: {0}")]
    Engine(#[from] EngineError),
    /// A history or market-data query was refused.
    #[error("query: {0}")]
    Query(#[from] QueryError),
    /// The runtime did not take or answer the request.
    #[error("runtime: {0}")]
    Runtime(#[from] RuntimeError),
    /// 400 with this code or message.
    #[error("bad request: {0}")]
    BadRequest(String),
    /// 401 with this code.
    #[error("unauthorized: {0}")]
    Unauthorized(&'static str),
    /// 403 with this code or message.
    #[error("forbidden: {0}")]
    Forbidden(&'static str),
    /// 404 with this code.
    #[error("not found: {0}")]
    NotFound(&'static str),
    /// 429.
    #[error("rate limit exceeded")]
    RateLimited,
    /// The engine did not confirm in time.
    #[error("timed out waiting for the engine")]
    Timeout,
    /// A snapshot asked for could not be written (500; the server's log says why).
    #[error("the snapshot could not be written")]
    SnapshotFailed,
    /// Something that cannot happen did (an answer missing what its command promised, a
    /// failed key write, no randomness): a bug or the host, not the caller.
    #[error("internal error: {0}")]
    Internal(&'static str),
}

impl ApiError {
    /// 400 with `code`.
    pub fn bad(code: &str) -> Self {
        Self::BadRequest(code.to_owned())
    }

    /// Status and body code.
    pub fn parts(&self) -> (StatusCode, String) {
        match self {
            Self::Engine(e) => (engine_status(*e), e.as_str().to_owned()),
            Self::Query(e) => (query_status(*e), e.as_str().to_owned()),
            Self::Runtime(
                RuntimeError::Busy
                | RuntimeError::Stopped
                | RuntimeError::LogUnavailable
                | RuntimeError::NotLeader,
            ) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "SERVICE_UNAVAILABLE".into(),
            ),
            // The spec's own text for 500 wins over the addendum's INTERNAL_SERVER_ERROR.
            Self::Runtime(RuntimeError::Failed) | Self::Timeout | Self::Internal(_) => {
                (StatusCode::INTERNAL_SERVER_ERROR, SERVER_ERROR.into())
            }
            Self::BadRequest(code) => (StatusCode::BAD_REQUEST, code.clone()),
            Self::Unauthorized(code) => (StatusCode::UNAUTHORIZED, (*code).into()),
            Self::Forbidden(code) => (StatusCode::FORBIDDEN, (*code).into()),
            Self::NotFound(code) => (StatusCode::NOT_FOUND, (*code).into()),
            Self::RateLimited => (StatusCode::TOO_MANY_REQUESTS, "RATELIMIT".into()),
            Self::SnapshotFailed => (StatusCode::INTERNAL_SERVER_ERROR, "SNAPSHOT_FAILED".into()),
        }
    }
}

/// Status of an engine refusal: input errors 400, missing records 404, ownership 403, what
/// the state forbids (funds, liquidity, market state, de-risk) 422.
pub fn engine_status(error: EngineError) -> StatusCode {
    use EngineError as E;
    match error {
        E::UnknownInstrument
        | E::OrderNotFound
        | E::UnknownAccount
        | E::UnknownHolder
        | E::NotFutures => StatusCode::NOT_FOUND,
        E::PermissionDenied => StatusCode::FORBIDDEN,
        E::InsufficientFunds
        | E::InsufficientLiquidity
        | E::PostOnlyWouldTake
        | E::InstrumentNotTrading
        | E::OnlyPostOnlyAllowed
        | E::MaxOpenOrdersExceeded
        | E::AccountInDerisk
        | E::AccountClosed
        | E::ReduceOnlyWouldIncrease
        | E::NoReferencePrice
        | E::BalanceLimitExceeded => StatusCode::UNPROCESSABLE_ENTITY,
        E::InvalidAmount
        | E::InvalidPrice
        | E::MissingPrice
        | E::InvalidTriggerPrice
        | E::InvalidTrail
        | E::InvalidTriggerReference
        | E::InvalidDisplay
        | E::InvalidContingent
        | E::PriceOutOfRange
        | E::MinSizeNotSatisfied
        | E::InvalidExpiry
        | E::InvalidTimeInForce
        | E::EmptyAmend
        | E::AmendBelowFilled
        | E::UnknownCurrency
        | E::InvalidAccountName
        | E::InsufficientBalance { .. }
        | E::BelowBlpThreshold
        | E::SameAccount
        | E::InstantTradeAccount
        | E::CannotCloseMain
        | E::AccountNameTaken
        | E::NotBlpAccount
        | E::TimeOutOfRange
        | E::AmountTooLarge => StatusCode::BAD_REQUEST,
    }
}

fn query_status(error: QueryError) -> StatusCode {
    match error {
        QueryError::NotFound | QueryError::UnknownInstrument => StatusCode::NOT_FOUND,
        QueryError::InvalidTime
        | QueryError::InvalidTimeRange
        | QueryError::TimeRangeTooBig
        | QueryError::InvalidCursor
        | QueryError::InvalidPageSize => StatusCode::BAD_REQUEST,
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, error) = self.parts();
        (status, Json(ErrorBody { error })).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_section_7_statuses() {
        assert_eq!(
            ApiError::from(EngineError::InsufficientFunds).parts(),
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                "INSUFFICIENT_FUNDS".into()
            )
        );
        assert_eq!(
            ApiError::from(EngineError::AccountInDerisk).parts(),
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                "USER_MGMT_USER_IN_DERISK".into()
            )
        );
        assert_eq!(
            ApiError::from(QueryError::TimeRangeTooBig).parts().0,
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            ApiError::RateLimited.parts(),
            (StatusCode::TOO_MANY_REQUESTS, "RATELIMIT".into())
        );
        assert_eq!(
            ApiError::from(EngineError::OrderNotFound).parts().0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            ApiError::Timeout.parts(),
            (StatusCode::INTERNAL_SERVER_ERROR, "Server error.".into())
        );
        assert_eq!(
            ApiError::Internal("no order in the answer").parts(),
            ApiError::Timeout.parts(),
            "the spec has one 500 body; the variant says which failure it was"
        );
        assert_eq!(
            ApiError::from(RuntimeError::Busy).parts().0,
            StatusCode::SERVICE_UNAVAILABLE
        );
    }
}
