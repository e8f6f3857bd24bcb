//! The bodies of the API as types: every request body a handler parses and every answer
//! it sends is one of these, and `/openapi.json` is generated from the same types (utoipa),
//! so the description cannot drift from what the server reads and writes.
//!
//! Request bodies are first read by [`crate::body::Body::parse`] (a JSON object, each key
//! once, no nested values outside the list fields) and then deserialised into their type;
//! a field of the wrong type is refused with that field's own error code.

pub mod account;
pub mod admin;
pub mod futures;
pub mod market;
pub mod orders;
pub mod requests;

use matchbook::wire_name::WireName;
use serde::de::{Deserialize, DeserializeOwned, Deserializer, Error as _};
use serde_json::Value;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};

use crate::body::{Body, field_code};
use crate::error::ApiError;

/// A decimal (or integer) request field: a JSON string, or a JSON number taken as written
/// (client libraries send either).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numeric(pub String);

impl<'de> Deserialize<'de> for Numeric {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(Self(text)),
            Value::Number(number) => Ok(Self(number.to_string())),
            _ => Err(D::Error::custom("expected a decimal string or number")),
        }
    }
}

/// A request field holding one of the core's spelled values ([`WireName`]): read from
/// its spelling, documented as the enum of every spelling, so REST spells nothing itself.
macro_rules! spelled_field {
    ($(#[$doc:meta])* $name:ident => $value:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name(pub $value);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
                <$value as WireName>::from_wire(&text).map(Self).ok_or_else(|| {
                    let known = <$value as WireName>::wire_names_read().join(", ");
                    D::Error::custom(format!("{text:?} is not one of {known}"))
                })
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                (ObjectBuilder::new().schema_type(Type::String))
                    .enum_values(Some(<$value as WireName>::wire_names_read()))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(stringify!($name))
            }
        }
    };
}

spelled_field!(
    /// Order type.
    OrderTypeName => matchbook::OrderType
);
spelled_field!(
    /// Order side.
    SideName => matchbook::Side
);
spelled_field!(
    /// Time in force: the spec's names, or the short forms client libraries send.
    TimeInForceName => matchbook::TimeInForce
);
spelled_field!(
    /// Extension: the price a trigger order watches.
    TriggerReferenceName => matchbook::TriggerRef
);

/// A yes/no request field: a JSON boolean, or the text `true` or `false`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag(pub bool);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Bool(on) => Ok(Self(on)),
            Value::String(text) if text == "true" => Ok(Self(true)),
            Value::String(text) if text == "false" => Ok(Self(false)),
            _ => Err(D::Error::custom("expected true or false")),
        }
    }
}

/// Schema of an optional [`Numeric`] field.
pub fn numeric_schema() -> RefOr<Schema> {
    one_of(&[
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(r"^-?[0-9]+(\.[0-9]+)?$"))
            .build(),
        ObjectBuilder::new().schema_type(Type::Number).build(),
    ])
}

/// Schema of an optional basis-points field (a trailing order's distance): a whole
/// number from 1 to 9999, or its digits as a string.
pub fn basis_points_schema() -> RefOr<Schema> {
    one_of(&[
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(1))
            .maximum(Some(9999))
            .build(),
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^[0-9]{1,4}$"))
            .build(),
    ])
}

/// Schema of an optional [`Flag`] field.
pub fn flag_schema() -> RefOr<Schema> {
    one_of(&[
        ObjectBuilder::new().schema_type(Type::Boolean).build(),
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["true", "false"]))
            .build(),
    ])
}

fn one_of(choices: &[utoipa::openapi::schema::Object]) -> RefOr<Schema> {
    let null = ObjectBuilder::new().schema_type(Type::Null).build();
    let mut builder = OneOfBuilder::new();
    for choice in choices.iter().cloned().chain([null]) {
        builder = builder.item(choice);
    }
    RefOr::T(Schema::OneOf(builder.build()))
}

impl Body {
    /// The body as its request type; a field of the wrong type is 400 with the field's code.
    pub fn typed<T: DeserializeOwned>(self) -> Result<T, ApiError> {
        serde_path_to_error::deserialize(self.into_value()).map_err(|e| {
            let field = match e.path().iter().next() {
                Some(serde_path_to_error::Segment::Map { key }) => key.clone(),
                _ => String::new(),
            };
            ApiError::bad(field_code(&field))
        })
    }

    /// Parses `bytes` as a JSON object body (see [`Body::parse`]) of request type `T`.
    pub fn read<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
        Body::parse(bytes)?.typed()
    }
}
