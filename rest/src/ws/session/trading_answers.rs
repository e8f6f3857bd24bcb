//! What a session answers a `TRADING` request (create, amend, cancel, cancel all): its
//! acknowledgement, or an error frame that echoes the ids the request named, so a client
//! with many requests in flight can tell which one failed.

use crate::error::ApiError;
use crate::state::Shared;
use crate::ws::messages::ErrorFrame;
use crate::ws::replies::{error_frame, json};

/// The answer to a `TRADING` request, or its error frame echoing the ids the request
/// named (`order_id`, `client_id`), so a client with many requests out knows which failed.
pub(super) fn entry(state: &Shared, answer: Result<String, ApiError>, named: Named) -> String {
    answer.unwrap_or_else(|e| {
        json(&ErrorFrame {
            order_id: named.order_id,
            client_id: named.client_id,
            ..error_frame(state, &e.parts().1, "TRADING")
        })
    })
}

/// The ids a `TRADING` request named, as it gave them (text only).
#[derive(Default)]
pub(super) struct Named {
    /// The order id.
    pub(super) order_id: Option<String>,
    /// The client id.
    pub(super) client_id: Option<String>,
}

impl Named {
    /// The `order_id` and `client_id` of an order object.
    pub(super) fn in_order(order: &serde_json::Value) -> Self {
        let text = |field: &str| order.get(field).and_then(|v| v.as_str()).map(str::to_owned);
        Self {
            order_id: text("order_id"),
            client_id: text("client_id"),
        }
    }
}
