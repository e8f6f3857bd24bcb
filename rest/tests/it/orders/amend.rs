//! Amends by order id or client id.

use super::*;

/// An open order could not be amended over REST at all (the engine, C and Python could):
/// `PUT` on the order or its client id was 405. It now amends as the engine does: a
/// smaller amount keeps the order's place, a new price moves it; what the order then is
/// shows in the answer, the order's record and the book; the checks are REST's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_order_is_amended_by_id_or_client_id() {
    let x = Exchange::start().await;
    let k = &x.trader.key;
    let client_id = "4d2f8e9a-7b41-4c55-9e2a-0f6b1c3d5e70";
    let (s, placed) = (x.order(k, "BUY", "100.00", "0.5", json!({"client_id": client_id}))).await;
    assert_eq!(s, StatusCode::OK, "{placed}");
    let id = placed["order_id"].as_str().expect("id").to_owned();
    let put = async |path: String, key: &str, body: Value| {
        let url = format!("{}{path}", x.base);
        x.call(reqwest::Method::PUT, &url, Some(key), Some(body))
            .await
    };
    let level = |book: &Value, price: &str| {
        (book["bids"].as_array().expect("bids").iter())
            .find(|l| l["price"] == price)
            .map(|l| l["amount"].clone())
    };

    let (s, ack) = put(
        format!("/v1/account/orders/{id}"),
        k,
        json!({"amount": "0.2"}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{ack}");
    assert_eq!(
        (ack["amount"].as_str(), ack["price"].as_str()),
        (Some("0.20000"), Some("100.00"))
    );
    let (_, book) = x.get("/v1/order-book/BTC_EUR?level=2", None).await;
    assert_eq!(level(&book, "100.00"), Some(json!("0.20000")), "{book}");

    let path = format!("/v1/account/orders/client/{client_id}");
    let (s, ack) = put(path.clone(), k, json!({"price": "101.00"})).await;
    assert_eq!(s, StatusCode::OK, "{ack}");
    assert_eq!(
        (ack["order_id"].as_str(), ack["price"].as_str()),
        (Some(&*id), Some("101.00"))
    );
    let (_, record) = x.get(&format!("/v1/account/orders/{id}"), Some(k)).await;
    assert_eq!(record["order"]["price"], "101.00", "{record}");
    let (_, book) = x.get("/v1/order-book/BTC_EUR?level=2", None).await;
    assert_eq!(level(&book, "101.00"), Some(json!("0.20000")), "{book}");
    assert_eq!(level(&book, "100.00"), None, "{book}");

    let (other, _) = x.new_holder(&["TRADE"]).await;
    let order_path = format!("/v1/account/orders/{id}");
    for (key, body, status, error) in refused_amends(k, &other, &x.reader.key) {
        let (s, v) = put(order_path.clone(), key, body.clone()).await;
        assert_eq!((s, code(&v)), (status, error), "{body}");
    }
    let (_, record) = x.get(&order_path, Some(k)).await;
    assert_eq!(
        (
            record["order"]["amount"].as_str(),
            record["order"]["price"].as_str()
        ),
        (Some("0.20000"), Some("101.00")),
        "a refused amend changes nothing"
    );
    let unknown = "/v1/account/orders/client/4d2f8e9a-7b41-4c55-9e2a-0f6b1c3d5e71".to_owned();
    let (s, v) = put(unknown, k, json!({"amount": "0.1"})).await;
    assert_eq!((s, code(&v)), (StatusCode::NOT_FOUND, "ORDER_NOT_FOUND"));
    x.stop().await;
}

/// Amends refused, each with its status and code: of the `trader`'s order, by the trader
/// (bad bodies), by `other` holder (not found) and by a `reader` key (no permission).
fn refused_amends<'a>(
    trader: &'a str,
    other: &'a str,
    reader: &'a str,
) -> Vec<(&'a str, Value, StatusCode, &'static str)> {
    vec![
        (trader, json!({}), StatusCode::BAD_REQUEST, "INVALID_AMEND"),
        (
            trader,
            json!({"amount": "-1"}),
            StatusCode::BAD_REQUEST,
            "NEGATIVE_AMOUNT",
        ),
        // A field no amend changes is refused, not ignored while the rest applies.
        (
            trader,
            json!({"amount": "0.1", "side": "SELL"}),
            StatusCode::BAD_REQUEST,
            "INVALID_AMEND",
        ),
        (
            trader,
            json!({"price": "102.00", "instrument_code": "ETH_EUR"}),
            StatusCode::BAD_REQUEST,
            "INVALID_AMEND",
        ),
        (
            trader,
            json!({"price": "1.001"}),
            StatusCode::BAD_REQUEST,
            "BAD_PRICE_PRECISION",
        ),
        (
            other,
            json!({"amount": "0.1"}),
            StatusCode::NOT_FOUND,
            "ORDER_NOT_FOUND",
        ),
        (
            reader,
            json!({"amount": "0.1"}),
            StatusCode::FORBIDDEN,
            "MISSING_PERMISSION",
        ),
    ]
}
