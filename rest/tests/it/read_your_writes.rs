//! Read-your-writes over HTTP: a client that was told its order is placed finds it at once
//! (by id, in its open orders and in its locked balance), and one told it is cancelled finds
//! it cancelled, while other clients trade beside it. Reads are answered by the runtime's
//! market stage, which may lag the acknowledgement; each read waits for every command
//! acknowledged before it.

use crate::common;

use std::sync::Arc;

use common::{Exchange, order_fields};
use reqwest::StatusCode;
use serde_json::json;

async fn place_read_cancel_read(x: Arc<Exchange>, key: String, rounds: usize) {
    for i in 0..rounds {
        let price = format!("{}.00", 40_000 + i);
        let (status, ack) = x.order(&key, "BUY", &price, "0.01", json!({})).await;
        assert_eq!(status, StatusCode::OK, "{ack}");
        let id = ack["order_id"].as_str().expect("order id").to_owned();
        let (status, found) = x.get(&format!("/v1/account/orders/{id}"), Some(&key)).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "round {i}: placed order found: {found}"
        );
        assert_eq!(found["order"]["status"], "OPEN");
        let (_, open) = x.get("/v1/account/orders", Some(&key)).await;
        assert!(
            order_fields(&open, "order_id").contains(&id),
            "round {i}: open"
        );
        let (_, balances) = x.get("/v1/account/balances", Some(&key)).await;
        let eur = balances["balances"]
            .as_array()
            .and_then(|b| b.iter().find(|b| b["currency_code"] == "EUR"))
            .expect("EUR balance");
        assert_ne!(
            eur["locked"], "0.00",
            "round {i}: the order's EUR is locked"
        );
        let (status, _) = x.delete(&format!("/v1/account/orders/{id}"), &key).await;
        assert_eq!(status, StatusCode::OK, "round {i}: cancelled");
        let (_, found) = x.get(&format!("/v1/account/orders/{id}"), Some(&key)).await;
        assert_eq!(found["order"]["status"], "CANCELLED", "round {i}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_client_reads_its_own_orders_at_once() {
    let x = Arc::new(Exchange::start().await);
    let mut clients = Vec::new();
    for _ in 0..3 {
        let (key, _) = x.new_holder(&["TRADE", "READ_ONLY"]).await;
        clients.push(tokio::spawn(place_read_cancel_read(x.clone(), key, 40)));
    }
    for client in clients {
        client.await.expect("client");
    }
    // The operator's view of the pipeline: every stage through the last command, no
    // divergence of the read replica, nothing refused. A command answered from market
    // data (an order placed) is answered by the market stage, which may run ahead of the
    // acknowledgement stage's count: the view is read once nothing is in flight.
    let pipeline = idle_pipeline(&x).await;
    let field = |name: &str| pipeline[name].as_u64().expect(name);
    assert!(field("matched") >= 3 * 40 * 2, "{pipeline}");
    assert_eq!(field("acknowledged"), field("matched"), "{pipeline}");
    assert_eq!(field("divergences"), 0);
    assert_eq!(field("refused"), 0);
    assert!(field("reads") >= 3 * 40 * 4, "{pipeline}");
    assert!(
        pipeline["matching_ns_per_command"]["p50"]
            .as_u64()
            .is_some()
    );
    let x = Arc::into_inner(x).expect("clients done");
    x.stop().await;
}

/// `GET /admin/pipeline` once no command is in flight (asked again while one is, for at
/// most 10 s).
async fn idle_pipeline(x: &Exchange) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let pipeline = x.pipeline().await;
        if pipeline["in_flight"] == 0 || std::time::Instant::now() > deadline {
            return pipeline;
        }
        tokio::task::yield_now().await;
    }
}
