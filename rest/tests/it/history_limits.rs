//! The server's history limits (`[server] history_max_orders`): a trader placing and
//! cancelling orders in a loop grows the order history only to the limit, the newest kept
//! and an order open since before them still listed; the limit holds again after a restart
//! from the snapshot and journal (a host setting, not part of the snapshot).

use crate::common;

use common::{Exchange, data_dir, order_fields, settings};
use matchbook_rest::Server;
use reqwest::StatusCode;
use serde_json::{Value, json};

const LIMIT: usize = 20;

/// Every order id of the trader's history (open, cancelled and filled, the last day).
async fn history(base: &str, key: &str) -> Vec<String> {
    let url = format!(
        "{base}/v1/account/orders?with_cancelled_and_rejected=true&with_just_filled_inactive=true&max_page_size=100"
    );
    let page: Value = (reqwest::Client::new().get(url))
        .bearer_auth(key)
        .send()
        .await
        .expect("answers")
        .json()
        .await
        .expect("JSON");
    order_fields(&page, "order_id")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_history_stops_growing_at_its_limit_and_keeps_open_orders() {
    let dir = data_dir();
    let mut config = settings(dir.clone());
    config.history_limits.orders = LIMIT;
    config.snapshot_every = 25;
    let x = Exchange::with(config.clone()).await;
    let key = x.trader.key.clone();
    let (status, open) = x.order(&key, "BUY", "100.00", "0.1", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{open}");
    let open = open["order_id"].as_str().expect("id").to_owned();
    let mut placed = Vec::new();
    for _ in 0..3 * LIMIT {
        let (status, ack) = x.order(&key, "BUY", "101.00", "0.1", json!({})).await;
        assert_eq!(status, StatusCode::OK, "{ack}");
        let id = ack["order_id"].as_str().expect("id").to_owned();
        let (status, body) = x.delete(&format!("/v1/account/orders/{id}"), &key).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        placed.push(id);
    }
    let listed = history(&x.base, &key).await;
    assert!(listed.contains(&open), "the open order is kept");
    let newest = &placed[placed.len() - LIMIT / 2..];
    assert!(
        newest.iter().all(|id| listed.contains(id)),
        "the newest kept"
    );
    assert!(!listed.contains(&placed[0]), "the oldest forgotten");
    assert!(listed.len() <= LIMIT + 1, "{} listed", listed.len());
    let (status, _) = x
        .get(&format!("/v1/account/orders/{}", placed[0]), Some(&key))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // After a restart (a snapshot and the journal after it) the limit holds as before.
    x.server.stop().await.expect("stops");
    let again = Server::start(config).await.expect("restarts");
    let base = format!("http://{}", again.addr);
    let ioc = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
        "price": "101.00", "amount": "0.1", "time_in_force": "IMMEDIATE_OR_CANCELLED"});
    for _ in 0..LIMIT {
        let sent = (reqwest::Client::new())
            .post(format!("{base}/v1/account/orders"))
            .bearer_auth(&key)
            .json(&ioc)
            .send()
            .await
            .expect("answers");
        assert_eq!(sent.status(), StatusCode::OK);
    }
    let listed = history(&base, &key).await;
    assert!(listed.contains(&open), "the open order is kept");
    assert!(
        listed.len() <= LIMIT + 1,
        "{} listed after the restart",
        listed.len()
    );
    assert!(
        !listed.contains(&placed[placed.len() - 1]),
        "pushed out by the new ones"
    );
    again.stop().await.expect("stops");
    let _ = std::fs::remove_dir_all(dir);
}

/// An order filled more often than history keeps trades carries the newest it still
/// holds, and its trades route lists those: the forgotten oldest are passed over, not
/// answered as empty pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_past_the_trade_limit_carries_the_trades_still_held() {
    let mut config = settings(data_dir());
    config.history_limits.trades = 150;
    let x = Exchange::with(config).await;
    let (maker, _) = x.new_holder(&["TRADE"]).await;
    let (taker, _) = x.new_holder(&["TRADE"]).await;
    let id = x.much_filled_order(&maker, &taker, 300).await;
    let (s, one) = x
        .get(&format!("/v1/account/orders/{id}"), Some(&maker))
        .await;
    assert_eq!(s, StatusCode::OK, "{one}");
    assert_eq!(one["trades"].as_array().map(Vec::len), Some(100), "{one}");
    let mut listed = 0;
    for page in x
        .pages(&format!("/v1/account/orders/{id}/trades"), &maker)
        .await
    {
        let trades = page["trade_history"].as_array().expect("trades").len();
        assert!(trades > 0, "no empty page: {page}");
        listed += trades;
    }
    assert_eq!(listed, 150, "the trades history still holds");
    x.stop().await;
}
