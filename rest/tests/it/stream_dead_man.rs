//! `CANCEL_ALL_AFTER` over a real socket: the dead-man switch needs a trading key, is set
//! again by each message and off with 0 (or `DEACTIVATE_CANCEL_ALL_AFTER`), cancels every
//! open order of the account when it runs out (by itself, with no other command
//! arriving), and survives a restart; REST sets the same switch.

use crate::common;

use std::time::Duration;

use common::Exchange;
use common::ws::{Socket, connect, exchange, next, send};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn authenticated(x: &Exchange, key: &str) -> Socket {
    let mut ws = connect(x, "/").await;
    send(&mut ws, json!({"type": "AUTHENTICATE", "api_token": key})).await;
    assert_eq!(next(&mut ws).await["type"], "AUTHENTICATED");
    ws
}

async fn arm(ws: &mut Socket, timeout: Value) -> Value {
    send(ws, json!({"type": "CANCEL_ALL_AFTER", "timeout": timeout})).await;
    next(ws).await
}

/// The statuses of `ids` as REST shows them.
async fn statuses(http: &reqwest::Client, base: &str, key: &str, ids: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for id in ids {
        let v: Value = http
            .get(format!("{base}/v1/account/orders/{id}"))
            .bearer_auth(key)
            .send()
            .await
            .expect("sent")
            .json()
            .await
            .expect("JSON");
        out.push(
            v["order"]["status"]
                .as_str()
                .map_or_else(|| v.to_string(), str::to_owned),
        );
    }
    out
}

