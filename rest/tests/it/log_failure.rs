//! A journal that cannot be written (a full disk; here a file-size limit, which fails a
//! write the same way) stops the real binary: it acknowledges nothing it could not store,
//! logs why and exits with a failure status, so a supervisor sees it and restarts it; the
//! restart recovers every acknowledged command. Before, the process stayed up answering
//! 503 to everything, reads included, and logged no cause.

use std::time::{Duration, Instant};

use crate::common;

use serde_json::{Value, json};

/// `ulimit -f` blocks (512 or 1,024 bytes, by shell): room for the first start's journal
/// and some hundreds of orders more.
const FILE_BLOCKS: u32 = 64;

/// What the client saw acknowledged before the first refusal.
#[derive(Default)]
struct Acked {
    /// Orders placed (id), with whether their cancel was acknowledged too.
    orders: Vec<(String, bool)>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_that_cannot_be_written_stops_the_node_and_a_restart_recovers() {
    let dir = common::data_dir();
    std::fs::create_dir_all(&dir).expect("data dir");
    let mut server = common::process::start_with_file_limit(&dir, &[], FILE_BLOCKS);
    let keys: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("keys-out.json")).expect("keys"))
            .expect("json");
    let key = keys[0]["key"].as_str().expect("key").to_owned();
    let http = reqwest::Client::new();
    let acked = place_and_cancel_until_refused(&http, &server.base, &key).await;
    assert!(acked.orders.len() > 10, "some orders were stored first");

    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = server.child.try_wait().expect("child state") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the node is still running after its journal failed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        status.code(),
        Some(1),
        "a failure status for the supervisor"
    );
    let log = std::fs::read_to_string(dir.join("stderr.log")).expect("log");
    assert!(
        log.contains("the command log failed after command"),
        "the cause is logged: {log}"
    );

    let server = common::process::start(&dir, &[]);
    for (id, cancelled) in &acked.orders {
        let r = http
            .get(format!("{}/v1/account/orders/{id}", server.base))
            .bearer_auth(&key)
            .send()
            .await
            .expect("sent");
        assert_eq!(r.status(), 200, "acknowledged order {id} recovered");
        let order: Value = r.json().await.expect("json");
        let status = order["order"]["status"].as_str().expect("status");
        assert_eq!(
            status == "CANCELLED",
            *cancelled,
            "order {id}: {status}, its cancel acknowledged: {cancelled}"
        );
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Places orders and cancels each, recording every acknowledgement, until the server
/// refuses one (it must: its journal cannot grow past the limit).
async fn place_and_cancel_until_refused(http: &reqwest::Client, base: &str, key: &str) -> Acked {
    let mut acked = Acked::default();
    for i in 0..100_000u32 {
        let body = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
            "price": format!("{}.00", 40_000 + i % 1_000), "amount": "0.01"});
        let r = http
            .post(format!("{base}/v1/account/orders"))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await;
        let Some(id) = acked_order(r).await else {
            return acked;
        };
        acked.orders.push((id.clone(), false));
        let r = http
            .delete(format!("{base}/v1/account/orders/{id}"))
            .bearer_auth(key)
            .send()
            .await;
        if !r.is_ok_and(|r| r.status().is_success()) {
            return acked;
        }
        if let Some(last) = acked.orders.last_mut() {
            last.1 = true;
        }
    }
    panic!("the journal never filled");
}

/// The id of an order the server acknowledged, `None` for a refusal or no answer.
async fn acked_order(r: reqwest::Result<reqwest::Response>) -> Option<String> {
    let r = r.ok().filter(|r| r.status() == 200)?;
    let body: Value = r.json().await.ok()?;
    body["order_id"].as_str().map(str::to_owned)
}
