//! The private `TRADING` channel over real sockets: order entry (`CREATE_ORDER`,
//! `UPDATE_ORDER`, `CANCEL_ORDER`) answers exactly as REST does, errors included, and the order's events
//! (`TRACKED`, `BOOKED`, `FILL`, `DONE`) follow with the order as REST then shows it.

use crate::common;

use common::Exchange;
use common::ws::{Socket, connect, exchange, next, send};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn trading(x: &Exchange, key: &str) -> Socket {
    let mut ws = connect(x, "/").await;
    send(&mut ws, json!({"type": "AUTHENTICATE", "api_token": key})).await;
    assert_eq!(next(&mut ws).await["type"], "AUTHENTICATED");
    send(
        &mut ws,
        json!({"type": "SUBSCRIBE", "channels": [{"name": "TRADING"}]}),
    )
    .await;
    assert_eq!(next(&mut ws).await["type"], "SUBSCRIPTIONS");
    ws
}

async fn create(ws: &mut Socket, order: Value) -> Value {
    send(ws, json!({"type": "CREATE_ORDER", "order": order})).await;
    next(ws).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_entry_refuses_what_rest_refuses_with_the_same_code() {
    let x = exchange().await;
    let mut anonymous = connect(&x, "/").await;
    let order = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
        "amount": "0.1", "price": "100.00"});
    let v = create(&mut anonymous, order.clone()).await;
    assert_eq!(v["error"], "MISSING_AUTHENTICATION", "{v}");
    let mut reader = trading(&x, &x.reader.key).await;
    assert_eq!(
        create(&mut reader, order.clone()).await["error"],
        "MISSING_PERMISSION"
    );
    let mut ws = trading(&x, &x.trader.key).await;
    let bad = [
        json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY", "amount": "abc", "price": "100"}),
        json!({"instrument_code": "DOGE_EUR", "type": "LIMIT", "side": "BUY", "amount": "1", "price": "100"}),
        json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY", "amount": "0.1"}),
        json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "UP", "amount": "0.1", "price": "100"}),
        json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY", "amount": "0.1", "price": "100.001"}),
        json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY", "amount": "100000", "price": "100000"}),
        json!([1, 2]),
    ];
    for body in bad {
        let (status, rest) = x
            .post("/v1/account/orders", &x.trader.key, body.clone())
            .await;
        assert!(status.is_client_error(), "{body}: {rest}");
        let socket = create(&mut ws, body.clone()).await;
        assert_eq!(socket["error"], rest["error"], "{body}");
        assert_eq!(socket["channel_name"], "TRADING");
    }
    send(
        &mut ws,
        json!({"type": "CANCEL_ORDER", "order_id": "not-an-id"}),
    )
    .await;
    let (_, rest) = x
        .delete("/v1/account/orders/not-an-id", &x.trader.key)
        .await;
    let refused = next(&mut ws).await;
    assert_eq!(refused["error"], rest["error"]);
    assert_eq!(
        refused["order_id"], "not-an-id",
        "the id named is echoed: {refused}"
    );
    // A refusal names the client id the order carried, so a client with several orders
    // in flight knows which one it was.
    let client_id = "7b1f6c1e-2d1a-4c39-9b3c-1f0f0c1d2e3f";
    let unfunded = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
        "amount": "100000", "price": "100000", "client_id": client_id});
    let refused = create(&mut ws, unfunded).await;
    assert_eq!(refused["error"], "INSUFFICIENT_FUNDS", "{refused}");
    assert_eq!(refused["client_id"], client_id, "{refused}");
    let refused = create(&mut ws, json!([1, 2])).await;
    assert!(
        refused.get("client_id").is_none(),
        "nothing named: {refused}"
    );
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_entered_on_the_socket_reports_each_step_as_rest_shows_it() {
    let x = exchange().await;
    let mut ws = trading(&x, &x.trader.key).await;
    let (_, top) = x.get("/v1/order-book/BTC_EUR?level=1", None).await;
    let bid: f64 = top["bids"][0]["price"]
        .as_str()
        .and_then(|p| p.parse().ok())
        .expect("bid");
    let price = format!("{:.2}", bid + 0.01);
    let client_id = "3c9a1b2e-4d5f-4a6b-8c7d-9e0f1a2b3c4d";
    let ack = create(
        &mut ws,
        json!({"instrument_code": "BTC_EUR", "type": "LIMIT",
        "side": "BUY", "amount": "0.2", "price": price, "client_id": client_id}),
    )
    .await;
    // The acknowledgement and the events arrive in either order; sort them by kind.
    let mut frames = vec![ack, next(&mut ws).await, next(&mut ws).await];
    frames.sort_by_key(|f| f["type"].as_str().map(str::to_owned));
    let [booked, created, tracked] = frames.try_into().expect("three frames");
    assert_eq!(created["type"], "CREATE_ORDER_ACCEPTED", "{created}");
    let id = created["order"]["order_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let (status, rest) = x
        .get(&format!("/v1/account/orders/{id}"), Some(&x.trader.key))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(created["order"]["client_id"], rest["order"]["client_id"]);
    for (frame, kind) in [(&tracked, "TRACKED"), (&booked, "BOOKED")] {
        assert_eq!(frame["type"], kind, "{frame}");
        assert_eq!(frame["order_id"], id.as_str());
        assert_eq!(frame["client_id"], client_id);
        assert_eq!(
            (frame["status"].as_str(), frame["remaining"].as_str()),
            (Some("OPEN"), Some("0.20000"))
        );
    }

    // Another holder sells into it: a fill, as REST's trade shows it.
    let (other, _) = x.new_holder(&["TRADE"]).await;
    let (status, v) = x.order(&other, "SELL", &price, "0.05", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let fill = next(&mut ws).await;
    assert_eq!(fill["type"], "FILL", "{fill}");
    assert_eq!(
        (
            fill["matched_amount"].as_str(),
            fill["matched_price"].as_str()
        ),
        (Some("0.05000"), Some(&*price))
    );
    assert_eq!(
        (fill["remaining"].as_str(), fill["matched_as"].as_str()),
        (Some("0.15000"), Some("MAKER"))
    );
    let (_, trades) = x.get("/v1/account/trades", Some(&x.trader.key)).await;
    let trade = &trades["trade_history"][0];
    assert_eq!(fill["trade_id"], trade["trade"]["trade_id"]);
    assert_eq!(fill["fee"], trade["fee"]["fee_amount"]);

    amend_on_the_socket(&x, &mut ws, &id).await;

    // Cancelled by its client id: acknowledged, then done.
    send(
        &mut ws,
        json!({"type": "CANCEL_ORDER", "client_id": client_id}),
    )
    .await;
    let mut frames = vec![next(&mut ws).await, next(&mut ws).await];
    frames.sort_by_key(|f| f["type"].as_str().map(str::to_owned));
    let [cancelled, done] = frames.try_into().expect("two frames");
    assert_eq!(cancelled["type"], "CANCEL_ORDER_ACCEPTED", "{cancelled}");
    assert_eq!(cancelled["order"]["order_id"], id.as_str());
    assert_eq!(done["type"], "DONE", "{done}");
    let (_, rest) = x
        .get(&format!("/v1/account/orders/{id}"), Some(&x.trader.key))
        .await;
    assert_eq!(done["status"], rest["order"]["status"]);
    assert_eq!(done["filled_amount"], "0.05000");
    x.stop().await;
}

/// Amended down by its id (`UPDATE_ORDER`, as REST's PUT; an unknown message before):
/// acknowledged with its new amount and an `UPDATE` with what is left, as REST shows it;
/// without an id, or changing its side, refused.
async fn amend_on_the_socket(x: &Exchange, ws: &mut Socket, id: &str) {
    let update = json!({"type": "UPDATE_ORDER", "order": {"order_id": id, "amount": "0.1"}});
    send(ws, update).await;
    let mut frames = vec![next(ws).await, next(ws).await];
    frames.sort_by_key(|f| f["type"].as_str().map(str::to_owned));
    let [updated, accepted] = frames.try_into().expect("two frames");
    assert_eq!(accepted["type"], "UPDATE_ORDER_ACCEPTED", "{accepted}");
    assert_eq!(accepted["order"]["amount"], "0.10000");
    assert_eq!(updated["type"], "UPDATE", "{updated}");
    assert_eq!(updated["remaining"], "0.05000");
    let (_, rest) = x
        .get(&format!("/v1/account/orders/{id}"), Some(&x.trader.key))
        .await;
    assert_eq!(rest["order"]["amount"], "0.10000");
    let unknown = json!({"type": "UPDATE_ORDER", "order": {"amount": "0.1"}});
    send(ws, unknown).await;
    assert_eq!(next(ws).await["error"], "INVALID_ORDER_ID");
    let sideways = json!({"type": "UPDATE_ORDER",
        "order": {"order_id": id, "amount": "0.09", "side": "SELL"}});
    send(ws, sideways).await;
    let refused = next(ws).await;
    assert_eq!(
        refused["error"], "INVALID_AMEND",
        "a side no amend changes: {refused}"
    );
    assert_eq!(refused["order_id"], id, "{refused}");
}

/// `CANCEL_ALL_ORDERS` (every open order, one market's, or the ids listed; clients of the
/// public exchange send it) was an unknown message. It now cancels as REST's cancel-all
/// does and answers the ids cancelled, each order's `DONE` following.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_all_orders_cancels_as_rest_does() {
    let x = exchange().await;
    let mut ws = trading(&x, &x.trader.key).await;
    let mut ids = Vec::new();
    for code in ["BTC_EUR", "BTC_EUR", "ETH_EUR"] {
        let order = json!({"instrument_code": code, "type": "LIMIT", "side": "BUY",
            "amount": "0.1", "price": "100.00"});
        let (status, v) = x.post("/v1/account/orders", &x.trader.key, order).await;
        assert_eq!(status, StatusCode::OK, "{v}");
        ids.push(v["order_id"].as_str().expect("id").to_owned());
        for _ in 0..2 {
            next(&mut ws).await; // TRACKED and BOOKED
        }
    }
    let both = json!({"type": "CANCEL_ALL_ORDERS", "instrument_code": "BTC_EUR",
        "order_ids": [ids[2]]});
    send(&mut ws, both).await;
    assert_eq!(next(&mut ws).await["error"], "INVALID_MESSAGE_FORMAT");
    // As REST's `ids`: text that is no id is refused, an id of no order names nothing.
    let garbage = json!({"type": "CANCEL_ALL_ORDERS", "order_ids": ["nope"]});
    send(&mut ws, garbage).await;
    assert_eq!(next(&mut ws).await["error"], "INVALID_ORDER_ID");
    let nothing = json!({"type": "CANCEL_ALL_ORDERS",
        "order_ids": ["00000000-0000-0000-0000-000000000000"]});
    send(&mut ws, nothing).await;
    assert_eq!(next(&mut ws).await["order_ids"], json!([]));
    for (message, cancelled) in [
        (
            json!({"type": "CANCEL_ALL_ORDERS", "instrument_code": "BTC_EUR"}),
            &ids[..2],
        ),
        (
            json!({"type": "CANCEL_ALL_ORDERS", "order_ids": [ids[2]]}),
            &ids[2..],
        ),
    ] {
        send(&mut ws, message.clone()).await;
        let mut frames = Vec::new();
        for _ in 0..=cancelled.len() {
            frames.push(next(&mut ws).await);
        }
        let answer = frames
            .iter()
            .find(|f| f["type"] == "CANCEL_ALL_ORDERS_ACCEPTED");
        let mut answered: Vec<String> = (answer.expect("the answer")["order_ids"].as_array())
            .expect("ids")
            .iter()
            .map(|id| id.as_str().expect("id").to_owned())
            .collect();
        answered.sort();
        let mut wanted = cancelled.to_vec();
        wanted.sort();
        assert_eq!(answered, wanted, "{message}");
        let done = frames.iter().filter(|f| f["type"] == "DONE").count();
        assert_eq!(done, cancelled.len(), "{frames:?}");
    }
    let (_, open) = x.get("/v1/account/orders", Some(&x.trader.key)).await;
    assert_eq!(open["order_history"], json!([]), "nothing left open");
    x.stop().await;
}
