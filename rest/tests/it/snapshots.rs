//! Snapshots as an operator runs them: `POST /admin/snapshot` writes one of everything
//! acknowledged and answers with its file (a backup point: that file and the directory's
//! small files start an exchange at the same state), and a snapshot that cannot be
//! written is told at once, in the log and in `/admin/metrics`. Before, a failed write was
//! silent until the server stopped (the journal growing meanwhile, since only a written
//! snapshot lets it be pruned), and no route took a snapshot.

use crate::common;

use std::path::Path;

use serde_json::{Value, json};

/// The admin key of the demo keys the server wrote out.
fn admin_key(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("keys-out.json")).expect("keys");
    let keys: Value = serde_json::from_str(&text).expect("json");
    let admin = keys
        .as_array()
        .expect("keys")
        .iter()
        .find(|k| (k["scopes"].as_array()).is_some_and(|s| s.iter().any(|s| s == "ADMIN")));
    admin.expect("an admin key")["key"]
        .as_str()
        .expect("key")
        .to_owned()
}

struct Admin {
    http: reqwest::Client,
    base: String,
    key: String,
}

impl Admin {
    async fn get(&self, path: &str) -> reqwest::Response {
        let url = format!("{}{path}", self.base);
        let request = self.http.get(url).bearer_auth(&self.key);
        request.send().await.expect("sent")
    }

    async fn post(&self, path: &str, body: Value) -> reqwest::Response {
        let url = format!("{}{path}", self.base);
        let request = self.http.post(url).bearer_auth(&self.key).json(&body);
        request.send().await.expect("sent")
    }

    async fn sequenced(&self) -> u64 {
        let pipeline: Value = self
            .get("/admin/pipeline")
            .await
            .json()
            .await
            .expect("json");
        pipeline["sequenced"].as_u64().expect("sequenced")
    }

    async fn state_hash(&self) -> String {
        let state: Value = self.get("/admin/state").await.json().await.expect("json");
        state["state_hash"].as_str().expect("hash").to_owned()
    }

    /// The value of the one sample of metric `name`.
    async fn metric(&self, name: &str) -> Option<u64> {
        let text = self.get("/admin/metrics").await.text().await.expect("text");
        (text.lines())
            .find_map(|line| line.strip_prefix(&format!("{name} ")))
            .map(|value| value.parse().expect("an integer"))
    }

    /// A command that changes the state (a deposit to the demo holder's main account).
    async fn deposit(&self, account: &str) {
        let body = json!({"account_id": account, "currency": "EUR", "amount": "1"});
        let r = self.post("/admin/deposits", body).await;
        assert_eq!(
            r.status(),
            200,
            "deposit: {}",
            r.text().await.unwrap_or_default()
        );
    }
}

/// A server on a new data directory: the directory, the server, its admin and the first
/// demo account (whose deposits change the state).
fn started() -> (std::path::PathBuf, common::process::Process, Admin, String) {
    let dir = common::data_dir();
    std::fs::create_dir_all(&dir).expect("data dir");
    let server = common::process::start(&dir, &[]);
    let admin = Admin {
        http: reqwest::Client::new(),
        base: server.admin.clone(),
        key: admin_key(&dir),
    };
    let keys: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("keys-out.json")).expect("keys"))
            .expect("json");
    let account = keys[0]["account_id"].as_str().expect("account").to_owned();
    (dir, server, admin, account)
}

