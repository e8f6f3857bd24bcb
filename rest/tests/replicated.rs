//! The exchange on the replicated command log (`--log`, `--node`), against a real
//! three-server NATS cluster on loopback: a node writes only once it holds the group's
//! lease, keeps no journal of its own, and every command it acknowledged is in the log:
//! a second node started on an empty data directory (sharing only the keys file) takes
//! the lease once the first has stopped and serves the same orders, recovered from the
//! log alone; and a node waiting for the lease while the leader runs (processes of the
//! real binary) leads once the leader is killed with SIGKILL, within the lease and a
//! bounded catch-up, with every order the old leader acknowledged.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::{Exchange, data_dir, settings};
use matchbook_replica::cluster::{NatsCluster, server_binary};
use matchbook_replica::node::NodeConfig;
use matchbook_rest::Server;
use matchbook_rest::server::KEY_STORE;
use reqwest::StatusCode;
use serde_json::{Value, json};

fn node(cluster: &NatsCluster, name: &str) -> NodeConfig {
    let mut config = NodeConfig::parse(&cluster.urls().join(","), name).expect("node settings");
    config.lease = Duration::from_millis(1_000);
    config
}

async fn order_status(base: &str, key: &str, id: &Value) -> (StatusCode, Value) {
    let id = id.as_str().expect("an order id");
    let response = (reqwest::Client::new())
        .get(format!("{base}/v1/account/orders/{id}"))
        .bearer_auth(key)
        .send()
        .await
        .expect("request");
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    (status, body["order"]["status"].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_on_the_replicated_log_hands_every_command_to_the_next() {
    let nats = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nats-rest-replicated");
    let _ = std::fs::remove_dir_all(&nats);
    let cluster = NatsCluster::start(&server_binary(), &nats, 3).expect("NATS cluster");

    let mut first = settings(data_dir());
    first.replication = Some(node(&cluster, "a"));
    let a = Exchange::with(first).await;
    let key = a.trader.key.clone();
    let mut placed = Vec::new();
    for price in ["100.00", "101.00", "102.00"] {
        let (status, ack) = a.order(&key, "BUY", price, "0.1", json!({})).await;
        assert_eq!(status, StatusCode::OK, "{ack}");
        placed.push(ack["order_id"].clone());
    }
    let cancelled = placed[1].as_str().expect("id").to_owned();
    let (status, body) = a
        .delete(&format!("/v1/account/orders/{cancelled}"), &key)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let dir_a = a.server.state.data_dir.clone();
    let journals = (std::fs::read_dir(&dir_a).expect("data dir"))
        .filter_map(Result::ok)
        .filter(|f| f.file_name().to_string_lossy().starts_with("journal-"))
        .count();
    assert_eq!(journals, 0, "the log stands for the journal");
    a.server.stop().await.expect("clean stop, lease resigned");

    let dir_b = data_dir();
    std::fs::create_dir_all(&dir_b).expect("dir");
    std::fs::copy(dir_a.join(KEY_STORE), dir_b.join(KEY_STORE)).expect("shared keys");
    let mut second = settings(dir_b.clone());
    second.replication = Some(node(&cluster, "b"));
    let b = Server::start(second).await.expect("the second node leads");
    let base = format!("http://{}", b.addr);
    let expected = ["OPEN", "CANCELLED", "OPEN"];
    for (id, status) in placed.iter().zip(expected) {
        let (code, seen) = order_status(&base, &key, id).await;
        assert_eq!(
            (code, seen.as_str()),
            (StatusCode::OK, Some(status)),
            "{id}"
        );
    }
    b.stop().await.expect("clean stop");
    let _ = std::fs::remove_dir_all(dir_a);
    let _ = std::fs::remove_dir_all(dir_b);
}

/// Places orders on `base` one after another until `stop` is set; returns the ids of
/// those acknowledged.
async fn order_flow(
    base: String,
    key: String,
    acked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    let http = reqwest::Client::new();
    for i in 0u32.. {
        let price = format!("{}.00", 100 + i % 50);
        let body = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
            "price": price, "amount": "0.1"});
        let sent = http
            .post(format!("{base}/v1/account/orders"))
            .bearer_auth(&key)
            .json(&body)
            .send()
            .await;
        let Ok(response) = sent else { return };
        if response.status() != StatusCode::OK {
            return;
        }
        let Ok(ack) = response.json::<Value>().await else {
            return;
        };
        if let Some(id) = ack["order_id"].as_str() {
            acked.lock().expect("not poisoned").push(id.to_owned());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_node_leads_after_the_leader_is_killed_with_every_acknowledged_order() {
    use common::process;
    let nats = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nats-rest-failover");
    let _ = std::fs::remove_dir_all(&nats);
    let cluster = NatsCluster::start(&server_binary(), &nats, 3).expect("NATS cluster");
    let urls = cluster.urls().join(",");
    const LEASE_MS: u64 = 1_000;
    let args = |node: &'static str| {
        let lease = LEASE_MS.to_string();
        vec![
            "--log".to_owned(),
            urls.clone(),
            "--node".into(),
            node.into(),
            "--lease-ms".into(),
            lease,
            "--snapshot-every".into(),
            "0".into(),
        ]
    };
    let (dir_a, dir_b) = (data_dir(), data_dir());
    std::fs::create_dir_all(&dir_a).expect("dir");
    let args_a = args("a");
    let args_a: Vec<&str> = args_a.iter().map(String::as_str).collect();
    let mut a = process::start(&dir_a, &args_a);
    let keys: Value = serde_json::from_str(
        &std::fs::read_to_string(dir_a.join("keys-out.json")).expect("keys written"),
    )
    .expect("json");
    let key = keys[0]["key"].as_str().expect("trader key").to_owned();
    std::fs::create_dir_all(&dir_b).expect("dir");
    std::fs::copy(dir_a.join(KEY_STORE), dir_b.join(KEY_STORE)).expect("shared keys");
    let args_b = args("b");
    let waiting = {
        let dir_b = dir_b.clone();
        std::thread::spawn(move || {
            let args_b: Vec<&str> = args_b.iter().map(String::as_str).collect();
            process::start(&dir_b, &args_b)
        })
    };

    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let flow = tokio::spawn(order_flow(a.base.clone(), key.clone(), acked.clone()));
    while acked.lock().expect("not poisoned").len() < 30 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    a.child.kill().expect("SIGKILL the leader");
    let killed = std::time::Instant::now();
    let _ = a.child.wait();
    let _ = flow.await;
    let mut b = tokio::task::spawn_blocking(move || waiting.join().expect("b started"))
        .await
        .expect("joined");
    // The first order the new leader accepts.
    let http = reqwest::Client::new();
    let accepted = loop {
        let body = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
            "price": "110.00", "amount": "0.1"});
        let response = (http.post(format!("{}/v1/account/orders", b.base)))
            .bearer_auth(&key)
            .json(&body)
            .send()
            .await
            .expect("b answers");
        let status = response.status();
        if status == StatusCode::OK {
            break killed.elapsed();
        }
        let body = response.text().await.unwrap_or_default();
        assert!(
            killed.elapsed() < Duration::from_secs(60),
            "b never accepted an order: {status} {body}"
        );
    };
    eprintln!("kill to first accepted order on the new leader: {accepted:?}");
    // b counts the lease from the last renewal it saw (renewals come every third of it,
    // b looks every sixth), so it takes over between half a lease and a lease after the
    // kill, then recovers from the log and starts serving.
    let lease = Duration::from_millis(LEASE_MS);
    assert!(
        accepted >= lease / 2,
        "taken over before the lease ran out: {accepted:?}"
    );
    assert!(accepted < lease + Duration::from_secs(10), "{accepted:?}");
    let acked = acked.lock().expect("not poisoned").clone();
    assert!(acked.len() >= 30);
    for id in &acked {
        let (code, status) = order_status(&b.base, &key, &json!(id)).await;
        assert_eq!(
            (code, status.as_str()),
            (StatusCode::OK, Some("OPEN")),
            "{id}"
        );
    }
    b.child.kill().expect("stop b");
    let _ = b.child.wait();
    let _ = std::fs::remove_dir_all(dir_a);
    let _ = std::fs::remove_dir_all(dir_b);
}

#[test]
fn replication_options_are_checked_before_anything_starts() {
    let cases: [&[&str]; 5] = [
        &["--log", "nats://127.0.0.1:1"],
        &["--node", "a"],
        &["--log", "127.0.0.1:4222", "--node", "a"],
        &["--log", "nats://127.0.0.1:1", "--node", "a b"],
        &[
            "--log",
            "nats://127.0.0.1:1",
            "--node",
            "a",
            "--lease-ms",
            "5",
        ],
    ];
    for args in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_matchbook-rest"))
            .args(args)
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            ["--log", "--node", "--lease-ms"]
                .iter()
                .any(|f| stderr.contains(f)),
            "{args:?}: {stderr}"
        );
    }
}
