//! A node of a replicated group as clients see it: `GET /v1/health` (role, the last
//! command applied, the log's end, the lag, the state hash) and the forwarding that lets
//! a client talk to any node. A follower serves public market data, the streams and
//! health itself, from its own copy of the state, and the list and revocation of its own
//! keys; every other request (private reads, every write, the other admin routes) goes to
//! the leader as it came (but for `X-Forwarded-For`, which names the client the follower
//! took it from) and the leader's answer comes back unchanged.

use std::net::IpAddr;
use std::sync::OnceLock;
use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::layers::{HANDLER_TIMEOUT, client_address};
use crate::body::MAX_BODY_BYTES;
use crate::error::ApiError;
use crate::net::proxies::ForwardedHeader;
use crate::state::Shared;

/// Marks a request one node forwarded to another: the receiver never forwards it again.
const FORWARDED_BY: HeaderName = HeaderName::from_static("x-matchbook-forwarded-by");

/// `GET /v1/health`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Health {
    /// `leader`, `follower`, or `standalone` (a server on its own journal).
    pub role: &'static str,
    /// This node's name (none when standalone).
    pub node: Option<String>,
    /// The leader's node name, when known.
    pub leader: Option<String>,
    /// The lease term this node leads in (0 if it never led).
    pub term: u64,
    /// Sequence number of the last command applied to this node's state.
    pub applied_seq: u64,
    /// Sequence number of the last command known to be in the log.
    pub log_seq: u64,
    /// Commands in the log not applied here yet.
    pub lag: u64,
    /// Digest of this node's state after `applied_seq` (hex): equal on every node at the
    /// same sequence number.
    pub state_hash: String,
    /// The last checkpoint at which this node's state hash was found equal to the leader's.
    pub checked_seq: u64,
    /// Why this node's state is known to differ from the leader's (it stops), if it is.
    pub diverged: Option<String>,
    /// The first command the log keeps, as far as this node trimmed it while leading (0:
    /// never): the log is trimmed below the oldest of the nodes' newest snapshots.
    pub log_kept_from: u64,
    /// How many times this node, leading, looked at trimming the log.
    pub log_trim_checks: u64,
}

/// This node's role, progress and state hash.
#[utoipa::path(get, path = "/v1/health", tag = "public",
    responses((status = 200, body = Health)))]
pub async fn health(State(state): State<Shared>) -> Result<Json<Health>, ApiError> {
    let (applied_seq, hash) = state
        .view(|view| (view.seq, view.engine.state_hash()))
        .await?;
    let mut health = Health {
        role: "standalone",
        node: None,
        leader: None,
        term: 0,
        applied_seq,
        log_seq: applied_seq,
        lag: 0,
        state_hash: format!("{hash:016x}"),
        checked_seq: 0,
        diverged: None,
        log_kept_from: 0,
        log_trim_checks: 0,
    };
    if let Some(node) = &state.node {
        let status = &node.status;
        health.role = if status.is_leading() {
            "leader"
        } else {
            "follower"
        };
        health.node = Some(node.name.clone());
        health.leader = status.leader().map(|l| l.node);
        health.term = status.term();
        health.log_seq = status.log_end().max(applied_seq);
        health.lag = health.log_seq - applied_seq;
        health.checked_seq = status.last_compared();
        health.diverged = status.divergence().or_else(|| status.problem());
        health.log_kept_from = status.kept_from();
        health.log_trim_checks = status.trim_checks();
    }
    Ok(Json(health))
}

/// Whether a follower answers this request itself: public market data, streams, health.
fn served_here(method: &Method, path: &str) -> bool {
    const EXACT: [&str; 8] = [
        "/",
        "/ws",
        "/openapi.json",
        "/v1/time",
        "/v1/currencies",
        "/v1/instruments",
        "/v1/fees",
        "/v1/health",
    ];
    const UNDER: [&str; 4] = [
        "/v1/market-ticker",
        "/v1/candlesticks/",
        "/v1/order-book/",
        "/v1/funding-rate",
    ];
    *method == Method::GET
        && (EXACT.contains(&path) || UNDER.iter().any(|prefix| path.starts_with(prefix)))
}

/// Which of the leader's listeners a forwarded request goes to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Listener {
    Public,
    Admin,
}

