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
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use matchbook_config::bounds;

use crate::error::ApiError;

/// Largest request body accepted (and the largest message a stream client may send).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A parsed JSON object body.
#[derive(Debug, Default)]
pub struct Body(Map<String, Value>);

/// Request fields whose value is a list of strings (an admin key's scopes).
pub const LIST_FIELDS: &[&str] = &["scopes"];

/// Request fields whose value is an object of scalar fields (an OCO pair's second leg).
pub const OBJECT_FIELDS: &[&str] = &["oco_order"];

/// The error code that names a request field (the spec's own code where it has one).
pub fn field_code(name: &str) -> &'static str {
    match name {
        "instrument_code" => "INVALID_INSTRUMENT_CODE",
        "type" => "INVALID_ORDER_TYPE",
        "side" => "INVALID_SIDE",
        "amount" => "INVALID_AMOUNT",
        "price" | "trigger_price" => "INVALID_PRICE",
        "client_id" => "INVALID_CLIENT_UUID",
        "time_in_force" | "is_post_only" | "post_only" | "postOnly" => "INVALID_TIME_IN_FORCE",
        "expire_after" => "INVALID_EXPIRY",
        "currency" => "INVALID_CURRENCY",
        "account_id" | "source_account_id" | "destination_account_id" => "INVALID_ACCOUNT_ID",
        "scopes" => "INVALID_SCOPES",
        "holder_id" => "INVALID_HOLDER_ID",
        "name" => "INVALID_ACCOUNT_NAME",
        "kind" => "INVALID_ACCOUNT_KIND",
        "state" => "INVALID_STATE",
        "seconds" => "INVALID_SECONDS",
        "trailing_offset" | "trailing_offset_bps" | "limit_offset" => "INVALID_TRAIL",
        _ => "INVALID_REQUEST_BODY",
    }
}

/// The fields of one JSON object in the order written, duplicates kept (so they can be
/// refused: `serde_json::Map` would keep only the last), each value still its JSON text.
/// Reading an object never parses a value inside it: serde_json skips over a value to
/// find where it ends in a loop, so no level of the input costs a level of the stack.
struct RawFields(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for RawFields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RawFieldsVisitor;
        impl<'de> Visitor<'de> for RawFieldsVisitor {
            type Value = RawFields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawFields, A::Error> {
                let mut fields = Vec::new();
                while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                    fields.push(entry);
                }
                Ok(RawFields(fields))
            }
        }
        deserializer.deserialize_map(RawFieldsVisitor)
    }
}

/// A scalar written as `raw` (numbers kept exact); none for an array or an object, or
/// for text that is not JSON.
fn scalar(raw: &RawValue) -> Option<Value> {
    let text = raw.get();
    match text.as_bytes().first()? {
        b'{' | b'[' => None,
        b'-' | b'0'..=b'9' => Some(exact_number(text)),
        _ => serde_json::from_str(text).ok(),
    }
}

/// The value of a top-level field named `name` written as `raw`: a scalar; a list of
/// strings for the fields in [`LIST_FIELDS`]; an object of scalars, each key once, for
/// the fields in [`OBJECT_FIELDS`]. Anything else is none, refused with the field's code.
/// Each form reads one level below the field and no further, whatever the input nests.
fn field_value(name: &str, raw: &RawValue) -> Option<Value> {
    match raw.get().as_bytes().first()? {
        b'{' if OBJECT_FIELDS.contains(&name) => {
            let RawFields(fields) = serde_json::from_str(raw.get()).ok()?;
            let mut object = Map::with_capacity(fields.len());
            for (key, value) in fields {
                if object.contains_key(&key) {
                    return None;
                }
                object.insert(key, scalar(&value)?);
            }
            Some(Value::Object(object))
        }
        b'[' if LIST_FIELDS.contains(&name) => {
            let items: Vec<Box<RawValue>> = serde_json::from_str(raw.get()).ok()?;
            let strings = items.iter().map(|item| match scalar(item)? {
                text @ Value::String(_) => Some(text),
                _ => None,
            });
            strings.collect::<Option<Vec<Value>>>().map(Value::Array)
        }
        _ => scalar(raw),
    }
}

