//! The order types beyond the spec over real HTTP: a trailing stop and its record, an
//! iceberg the book shows only in part, a bracket whose exits appear once its entry is
//! done, an OCO pair cancelled together, and the refusals of malformed ones.

use crate::common;

use common::{Exchange, code};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn create(x: &Exchange, key: &str, body: Value) -> Value {
    let (s, ack) = x.post("/v1/account/orders", key, body).await;
    assert_eq!(s, StatusCode::OK, "{ack}");
    ack
}

async fn record(x: &Exchange, key: &str, ack: &Value, field: &str) -> Value {
    let id = ack[field].as_str().unwrap_or_default();
    let (s, body) = x.get(&format!("/v1/account/orders/{id}"), Some(key)).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    body["order"].clone()
}

/// A trade at 60,000.00 between two fresh holders, so BTC_EUR has a last price.
async fn trade_at_60000(x: &Exchange) {
    let (seller, _) = x.new_holder(&["TRADE"]).await;
    let (buyer, _) = x.new_holder(&["TRADE"]).await;
    for (key, side) in [(&seller, "SELL"), (&buyer, "BUY")] {
        create(
            x,
            key,
            json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": side,
            "price": "60000.00", "amount": "0.001"}),
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trailing_stop_and_an_iceberg_show_their_terms() {
    let x = Exchange::start().await;
    trade_at_60000(&x).await;
    let (key, _) = x.new_holder(&["TRADE"]).await;
    let ack = create(
        &x,
        &key,
        json!({"instrument_code": "BTC_EUR", "type": "TRAILING_STOP",
        "side": "SELL", "amount": "0.01", "trailing_offset": "500.00"}),
    )
    .await;
    let order = record(&x, &key, &ack, "order_id").await;
    assert_eq!(order["type"], "TRAILING_STOP");
    assert_eq!(order["trigger_price"], "59500.00", "{order}");
    assert_eq!(order["trigger_reference"], "LAST_PRICE");
    assert_eq!(order["trailing_offset"], "500.00");
    let both = json!({"instrument_code": "BTC_EUR", "type": "TRAILING_STOP", "side": "SELL",
        "amount": "0.01", "trailing_offset": "500.00", "trailing_offset_bps": 50});
    let (s, body) = x.post("/v1/account/orders", &key, both).await;
    assert_eq!((s, code(&body)), (StatusCode::BAD_REQUEST, "INVALID_TRAIL"));
    let ack = create(
        &x,
        &key,
        json!({"instrument_code": "BTC_EUR", "type": "LIMIT",
        "side": "SELL", "price": "65000.00", "amount": "0.01", "display_amount": "0.002"}),
    )
    .await;
    assert_eq!(
        record(&x, &key, &ack, "order_id").await["display_amount"],
        "0.00200"
    );
    let (_, book) = x.get("/v1/order-book/BTC_EUR?level=2", None).await;
    let at = (book["asks"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter())
    .find(|l| l["price"] == "65000.00")
    .unwrap_or_default();
    assert_eq!(
        at["amount"], "0.00200",
        "the book shows the display only: {book}"
    );
    let bad = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "SELL",
        "price": "65000.00", "amount": "0.01", "display_amount": "0.01"});
    let (s, body) = x.post("/v1/account/orders", &key, bad).await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::BAD_REQUEST, "INVALID_DISPLAY")
    );
    x.stop().await;
}

/// docs/api.md: every number field may be sent as a string. `trailing_offset_bps` sent as
/// `"25"` was refused with 400 (its type was a bare integer) until 2026-12; as a number
/// or as digits it reads alike, and text that is not a whole number is `INVALID_TRAIL`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trailing_offset_bps_reads_as_a_number_or_as_its_digits() {
    let x = Exchange::start().await;
    trade_at_60000(&x).await;
    let (key, _) = x.new_holder(&["TRADE"]).await;
    let trailing = |bps: Value| {
        json!({"instrument_code": "BTC_EUR", "type": "TRAILING_STOP", "side": "SELL",
            "amount": "0.01", "trailing_offset_bps": bps})
    };
    for bps in [json!("25"), json!(25)] {
        let ack = create(&x, &key, trailing(bps.clone())).await;
        let order = record(&x, &key, &ack, "order_id").await;
        assert_eq!(order["trailing_offset_bps"], 25, "sent as {bps}");
        assert_eq!(order["type"], "TRAILING_STOP");
    }
    for bps in [
        json!("2.5"),
        json!("25x"),
        json!(""),
        json!(2.5),
        json!("-1"),
    ] {
        let (s, body) = x
            .post("/v1/account/orders", &key, trailing(bps.clone()))
            .await;
        assert_eq!(
            (s, code(&body)),
            (StatusCode::BAD_REQUEST, "INVALID_TRAIL"),
            "{bps}"
        );
    }
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bracket_places_its_exits_and_an_oco_pair_ends_together() {
    let x = Exchange::start().await;
    let (key, _) = x.new_holder(&["TRADE"]).await;
    // The demo's ask of 0.01 at 60,120 fills the immediate entry completely.
    create(
        &x,
        &key,
        json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
        "price": "60120.00", "amount": "0.01", "time_in_force": "IMMEDIATE_OR_CANCELLED",
        "take_profit_price": "62000.00", "stop_loss_price": "58000.00"}),
    )
    .await;
    let (_, open) = x.get("/v1/account/orders", Some(&key)).await;
    let mut exits: Vec<(String, String)> = (open["order_history"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|e| {
            let o = &e["order"];
            (
                o["type"].as_str().unwrap_or_default().to_owned(),
                o["amount"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    exits.sort();
    let parents: Vec<&str> = (open["order_history"].as_array().into_iter().flatten())
        .filter_map(|e| e["order"]["parent_order_id"].as_str())
        .collect();
    assert_eq!(parents.len(), 2, "both exits name their entry: {open}");
    assert_eq!(
        exits,
        [
            ("LIMIT".to_owned(), "0.01000".to_owned()),
            ("STOP_MARKET".to_owned(), "0.01000".to_owned())
        ],
        "{open}"
    );
    let ack = create(
        &x,
        &key,
        json!({"instrument_code": "BTC_EUR", "type": "LIMIT",
        "side": "SELL", "price": "64000.00", "amount": "0.01",
        "oco_order": {"type": "STOP_MARKET", "trigger_price": "57000.00"}}),
    )
    .await;
    let second = ack["linked_order_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!second.is_empty(), "{ack}");
    let first = ack["order_id"].as_str().unwrap_or_default();
    let leg = record(&x, &key, &ack, "order_id").await;
    assert_eq!(leg["linked_order_id"], second.as_str(), "{leg}");
    let (s, body) = x.delete(&format!("/v1/account/orders/{first}"), &key).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let (_, leg) = x
        .get(&format!("/v1/account/orders/{second}"), Some(&key))
        .await;
    assert_eq!(leg["order"]["status"], "CANCELLED", "{leg}");
    let bad = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
        "price": "50000.00", "amount": "0.01", "take_profit_price": "48000.00",
        "stop_loss_price": "49000.00"});
    let (s, body) = x.post("/v1/account/orders", &key, bad).await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::BAD_REQUEST, "INVALID_CONTINGENT_ORDER")
    );
    x.stop().await;
}
