//! The frames a session answers its client's messages with that are not channel data:
//! error frames, and JSON text of any frame.

use serde::Serialize;

use super::messages::{ErrorFrame, Stamp};
use crate::state::Shared;

/// A frame's JSON text.
pub fn json(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// An error frame of `code` about `channel` (naming the markets `invalid`), as JSON text.
pub fn error(state: &Shared, code: &str, channel: &str, invalid: Option<Vec<String>>) -> String {
    json(&ErrorFrame {
        invalid_instruments: invalid,
        ..error_frame(state, code, channel)
    })
}

/// An error frame of `code` about `channel`, now, naming nothing else.
pub fn error_frame(state: &Shared, code: &str, channel: &str) -> ErrorFrame {
    ErrorFrame {
        error: code.to_owned(),
        channel_name: channel.to_owned(),
        kind: "ERROR",
        invalid_instruments: None,
        order_id: None,
        client_id: None,
        stamp: Stamp::of(state.now()),
    }
}