/// A JSON number as its exact value: an integer that fits 64 bits stays a number; any
/// other (a fraction, an exponent, a wider integer) becomes its decimal text, which
/// serde_json would round to the nearest `f64` (`0.29999999999999998` read as 0.3). An
/// exponent is written out (`1e-2` is `0.01`) unless the value is past what a decimal
/// holds, which then stays as written for the decimal reader to refuse.
fn exact_number(text: &str) -> Value {
    if let Ok(n) = text.parse::<i64>() {
        return Value::from(n);
    }
    if let Ok(n) = text.parse::<u64>() {
        return Value::from(n);
    }
    let written_out = text
        .contains(['e', 'E'])
        .then(|| rust_decimal::Decimal::from_scientific(text).ok())
        .flatten()
        .map(|d| d.normalize().to_string());
    Value::String(written_out.unwrap_or_else(|| text.to_owned()))
}

/// Whether `bytes` is a body every route accepts before reading its own fields: empty
/// (whitespace only), or one JSON object within [`bounds`] (any fields: a route ignores
/// those it does not take). A route that takes no fields reads nothing more, so this is
/// the whole rule there; one that does reads its fields with [`Body::parse`].
pub fn acceptable_envelope(bytes: &[u8]) -> Result<(), ApiError> {
    let text = bytes.trim_ascii();
    if text.is_empty() {
        return Ok(());
    }
    bounds::check_json(text, MAX_BODY_BYTES).map_err(|_| invalid_body())?;
    if text.first() != Some(&b'{') {
        return Err(invalid_body());
    }
    // Skipped, not built: serde_json walks an ignored value in a loop.
    serde_json::from_slice::<serde::de::IgnoredAny>(text).map_err(|_| invalid_body())?;
    Ok(())
}

/// The refusal of a body that is not one JSON object within the bounds.
fn invalid_body() -> ApiError {
    ApiError::bad("INVALID_REQUEST_BODY")
}

