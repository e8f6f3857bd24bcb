//! The private `ACCOUNT_HISTORY` channel over real sockets: authentication first, the
//! snapshots of the key's account (open orders, ended orders, balances) as REST shows
//! them, then one `ACCOUNT_UPDATE` per change of its orders with the balances that moved,
//! each checked against REST (an order's terms beyond the spec too: display, linked leg);
//! another account's updates never reach the session.

use crate::common;

use common::Exchange;
use common::ws::{Socket, connect, exchange, next, send};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// `(available, locked)` of one currency as REST shows it.
async fn rest_balance(x: &Exchange, key: &str, currency: &str) -> (String, String) {
    let (status, v) = x.get("/v1/account/balances", Some(key)).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let list = v["balances"].as_array().expect("balances");
    let b = list
        .iter()
        .find(|b| b["currency_code"] == currency)
        .expect("the currency");
    let text = |k: &str| b[k].as_str().expect("text").to_owned();
    (text("available"), text("locked"))
}

fn moved(update: &Value, key: &str) -> (String, String) {
    let m = &update[key];
    let text = |k: &str| {
        m[k].as_str()
            .unwrap_or_else(|| panic!("{key}.{k}: {update}"))
    };
    (
        text("new_available").to_owned(),
        text("new_locked").to_owned(),
    )
}

/// The next `ACCOUNT_UPDATE` (other frames, such as heartbeats, are not expected).
async fn next_update(ws: &mut Socket, account: &str) -> Value {
    let frame = next(ws).await;
    assert_eq!(frame["type"], "ACCOUNT_UPDATE", "{frame}");
    assert_eq!(
        frame["account_id"], account,
        "only the key's account: {frame}"
    );
    assert_eq!(frame["update"]["account_id"], account);
    frame["update"].clone()
}

async fn subscribe(ws: &mut Socket, name: &str) -> Value {
    send(
        ws,
        json!({"type": "SUBSCRIBE", "channels": [{"name": name}]}),
    )
    .await;
    next(ws).await
}

/// Reads the three snapshots a new `ACCOUNT_HISTORY` subscriber gets, in their order.
async fn history_snapshots(ws: &mut Socket) {
    for kind in [
        "ACTIVE_ORDERS_SNAPSHOT",
        "INACTIVE_ORDERS_SNAPSHOT",
        "BALANCES_SNAPSHOT",
    ] {
        assert_eq!(next(ws).await["type"], kind);
    }
}

/// A socket authenticated with `key`.
async fn authenticated(x: &Exchange, key: &str) -> Socket {
    let mut ws = connect(x, "/").await;
    send(&mut ws, json!({"type": "AUTHENTICATE", "api_token": key})).await;
    assert_eq!(next(&mut ws).await["type"], "AUTHENTICATED");
    ws
}

/// A socket authenticated with `key` and subscribed to ACCOUNT_HISTORY (its snapshots
/// not read yet).
async fn follow_history(x: &Exchange, key: &str) -> Socket {
    let mut ws = authenticated(x, key).await;
    assert_eq!(
        subscribe(&mut ws, "ACCOUNT_HISTORY").await["type"],
        "SUBSCRIPTIONS"
    );
    ws
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_channel_needs_authentication_first() {
    let x = exchange().await;
    let mut ws = connect(&x, "/").await;
    for name in ["ACCOUNT_HISTORY", "ORDERS", "ORDERS_SNAPSHOT"] {
        let v = subscribe(&mut ws, name).await;
        assert_eq!(v["error"], "MISSING_AUTHENTICATION", "{v}");
        assert_eq!(v["channel_name"], name);
    }
    send(
        &mut ws,
        json!({"type": "AUTHENTICATE", "api_token": "not-a-key"}),
    )
    .await;
    assert_eq!(next(&mut ws).await["error"], "AUTHENTICATION_FAILED");
    let v = subscribe(&mut ws, "ACCOUNT_HISTORY").await;
    assert_eq!(v["error"], "MISSING_AUTHENTICATION", "{v}");
    x.stop().await;
}

/// An admin key is not a trading key (REST refuses it on the public listener with 403):
/// the stream's AUTHENTICATE took it, and its session then read the key's account
/// history on the public listener.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_key_does_not_authenticate_a_stream() {
    let x = exchange().await;
    let (status, _) = x.get("/v1/account/balances", Some(&x.root.key)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "REST refuses it");
    let mut ws = connect(&x, "/").await;
    send(
        &mut ws,
        json!({"type": "AUTHENTICATE", "api_token": x.root.key}),
    )
    .await;
    assert_eq!(next(&mut ws).await["error"], "AUTHENTICATION_FAILED");
    let v = subscribe(&mut ws, "ACCOUNT_HISTORY").await;
    assert_eq!(v["error"], "MISSING_AUTHENTICATION", "{v}");
    x.stop().await;
}

