//! The exchange on the replicated command log (`--log`, `--node`), against a real
//! three-server NATS cluster on loopback: a node keeps no journal of its own and every
//! command it acknowledged is in the log: a second node started on an empty data
//! directory (sharing only the keys file) takes the lease once the first has stopped and
//! serves the same orders, recovered from the log alone (one started with the first's
//! name while it runs, or with another exchange configuration, is refused); and in a group of three processes
//! of the real binary, with orders sent to the leader and to a follower, a follower leads
//! once the leader is SIGKILLed, within the lease and a bounded catch-up, with every order
//! the old leader acknowledged (and the page cursor it handed out), and the survivors
//! reach the same state hash. Keys are the group's: one issued through the leader works
//! on a follower and, after the failover, on the new leader; one revoked on a follower is
//! refused by the leader too, and one revoked while a node was down by its first answer.

use crate::common;

use std::time::Duration;

use common::group::{
    get_json, health, node, node_args, node_settings, order_flow, order_status, same_state,
    start_cluster, start_node,
};
use common::process::Process;
use common::{Exchange, data_dir};
use futures_util::{SinkExt, StreamExt};
use matchbook::{AccountId, HolderId};
use matchbook_replica::cluster::NatsCluster;
use matchbook_replica::group_keys::GroupKeys;
use matchbook_rest::Server;
use matchbook_rest::auth::keys::{KeyRecord, Scope};
use matchbook_rest::server::KEY_STORE;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

/// Whether `base`'s stream takes `key` (`AUTHENTICATE` answered `AUTHENTICATED`).
async fn stream_takes(base: &str, key: &str) -> bool {
    let url = base.replacen("http://", "ws://", 1);
    let (mut ws, _) = (tokio_tungstenite::connect_async(url).await).expect("upgrade");
    let authenticate = json!({"type": "AUTHENTICATE", "api_token": key}).to_string();
    ws.send(Message::Text(authenticate.into()))
        .await
        .expect("sent");
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(text))) => {
                let answer: Value = serde_json::from_str(&text).expect("JSON");
                return answer["type"] == "AUTHENTICATED";
            }
            Some(Ok(_)) => continue,
            other => panic!("expected an answer, got {other:?}"),
        }
    }
}

/// Polls `check` until it holds, for at most 10 s; whether it did.
async fn within_10_s<F: std::future::Future<Output = bool>>(mut check: impl FnMut() -> F) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Keys are the group's: a key issued through the leader reaches a follower (its stream
/// takes it), and one revoked on a follower (served there) is refused by the leader too.
/// Returns the key issued, for after the leader is gone.
async fn keys_are_the_groups(keys: &Value, leader: &Process, follower: &Process) -> String {
    let (reader, admin) = (keys[1]["key"].as_str(), keys[3]["key"].as_str());
    let (reader, admin) = (reader.expect("reader key"), admin.expect("admin key"));
    let account = keys[1]["account_id"].clone();
    let http = reqwest::Client::new();
    let issued: Value = (http.post(format!("{}/admin/keys", leader.admin)))
        .bearer_auth(admin)
        .json(&json!({"account_id": account, "scopes": ["READ_ONLY"]}))
        .send()
        .await
        .expect("the leader answers")
        .json()
        .await
        .expect("JSON");
    let issued = issued["key"].as_str().expect("a key").to_owned();
    assert!(
        within_10_s(|| stream_takes(&follower.base, &issued)).await,
        "the follower never took the key the leader issued"
    );
    let revoked = (http.post(format!("{}/admin/keys/revoke", follower.admin)))
        .bearer_auth(admin)
        .json(&json!({"key": reader}))
        .send()
        .await
        .expect("the follower answers");
    assert_eq!(revoked.status(), StatusCode::OK);
    assert!(
        !stream_takes(&follower.base, reader).await,
        "revoked on the follower at once"
    );
    let refused_by_leader = || async {
        let (status, v) = common::group::get(&leader.base, "/v1/account/balances", reader).await;
        (status, v["error"].as_str()) == (StatusCode::UNAUTHORIZED, Some("APIKEY_REVOKED"))
    };
    assert!(
        within_10_s(refused_by_leader).await,
        "the leader still takes the revoked key"
    );
    issued
}