impl Body {
    /// Parses `bytes` as a JSON object of scalar fields, each key once; anything else is
    /// 400: `INVALID_REQUEST_BODY`, or the field's own code for a field of the wrong type.
    /// Text past [`bounds`] (larger than [`MAX_BODY_BYTES`], nested deeper than
    /// [`bounds::MAX_NESTING`]) is `INVALID_REQUEST_BODY` before anything is parsed.
    pub fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        bounds::check_json(bytes, MAX_BODY_BYTES).map_err(|_| invalid_body())?;
        let RawFields(fields) =
            serde_json::from_slice::<RawFields>(bytes).map_err(|_| invalid_body())?;
        let mut map = Map::with_capacity(fields.len());
        for (name, raw) in fields {
            let Some(value) = field_value(&name, &raw) else {
                return Err(ApiError::bad(field_code(&name)));
            };
            if map.contains_key(&name) {
                return Err(invalid_body());
            }
            map.insert(name, value);
        }
        Ok(Self(map))
    }

    /// The names of its fields.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// The object as a JSON value (to be read as a request type).
    pub(crate) fn into_value(self) -> Value {
        Value::Object(self.0)
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
        assert_eq!(
            refused(r#"{"oco_order": {"price": {"deep": 1}}}"#),
            "INVALID_REQUEST_BODY"
        );
        assert_eq!(
            refused(r#"{"oco_order": {"price": "1", "price": "2"}}"#),
            "INVALID_REQUEST_BODY",
            "a key given twice inside a leg"
        );
        assert!(Body::parse(br#"{"oco_order": {"type": "STOP_MARKET", "price": 1.5}}"#).is_ok());
        assert!(Body::parse(br#"{"oco_order": {}}"#).is_ok());
        assert!(Body::parse(br#"{"scopes": ["TRADE"]}"#).is_ok());
    }

    /// Each nested object was parsed again with a fresh deserializer, so serde_json's own
    /// depth limit started over at every level: 10,000 levels overflowed a worker's stack.
    /// Now the bound refuses them unread, and a body within it is read one level below a
    /// field at most, whatever it nests (here on a 128 KiB stack).
    #[test]
    fn bodies_nested_deep_are_refused_without_recursing() {
        let read = |text: String| {
            std::thread::Builder::new()
                .stack_size(128 * 1024)
                .spawn(move || Body::parse(text.as_bytes()).err().map(|e| e.parts().1))
                .expect("thread")
                .join()
                .expect("returned")
        };
        let deep = |depth: usize| format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        let code = Some("INVALID_REQUEST_BODY".to_owned());
        assert_eq!(read(deep(10_000)), code);
        assert_eq!(read(format!("{{\"price\": {}}}", deep(10_000))), code);
        let within = bounds::MAX_NESTING - 1;
        assert_eq!(
            read(format!("{{\"price\": {}}}", deep(within))),
            Some("INVALID_PRICE".into())
        );
        assert_eq!(read(format!("{{\"oco_order\": {}}}", deep(within))), code);
    }

    #[test]
    fn every_route_takes_an_empty_body_or_one_object_within_the_bounds() {
        for fine in ["", "  \n", "{}", r#"{"anything": [1, {"a": 2}]}"#] {
            assert!(acceptable_envelope(fine.as_bytes()).is_ok(), "{fine:?}");
        }
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(64), "]".repeat(64));
        for refused in ["[]", "1", "\"x\"", "{", "{} {}", "null", deep.as_str()] {
            let code = acceptable_envelope(refused.as_bytes())
                .err()
                .map(|e| e.parts().1);
            assert_eq!(code.as_deref(), Some("INVALID_REQUEST_BODY"), "{refused:?}");
        }
    }

    /// A decimal given as a JSON number was read through an `f64`: `0.29999999999999998`
    /// became 0.3 and `0.0100000000000000000001` became 0.01 (orders of other amounts
    /// than sent, never refused for their excess precision). Numbers now keep their text;
    /// one in exponent form is written out.
    #[test]
    fn decimals_given_as_json_numbers_keep_their_exact_value() {
        use crate::wire::Numeric;
        use crate::wire::requests::CreateOrderRequest;
        let amount = |number: &str| {
            let text = format!(r#"{{"amount": {number}, "oco_order": {{"price": {number}}}}}"#);
            let order = Body::read::<CreateOrderRequest>(text.as_bytes()).expect("read");
            let leg = order.oco_order.expect("leg").price.expect("price");
            assert_eq!(Some(&leg), order.amount.as_ref(), "the leg reads alike");
            order.amount.expect("amount")
        };
        assert_eq!(
            amount("0.29999999999999998"),
            Numeric("0.29999999999999998".into())
        );
        assert_eq!(
            amount("0.0100000000000000000001"),
            Numeric("0.0100000000000000000001".into())
        );
        assert_eq!(
            amount("12345678901234567.25"),
            Numeric("12345678901234567.25".into())
        );
        assert_eq!(amount("1e-2"), Numeric("0.01".into()));
        assert_eq!(amount("-1.5E3"), Numeric("-1500".into()));
        assert_eq!(amount("7"), Numeric("7".into()));
        assert_eq!(
            amount("18446744073709551617"),
            Numeric("18446744073709551617".into())
        );
    }

    #[test]
    fn typed_fields_take_their_forms_and_refuse_others_with_their_code() {
        use crate::wire::requests::CreateOrderRequest;
        use crate::wire::{Flag, Numeric};
        let read = |text: &str| Body::read::<CreateOrderRequest>(text.as_bytes());
        let order = read(
            r#"{"amount": 1.5, "price": "10.25", "is_post_only": "true",
            "reduce_only": false, "client_id": null, "side": "BUY", "unknown": 1}"#,
        )
        .expect("read");
        assert_eq!(order.amount, Some(Numeric("1.5".into())));
        assert_eq!(order.price, Some(Numeric("10.25".into())));
        assert_eq!(order.is_post_only, Some(Flag(true)));
        assert_eq!(order.reduce_only, Some(Flag(false)));
        assert_eq!(order.client_id, None);
        let code = |text: &str| read(text).err().map(|e| e.parts().1);
        assert_eq!(code(r#"{"side": "UP"}"#).as_deref(), Some("INVALID_SIDE"));
        assert_eq!(
            code(r#"{"type": 1}"#).as_deref(),
            Some("INVALID_ORDER_TYPE")
        );
        assert_eq!(
            code(r#"{"amount": true}"#).as_deref(),
            Some("INVALID_AMOUNT")
        );
        assert_eq!(
            code(r#"{"is_post_only": "yes"}"#).as_deref(),
            Some("INVALID_TIME_IN_FORCE")
        );
        assert_eq!(
            code(r#"{"client_id": 7}"#).as_deref(),
            Some("INVALID_CLIENT_UUID")
        );
        assert_eq!(
            code(r#"{"instrument_code": 5}"#).as_deref(),
            Some("INVALID_INSTRUMENT_CODE")
        );
    }
}
