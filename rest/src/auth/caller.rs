//! Authentication and authorisation: the `Authorization: Bearer <key>` extractor, scope
//! checks, and the per-key and per-holder rate limits (requests without a valid key are
//! limited per address in the request guard).

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

use crate::auth::keys::{ApiKey, Scope};
use crate::error::ApiError;
use crate::state::Shared;

/// The authenticated key of a request to the public listener (never an admin key).
#[derive(Debug, Clone)]
pub struct Caller(pub Arc<ApiKey>);

/// The authenticated key of a request to the admin listener (an admin key).
#[derive(Debug, Clone)]
pub struct Admin(pub Arc<ApiKey>);

fn bearer(parts: &Parts, state: &Shared) -> Result<Arc<ApiKey>, ApiError> {
    key_of(&parts.headers, state)
}

/// Whether the request carries a key the server accepts (requests without one are limited
/// per client address).
pub fn carries_valid_key(headers: &HeaderMap, state: &Shared) -> bool {
    key_of(headers, state).is_ok()
}

fn key_of(headers: &HeaderMap, state: &Shared) -> Result<Arc<ApiKey>, ApiError> {
    let header = headers
        .get(AUTHORIZATION)
        .ok_or(ApiError::Unauthorized("MISSING_CREDENTIALS"))?;
    let text = header
        .to_str()
        .map_err(|_| ApiError::Unauthorized("INVALID_APIKEY"))?;
    let (scheme, token) = text
        .split_once(' ')
        .ok_or(ApiError::Unauthorized("INVALID_APIKEY"))?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(ApiError::Unauthorized("INVALID_APIKEY"));
    }
    let token = token.trim();
    state.keys.authenticate(token).ok_or_else(|| {
        // The public exchange's code for a key that was valid once (clients map both to
        // an authentication error; this one tells a holder to ask for a new key).
        let revoked = state.keys.was_revoked(token);
        ApiError::Unauthorized(if revoked {
            "APIKEY_REVOKED"
        } else {
            "INVALID_APIKEY"
        })
    })
}

impl FromRequestParts<Shared> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Shared) -> Result<Self, ApiError> {
        let key = bearer(parts, state)?;
        if key.has_any(&[Scope::Admin]) {
            return Err(ApiError::Forbidden("MISSING_PERMISSION"));
        }
        Ok(Self(key))
    }
}

impl FromRequestParts<Shared> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Shared) -> Result<Self, ApiError> {
        let key = bearer(parts, state)?;
        if !key.has_any(&[Scope::Admin]) {
            return Err(ApiError::Forbidden("MISSING_PERMISSION"));
        }
        Ok(Self(key))
    }
}

impl Caller {
    /// 403 `MISSING_PERMISSION` unless the key has one of `scopes`.
    pub fn require(&self, scopes: &[Scope]) -> Result<(), ApiError> {
        if self.0.has_any(scopes) {
            Ok(())
        } else {
            Err(ApiError::Forbidden("MISSING_PERMISSION"))
        }
    }

    /// Counts the request against the key's limit.
    pub fn limit_key(&self, state: &Shared) -> Result<(), ApiError> {
        if self.0.limiter.admit(state.minute(), state.rate_limit) {
            Ok(())
        } else {
            Err(ApiError::RateLimited)
        }
    }

    /// Counts the request against the holder's limit (shared by all its keys).
    pub fn limit_holder(&self, state: &Shared) -> Result<(), ApiError> {
        if state
            .keys
            .holder_window(self.0.holder)
            .admit(state.minute(), state.rate_limit)
        {
            Ok(())
        } else {
            Err(ApiError::RateLimited)
        }
    }
}
