//! A replicated group as the tests drive it: node settings on a test NATS cluster, nodes
//! as processes of the real binary, a seeded order flow, and what `/v1/health` says.

use std::path::Path;
use std::time::Duration;

use matchbook_replica::cluster::{NatsCluster, server_binary};
use matchbook_replica::node::NodeConfig;
use matchbook_rest::server::KEY_STORE;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::process::{self, Process};

/// A three-server NATS cluster on loopback, in a fresh directory `name` under the tests'
/// scratch directory.
pub fn start_cluster(name: &str) -> NatsCluster {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    NatsCluster::start(&server_binary(), &dir, 3).expect("NATS cluster")
}

/// Demo settings on `dir` for node `name` of the group on `cluster`.
pub fn node_settings(
    cluster: &NatsCluster,
    dir: std::path::PathBuf,
    name: &str,
) -> matchbook_rest::config::Settings {
    let mut settings = super::settings(dir);
    settings.replication = Some(node(cluster, name));
    settings
}

pub fn node(cluster: &NatsCluster, name: &str) -> NodeConfig {
    let mut config = NodeConfig::parse(&cluster.urls().join(","), name).expect("node settings");
    config.lease = Duration::from_millis(1_000);
    config
}

/// `GET path` on the node at `base` with `key`: the status and the JSON body (Null when
/// not JSON).
pub async fn get(base: &str, path: &str, key: &str) -> (StatusCode, Value) {
    let response = (reqwest::Client::new())
        .get(format!("{base}{path}"))
        .bearer_auth(key)
        .send()
        .await
        .expect("request");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The status of order `id` as the node at `base` answers it.
pub async fn order_status(base: &str, key: &str, id: &Value) -> (StatusCode, Value) {
    let id = id.as_str().expect("an order id");
    let (status, body) = get(base, &format!("/v1/account/orders/{id}"), key).await;
    (status, body["order"]["status"].clone())
}

/// `GET path` on the node at `base` with `key`; it must answer 200.
pub async fn get_json(base: &str, path: &str, key: &str) -> Value {
    let (status, body) = get(base, path, key).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

/// Places orders on `base` one after another until `stop` is set; returns the ids of
/// those acknowledged.
pub async fn order_flow(
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

/// `GET /v1/health` of the node at `base`.
pub async fn health(base: &str) -> Value {
    let response = reqwest::get(format!("{base}/v1/health")).await;
    match response {
        Ok(r) => r.json().await.unwrap_or(Value::Null),
        Err(_) => Value::Null,
    }
}

/// Waits (at most 30 s) until every node in `bases` reports the same applied command and
/// no lag; returns that command and the state hash they all report.
pub async fn same_state(bases: &[&str]) -> (u64, String) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut seen = Vec::new();
        for base in bases {
            let h = health(base).await;
            seen.push((
                h["applied_seq"].as_u64(),
                h["lag"].as_u64(),
                h["state_hash"].clone(),
            ));
        }
        let (seq, _, hash) = seen[0].clone();
        if seen
            .iter()
            .all(|s| (s.0, s.1, &s.2) == (seq, Some(0), &hash))
        {
            let hash = hash.as_str().expect("a hash").to_owned();
            return (seq.expect("a sequence"), hash);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never the same: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The node settings every process of the group test gets.
pub fn node_args(urls: &str, node: &str, lease_ms: u64) -> Vec<String> {
    [
        "--log",
        urls,
        "--node",
        node,
        "--lease-ms",
        &lease_ms.to_string(),
        "--snapshot-every",
        "0",
        "--checkpoint-every",
        "50",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Starts node `name` on `dir` with the group's keys file (none for the first node).
pub fn start_node(dir: &Path, args: Vec<String>, keys: Option<&Path>) -> Process {
    std::fs::create_dir_all(dir).expect("dir");
    if let Some(keys) = keys {
        std::fs::copy(keys, dir.join(KEY_STORE)).expect("shared keys");
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    process::start(dir, &args)
}
