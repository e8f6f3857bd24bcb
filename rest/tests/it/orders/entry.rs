//! Order entry refusals with the addendum's codes.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_refuses_bad_input_with_the_addendum_codes() {
    let x = Exchange::start().await;
    let k = &x.trader.key;
    check_the_acknowledgement(&x).await;
    let base = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
        "price": "50000.00", "amount": "0.01"});
    let with = |key: &str, value: Value| {
        let mut b = base.clone();
        match value {
            Value::Null => {
                b.as_object_mut().map(|m| m.remove(key));
            }
            v => b[key] = v,
        }
        b
    };
    let cases = bad_orders(with);
    for (body, status, want) in cases {
        let (s, reply) = x.post("/v1/account/orders", k, body.clone()).await;
        assert_eq!((s, code(&reply)), (status, want), "{body}");
    }
    check_refused_orders_in_history(&x).await;
    check_the_open_order_limit(&x).await;
    x.stop().await;
}

/// A post-only order's acknowledgement: every field, its status, type and time in force.
async fn check_the_acknowledgement(x: &Exchange) {
    let k = &x.trader.key;
    let (status, ack) = x
        .order(
            k,
            "BUY",
            "50000.00",
            "0.01",
            json!({"time_in_force": "POST_ONLY"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{ack}");
    for field in [
        "order_id",
        "client_id",
        "account_id",
        "instrument_code",
        "time",
        "side",
        "price",
        "amount",
        "type",
        "status",
        "time_in_force",
    ] {
        assert!(ack[field].is_string(), "{field}");
    }
    assert_eq!(ack["status"], "OPEN");
    assert_eq!(ack["type"], "LIMIT");
    assert_eq!(ack["time_in_force"], "POST_ONLY");
}

/// Orders each refused for one reason, with the status and code the addendum gives: the
/// variants `with` makes of a plain limit order (type, side and amount here; the rest in
/// [`more_bad_orders`]).
fn bad_orders(with: impl Fn(&str, Value) -> Value) -> Vec<(Value, StatusCode, &'static str)> {
    let mut cases = vec![
        (
            with("type", Value::Null),
            StatusCode::BAD_REQUEST,
            "MISSING_ORDER_TYPE",
        ),
        (
            with("type", json!("ICEBERG")),
            StatusCode::BAD_REQUEST,
            "INVALID_ORDER_TYPE",
        ),
        (
            with("side", Value::Null),
            StatusCode::BAD_REQUEST,
            "MISSING_SIDE",
        ),
        (
            with("side", json!("HOLD")),
            StatusCode::BAD_REQUEST,
            "INVALID_SIDE",
        ),
        (
            with("amount", Value::Null),
            StatusCode::BAD_REQUEST,
            "INVALID_AMOUNT",
        ),
        (
            with("amount", json!("-1")),
            StatusCode::BAD_REQUEST,
            "NEGATIVE_AMOUNT",
        ),
        (
            with("amount", json!("0.000001")),
            StatusCode::BAD_REQUEST,
            "BAD_AMOUNT_PRECISION",
        ),
        (
            with("amount", json!("1e3")),
            StatusCode::BAD_REQUEST,
            "INVALID_AMOUNT",
        ),
        (
            with("amount", json!("0")),
            StatusCode::BAD_REQUEST,
            "INVALID_AMOUNT",
        ),
    ];
    cases.extend(more_bad_orders(with));
    cases
}

/// Orders refused for their price, client id, time in force, size, market, funds or
/// the book.
fn more_bad_orders(with: impl Fn(&str, Value) -> Value) -> Vec<(Value, StatusCode, &'static str)> {
    vec![
        (
            with("price", Value::Null),
            StatusCode::BAD_REQUEST,
            "MISSING_PRICE",
        ),
        (
            with("price", json!("-5")),
            StatusCode::BAD_REQUEST,
            "NEGATIVE_PRICE",
        ),
        (
            with("price", json!("1.001")),
            StatusCode::BAD_REQUEST,
            "BAD_PRICE_PRECISION",
        ),
        (
            with("client_id", json!("abc")),
            StatusCode::BAD_REQUEST,
            "INVALID_CLIENT_UUID",
        ),
        (
            with("time_in_force", json!("FOREVER")),
            StatusCode::BAD_REQUEST,
            "INVALID_TIME_IN_FORCE",
        ),
        (
            with("amount", json!("0.0001")),
            StatusCode::BAD_REQUEST,
            "MIN_SIZE_NOT_SATISFIED",
        ),
        (
            with("instrument_code", json!("XYZ_EUR")),
            StatusCode::BAD_REQUEST,
            "INVALID_INSTRUMENT_CODE",
        ),
        (
            with("amount", json!("100")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "INSUFFICIENT_FUNDS",
        ),
        (
            with("time_in_force", json!("FILL_OR_KILL"))
                .as_object()
                .map(|m| {
                    let mut m = m.clone();
                    m.insert("price".into(), json!("60200.00"));
                    m.insert("amount".into(), json!("5"));
                    Value::Object(m)
                })
                .unwrap_or_default(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "INSUFFICIENT_LIQUIDITY",
        ),
        (
            json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
                "price": "60200.00", "amount": "0.01", "time_in_force": "POST_ONLY"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "POST_ONLY_WOULD_TAKE",
        ),
    ]
}

/// The fill-or-kill and the post-only order the book refused were accepted and ended at
/// once: history lists them with their rejection, open orders do not; a create without a
/// body is refused.
async fn check_refused_orders_in_history(x: &Exchange) {
    let k = &x.trader.key;
    let statuses = |page: &Value| order_fields(page, "status");
    let (_, rejected) = x
        .get(
            "/v1/account/orders?with_cancelled_and_rejected=true",
            Some(k),
        )
        .await;
    let rejected = statuses(&rejected);
    assert_eq!(
        rejected,
        vec!["FILLED_REJECTED", "FILLED_REJECTED", "OPEN"],
        "newest first, the open post-only order last"
    );
    let (_, open) = x.get("/v1/account/orders", Some(k)).await;
    assert_eq!(statuses(&open), vec!["OPEN"]);
    let (s, reply) = x
        .call(
            reqwest::Method::POST,
            &format!("{}/v1/account/orders", x.base),
            Some(k),
            None,
        )
        .await;
    assert_eq!(
        (s, code(&reply)),
        (StatusCode::BAD_REQUEST, "INVALID_REQUEST_BODY")
    );
}

/// 200 open orders per holder (spec section 8), counted across its accounts: one is open
/// already, 199 more are accepted, the next is refused.
async fn check_the_open_order_limit(x: &Exchange) {
    let k = &x.trader.key;
    let mut accepted = 0;
    let refusal = loop {
        let key = if accepted % 2 == 0 { k } else { &x.sub.key };
        let (s, reply) = x.order(key, "BUY", "50000.00", "0.01", json!({})).await;
        if s != StatusCode::OK {
            break (s, code(&reply).to_owned());
        }
        accepted += 1;
        assert!(accepted < 300, "no limit applied");
    };
    assert_eq!(accepted, 199);
    assert_eq!(
        refusal,
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "MAX_OPEN_ORDERS_EXCEEDED".to_owned()
        )
    );
}
