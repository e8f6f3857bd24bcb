//! The WebSocket upgrade on the public listener (`GET /` and `GET /ws`): the client's
//! address behind trusted proxies, the message bound, and a session task per socket.

use axum::extract::State;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::response::{IntoResponse, Response};

use super::session;
use super::streams::MAX_MESSAGE_BYTES;
use crate::error::ApiError;
use crate::state::Shared;

/// `GET /` and `GET /ws`: the WebSocket upgrade; a plain request is answered as an unknown
/// route.
pub async fn upgrade(
    State(state): State<Shared>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<crate::net::listener::Peer>>>,
    headers: axum::http::HeaderMap,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    // Absent for a router called in process: such a session is not limited.
    let peer =
        peer.map(|axum::Extension(info)| (state.trusted_proxies).client(info.0.0.ip(), &headers));
    match upgrade {
        Ok(upgrade) => upgrade
            .max_message_size(MAX_MESSAGE_BYTES)
            .max_frame_size(MAX_MESSAGE_BYTES)
            .on_upgrade(move |socket| session::run(socket, state, peer))
            .into_response(),
        Err(_) => ApiError::NotFound("NOT_FOUND").into_response(),
    }
}
