//! The layers every request of both listeners passes: body size limit, body deadline,
//! handler timeout, the per-address rate window of keyless requests, JSON 404/405, a
//! handler panic answered 500, and a log line without credentials.

use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Request, State};
use axum::http::StatusCode;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

use crate::body::MAX_BODY_BYTES;
use crate::error::{ApiError, ErrorBody};
use crate::metrics::Listener;
use crate::net::listener::Peer;
use crate::state::Shared;

/// Longest a handler may take.
pub const HANDLER_TIMEOUT: Duration = Duration::from_secs(10);
fn refusal(status: StatusCode, code: &str) -> Response {
    (status, axum::Json(ErrorBody { error: code.into() })).into_response()
}

/// The client a request came from, as the per-client limits count it (its connection's
/// peer, or the address the operator's trusted proxy named); none for an in-process call.
pub(crate) fn client_address(request: &Request, state: &Shared) -> Option<std::net::IpAddr> {
    let ConnectInfo(Peer(peer)) = request.extensions().get::<ConnectInfo<Peer>>()?;
    Some(state.trusted_proxies.client(peer.ip(), request.headers()))
}

/// Counts a request against its client's window (an in-process call, with no address,
/// is not limited).
fn address_admits(request: &Request, state: &Shared) -> bool {
    let Some(client) = client_address(request, state) else {
        return true;
    };
    (state.address_windows).admit(client, state.minute(), state.public_rate_limit)
}

/// Marks a request the guard has counted by its address.
#[derive(Debug, Clone, Copy)]
struct CountedByAddress;

/// The guard's count: a request without a valid key by its address, marked as counted
/// (one with a key is counted by the account routes per key and holder, or by
/// [`keyed_by_address`]).
fn admitted_by_address(request: &mut Request, state: &Shared) -> bool {
    if crate::auth::caller::carries_valid_key(request.headers(), state) {
        return true;
    }
    request.extensions_mut().insert(CountedByAddress);
    address_admits(request, state)
}

/// The routes that take no key count by its address a request the guard has not (one
/// that carries a key): they have no per-key limit, so any key would otherwise lift theirs.
pub(super) async fn keyed_by_address(
    State(state): State<Shared>,
    request: Request,
    next: Next,
) -> Response {
    let counted = request.extensions().get::<CountedByAddress>().is_some();
    if !counted && !address_admits(&request, &state) {
        return ApiError::RateLimited.into_response();
    }
    next.run(request).await
}

/// Reads the whole body (at most [`MAX_BODY_BYTES`]) within `deadline` of its headers, so
/// the handler gets it in memory: 408 when it is too slow (a client trickling bytes cannot
/// hold a handler), 413 when too large. One rule for every route, those that take no
/// fields included: the body is empty or one JSON object within the bounds on outside
/// text, else 400 `INVALID_REQUEST_BODY` ([`crate::body::acceptable_envelope`]).
async fn buffered(request: Request, deadline: Duration) -> Result<Request, Response> {
    let (parts, body) = request.into_parts();
    match tokio::time::timeout(deadline, axum::body::to_bytes(body, MAX_BODY_BYTES)).await {
        Ok(Ok(bytes)) => match crate::body::acceptable_envelope(&bytes) {
            Ok(()) => Ok(Request::from_parts(parts, axum::body::Body::from(bytes))),
            Err(refused) => Err(refused.into_response()),
        },
        Ok(Err(_)) => Err(refusal(StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE")),
        Err(_) => Err(refusal(StatusCode::REQUEST_TIMEOUT, "REQUEST_TIMEOUT")),
    }
}

/// Every request of both listeners: admitted (size, address limit, body in time), run
/// within the handler timeout, counted for `/admin/metrics` and logged.
async fn guard(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let listener = request.extensions().get::<Listener>().copied();
    // Method, path and status only: keys travel in headers and are never logged.
    let (method, uri) = (request.method().clone(), request.uri().clone());
    let started = Instant::now();
    let response = admit_and_run(&state, request, next).await;
    let status = response.status().as_u16();
    let micros = started.elapsed().as_micros();
    state
        .http(listener.unwrap_or(Listener::Public))
        .record(status, u64::try_from(micros).unwrap_or(u64::MAX));
    if status >= 500 {
        tracing::warn!(%method, path = uri.path(), status, micros, "request failed");
    } else {
        tracing::debug!(%method, path = uri.path(), status, micros, "request");
    }
    response
}

/// The refusals before a handler (an announced body over the limit, the address's limit,
/// a body too slow), else the handler's answer within [`HANDLER_TIMEOUT`].
async fn admit_and_run(state: &Shared, mut request: Request, next: Next) -> Response {
    let too_large = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|n| n > MAX_BODY_BYTES);
    if too_large {
        return refusal(StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE");
    }
    if !admitted_by_address(&mut request, state) {
        return ApiError::RateLimited.into_response();
    }
    let request = match buffered(request, state.body_timeout).await {
        Ok(request) => request,
        Err(refused) => return refused,
    };
    match tokio::time::timeout(HANDLER_TIMEOUT, next.run(request)).await {
        Ok(response) => json_error(response),
        Err(_) => ApiError::Timeout.into_response(),
    }
}

/// Every error answer in the spec's `{"error": CODE}` form: the framework's own refusals
/// (a path segment that is not UTF-8, a query string it cannot split) come as plain text,
/// and are given a code from their status.
fn json_error(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let code = match status {
        StatusCode::BAD_REQUEST => "BAD_REQUEST",
        StatusCode::NOT_FOUND => "NOT_FOUND",
        StatusCode::METHOD_NOT_ALLOWED => "METHOD_NOT_ALLOWED",
        StatusCode::PAYLOAD_TOO_LARGE => "PAYLOAD_TOO_LARGE",
        StatusCode::REQUEST_TIMEOUT => "REQUEST_TIMEOUT",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "UNSUPPORTED_MEDIA_TYPE",
        StatusCode::UNPROCESSABLE_ENTITY => "INVALID_REQUEST",
        // The addendum's code: clients read `INTERNAL_ERROR` as an authentication failure.
        _ if status.is_server_error() => "INTERNAL_SERVER_ERROR",
        _ => "REQUEST_REFUSED",
    };
    (status, axum::Json(ErrorBody { error: code.into() })).into_response()
}

async fn not_found() -> ApiError {
    ApiError::NotFound("NOT_FOUND")
}

async fn method_not_allowed() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        axum::Json(ErrorBody {
            error: "METHOD_NOT_ALLOWED".into(),
        }),
    )
        .into_response()
}

/// Puts `router` behind the layers every listener has: JSON 404 and 405, the body limit, a
/// handler that panics answered 500 `INTERNAL_SERVER_ERROR` (not a dropped connection),
/// and the guard (size, rate, body deadline, handler timeout, JSON errors, the log line).
pub fn with_layers(router: Router<Shared>, state: Shared, listener: Listener) -> Router {
    router
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(tower_http::catch_panic::CatchPanicLayer::new())
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .layer(axum::Extension(listener))
        .with_state(state)
}