/// Middleware of the public listener: a follower forwards what it does not serve.
pub(crate) async fn forward_public(state: State<Shared>, request: Request, next: Next) -> Response {
    forward(state, Listener::Public, request, next).await
}

/// Middleware of the admin listener: a follower forwards everything but the list and the
/// revocation of its own keys.
pub(crate) async fn forward_admin(state: State<Shared>, request: Request, next: Next) -> Response {
    forward(state, Listener::Admin, request, next).await
}

async fn forward(
    State(state): State<Shared>,
    listener: Listener,
    request: Request,
    next: Next,
) -> Response {
    let Some(node) = &state.node else {
        return next.run(request).await;
    };
    // A node lists its own view of the keys, revokes on the group's behalf, and answers
    // its own metrics and pipeline (each node is a scrape target of its own; an operator
    // looks at a lagging follower's stages on that follower) and writes its own snapshot
    // (snapshots are each node's).
    let path = request.uri().path();
    let local = match listener {
        Listener::Public => served_here(request.method(), path),
        Listener::Admin => {
            path == "/admin/keys/revoke"
                || (request.method() == Method::GET && path == "/admin/keys")
                || path == "/admin/metrics"
                || path == "/admin/pipeline"
                || path == "/admin/snapshot"
        }
    };
    if local || node.status.is_leading() {
        return next.run(request).await;
    }
    let leader = node.status.leader().and_then(|l| l.address);
    let base = leader.as_deref().and_then(|addresses| {
        let mut each = addresses.split_whitespace();
        match listener {
            Listener::Public => each.next(),
            Listener::Admin => each.nth(1),
        }
    });
    // No second hop: a node that was sent a request believing it leads and does not is
    // between roles; the client tries again.
    let (Some(base), false) = (base, request.headers().contains_key(FORWARDED_BY)) else {
        return ApiError::Runtime(matchbook::runtime::RuntimeError::NotLeader).into_response();
    };
    let client = client_address(&request, &state);
    let client = client.map(|ip| (state.trusted_proxies.header(), ip));
    match relay(base, &node.name, client, request).await {
        Ok(response) => response,
        Err(error) => {
            tracing::warn!(base, %error, "cannot reach the leader");
            ApiError::Runtime(matchbook::runtime::RuntimeError::NotLeader).into_response()
        }
    }
}

fn http_client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder()
            .timeout(HANDLER_TIMEOUT - Duration::from_secs(1))
            .build()
            .unwrap_or_default()
    })
}

/// Headers that belong to one connection, never passed on.
fn hop_by_hop(name: &HeaderName) -> bool {
    [
        header::CONNECTION,
        header::HOST,
        header::CONTENT_LENGTH,
        header::TRANSFER_ENCODING,
        header::UPGRADE,
        header::TE,
        header::TRAILER,
        header::PROXY_AUTHORIZATION,
    ]
    .contains(name)
        || name.as_str() == "keep-alive"
}

/// Sends `request` to `base` as it came, but for the headers naming its client: the
/// leader is told the `client` this node took the request from, in the header the group's
/// proxies write, as any proxy tells the server behind it, and never what the client wrote
/// in either header itself (a leader that trusts its followers would count the request
/// against an address of the client's choosing). Returns the answer as it came back.
async fn relay(
    base: &str,
    node: &str,
    client: Option<(ForwardedHeader, IpAddr)>,
    request: Request,
) -> Result<Response, reqwest::Error> {
    let (parts, body) = request.into_parts();
    // The guard has already read the body into memory (at most MAX_BODY_BYTES).
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .unwrap_or_default();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut outgoing = http_client().request(parts.method, format!("{base}{path}"));
    for (name, value) in &parts.headers {
        let names_client = ForwardedHeader::ALL.iter().any(|h| name == h.name());
        if !hop_by_hop(name) && !names_client {
            outgoing = outgoing.header(name, value);
        }
    }
    if let Some((header, client)) = client {
        outgoing = outgoing.header(header.name(), header.value_for(client));
    }
    let answer = outgoing
        .header(FORWARDED_BY, node)
        .body(bytes)
        .send()
        .await?;
    let status = StatusCode::from_u16(answer.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut response = Response::builder().status(status);
    for (name, value) in answer.headers() {
        if !hop_by_hop(name) {
            response = response.header(name, value);
        }
    }
    let body = answer.bytes().await?;
    Ok(response
        .body(Body::from(body))
        .unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response()))
}