/// A backup of data directory `dir` into `restored`: the snapshot `file` and the
/// directory's small files (configuration, keys, cursor key), no journal.
fn copy_backup(dir: &std::path::Path, restored: &std::path::Path, file: &str) {
    for entry in std::fs::read_dir(dir).expect("listing") {
        let name = entry.expect("entry").file_name();
        let name = name.to_string_lossy();
        let small = ["config.", "keys.", "cursor."]
            .iter()
            .any(|p| name.starts_with(p));
        if small || name == file {
            std::fs::copy(dir.join(&*name), restored.join(&*name)).expect("copied");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_is_taken_on_request_and_a_failed_one_is_told_at_once() {
    let (dir, server, admin, account) = started();

    let first = admin.sequenced().await;
    let r = admin.post("/admin/snapshot", json!({})).await;
    assert_eq!(r.status(), 200);
    let taken: Value = r.json().await.expect("json");
    assert_eq!(taken["written"], true);
    assert_eq!(taken["sequence"].as_u64(), Some(first));
    let file = taken["file"].as_str().expect("file name");
    assert!(dir.join(file).is_file(), "{file} is in the data directory");
    assert_eq!(
        admin.metric("matchbook_snapshots_written_total").await,
        Some(1)
    );
    assert_eq!(
        admin.metric("matchbook_snapshot_last_sequence").await,
        Some(first)
    );

    // The next snapshot's file name taken by a directory: its write fails.
    admin.deposit(&account).await;
    let second = admin.sequenced().await;
    assert!(second > first);
    let blocked = dir.join(format!("snapshot-{second:020}.snap"));
    std::fs::create_dir_all(blocked.join("in-the-way")).expect("blocking directory");
    let r = admin.post("/admin/snapshot", json!({})).await;
    assert_eq!(r.status(), 500);
    let error: Value = r.json().await.expect("json");
    assert_eq!(error, json!({"error": "SNAPSHOT_FAILED"}));
    assert_eq!(
        admin.metric("matchbook_snapshot_failures_total").await,
        Some(1)
    );
    let log = std::fs::read_to_string(dir.join("stderr.log")).expect("log");
    assert!(
        log.contains("a snapshot could not be written"),
        "the failure is logged as it happens: {log}"
    );

    // Asked again with nothing new since the failure: written all the same.
    std::fs::remove_dir_all(&blocked).expect("unblocked");
    let r = admin.post("/admin/snapshot", json!({})).await;
    assert_eq!(r.status(), 200);
    let taken: Value = r.json().await.expect("json");
    assert_eq!(taken["sequence"].as_u64(), Some(second));
    assert_eq!(
        admin.metric("matchbook_snapshots_written_total").await,
        Some(2)
    );
    let hash = admin.state_hash().await;

    // The backup: the snapshot and the directory's small files, no journal.
    let restored = common::data_dir();
    std::fs::create_dir_all(&restored).expect("restored dir");
    copy_backup(&dir, &restored, taken["file"].as_str().expect("file name"));
    drop(server);
    let copy = common::process::start(&restored, &[]);
    let admin = Admin {
        base: copy.admin.clone(),
        ..admin
    };
    assert_eq!(
        admin.state_hash().await,
        hash,
        "the backup holds the same state"
    );
    let r = admin.post("/admin/snapshot", json!({})).await;
    let taken: Value = r.json().await.expect("json");
    assert_eq!(
        taken["sequence"].as_u64(),
        Some(second),
        "it resumed after {second}"
    );
    drop(copy);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&restored);
}

/// Several operators (or scripts) asking at once: each is answered, once a copy made
/// after its own request is on disk, with a file of everything acknowledged before it
/// asked. Requests are numbered and each copy says which it answers, so none waits out its
/// patience (202) for a copy that answered it, and none takes an earlier copy for its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_at_once_are_each_answered_with_a_file_of_everything_before_them() {
    let (dir, server, admin, account) = started();
    for round in 0..3 {
        admin.deposit(&account).await;
        let acknowledged = admin.sequenced().await;
        let asked = (0..6).map(|_| admin.post("/admin/snapshot", json!({})));
        for r in futures_util::future::join_all(asked).await {
            assert_eq!(r.status(), 200, "round {round}");
            let taken: Value = r.json().await.expect("json");
            assert_eq!(taken["written"], true);
            let sequence = taken["sequence"].as_u64().expect("sequence");
            assert!(sequence >= acknowledged, "{sequence} < {acknowledged}");
            let file = taken["file"].as_str().expect("file name");
            assert!(dir.join(file).is_file(), "{file} is in the data directory");
        }
    }
    assert_eq!(
        admin.metric("matchbook_snapshot_failures_total").await,
        Some(0)
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
