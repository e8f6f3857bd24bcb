//! The exchange on the replicated command log (`--log`, `--node`), against a real
//! three-server NATS cluster on loopback: a node writes only once it holds the group's
//! lease, keeps no journal of its own, and every command it acknowledged is in the log:
//! a second node started on an empty data directory (sharing only the keys file) takes
//! the lease once the first has stopped and serves the same orders, recovered from the
//! log alone.

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
