//! What a client of the public exchange sees, item by item, over real HTTP: closed orders
//! listed with their filled ones, order statuses clients map, the create answer's true
//! fill, candle times and no invented candles, error codes, time-in-force spellings,
//! amounts with commas, and the API reference the repository carries.

use crate::common;

use std::collections::BTreeSet;

use common::{Exchange, code};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// `(client order id, status, reason)` of each order of a history page, in page order.
fn statuses(page: &Value) -> Vec<(String, String, Option<String>)> {
    let list = page["order_history"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    list.iter()
        .map(|e| {
            let o = &e["order"];
            let text = |f: &str| o[f].as_str().unwrap_or("<absent>").to_owned();
            (
                text("client_id"),
                text("status"),
                o["reason"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

fn client_id(n: u8) -> String {
    format!("00000000-0000-4000-8000-0000000000{n:02}")
}

/// Orders of a fresh holder ending every way: open, filled, partly filled then cancelled,
/// cancelled, post-only refused, fill-or-kill refused (client ids 1 to 6).
async fn orders_of_every_ending(x: &Exchange, key: &str) {
    let place = |n: u8, side: &'static str, price: &'static str, amount: &'static str, tif| {
        let body = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": side,
            "price": price, "amount": amount, "time_in_force": tif, "client_id": client_id(n)});
        async move { x.post("/v1/account/orders", key, body).await }
    };
    // The demo's asks: 0.01 at 60,120 and 0.01 at 60,180, so 4 fills in part and 2 fully.
    let resting = [
        (1, "50000.00", "0.01"),
        (4, "60120.00", "0.02"),
        (2, "60180.00", "0.01"),
        (3, "50000.00", "0.01"),
    ];
    for (n, price, amount) in resting {
        let (s, body) = place(n, "BUY", price, amount, "GOOD_TILL_CANCELLED").await;
        assert_eq!(s, StatusCode::OK, "{body}");
    }
    for n in [3, 4] {
        let (s, body) = x
            .delete(&format!("/v1/account/orders/client/{}", client_id(n)), key)
            .await;
        assert_eq!(s, StatusCode::OK, "{body}");
    }
    let refused = [
        (5, "SELL", "59000.00", "0.01", "POST_ONLY"),
        (6, "BUY", "60200.00", "5", "FILL_OR_KILL"),
    ];
    for (n, side, price, amount, tif) in refused {
        let (s, body) = place(n, side, price, amount, tif).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_orders_and_statuses_as_the_public_exchange_lists_them() {
    let x = Exchange::start().await;
    let (key, _) = x.new_holder(&["TRADE"]).await;
    orders_of_every_ending(&x, &key).await;
    let row = |n: u8, status: &str, reason: Option<&str>| {
        (client_id(n), status.to_owned(), reason.map(str::to_owned))
    };
    let open = row(1, "OPEN", None);
    let filled = row(2, "FILLED_FULLY", None);
    let cancelled = row(3, "CANCELLED", None);
    let partly = row(4, "FILLED_CLOSED", None);
    let post_only = row(5, "FILLED_REJECTED", Some("POST_ONLY_WOULD_TAKE"));
    let fok = row(6, "FILLED_REJECTED", Some("INSUFFICIENT_LIQUIDITY"));
    let every = vec![
        fok.clone(),
        post_only.clone(),
        cancelled.clone(),
        filled.clone(),
        partly.clone(),
        open.clone(),
    ];
    let cases = [
        ("", vec![open.clone()]),
        (
            "?with_just_filled_inactive=true",
            vec![filled.clone(), partly.clone(), open.clone()],
        ),
        ("?with_cancelled_and_rejected=true", every.clone()),
        (
            "?with_cancelled_and_rejected=true&with_just_filled_inactive=true",
            every.clone(),
        ),
        ("?with_just_orders=true", vec![open.clone()]),
        (
            "?with_just_orders=true&with_cancelled_and_rejected=true",
            every.clone(),
        ),
        (
            "?with_cancelled_and_rejected=false&with_just_filled_inactive=false",
            vec![open.clone()],
        ),
    ];
    for (query, want) in cases {
        let (s, page) = x
            .get(&format!("/v1/account/orders{query}"), Some(&key))
            .await;
        assert_eq!(s, StatusCode::OK, "{query}: {page}");
        assert_eq!(statuses(&page), want, "{query}");
        let trades: usize = (page["order_history"].as_array().into_iter().flatten())
            .map(|e| e["trades"].as_array().map_or(0, Vec::len))
            .sum();
        let want_trades = if query.contains("with_just_orders=true") {
            0
        } else {
            want.iter()
                .filter(|r| r == &&filled || r == &&partly)
                .count()
        };
        assert_eq!(trades, want_trades, "{query}: trades of the filled orders");
    }
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_create_answer_reports_the_fill_and_no_placeholder() {
    let x = Exchange::start().await;
    let (key, _) = x.new_holder(&["TRADE"]).await;
    let body = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
        "price": "60200.00", "amount": "0.03"});
    let (s, ack) = x.post("/v1/account/orders", &key, body).await;
    assert_eq!(s, StatusCode::OK, "{ack}");
    assert_eq!(ack["status"], "OPEN", "the spec's acknowledgement");
    assert_eq!(
        ack["filled_amount"], "0.02000",
        "both demo asks below 60,200 were taken while it was placed"
    );
    let body = json!({"instrument_code": "BTC_EUR", "type": "MARKET", "side": "SELL",
        "amount": "0.01"});
    let (s, ack) = x.post("/v1/account/orders", &key, body).await;
    assert_eq!(s, StatusCode::OK, "{ack}");
    assert_eq!(ack["filled_amount"], "0.01000");
    assert!(
        ack.get("price").is_none(),
        "a market order has no price: {ack}"
    );
    let id = ack["order_id"].as_str().unwrap_or_default();
    let (_, record) = x.get(&format!("/v1/account/orders/{id}"), Some(&key)).await;
    assert!(record["order"].get("price").is_none(), "{record}");
    assert_eq!(record["order"]["status"], "FILLED_FULLY");
    // A market with an empty book and no mark price: those fields are left out, not "0.0".
    let (_, book) = x.get("/v1/order-book/BTC_USD_2027Q1?level=1", None).await;
    assert_eq!((&book["bids"], &book["asks"]), (&json!([]), &json!([])));
    let (_, ticker) = x.get("/v1/market-ticker/BTC_USD_2027Q1", None).await;
    for field in [
        "highest_bid",
        "lowest_ask",
        "best_bid",
        "best_ask",
        "mark_price",
        "open_interest_usd",
        "funding_rate",
        "next_funding_payment",
    ] {
        assert!(ticker.get(field).is_none(), "{field}: {ticker}");
    }
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn candles_are_known_by_their_last_millisecond_and_never_invented() {
    let x = Exchange::start().await;
    let (_, time) = x.get("/v1/time", None).await;
    let now_ms = time["epoch_millis"].as_i64().unwrap_or_default();
    let future = now_ms + 3 * 3_600_000;
    let path = format!("/v1/candlesticks/BTC_EUR?unit=MINUTES&period=1&to={future}&countBack=50");
    let (s, body) = x.get(&path, None).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let candles = body["candlesticks"].as_array().cloned().unwrap_or_default();
    assert!(!candles.is_empty(), "at least the demo trade's minute");
    let (_, after) = x.get("/v1/time", None).await;
    let after_ms = after["epoch_millis"].as_i64().unwrap_or_default();
    for candle in &candles {
        let start = millis(&candle["start_time"]);
        assert_eq!(
            millis(&candle["time"]),
            start + 59_999,
            "a minute candle is known by its last millisecond: {candle}"
        );
        assert!(
            start <= after_ms,
            "no candle for a minute not begun: {candle}"
        );
    }
    let newest = millis(&candles[0]["start_time"]);
    assert!(
        newest <= after_ms && after_ms - newest < 2 * 60_000,
        "the candle in progress is the newest one"
    );
    let path = format!(
        "/v1/candlesticks/BTC_EUR?unit=HOURS&period=1&from={}&to={}",
        now_ms + 3_600_000,
        future
    );
    let (s, body) = x.get(&path, None).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(
        body["candlesticks"],
        json!([]),
        "a window wholly ahead is empty"
    );
    x.stop().await;
}

/// Milliseconds since the epoch of an ISO 8601 UTC time with milliseconds.
fn millis(time: &Value) -> i64 {
    let text = time.as_str().unwrap_or_default();
    let num = |range: std::ops::Range<usize>| -> i64 {
        text.get(range).and_then(|t| t.parse().ok()).unwrap_or(0)
    };
    let (y, m, d) = (num(0..4), num(5..7), num(8..10));
    // Days from civil (proleptic Gregorian).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + num(11..13) * 3_600 + num(14..16) * 60 + num(17..19);
    secs * 1_000 + num(20..23)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_in_force_short_forms_and_post_only_spellings() {
    let x = Exchange::start().await;
    let (key, _) = x.new_holder(&["TRADE"]).await;
    let limit = |price: &str, extra: Value| {
        let mut body = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
            "price": price, "amount": "0.01"});
        if let (Some(m), Value::Object(more)) = (body.as_object_mut(), extra) {
            m.extend(more);
        }
        body
    };
    let cases = [
        (
            json!({"time_in_force": "GTC"}),
            "50000.00",
            "GOOD_TILL_CANCELLED",
            false,
        ),
        (
            json!({"time_in_force": "IOC"}),
            "60200.00",
            "IMMEDIATE_OR_CANCELLED",
            false,
        ),
        (
            json!({"time_in_force": "FOK"}),
            "60200.00",
            "FILL_OR_KILL",
            false,
        ),
        (
            json!({"time_in_force": "PO"}),
            "50000.00",
            "POST_ONLY",
            true,
        ),
        (
            json!({"time_in_force": "GTT", "expire_after": "2099-01-01T00:00:00Z"}),
            "50000.00",
            "GOOD_TILL_TIME",
            false,
        ),
        (json!({"post_only": true}), "50000.00", "POST_ONLY", true),
        (json!({"postOnly": true}), "50000.00", "POST_ONLY", true),
    ];
    for (extra, price, tif, post_only) in cases {
        let (s, ack) = x
            .post("/v1/account/orders", &key, limit(price, extra.clone()))
            .await;
        assert_eq!(s, StatusCode::OK, "{extra}: {ack}");
        assert_eq!(ack["time_in_force"], tif, "{extra}");
        assert_eq!(ack["is_post_only"], post_only, "{extra}");
    }
    let (s, reply) = x
        .post(
            "/v1/account/orders",
            &key,
            limit("60300.00", json!({"postOnly": true})),
        )
        .await;
    assert_eq!(
        (s, code(&reply)),
        (StatusCode::UNPROCESSABLE_ENTITY, "POST_ONLY_WOULD_TAKE")
    );
    let (s, reply) = x
        .post(
            "/v1/account/orders",
            &key,
            limit("50000.00", json!({"time_in_force": "GTX"})),
        )
        .await;
    assert_eq!(
        (s, code(&reply)),
        (StatusCode::BAD_REQUEST, "INVALID_TIME_IN_FORCE")
    );
    the_openapi_document_lists_the_spellings(&x).await;
    x.stop().await;
}

/// The OpenAPI document lists every spelling of a time in force the create accepts.
async fn the_openapi_document_lists_the_spellings(x: &Exchange) {
    let (_, doc) = x.get("/openapi.json", None).await;
    let accepted =
        &doc["components"]["schemas"]["CreateOrderRequest"]["properties"]["time_in_force"]["enum"];
    for spelling in ["GOOD_TILL_CANCELLED", "GTC", "IOC", "FOK", "PO", "GTT"] {
        assert!(
            accepted
                .as_array()
                .is_some_and(|l| l.contains(&json!(spelling))),
            "{spelling} recorded in the OpenAPI: {accepted}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comma_in_an_amount_is_refused_never_dropped() {
    let x = Exchange::start().await;
    let balance = |page: &Value| -> String {
        (page["balances"].as_array().into_iter().flatten())
            .find(|b| b["currency_code"] == "EUR")
            .and_then(|b| b["available"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    let (_, before) = x.get("/v1/account/balances", Some(&x.sub.key)).await;
    for amount in ["1,5", "1,000.5", "1,000"] {
        let body = json!({"currency": "EUR", "amount": amount,
            "source_account_id": x.trader.account_id, "destination_account_id": x.sub.account_id});
        let (s, reply) = x
            .post("/v1/subaccounts/transfers", &x.trader.key, body)
            .await;
        assert_eq!(
            (s, code(&reply)),
            (StatusCode::BAD_REQUEST, "invalid amount."),
            "{amount}"
        );
    }
    let (_, after) = x.get("/v1/account/balances", Some(&x.sub.key)).await;
    assert_eq!(balance(&before), balance(&after), "nothing moved");
    let body = json!({"currency": "EUR", "amount": "1.5",
        "source_account_id": x.trader.account_id, "destination_account_id": x.sub.account_id});
    let (s, reply) = x
        .post("/v1/subaccounts/transfers", &x.trader.key, body)
        .await;
    assert_eq!(s, StatusCode::OK, "{reply}");
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repository_documents_every_route_it_serves() {
    let x = Exchange::start().await;
    let (_, doc) = x.get("/openapi.json", None).await;
    x.stop().await;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let api = std::fs::read_to_string(root.join("docs/api.md")).unwrap_or_default();
    let paths: BTreeSet<&String> = doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(p, _)| p)
        .collect();
    assert!(paths.len() > 25, "{paths:?}");
    let missing: Vec<_> = paths.iter().filter(|p| !api.contains(p.as_str())).collect();
    assert!(
        missing.is_empty(),
        "docs/api.md does not mention {missing:?}"
    );
    for file in ["README.md", "docs/api.md"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        assert!(
            !text.contains("../shared"),
            "{file} points outside the repository"
        );
        for target in link_targets(&text) {
            let local = target.split('#').next().unwrap_or_default();
            if local.is_empty() || target.contains("://") {
                continue;
            }
            let base = root.join(file);
            let dir = base.parent().unwrap_or(&root);
            assert!(dir.join(local).exists(), "{file} links to missing {target}");
        }
    }
}

/// The targets of the markdown links `[text](target)` in `text`.
fn link_targets(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_codes_clients_map() {
    let x = Exchange::start().await;
    let body = json!({"instrument_code": "BTCX_EUR", "type": "LIMIT", "side": "BUY",
        "price": "1.00", "amount": "1"});
    let (s, reply) = x.post("/v1/account/orders", &x.trader.key, body).await;
    assert_eq!(
        (s, code(&reply)),
        (StatusCode::BAD_REQUEST, "INVALID_INSTRUMENT_CODE"),
        "the spec lists 200, 400 and 422 for create"
    );

    // A position of another holder's: refused, as is one that never existed.
    let (owner, owner_account) = x.new_holder(&["TRADE"]).await;
    let (other, other_account) = x.new_holder(&["TRADE"]).await;
    for account in [&owner_account, &other_account] {
        x.admin(
            "/admin/deposits",
            json!({"account_id": account, "currency": "USD", "amount": "100000"}),
        )
        .await;
    }
    for (key, side) in [(&other, "SELL"), (&owner, "BUY")] {
        let body = json!({"instrument_code": "BTC_USD_PERP", "type": "LIMIT", "side": side,
            "price": "60000.0", "amount": "0.1"});
        let (s, reply) = x.post("/v1/account/orders", key, body).await;
        assert_eq!(s, StatusCode::OK, "{reply}");
    }
    let (_, positions) = x.get("/v1/account/futures/positions", Some(&owner)).await;
    let id = positions["positions"][0]["position_id"]
        .as_str()
        .unwrap_or("-")
        .to_owned();
    for tail in ["funding-payments", "trades"] {
        let (s, reply) = x
            .get(
                &format!("/v1/account/futures/positions/{id}/{tail}"),
                Some(&owner),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{tail}: {reply}");
        let stranger = ["TRADE"];
        let (key, _) = x.new_holder(&stranger).await;
        for position in [id.as_str(), "999999"] {
            let path = format!("/v1/account/futures/positions/{position}/{tail}");
            let (s, reply) = x.get(&path, Some(&key)).await;
            assert_eq!(
                (s, code(&reply)),
                (StatusCode::FORBIDDEN, "MISSING_PERMISSION"),
                "{path}"
            );
        }
    }
    framework_failures_answer_the_addendum_code(&x).await;
    x.stop().await;
}

async fn panicking_handler() -> &'static str {
    panic!("a handler bug")
}

/// A handler that panics, and one that answers a bare 503, behind the listeners' layers on
/// a socket of their own: both answer JSON with `INTERNAL_SERVER_ERROR`.
async fn framework_failures_answer_the_addendum_code(x: &Exchange) {
    use axum::routing::get;
    let router = axum::Router::new()
        .route("/panics", get(panicking_handler))
        .route(
            "/bare",
            get(|| async { (StatusCode::SERVICE_UNAVAILABLE, "down") }),
        );
    let app = matchbook_rest::http::with_layers(
        router,
        x.server.state.clone(),
        matchbook_rest::metrics::Listener::Public,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let served = tokio::spawn(async move { axum::serve(listener, app).await });
    for (path, status) in [
        ("/panics", StatusCode::INTERNAL_SERVER_ERROR),
        ("/bare", StatusCode::SERVICE_UNAVAILABLE),
    ] {
        let url = format!("http://{addr}{path}");
        let (s, reply) = x.call(reqwest::Method::GET, &url, None, None).await;
        assert_eq!(
            (s, code(&reply)),
            (status, "INTERNAL_SERVER_ERROR"),
            "{path}"
        );
    }
    served.abort();
}
