//! `/openapi.json`: the OpenAPI 3.1 description generated from the handlers' annotations
//! and the request and answer types they use ([`crate::wire`], utoipa), built once and
//! served as is, with no build-time download.

use std::sync::OnceLock;

use axum::Json;
use serde_json::{Value, json};
use utoipa::Modify;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::http::{
    account, admin, amend, cluster, dead_man, futures, orders, public, snapshot, trades,
};

struct BearerKeys;

impl Modify for BearerKeys {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The API description.
#[derive(OpenApi)]
#[openapi(
    info(title = "matchbook REST API", version = "1",
        description = "Spot and futures exchange: accounts, transfers, orders, trades, fees and market data. Every error is `{\"error\": CODE}`. Streams (WebSocket, the same listener at `/` and `/ws`): ORDER_BOOK, BOOK_TICKER, PRICE_TICKS, MARKET_TICKER, CANDLESTICKS, ACCOUNT_HISTORY and CANCEL_ALL_AFTER as `docs/api.md` and README.md of the repository describe them; a field without a value is left out of an answer, never `\"\"` or null; the order book's `sequence` here is the stream's book sequence."),
    paths(
        public::time, public::currencies, public::instruments, public::fees, public::tickers,
        public::ticker, public::candlesticks, public::order_book, cluster::health,
        account::subaccounts, account::balances, account::account_fees, account::transfer,
        orders::create, orders::list, orders::by_id, orders::by_client_id, orders::cancel,
        orders::cancel_by_client_id, orders::cancel_all, amend::amend, amend::amend_by_client_id,
        dead_man::arm, dead_man::disarm,
        trades::list, trades::of_order, trades::by_id, trades::by_id_at_older_path,
        futures::funding_rate, futures::funding_rate_history, futures::funding_rate_settings,
        futures::summary, futures::positions, futures::positions_history,
        futures::position_trades, futures::funding_payments, futures::position_funding_payments,
    ),
    components(schemas(crate::error::ErrorBody, public::ServerTime)),
    modifiers(&BearerKeys),
)]
pub struct ApiDoc;

/// The admin listener's description (served there, to admin keys' holders).
#[derive(OpenApi)]
#[openapi(
    info(title = "matchbook admin API", version = "1",
        description = "Operator operations on the admin listener; every call needs an ADMIN key. Every error is `{\"error\": CODE}`."),
    paths(
        admin::create_holder, admin::create_subaccount, admin::close_account, admin::deposit,
        admin::withdraw, admin::derisk, admin::blp_threshold, admin::create_key,
        admin::list_keys, admin::revoke_key,
        admin::instrument_state, admin::advance_time, admin::index_price, admin::liquidate,
        admin::engine_state,
        admin::pipeline, admin::metrics, snapshot::take,
    ),
    components(schemas(crate::error::ErrorBody)),
    modifiers(&BearerKeys),
)]
pub struct AdminDoc;

/// Serves the admin description.
pub async fn serve_admin() -> Json<Value> {
    static DOC: OnceLock<Value> = OnceLock::new();
    Json(DOC.get_or_init(|| completed(&AdminDoc::openapi())).clone())
}

/// Serves the description.
pub async fn serve() -> Json<Value> {
    static DOC: OnceLock<Value> = OnceLock::new();
    Json(DOC.get_or_init(|| completed(&ApiDoc::openapi())).clone())
}

/// Statuses every operation may answer, with the spec's error body: a malformed request
/// (400), an unknown instrument, order or route (404), a body too slow (408) or too large
/// (413), a request line or headers too large (414, 431, answered below the router), a
/// rate limit (429: per key, or per address without one), an engine that did not answer in
/// time (500, the spec's server error) and an engine queue that is full (503).
const ALWAYS: [&str; 9] = [
    "400", "404", "408", "413", "414", "429", "431", "500", "503",
];
/// And every operation behind a key: no or a bad key (401), a scope it lacks (403).
const WITH_KEY: [&str; 2] = ["401", "403"];

/// The generated description, completed where the annotations leave it loose, so that a
/// client (or schemathesis) can hold the server to it: every status the request guard,
/// the authenticator or the runtime can answer is listed, ids are UUIDs and bounded
/// parameters carry their bounds.
fn completed(doc: &utoipa::openapi::OpenApi) -> Value {
    let mut doc = serde_json::to_value(doc).unwrap_or(Value::Null);
    let error = json!({"description": "`{\"error\": CODE}`", "content": {"application/json":
        {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}});
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return doc;
    };
    for item in paths.values_mut().filter_map(Value::as_object_mut) {
        for operation in item.values_mut().filter_map(Value::as_object_mut) {
            let keyed = operation.contains_key("security");
            if let Some(responses) = operation
                .get_mut("responses")
                .and_then(Value::as_object_mut)
            {
                let statuses = ALWAYS.iter().chain(if keyed { &WITH_KEY[..] } else { &[] });
                for status in statuses {
                    responses
                        .entry(status.to_string())
                        .or_insert_with(|| error.clone());
                }
            }
            let parameters = operation
                .get_mut("parameters")
                .and_then(Value::as_array_mut);
            for parameter in parameters.into_iter().flatten() {
                let name = parameter.get("name").and_then(Value::as_str).unwrap_or("");
                let schema = match name {
                    "order_id" | "client_id" | "trade_id" | "account_id" => {
                        json!({"type": "string", "format": "uuid"})
                    }
                    // The one numeric id of the spec (section 1).
                    "position_id" => json!({"type": "string", "pattern": "^[0-9]+$"}),
                    "level" => json!({"type": "integer", "minimum": 1, "maximum": 3}),
                    "depth" => json!({"type": "integer", "minimum": 1}),
                    "max_page_size" => json!({"type": "integer", "minimum": 0, "maximum": 100}),
                    _ => continue,
                };
                parameter["schema"] = schema;
            }
        }
    }
    doc
}
