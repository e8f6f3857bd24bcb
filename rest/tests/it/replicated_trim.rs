//! The replicated log is trimmed below every node's snapshot and never below what a node
//! needs: with two nodes snapshotting, the leader trims the stream (a reader from the first
//! command is told it is gone, and a new node on an empty directory refuses to start with
//! that reason); with one node stopped, the log keeps every command after that node's
//! newest snapshot however far the leader goes, and the node, restarted, catches up to the
//! leader's state.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::group::{health, node_settings, same_state, start_cluster};
use common::{Exchange, data_dir};
use matchbook::store::list_snapshots;
use matchbook_replica::cluster::NatsCluster;
use matchbook_replica::{LogError, LogTail};
use matchbook_rest::Server;
use matchbook_rest::server::KEY_STORE;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Newest snapshot in a node's data directory.
fn newest_snapshot(dir: &Path) -> u64 {
    let files = list_snapshots(dir).expect("data dir");
    files.last().map_or(0, |f| f.seq)
}

/// Whether the log still holds command `from` (opening a reader there, off the async
/// threads: the reader drives a runtime of its own).
async fn log_holds(cluster: &NatsCluster, from: u64) -> Result<(), LogError> {
    let urls = cluster.urls();
    let open = move || LogTail::open(&urls, "MATCHBOOK", from, Duration::from_secs(2)).map(drop);
    tokio::task::spawn_blocking(open).await.expect("joined")
}

/// Waits (at most 30 s) until `condition` holds of node `base`'s health.
async fn until_health(base: &str, what: &str, condition: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let h = health(base).await;
        if condition(&h) {
            return h;
        }
        assert!(Instant::now() < deadline, "{what}: {h}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `count` commands: orders placed and cancelled (so the open orders never pile up).
async fn orders(x: &Exchange, count: u32) {
    for i in 0..count / 2 {
        let price = format!("{}.00", 100 + i % 40);
        let (status, answer) = x
            .order(&x.trader.key, "BUY", &price, "0.1", json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let id = answer["order_id"].as_str().expect("an id");
        let path = format!("/v1/account/orders/{id}");
        let (status, answer) = x.delete(&path, &x.trader.key).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }
}

/// A node's settings with a snapshot every 40 commands.
fn snapshotting_node(
    cluster: &NatsCluster,
    name: &str,
    dir: PathBuf,
) -> matchbook_rest::config::Settings {
    let mut s = node_settings(cluster, dir, name);
    s.snapshot_every = 40;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_is_trimmed_below_every_nodes_snapshot_and_no_further() {
    let cluster = start_cluster("nats-rest-trim");
    let (dir_a, dir_b) = (data_dir(), data_dir());
    let a = Exchange::with(snapshotting_node(&cluster, "a", dir_a.clone())).await;
    std::fs::create_dir_all(&dir_b).expect("dir");
    std::fs::copy(dir_a.join(KEY_STORE), dir_b.join(KEY_STORE)).expect("shared keys");
    let b = Server::start(snapshotting_node(&cluster, "b", dir_b.clone()))
        .await
        .expect("b follows");
    let base_b = format!("http://{}", b.addr);
    orders(&a, 160).await;
    same_state(&[&a.base, &base_b]).await;

    // Both have snapshots: the leader trims below the older of their newest.
    let h = until_health(&a.base, "never trimmed", |h| {
        h["log_kept_from"].as_u64() > Some(1)
    })
    .await;
    let kept_from = h["log_kept_from"].as_u64().unwrap_or(0);
    let floor = newest_snapshot(&dir_a).min(newest_snapshot(&dir_b));
    assert!(kept_from <= floor + 1, "{kept_from} beyond {floor}");
    let from_the_first = log_holds(&cluster, 1).await;
    assert!(
        matches!(from_the_first, Err(LogError::Trimmed { .. })),
        "{from_the_first:?}"
    );
    log_holds(&cluster, kept_from)
        .await
        .expect("kept from there");

    // A node with nothing cannot start from the log alone: it is told why.
    let dir_c = data_dir();
    std::fs::create_dir_all(&dir_c).expect("dir");
    std::fs::copy(dir_a.join(KEY_STORE), dir_c.join(KEY_STORE)).expect("shared keys");
    let refused = Server::start(snapshotting_node(&cluster, "c", dir_c.clone())).await;
    let message = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("no longer in the log"), "{message}");

    // b stops; the leader goes on far past b's newest snapshot and looks at trimming
    // again: the log still holds everything b needs.
    b.stop().await.expect("clean stop");
    let needs_from = newest_snapshot(&dir_b) + 1;
    orders(&a, 240).await;
    assert!(newest_snapshot(&dir_a) > needs_from + 80);
    let checks = health(&a.base).await["log_trim_checks"]
        .as_u64()
        .unwrap_or(0);
    let h = until_health(&a.base, "no trim check", |h| {
        h["log_trim_checks"].as_u64() > Some(checks)
    })
    .await;
    let kept_from = h["log_kept_from"].as_u64().unwrap_or(0);
    assert!(
        kept_from <= needs_from,
        "trimmed to {kept_from}, b needs {needs_from}"
    );
    log_holds(&cluster, needs_from)
        .await
        .expect("what b needs is kept");

    // b, restarted, catches up from its snapshot and the log.
    let b = Server::start(snapshotting_node(&cluster, "b", dir_b.clone()))
        .await
        .expect("b follows again");
    let base_b = format!("http://{}", b.addr);
    same_state(&[&a.base, &base_b]).await;
    b.stop().await.expect("clean stop");
    a.server.stop().await.expect("clean stop");
    for dir in [dir_a, dir_b, dir_c] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
