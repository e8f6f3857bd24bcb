//! Request bodies: a JSON object read from the raw bytes (so a missing or wrong content
//! type or malformed JSON is our own 400, not the framework's), and its fields as text
//! (decimal fields may arrive as strings or as JSON numbers).
//!
//! Nothing is dropped silently: a key given twice, or a field whose value is an array or
//! an object (only the list fields in [`LIST_FIELDS`] are arrays, of strings), refuses the
//! whole body with 400 and the field's own error code, so `"time_in_force":
//! ["FILL_OR_KILL"]` can never fall back to the default and rest as GOOD_TILL_CANCELLED.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::ApiError;

/// A parsed JSON object body.
#[derive(Debug, Default)]
pub struct Body(Map<String, Value>);

/// Request fields whose value is a list of strings (an admin key's scopes).
pub const LIST_FIELDS: &[&str] = &["scopes"];

/// The error code that names a request field (the spec's own code where it has one).
pub fn field_code(name: &str) -> &'static str {
    match name {
        "instrument_code" => "INVALID_INSTRUMENT_CODE",
        "type" => "INVALID_ORDER_TYPE",
        "side" => "INVALID_SIDE",
        "amount" => "INVALID_AMOUNT",
        "price" | "trigger_price" => "INVALID_PRICE",
        "client_id" => "INVALID_CLIENT_UUID",
        "time_in_force" | "is_post_only" => "INVALID_TIME_IN_FORCE",
        "expire_after" => "INVALID_EXPIRY",
        "currency" => "INVALID_CURRENCY",
        "account_id" | "source_account_id" | "destination_account_id" => "INVALID_ACCOUNT_ID",
        "scopes" => "INVALID_SCOPES",
        _ => "INVALID_REQUEST_BODY",
    }
}

/// The fields of a JSON object in the order written, duplicates kept (so they can be
/// refused: `serde_json::Map` would keep only the last).
struct Fields(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
                let mut fields = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    fields.push(entry);
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

impl Body {
    /// Parses `bytes` as a JSON object of scalar fields, each key once; anything else is
    /// 400: `INVALID_REQUEST_BODY`, or the field's own code for a field of the wrong type.
    pub fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        let Fields(fields) = serde_json::from_slice::<Fields>(bytes)
            .map_err(|_| ApiError::bad("INVALID_REQUEST_BODY"))?;
        let mut map = Map::with_capacity(fields.len());
        for (name, value) in fields {
            let allowed = match &value {
                Value::Object(_) => false,
                Value::Array(items) => {
                    LIST_FIELDS.contains(&name.as_str()) && items.iter().all(Value::is_string)
                }
                _ => true,
            };
            if !allowed {
                return Err(ApiError::bad(field_code(&name)));
            }
            if map.contains_key(&name) {
                return Err(ApiError::bad("INVALID_REQUEST_BODY"));
            }
            map.insert(name, value);
        }
        Ok(Self(map))
    }

    /// A field as text: strings as they are, numbers as written, booleans as
    /// `true`/`false`; absent or null fields are `None`.
    pub fn text(&self, name: &str) -> Option<String> {
        match self.0.get(name)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// A yes/no field: a JSON boolean or the text `true`/`false`; absent or null is
    /// `false`; anything else is 400 with the field's code.
    pub fn flag(&self, name: &str) -> Result<bool, ApiError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s == "true" => Ok(true),
            Some(Value::String(s)) if s == "false" => Ok(false),
            Some(_) => Err(ApiError::bad(field_code(name))),
        }
    }

    /// Whether the field is present (even as null).
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        match Body::parse(text.as_bytes()) {
            Ok(body) => panic!("accepted {text}: {body:?}"),
            Err(e) => e.parts().1,
        }
    }

    #[test]
    fn fields_of_the_wrong_type_or_given_twice_are_refused_with_their_code() {
        assert_eq!(
            refused(r#"{"time_in_force": ["FILL_OR_KILL"]}"#),
            "INVALID_TIME_IN_FORCE"
        );
        assert_eq!(
            refused(r#"{"client_id": {"id": 1}}"#),
            "INVALID_CLIENT_UUID"
        );
        assert_eq!(
            refused(r#"{"side": "BUY", "side": "SELL"}"#),
            "INVALID_REQUEST_BODY"
        );
        assert_eq!(refused(r#"["side"]"#), "INVALID_REQUEST_BODY");
        assert_eq!(refused(r#"{"whatever": []}"#), "INVALID_REQUEST_BODY");
        assert_eq!(refused(r#"{"scopes": [1]}"#), "INVALID_SCOPES");
        assert!(Body::parse(br#"{"scopes": ["TRADE"]}"#).is_ok());
        let body = Body::parse(br#"{"a": "x", "b": 1.5, "c": true, "d": null}"#).expect("ok");
        assert_eq!(body.text("b").as_deref(), Some("1.5"));
        assert_eq!(body.text("d"), None);
        assert_eq!(body.flag("c").ok(), Some(true));
        assert_eq!(body.flag("d").ok(), Some(false));
        assert!(body.flag("a").is_err());
    }
}
