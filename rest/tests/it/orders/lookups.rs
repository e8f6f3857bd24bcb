//! Lookups, cancels and isolation between accounts.

use super::*;

/// The client id the orders of these tests carry.
const CLIENT_ID: &str = "123e4567-e89b-42d3-a456-426614174000";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lookups_cancels_and_isolation() {
    let x = Exchange::start().await;
    lookups_isolation_and_cancel(&x).await;
    let first = cancel_by_client_id(&x).await;
    cancel_all(&x, &first).await;
    x.stop().await;
}

/// An order found by id and client id with its fields, invisible to another holder and to
/// another account of the same holder, refused for a bad id, then cancelled once.
async fn lookups_isolation_and_cancel(x: &Exchange) {
    let k = &x.trader.key;
    let client_id = CLIENT_ID;
    let (_, ack) = x
        .order(
            k,
            "BUY",
            "59000.00",
            "0.01",
            json!({"client_id": client_id}),
        )
        .await;
    let id = ack["order_id"].as_str().expect("id").to_owned();
    assert_eq!(ack["client_id"], client_id);

    let (s, found) = x.get(&format!("/v1/account/orders/{id}"), Some(k)).await;
    assert_eq!(s, StatusCode::OK);
    let order = &found["order"];
    assert_eq!(order["status"], "OPEN");
    assert_eq!(order["order_type"], "API");
    assert!(order["time_nanos"].is_string() && order["time_last_updated_nanos"].is_string());
    assert_eq!(order["fee_currency"], "BTC");
    assert_eq!(found["trades"], json!([]));
    let (_, by_client) = x
        .get(&format!("/v1/account/orders/client/{client_id}"), Some(k))
        .await;
    assert_eq!(by_client["order"]["order_id"], id.as_str());

    // Another holder, and another account of the same holder, see nothing of it.
    let (other, _) = x.new_holder(&["TRADE"]).await;
    for key in [&other, &x.sub.key] {
        let (s, body) = x.get(&format!("/v1/account/orders/{id}"), Some(key)).await;
        assert_eq!((s, code(&body)), (StatusCode::NOT_FOUND, "ORDER_NOT_FOUND"));
        let (s, body) = x.delete(&format!("/v1/account/orders/{id}"), key).await;
        assert_eq!((s, code(&body)), (StatusCode::NOT_FOUND, "ORDER_NOT_FOUND"));
        let (s, body) = x
            .get(&format!("/v1/account/orders/client/{client_id}"), Some(key))
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{body}");
    }
    let (s, body) = x.get("/v1/account/orders/not-a-uuid", Some(k)).await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::BAD_REQUEST, "INVALID_ORDER_ID")
    );
    let (s, body) = x
        .delete(
            &format!("/v1/account/orders/{id}?instrument_code=ETH_EUR"),
            k,
        )
        .await;
    assert_eq!((s, code(&body)), (StatusCode::NOT_FOUND, "ORDER_NOT_FOUND"));

    let (s, cancelled) = x
        .delete(
            &format!("/v1/account/orders/{id}?instrument_code=BTC_EUR"),
            k,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{cancelled}");
    assert_eq!(cancelled["status"], "CANCELLED");
    assert!(cancelled.get("time_in_force").is_none());
    let (s, _) = x.delete(&format!("/v1/account/orders/{id}"), k).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "already cancelled");
    let (_, found) = x.get(&format!("/v1/account/orders/{id}"), Some(k)).await;
    assert_eq!(found["order"]["status"], "CANCELLED");
}

/// Cancel by client id takes the newest open order with it, then the older one stays
/// open (the older one is returned).
async fn cancel_by_client_id(x: &Exchange) -> Value {
    let (k, client_id) = (&x.trader.key, CLIENT_ID);
    let (_, first) = x
        .order(
            k,
            "BUY",
            "58000.00",
            "0.01",
            json!({"client_id": client_id}),
        )
        .await;
    let (_, second) = x
        .order(
            k,
            "BUY",
            "58100.00",
            "0.01",
            json!({"client_id": client_id}),
        )
        .await;
    let (s, c) = x
        .delete(&format!("/v1/account/orders/client/{client_id}"), k)
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(c["order_id"], second["order_id"]);
    let (_, still) = x
        .get(
            &format!(
                "/v1/account/orders/{}",
                first["order_id"].as_str().unwrap_or("")
            ),
            Some(k),
        )
        .await;
    assert_eq!(still["order"]["status"], "OPEN");
    let (s, body) = x
        .delete(
            "/v1/account/orders/client/223e4567-e89b-42d3-a456-426614174000",
            k,
        )
        .await;
    assert_eq!((s, code(&body)), (StatusCode::NOT_FOUND, "ORDER_NOT_FOUND"));
    first
}

/// Cancel all: by ids, by instrument, everything (the older client-id order `first` is
/// the last one open); the parameters are exclusive.
async fn cancel_all(x: &Exchange, first: &Value) {
    let k = &x.trader.key;
    let (_, eth) = x
        .post(
            "/v1/account/orders",
            k,
            json!({"instrument_code": "ETH_EUR", "type": "LIMIT",
            "side": "BUY", "price": "2000.00", "amount": "0.1"}),
        )
        .await;
    let (s, body) = x
        .delete("/v1/account/orders?instrument_code=BTC_EUR&ids=x", k)
        .await;
    assert_eq!((s, code(&body)), (StatusCode::BAD_REQUEST, "INVALID_QUERY"));
    let (s, ids) = x
        .delete("/v1/account/orders?instrument_code=ETH_EUR", k)
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(ids, json!([eth["order_id"]]));
    let (_, extra) = x.order(k, "BUY", "57000.00", "0.01", json!({})).await;
    let (_, ids) = x
        .delete(
            &format!(
                "/v1/account/orders?ids={}",
                extra["order_id"].as_str().unwrap_or("")
            ),
            k,
        )
        .await;
    assert_eq!(ids, json!([extra["order_id"]]));
    let (_, ids) = x.delete("/v1/account/orders", k).await;
    assert_eq!(ids, json!([first["order_id"]]));
    let (_, open) = x.get("/v1/account/orders", Some(k)).await;
    assert_eq!(open["order_history"], json!([]));
}
