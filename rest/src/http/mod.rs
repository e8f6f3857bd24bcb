//! The two routers: the public listener (spec section 4, the addendum's endpoints,
//! `/openapi.json` and the streams' upgrade) and the admin listener, each behind the
//! [`layers`] every request passes.

pub mod account;
pub mod admin;
pub mod amend;
pub mod cluster;
pub mod dead_man;
pub mod exposition;
pub mod futures;
pub mod layers;
pub mod orders;
pub mod public;
pub mod snapshot;
pub mod trades;

use axum::Router;
use axum::middleware;
use axum::routing::{get, post};

pub use crate::body::MAX_BODY_BYTES;
pub use layers::with_layers;

use crate::metrics::Listener;
use crate::state::Shared;
use layers::keyed_by_address;

/// The public listener's routes.
pub fn public_router(state: Shared) -> Router {
    let router = keyless_routes(&state)
        .route("/v1/subaccounts", get(account::subaccounts))
        .route("/v1/subaccounts/transfers", post(account::transfer))
        .route("/v1/account/balances", get(account::balances))
        .route("/v1/account/fees", get(account::account_fees))
        .route(
            "/v1/account/orders",
            get(orders::list)
                .post(orders::create)
                .delete(orders::cancel_all),
        )
        .route(
            "/v1/account/orders/cancel-all-after",
            post(dead_man::arm).delete(dead_man::disarm),
        )
        .route(
            "/v1/account/orders/{order_id}",
            get(orders::by_id).delete(orders::cancel).put(amend::amend),
        )
        .route(
            "/v1/account/orders/client/{client_id}",
            get(orders::by_client_id)
                .delete(orders::cancel_by_client_id)
                .put(amend::amend_by_client_id),
        )
        .route(
            "/v1/account/orders/{order_id}/trades",
            get(trades::of_order),
        )
        .route("/v1/account/trades", get(trades::list))
        .route("/v1/account/trade/{trade_id}", get(trades::by_id))
        .route(
            "/v1/account/trades/{trade_id}",
            get(trades::by_id_at_older_path),
        )
        .route("/v1/account/futures/summary", get(futures::summary))
        .route("/v1/account/futures/positions", get(futures::positions))
        .route(
            "/v1/account/futures/positions-history",
            get(futures::positions_history),
        )
        .route(
            "/v1/account/futures/positions/{position_id}/trades",
            get(futures::position_trades),
        )
        .route(
            "/v1/account/futures/positions/{position_id}/funding-payments",
            get(futures::position_funding_payments),
        )
        .route(
            "/v1/account/futures/funding-payments",
            get(futures::funding_payments),
        )
        .layer(middleware::from_fn_with_state(
            state.clone(),
            cluster::forward_public,
        ));
    with_layers(router, state, Listener::Public)
}

/// The public listener's routes that take no key (market data, reference data, health,
/// the streams' upgrade), each counted by address whether or not a key comes with it.
fn keyless_routes(state: &Shared) -> Router<Shared> {
    Router::new()
        .route("/v1/time", get(public::time))
        .route("/v1/currencies", get(public::currencies))
        .route("/v1/instruments", get(public::instruments))
        .route("/v1/fees", get(public::fees))
        .route("/v1/market-ticker", get(public::tickers))
        .route("/v1/market-ticker/{instrument_code}", get(public::ticker))
        .route(
            "/v1/candlesticks/{instrument_code}",
            get(public::candlesticks),
        )
        .route("/v1/order-book/{instrument_code}", get(public::order_book))
        .route("/v1/funding-rate", get(futures::funding_rate))
        .route(
            "/v1/funding-rate/history",
            get(futures::funding_rate_history),
        )
        .route(
            "/v1/funding-rate/settings",
            get(futures::funding_rate_settings),
        )
        .route("/v1/health", get(cluster::health))
        .route("/openapi.json", get(crate::openapi::serve))
        .route("/", get(crate::ws::upgrade::upgrade))
        .route("/ws", get(crate::ws::upgrade::upgrade))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            keyed_by_address,
        ))
}

/// The admin listener's routes.
pub fn admin_router(state: Shared) -> Router {
    let router = Router::new()
        .route("/admin/holders", post(admin::create_holder))
        .route("/admin/subaccounts", post(admin::create_subaccount))
        .route(
            "/admin/accounts/{account_id}/close",
            post(admin::close_account),
        )
        .route("/admin/deposits", post(admin::deposit))
        .route("/admin/withdrawals", post(admin::withdraw))
        .route("/admin/derisk", post(admin::derisk))
        .route("/admin/blp-threshold", post(admin::blp_threshold))
        .route("/admin/keys", post(admin::create_key).get(admin::list_keys))
        .route("/admin/keys/revoke", post(admin::revoke_key))
        .route(
            "/admin/instruments/{instrument_code}/state",
            post(admin::instrument_state),
        )
        .route("/admin/time/advance", post(admin::advance_time))
        .route("/admin/index-price", post(admin::index_price))
        .route("/admin/liquidate", post(admin::liquidate))
        .route("/admin/state", get(admin::engine_state))
        .route("/admin/pipeline", get(admin::pipeline))
        .route("/admin/metrics", get(admin::metrics))
        .route("/admin/snapshot", post(snapshot::take))
        .route("/openapi.json", get(crate::openapi::serve_admin))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            cluster::forward_admin,
        ));
    with_layers(router, state, Listener::Admin)
}