/// The older protocol logs in with the channel: `api_token` in the `ACCOUNT_HISTORY`
/// channel of a SUBSCRIBE and no AUTHENTICATE (`bitpanda-aio` subscribes so). The token
/// was taken for an unknown key of the channel and the answer was
/// `MISSING_AUTHENTICATION`, which such a client takes as fatal. It now authenticates the
/// session as AUTHENTICATE would, with the same refusals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_given_with_the_channel_authenticates_the_subscription() {
    let x = exchange().await;
    let (other, _) = x.new_holder(&["TRADE"]).await;
    let history = |token: &str| json!({"name": "ACCOUNT_HISTORY", "api_token": token});
    let mut ws = connect(&x, "/").await;
    let two_keys = json!([history(&x.trader.key), {"name": "ORDERS", "api_token": other}]);
    for (channels, code) in [
        (json!([history("not-a-key")]), "AUTHENTICATION_FAILED"),
        (json!([history(&x.root.key)]), "AUTHENTICATION_FAILED"),
        (two_keys, "INVALID_MESSAGE_FORMAT"),
    ] {
        send(&mut ws, json!({"type": "SUBSCRIBE", "channels": channels})).await;
        assert_eq!(next(&mut ws).await["error"], code);
    }
    let v = subscribe(&mut ws, "ACCOUNT_HISTORY").await;
    assert_eq!(
        v["error"], "MISSING_AUTHENTICATION",
        "nothing was taken: {v}"
    );

    // Another market than the order below, so that its update is the only frame after.
    let book = json!({"name": "ORDER_BOOK", "instrument_codes": ["ETH_EUR"]});
    let channels = json!([history(&x.trader.key), book]);
    send(&mut ws, json!({"type": "SUBSCRIBE", "channels": channels})).await;
    assert_eq!(next(&mut ws).await["type"], "SUBSCRIPTIONS");
    let account = x.trader.account_id.clone();
    let active = next(&mut ws).await;
    assert_eq!(active["type"], "ACTIVE_ORDERS_SNAPSHOT", "{active}");
    assert_eq!(active["account_id"], account.as_str());
    for kind in [
        "INACTIVE_ORDERS_SNAPSHOT",
        "BALANCES_SNAPSHOT",
        "ORDER_BOOK_SNAPSHOT",
    ] {
        assert_eq!(next(&mut ws).await["type"], kind);
    }
    let (status, placed) = (x.order(&x.trader.key, "BUY", "100.00", "0.1", json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{placed}");
    let update = next_update(&mut ws, &account).await;
    assert_eq!(update["type"], "ORDER_CREATED", "{update}");
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn account_history_snapshots_then_updates_match_rest() {
    let x = exchange().await;
    let key = x.trader.key.clone();
    let account = x.trader.account_id.clone();
    // Resting before the subscription: it is in the active snapshot.
    let (status, early) = x.order(&key, "BUY", "100.00", "0.1", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{early}");

    let mut ws = follow_history(&x, &key).await;
    check_the_history_snapshots(&x, &key, &mut ws, &early).await;

    // A bid inside the spread: created, with what it locked.
    let (_, top) = x.get("/v1/order-book/BTC_EUR?level=1", None).await;
    let bid: f64 = top["bids"][0]["price"]
        .as_str()
        .and_then(|p| p.parse().ok())
        .expect("bid");
    let price = format!("{:.2}", bid + 0.01);
    let (status, placed) = x.order(&key, "BUY", &price, "0.2", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{placed}");
    let created = next_update(&mut ws, &account).await;
    assert_eq!(created["type"], "ORDER_CREATED", "{created}");
    assert_eq!(created["order"]["order_id"], placed["order_id"]);
    assert_eq!(created["order"]["status"], "OPEN");
    assert_eq!(
        moved(&created, "locked"),
        rest_balance(&x, &key, "EUR").await
    );

    // Another account sells into it: the fill, what it spent and what it received.
    let (other, _) = x.new_holder(&["TRADE"]).await;
    let (status, v) = x.order(&other, "SELL", &price, "0.05", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let settled = next_update(&mut ws, &account).await;
    assert_eq!(settled["type"], "TRADE_SETTLED", "{settled}");
    assert_eq!(settled["trade"]["order_id"], placed["order_id"]);
    assert_eq!(settled["trade"]["price"], price.as_str());
    assert_eq!(settled["trade"]["amount"], "0.05000");
    assert_eq!(settled["fee"]["fee_type"], "MAKER");
    assert_eq!(settled["order"]["filled_amount"], "0.05000");
    assert_eq!(
        moved(&settled, "spent"),
        rest_balance(&x, &key, "EUR").await
    );
    assert_eq!(
        moved(&settled, "credited"),
        rest_balance(&x, &key, "BTC").await
    );
    let (_, trades) = x.get("/v1/account/trades", Some(&key)).await;
    assert_eq!(
        trades["trade_history"][0]["trade"]["trade_id"], settled["trade"]["trade_id"],
        "{trades}"
    );

    // Cancelled: closed, with what it released.
    let id = placed["order_id"].as_str().expect("id");
    let (status, _) = x.delete(&format!("/v1/account/orders/{id}"), &key).await;
    assert!(status.is_success());
    let closed = next_update(&mut ws, &account).await;
    assert_eq!(closed["type"], "ORDER_CLOSED", "{closed}");
    assert_eq!(closed["order_id"], placed["order_id"]);
    assert_eq!(closed["filled_amount"], "0.05000");
    assert_eq!(
        moved(&closed, "unlocked"),
        rest_balance(&x, &key, "EUR").await
    );

    // A post-only order that would take is rejected, with its reason.
    let (_, top) = x.get("/v1/order-book/BTC_EUR?level=1", None).await;
    let ask = top["asks"][0]["price"].as_str().expect("ask").to_owned();
    let post_only = json!({"time_in_force": "POST_ONLY"});
    x.order(&key, "BUY", &ask, "0.01", post_only).await;
    let created = next_update(&mut ws, &account).await;
    assert_eq!(created["type"], "ORDER_CREATED", "{created}");
    let rejected = next_update(&mut ws, &account).await;
    assert_eq!(rejected["type"], "ORDER_REJECTED", "{rejected}");
    assert_eq!(rejected["reason"], "POST_ONLY_WOULD_TAKE");
    assert_eq!(rejected["order_id"], created["order_id"]);
    x.stop().await;
}

/// The snapshots a new subscription starts with: the active orders (with `early`, resting
/// before it), the inactive ones, and balances as REST reads them.
async fn check_the_history_snapshots(x: &Exchange, key: &str, ws: &mut Socket, early: &Value) {
    let active = next(ws).await;
    assert_eq!(active["type"], "ACTIVE_ORDERS_SNAPSHOT", "{active}");
    let ids: Vec<&str> = (active["orders"].as_array().expect("orders").iter())
        .filter_map(|o| o["order"]["order_id"].as_str())
        .collect();
    assert!(
        ids.contains(&early["order_id"].as_str().expect("id")),
        "{active}"
    );
    assert_eq!(next(ws).await["type"], "INACTIVE_ORDERS_SNAPSHOT");
    let balances = next(ws).await;
    assert_eq!(balances["type"], "BALANCES_SNAPSHOT", "{balances}");
    let eur = (balances["balances"].as_array().expect("balances").iter())
        .find(|b| b["currency_code"] == "EUR")
        .expect("EUR");
    let rest = rest_balance(x, key, "EUR").await;
    assert_eq!(
        (eur["available"].as_str(), eur["locked"].as_str()),
        (Some(&*rest.0), Some(&*rest.1))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_orders_aliases_serve_the_same_snapshots_and_updates() {
    let x = exchange().await;
    let (key, account) = (x.trader.key.clone(), x.trader.account_id.clone());
    for alias in ["ORDERS", "ORDERS_SNAPSHOT"] {
        let mut ws = authenticated(&x, &key).await;
        let answer = subscribe(&mut ws, alias).await;
        assert_eq!(answer["type"], "SUBSCRIPTIONS", "{answer}");
        history_snapshots(&mut ws).await;
        let (status, placed) = x.order(&key, "BUY", "100.00", "0.1", json!({})).await;
        assert_eq!(status, StatusCode::OK, "{placed}");
        let created = next_update(&mut ws, &account).await;
        assert_eq!(created["type"], "ORDER_CREATED", "{created}");
        assert_eq!(created["order"]["order_id"], placed["order_id"]);
        // Unsubscribed: the account's updates stop.
        send(&mut ws, json!({"type": "UNSUBSCRIBE", "channels": [alias]})).await;
        assert_eq!(next(&mut ws).await["type"], "UNSUBSCRIBED");
        x.order(&key, "BUY", "100.00", "0.1", json!({})).await;
        send(&mut ws, json!({"type": "UNSUBSCRIBE", "channels": []})).await;
        let after = next(&mut ws).await;
        assert_eq!(
            after["type"], "UNSUBSCRIBED",
            "no update in between: {after}"
        );
    }
    x.stop().await;
}

/// A key of another account starts the subscribed history again from that account's
/// snapshots: the session had gone on with the first account's snapshots and the second
/// account's updates, a mix no client can tell apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authenticating_again_follows_the_new_keys_account() {
    let x = exchange().await;
    let (status, mine) = x
        .order(&x.trader.key, "BUY", "99.00", "0.2", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{mine}");
    let mut ws = authenticated(&x, &x.trader.key).await;
    assert_eq!(
        subscribe(&mut ws, "ACCOUNT_HISTORY").await["type"],
        "SUBSCRIPTIONS"
    );
    history_snapshots(&mut ws).await;
    send(
        &mut ws,
        json!({"type": "AUTHENTICATE", "api_token": x.sub.key}),
    )
    .await;
    assert_eq!(next(&mut ws).await["type"], "AUTHENTICATED");
    for kind in [
        "ACTIVE_ORDERS_SNAPSHOT",
        "INACTIVE_ORDERS_SNAPSHOT",
        "BALANCES_SNAPSHOT",
    ] {
        let snapshot = next(&mut ws).await;
        assert_eq!(snapshot["type"], kind, "{snapshot}");
        assert_eq!(
            snapshot["account_id"],
            x.sub.account_id.as_str(),
            "{snapshot}"
        );
        if kind == "ACTIVE_ORDERS_SNAPSHOT" {
            assert_eq!(
                snapshot["orders"],
                json!([]),
                "not the first account's order"
            );
        }
    }
    let (status, placed) = x.order(&x.sub.key, "BUY", "100.00", "0.1", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{placed}");
    let created = next_update(&mut ws, &x.sub.account_id).await;
    assert_eq!(created["type"], "ORDER_CREATED", "{created}");
    assert_eq!(created["order"]["order_id"], placed["order_id"]);
    x.stop().await;
}

/// The order as REST's record shows it.
async fn rest_order(x: &Exchange, key: &str, id: &Value) -> Value {
    let id = id.as_str().expect("an order id");
    let (status, v) = x.get(&format!("/v1/account/orders/{id}"), Some(key)).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    v["order"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_created_shows_the_terms_rest_shows() {
    let x = exchange().await;
    let (key, account) = (x.trader.key.clone(), x.trader.account_id.clone());
    let mut ws = follow_history(&x, &key).await;
    for _ in 0..3 {
        next(&mut ws).await;
    }
    let iceberg = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
        "price": "100.00", "amount": "0.1", "display_amount": "0.02"});
    let (status, placed) = x.post("/v1/account/orders", &key, iceberg).await;
    assert_eq!(status, StatusCode::OK, "{placed}");
    let created = next_update(&mut ws, &account).await;
    assert_eq!(created["type"], "ORDER_CREATED", "{created}");
    let rest = rest_order(&x, &key, &placed["order_id"]).await;
    assert_eq!(rest["display_amount"], "0.02000", "{rest}");
    assert_eq!(created["order"]["display_amount"], rest["display_amount"]);

    let pair = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
        "price": "150.00", "amount": "0.1", "oco_order": {"type": "LIMIT", "price": "120.00"}});
    let (status, placed) = x.post("/v1/account/orders", &key, pair).await;
    assert_eq!(status, StatusCode::OK, "{placed}");
    let legs = [
        placed["order_id"].clone(),
        placed["linked_order_id"].clone(),
    ];
    for (leg, peer) in [(&legs[0], &legs[1]), (&legs[1], &legs[0])] {
        let created = next_update(&mut ws, &account).await;
        assert_eq!(created["type"], "ORDER_CREATED", "{created}");
        assert_eq!(created["order"]["order_id"], *leg, "{created}");
        let rest = rest_order(&x, &key, leg).await;
        assert_eq!(rest["linked_order_id"], *peer, "{rest}");
        assert_eq!(created["order"]["linked_order_id"], *peer, "{created}");
    }
    x.stop().await;
}

/// The rate limit (per key and holder, a minute) of the two tests below.
const LIMIT: u32 = 3;

/// An exchange whose rate limit is `limit` a minute.
async fn limited_to(limit: u32) -> Exchange {
    let mut settings = common::settings(common::data_dir());
    settings.rate_limit_per_minute = limit;
    Exchange::with(settings).await
}

/// An `ACCOUNT_HISTORY` snapshot reads every open order and the last day's ended ones
/// with all their trades on the market stage every reader shares (135 KB a snapshot for an
/// account with 300 orders): each counts against the holder's rate limit, as REST's read
/// of an order with its trades does. It was not counted: one socket took 627 a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn account_snapshots_count_against_the_holders_rate_limit() {
    let x = limited_to(LIMIT).await;
    let mut ws = authenticated(&x, &x.trader.key).await;
    let unsubscribe = json!({"type": "UNSUBSCRIBE", "channels": ["ACCOUNT_HISTORY"]});
    // A minute may turn once while this runs, so the window may start afresh once.
    let mut refused = None;
    for attempt in 0..2 * LIMIT + 2 {
        let answer = subscribe(&mut ws, "ACCOUNT_HISTORY").await;
        if answer.get("error").is_some() {
            refused = Some((attempt, answer));
            break;
        }
        assert_eq!(answer["type"], "SUBSCRIPTIONS", "{answer}");
        history_snapshots(&mut ws).await;
        send(&mut ws, unsubscribe.clone()).await;
        assert_eq!(next(&mut ws).await["type"], "UNSUBSCRIBED");
    }
    let (attempt, answer) = refused.expect("refused within twice the limit");
    assert_eq!(answer["error"], "RATELIMIT", "{answer}");
    assert!(attempt >= LIMIT - 1, "{attempt} snapshots were admitted");
    x.stop().await;
}

/// Authenticating again with a key of another account reads that account's snapshots,
/// so it counts against the holder's window as subscribing does: flipping between two
/// accounts' keys cannot read snapshots past the limit. A refused key is not taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_accounts_counts_against_the_holders_rate_limit() {
    let x = limited_to(LIMIT).await;
    let mut ws = follow_history(&x, &x.trader.key).await;
    history_snapshots(&mut ws).await;
    let keys = [&x.sub, &x.trader];
    let mut refused = None;
    for attempt in 0..2 * LIMIT + 2 {
        let key = keys[attempt as usize % 2];
        send(
            &mut ws,
            json!({"type": "AUTHENTICATE", "api_token": key.key}),
        )
        .await;
        let answer = next(&mut ws).await;
        if answer.get("error").is_some() {
            refused = Some((attempt, answer, key));
            break;
        }
        assert_eq!(answer["type"], "AUTHENTICATED", "{answer}");
        history_snapshots(&mut ws).await;
    }
    let (attempt, answer, key) = refused.expect("refused within twice the limit");
    assert_eq!(answer["error"], "RATELIMIT", "{answer}");
    assert!(attempt >= LIMIT - 2, "{attempt} switches were admitted");
    // The session still follows the account it had: the refused key's orders stay out.
    let other = keys[(attempt as usize + 1) % 2];
    let (status, _) = x.order(&key.key, "BUY", "100.00", "0.1", json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, placed) = x.order(&other.key, "BUY", "101.00", "0.1", json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let created = next_update(&mut ws, &other.account_id).await;
    assert_eq!(created["order"]["order_id"], placed["order_id"]);
    x.stop().await;
}