/// Waits (up to 10 s) until every order of `ids` is cancelled.
async fn until_cancelled(http: &reqwest::Client, base: &str, key: &str, ids: &[String]) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let now = statuses(http, base, key, ids).await;
        if now.iter().all(|s| s == "CANCELLED") {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "still {now:?}");
        // A polling interval, not a stand-in for the condition.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn two_bids(x: &Exchange) -> Vec<String> {
    let mut ids = Vec::new();
    for price in ["100.00", "101.00"] {
        let (status, v) = x.order(&x.trader.key, "BUY", price, "0.1", json!({})).await;
        assert_eq!(status, StatusCode::OK, "{v}");
        ids.push(v["order_id"].as_str().expect("id").to_owned());
    }
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_switch_needs_a_trading_key_and_a_number() {
    let x = exchange().await;
    let mut ws = connect(&x, "/").await;
    assert_eq!(
        arm(&mut ws, json!(1000)).await["error"],
        "MISSING_AUTHENTICATION"
    );
    let mut reader = authenticated(&x, &x.reader.key).await;
    assert_eq!(
        arm(&mut reader, json!(1000)).await["error"],
        "MISSING_PERMISSION"
    );
    let mut ws = authenticated(&x, &x.trader.key).await;
    for bad in [json!("soon"), json!(-5), json!(1.5), json!(u64::MAX)] {
        let v = arm(&mut ws, bad.clone()).await;
        assert_eq!(v["error"], "INVALID_MESSAGE_FORMAT", "{bad}: {v}");
    }
    // Beyond the engine's time horizon.
    let v = arm(&mut ws, json!(u64::MAX / 1_000_000)).await;
    assert_eq!(v["error"], "TIME_OUT_OF_RANGE", "{v}");
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setting_it_again_postpones_it_and_zero_turns_it_off() {
    let x = exchange().await;
    let ids = two_bids(&x).await;
    let mut ws = authenticated(&x, &x.trader.key).await;
    let set = arm(&mut ws, json!(60_000)).await;
    assert_eq!(set["type"], "AUTO_CANCELLATION_TIMER_SET", "{set}");
    assert_eq!(set["timeout"], 60_000);
    assert!(set["cancel_at"].is_string(), "{set}");
    x.admin("/admin/time/advance", json!({"seconds": "40"}))
        .await;
    arm(&mut ws, json!("60000")).await;
    // 80 s after the first message, 40 s after the second: still open.
    x.admin("/admin/time/advance", json!({"seconds": "40"}))
        .await;
    let open = statuses(&x.http, &x.base, &x.trader.key, &ids).await;
    assert_eq!(open, ["OPEN", "OPEN"]);
    let off = arm(&mut ws, json!(0)).await;
    assert_eq!(off["cancel_at"], Value::Null, "{off}");
    x.admin("/admin/time/advance", json!({"seconds": "3600"}))
        .await;
    let open = statuses(&x.http, &x.base, &x.trader.key, &ids).await;
    assert_eq!(open, ["OPEN", "OPEN"]);
    // Set, then turned off as the older clients do (`DEACTIVATE_CANCEL_ALL_AFTER`, an
    // unknown message before).
    arm(&mut ws, json!(60_000)).await;
    send(&mut ws, json!({"type": "DEACTIVATE_CANCEL_ALL_AFTER"})).await;
    let off = next(&mut ws).await;
    assert_eq!(
        (off["timeout"].clone(), off["cancel_at"].clone()),
        (json!(0), Value::Null)
    );
    x.admin("/admin/time/advance", json!({"seconds": "3600"}))
        .await;
    let open = statuses(&x.http, &x.base, &x.trader.key, &ids).await;
    assert_eq!(open, ["OPEN", "OPEN"]);
    // Set again, then left to run out: cancelled at the next command after it.
    arm(&mut ws, json!(60_000)).await;
    x.admin("/admin/time/advance", json!({"seconds": "61"}))
        .await;
    let closed = statuses(&x.http, &x.base, &x.trader.key, &ids).await;
    assert_eq!(closed, ["CANCELLED", "CANCELLED"]);
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn it_runs_out_by_itself_and_survives_a_restart() {
    let mut settings = common::settings(common::data_dir());
    settings.stream_heartbeat = Duration::from_millis(200);
    settings.rate_limit_per_minute = 1_000_000;
    let x = Exchange::with(settings.clone()).await;
    // Runs out with nobody sending anything: the deadline keeper moves time.
    let ids = two_bids(&x).await;
    let mut ws = authenticated(&x, &x.trader.key).await;
    arm(&mut ws, json!(300)).await;
    until_cancelled(&x.http, &x.base, &x.trader.key, &ids).await;

    // Set, then the exchange restarts before it runs out.
    let ids = two_bids(&x).await;
    arm(&mut ws, json!(5_000)).await;
    drop(ws);
    let (http, key) = (x.http.clone(), x.trader.key.clone());
    assert_eq!(statuses(&http, &x.base, &key, &ids).await, ["OPEN", "OPEN"]);
    x.server.stop().await.expect("stops");
    let dir = settings.data_dir.clone();
    let server = matchbook_rest::Server::start(settings)
        .await
        .expect("restarts");
    let base = format!("http://{}", server.addr);
    until_cancelled(&http, &base, &key, &ids).await;
    server.stop().await.expect("stops");
    let _ = std::fs::remove_dir_all(dir);
}

/// The same switch over REST (`POST` / `DELETE /v1/account/orders/cancel-all-after`, as
/// clients of the public exchange arm it; 405 and 400 before): armed, re-armed, turned off,
/// and left to run out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_switch_is_set_over_rest_too() {
    let x = exchange().await;
    let ids = two_bids(&x).await;
    let path = "/v1/account/orders/cancel-all-after";
    let k = &x.trader.key;
    for (key, body, status) in [
        (k.as_str(), json!({}), StatusCode::BAD_REQUEST),
        (k, json!({"timeout": -5}), StatusCode::BAD_REQUEST),
        (
            &x.reader.key,
            json!({"timeout": 1000}),
            StatusCode::FORBIDDEN,
        ),
    ] {
        let (s, v) = x.post(path, key, body.clone()).await;
        assert_eq!(s, status, "{body}: {v}");
    }
    let (s, set) = x.post(path, k, json!({"timeout": 60_000})).await;
    assert_eq!(s, StatusCode::OK, "{set}");
    assert_eq!(set["timeout"], 60_000);
    assert!(set["cancel_at"].is_string(), "{set}");
    let advance = async |seconds: &str| {
        x.admin("/admin/time/advance", json!({"seconds": seconds}))
            .await
    };
    advance("40").await;
    x.post(path, k, json!({"timeout": "60000"})).await;
    advance("40").await;
    assert_eq!(statuses(&x.http, &x.base, k, &ids).await, ["OPEN", "OPEN"]);
    let (s, off) = x.delete(path, k).await;
    assert_eq!((s, off.clone()), (StatusCode::OK, json!({"timeout": 0})));
    advance("3600").await;
    assert_eq!(statuses(&x.http, &x.base, k, &ids).await, ["OPEN", "OPEN"]);
    x.post(path, k, json!({"timeout": 1000})).await;
    advance("2").await;
    let closed = statuses(&x.http, &x.base, k, &ids).await;
    assert_eq!(closed, ["CANCELLED", "CANCELLED"]);
    x.stop().await;
}