/// The error a node named `name` on a fresh data directory, its settings changed by
/// `adjust`, is refused start with.
async fn refused_start(
    cluster: &NatsCluster,
    name: &str,
    adjust: impl FnOnce(&mut matchbook_rest::config::Settings),
) -> String {
    let dir = data_dir();
    let mut config = node_settings(cluster, dir.clone(), name);
    adjust(&mut config);
    let refused = match Server::start(config).await {
        Ok(_) => panic!("node {name} started"),
        Err(e) => e.to_string(),
    };
    let _ = std::fs::remove_dir_all(dir);
    refused
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_on_the_replicated_log_hands_every_command_to_the_next() {
    let cluster = start_cluster("nats-rest-replicated");

    let first = node_settings(&cluster, data_dir(), "a");
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
    // A second process started with the same `--node` is refused while the first runs.
    let refused = refused_start(&cluster, "a", |_| {}).await;
    assert!(
        refused.contains("\"a\" is held by another running process"),
        "{refused}"
    );
    // So is a node whose exchange differs (here its open-order limit): it would apply
    // the group's log to another exchange.
    let refused = refused_start(&cluster, "c", |s| s.engine.max_open_orders += 1).await;
    assert!(
        refused.contains("this node's exchange configuration (pin-v2 "),
        "{refused}"
    );
    assert!(
        refused.contains(") is not the group's (pin-v2 "),
        "{refused}"
    );
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
    let second = node_settings(&cluster, dir_b.clone(), "b");
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

/// A node that was down while one of its keys was revoked elsewhere refuses that key from
/// its first request: the group's keys and revocations are applied before it serves. The
/// group holds a few thousand keys, so their arrival takes a while after the node starts
/// (the revocation is the newest entry).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_revoked_while_a_node_was_down_is_refused_by_its_first_answer() {
    let cluster = start_cluster("nats-rest-revoked-down");
    let first = node_settings(&cluster, data_dir(), "a");
    let a = Exchange::with(first).await;
    // Node b's key file is a copy of a's, taken before the revocation.
    let (dir_a, dir_b) = (a.server.state.data_dir.clone(), data_dir());
    std::fs::create_dir_all(&dir_b).expect("dir");
    std::fs::copy(dir_a.join(KEY_STORE), dir_b.join(KEY_STORE)).expect("shared keys");
    let group = GroupKeys::open(&node(&cluster, "filler"))
        .await
        .expect("bucket");
    let issued = (0..3_000).map(|_| {
        let (_, record) =
            KeyRecord::generate(HolderId(0), AccountId(0), vec![Scope::ReadOnly]).expect("a key");
        let text = serde_json::to_vec(&record).expect("record");
        let group = group.clone();
        async move { group.issue(&record.digest, &text).await }
    });
    let published = futures_util::stream::iter(issued).buffer_unordered(64);
    published
        .for_each(|done| async move { done.expect("published") })
        .await;
    let revoke = (a.http.post(format!("{}/admin/keys/revoke", a.admin)))
        .bearer_auth(&a.root.key)
        .json(&json!({"key": a.reader.key}))
        .send()
        .await
        .expect("revoked");
    assert_eq!(revoke.status(), StatusCode::OK);
    a.server.stop().await.expect("clean stop, lease resigned");

    let second = node_settings(&cluster, dir_b.clone(), "b");
    let b = Server::start(second).await.expect("the second node leads");
    let base = format!("http://{}", b.addr);
    let (status, body) = common::group::get(&base, "/v1/account/balances", &a.reader.key).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("APIKEY_REVOKED")),
        "{body}"
    );
    b.stop().await.expect("clean stop");
    let _ = std::fs::remove_dir_all(dir_a);
    let _ = std::fs::remove_dir_all(dir_b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_one_killed_a_follower_leads_with_every_acknowledged_order() {
    let cluster = start_cluster("nats-rest-failover");
    let urls = cluster.urls().join(",");
    const LEASE_MS: u64 = 1_000;
    let dirs = [data_dir(), data_dir(), data_dir()];
    let mut a = start_node(&dirs[0], node_args(&urls, "a", LEASE_MS), None);
    let keys = issued_keys(&dirs[0]);
    let key = keys[0]["key"].as_str().expect("trader key").to_owned();
    let shared = dirs[0].join(KEY_STORE);
    let b = start_node(&dirs[1], node_args(&urls, "b", LEASE_MS), Some(&shared));
    let c = start_node(&dirs[2], node_args(&urls, "c", LEASE_MS), Some(&shared));
    a_leads_and_the_others_follow(&a, [&b, &c]).await;
    let issued_through_a = keys_are_the_groups(&keys, &a, &c).await;
    let root = keys[3]["key"].as_str().expect("admin key");
    each_node_answers_for_itself(&a, &b, &c, root).await;
    a_followers_snapshot_is_its_own(&a, &b, root).await;

    // A client may talk to any node: orders sent to a follower are forwarded to the leader.
    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let flows = [
        tokio::spawn(order_flow(a.base.clone(), key.clone(), acked.clone())),
        tokio::spawn(order_flow(b.base.clone(), key.clone(), acked.clone())),
    ];
    while acked.lock().expect("not poisoned").len() < 60 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // A client paging its history when the leader dies goes on with the next leader.
    let list = "/v1/account/orders?with_cancelled_and_rejected=true&max_page_size=2";
    let first = get_json(&a.base, list, &key).await;
    let cursor = first["cursor"].as_str().expect("a second page").to_owned();
    a.child.kill().expect("SIGKILL the leader");
    let killed = std::time::Instant::now();
    let _ = a.child.wait();
    for flow in flows {
        let _ = flow.await;
    }
    // The first order the group accepts again, sent to c (leader or forwarding to b).
    let accepted = first_accepted_order(&c.base, &key, killed).await;
    eprintln!("kill to first accepted order: {accepted:?}");
    // A follower counts the lease from the last renewal it saw (renewals every third of
    // it, looked at every sixth): it takes over between half a lease and a lease after the
    // kill; it is a hot standby, so what is left is reading the log's last batches.
    let lease = Duration::from_millis(LEASE_MS);
    assert!(
        accepted >= lease / 2,
        "taken over before the lease ran out: {accepted:?}"
    );
    assert!(accepted < lease + Duration::from_secs(5), "{accepted:?}");
    let (hb, hc) = (health(&b.base).await, health(&c.base).await);
    let roles = (hb["role"].as_str(), hc["role"].as_str());
    let (leader, follower) = match roles {
        (Some("leader"), Some("follower")) => (&b, &c),
        (Some("follower"), Some("leader")) => (&c, &b),
        _ => panic!("one leader, one follower: {hb} {hc}"),
    };

    // A key issued through the old leader is the group's: the new leader takes it.
    let (status, _) =
        common::group::get(&leader.base, "/v1/account/balances", &issued_through_a).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a key issued through the old leader"
    );

    let second = get_json(&leader.base, &format!("{list}&cursor={cursor}"), &key).await;
    let orders = |page: &Value| page["order_history"].as_array().map_or(0, Vec::len);
    assert_eq!(
        orders(&second),
        2,
        "the page after the first, from the next leader"
    );
    assert_ne!(first["order_history"][0], second["order_history"][0]);

    let acked = acked.lock().expect("not poisoned").clone();
    assert!(acked.len() >= 60);
    every_acknowledged_order_is_open(leader, follower, &key, &acked).await;
    let (seq, hash) = same_state(&[&b.base, &c.base]).await;
    assert!(seq as usize > acked.len(), "{seq}");
    eprintln!("both survivors at command {seq}, state hash {hash}");
    followers_compared_at_checkpoints(&b, &c).await;
    for mut node in [b, c] {
        node.child.kill().expect("stop");
        let _ = node.child.wait();
    }
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
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

/// `node`'s own `/admin/metrics` text, read with the admin key.
async fn metrics_of(node: &Process, key: &str) -> String {
    (reqwest::Client::new().get(format!("{}/admin/metrics", node.admin)))
        .bearer_auth(key)
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text")
}

/// `node`'s count of snapshot files written, from its metrics.
async fn snapshots_written(node: &Process, key: &str) -> u64 {
    let text = metrics_of(node, key).await;
    let line = (text.lines()).find_map(|l| l.strip_prefix("matchbook_snapshots_written_total "));
    line.expect("the counter").parse().expect("a number")
}

/// The keys the first node wrote to `keys-out.json` in `dir` (demo: trader, reader, sub,
/// admin).
fn issued_keys(dir: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(dir.join("keys-out.json")).expect("keys written");
    serde_json::from_str(&text).expect("json")
}

/// Each node answers its own metrics (a scrape target of its own) and pipeline, not the
/// leader's: a stream session open on b shows on b alone; only a leads.
async fn each_node_answers_for_itself(a: &Process, b: &Process, c: &Process, root: &str) {
    let ws_url = format!("{}/", b.base.replacen("http", "ws", 1));
    let (_session, _) = tokio_tungstenite::connect_async(ws_url)
        .await
        .expect("a session on b");
    let sessions = |node: &Process| {
        let url = format!("{}/admin/pipeline", node.admin);
        async move {
            let pipeline: Value = (reqwest::Client::new().get(url))
                .bearer_auth(root)
                .send()
                .await
                .expect("pipeline")
                .json()
                .await
                .expect("json");
            pipeline["stream_sessions"].as_u64().expect("sessions")
        }
    };
    assert!(within_10_s(|| async { sessions(b).await >= 1 }).await);
    assert_eq!(sessions(a).await, 0, "a's pipeline is a's own");
    for (node, name, leading) in [(a, "a", 1), (b, "b", 0), (c, "c", 0)] {
        let text = metrics_of(node, root).await;
        let line = format!("matchbook_node_leading{{node=\"{name}\"}} {leading}");
        assert!(
            text.lines().any(|l| l == line),
            "{name}: no {line:?} in\n{text}"
        );
    }
}

/// A snapshot asked of a follower is the follower's own (snapshots are each node's).
async fn a_followers_snapshot_is_its_own(a: &Process, b: &Process, root: &str) {
    let (b_before, a_before) = (
        snapshots_written(b, root).await,
        snapshots_written(a, root).await,
    );
    let taken = (reqwest::Client::new().post(format!("{}/admin/snapshot", b.admin)))
        .bearer_auth(root)
        .send()
        .await
        .expect("snapshot");
    assert_eq!(taken.status(), 200);
    assert_eq!(
        (
            snapshots_written(b, root).await,
            snapshots_written(a, root).await
        ),
        (b_before + 1, a_before)
    );
}

/// Tries an order at `base` until the group accepts one again (a minute at the most):
/// the time from the kill.
async fn first_accepted_order(base: &str, key: &str, killed: std::time::Instant) -> Duration {
    let http = reqwest::Client::new();
    loop {
        let body = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
            "price": "110.00", "amount": "0.1"});
        let response = (http.post(format!("{}/v1/account/orders", base)))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .expect("c answers");
        let status = response.status();
        if status == StatusCode::OK {
            break killed.elapsed();
        }
        let body = response.text().await.unwrap_or_default();
        assert!(
            killed.elapsed() < Duration::from_secs(60),
            "never accepted an order again: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Every acknowledged order is open at the new leader, and through the follower once it
/// has seen the new leader (until then it answers 503 and a client tries again).
async fn every_acknowledged_order_is_open(
    leader: &Process,
    follower: &Process,
    key: &str,
    acked: &[String],
) {
    all_open(&leader.base, key, acked).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while order_status(&follower.base, key, &json!(acked[0])).await.0 != StatusCode::OK {
        assert!(
            std::time::Instant::now() < deadline,
            "the follower never forwarded"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    all_open(&follower.base, key, acked).await;
}

/// Every order of `acked` is open as the node at `base` answers.
async fn all_open(base: &str, key: &str, acked: &[String]) {
    for id in acked {
        let (code, status) = order_status(base, key, &json!(id)).await;
        assert_eq!(
            (code, status.as_str()),
            (StatusCode::OK, Some("OPEN")),
            "{id}"
        );
    }
}

/// No survivor diverged, and the follower compared its state with the leader's at a
/// checkpoint (every 50 commands).
async fn followers_compared_at_checkpoints(b: &Process, c: &Process) {
    for h in [health(&b.base).await, health(&c.base).await] {
        assert!(h["diverged"].is_null(), "{h}");
        if h["role"] == "follower" {
            // Compared with the leader's state hash at a checkpoint (every 50 commands).
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            let mut h = h;
            while h["checked_seq"].as_u64() < Some(50) {
                assert!(std::time::Instant::now() < deadline, "never compared: {h}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                h = health(
                    h["node"]
                        .as_str()
                        .map_or(&b.base, |n| if n == "b" { &b.base } else { &c.base }),
                )
                .await;
            }
        }
    }
}

/// Node a leads; the others follow it.
async fn a_leads_and_the_others_follow(a: &Process, followers: [&Process; 2]) {
    assert_eq!(health(&a.base).await["role"], "leader");
    for follower in followers {
        let h = health(&follower.base).await;
        assert_eq!(
            (h["role"].as_str(), h["leader"].as_str()),
            (Some("follower"), Some("a")),
            "{h}"
        );
    }
}
