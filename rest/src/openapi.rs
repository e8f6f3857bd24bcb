//! `/openapi.json`: the OpenAPI 3.1 description generated from the handlers' annotations
//! (utoipa), built once and served as is, with no build-time download.

use std::sync::OnceLock;

use axum::Json;
use utoipa::Modify;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::routes::{account, admin, futures, orders, public, trades};

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
        description = "Spot and futures exchange: accounts, transfers, orders, trades, fees and market data. Every error is `{\"error\": CODE}`."),
    paths(
        public::time, public::currencies, public::instruments, public::fees, public::tickers,
        public::ticker, public::candlesticks, public::order_book,
        account::subaccounts, account::balances, account::account_fees, account::transfer,
        orders::create, orders::list, orders::by_id, orders::by_client_id, orders::cancel,
        orders::cancel_by_client_id, orders::cancel_all,
        trades::list, trades::of_order, trades::by_id,
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
        admin::instrument_state, admin::advance_time, admin::index_price, admin::liquidate,
        admin::engine_state,
    ),
    components(schemas(crate::error::ErrorBody)),
    modifiers(&BearerKeys),
)]
pub struct AdminDoc;

/// Serves the admin description.
pub async fn serve_admin() -> Json<utoipa::openapi::OpenApi> {
    static DOC: OnceLock<utoipa::openapi::OpenApi> = OnceLock::new();
    Json(DOC.get_or_init(AdminDoc::openapi).clone())
}

/// Serves the description.
pub async fn serve() -> Json<utoipa::openapi::OpenApi> {
    static DOC: OnceLock<utoipa::openapi::OpenApi> = OnceLock::new();
    Json(DOC.get_or_init(ApiDoc::openapi).clone())
}
