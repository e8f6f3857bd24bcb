//! Request bodies: a JSON object read from the raw bytes (so a missing or wrong content
//! type or malformed JSON is our own 400, not the framework's), and its fields as text
//! (decimal fields may arrive as strings or as JSON numbers).

use serde_json::{Map, Value};

use crate::error::ApiError;

/// A parsed JSON object body.
#[derive(Debug, Default)]
pub struct Body(Map<String, Value>);

impl Body {
    /// Parses `bytes` as a JSON object; anything else is 400 `INVALID_REQUEST_BODY`.
    pub fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(map)) => Ok(Self(map)),
            _ => Err(ApiError::bad("INVALID_REQUEST_BODY")),
        }
    }

    /// A field as text: strings as they are, numbers as written, booleans as
    /// `true`/`false`; absent, null or other types are `None`.
    pub fn text(&self, name: &str) -> Option<String> {
        match self.0.get(name)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// Whether the field is present (even as null).
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }
}
