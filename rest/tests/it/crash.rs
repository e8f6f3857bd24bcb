//! Crash recovery of the real binary: `matchbook-rest` runs as a child process on loopback,
//! two clients place, cancel and transfer and record every acknowledgement, the server is
//! killed with SIGKILL once a seeded number of orders was acknowledged, restarted on the
//! same data directory, and then:
//! every acknowledged order is there (cancelled if its cancel was acknowledged), every
//! acknowledged transfer is in the balance and none is applied twice, locked funds equal
//! the open orders' reservations, and the state hash equals a read of the data directory
//! while the server runs and an offline recovery of it (newest snapshot, taken under load every 250 commands, plus the journal
//! after it), in which money is conserved, every lock is backed by open orders and open
//! interest is balanced.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common;

use common::process::Process;
use rust_decimal::Decimal;
use serde_json::{Value, json};
use tokio::sync::Notify;

fn start(dir: &std::path::Path) -> Process {
    common::process::start(dir, &["--snapshot-every", "250"])
}

#[derive(Default)]
struct Acked {
    orders: Vec<(String, i64)>,
    cancelled: Vec<String>,
    transfers: u32,
    transfers_sent: u32,
}

/// Sends `request` with `key`: the answer, or `None` once the server is gone (killed).
async fn sent(request: reqwest::RequestBuilder, key: &str) -> Option<reqwest::Response> {
    request.bearer_auth(key).send().await.ok()
}

async fn client(
    base: String,
    key: String,
    sub: String,
    main: String,
    acked: Arc<Mutex<Acked>>,
    progress: Arc<Notify>,
    seed: u64,
) {
    let http = reqwest::Client::new();
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let mut mine: Vec<String> = Vec::new();
    for i in 0u64.. {
        let price = 40_000 + (next() % 10_000) as i64;
        let body = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
            "price": format!("{price}.00"), "amount": "0.01"});
        let order = http.post(format!("{base}/v1/account/orders")).json(&body);
        let Some(r) = sent(order, &key).await else {
            return;
        };
        if r.status() == 200 {
            let v: Value = r.json().await.unwrap_or(Value::Null);
            if let Some(id) = v["order_id"].as_str() {
                acked
                    .lock()
                    .expect("lock")
                    .orders
                    .push((id.to_owned(), price));
                progress.notify_one();
                mine.push(id.to_owned());
            }
        }
        if i % 2 == 1 && !mine.is_empty() {
            let id = mine.remove((next() as usize) % mine.len());
            let cancel = http.delete(format!("{base}/v1/account/orders/{id}"));
            let Some(r) = sent(cancel, &key).await else {
                return;
            };
            if r.status() == 200 {
                acked.lock().expect("lock").cancelled.push(id);
            }
        }
        if i % 5 == 4 {
            acked.lock().expect("lock").transfers_sent += 1;
            let body = json!({"amount": "1", "currency": "EUR", "source_account_id": main,
                "destination_account_id": sub});
            let transfer = http
                .post(format!("{base}/v1/subaccounts/transfers"))
                .json(&body);
            let Some(r) = sent(transfer, &key).await else {
                return;
            };
            if r.status() == 200 {
                acked.lock().expect("lock").transfers += 1;
            }
        }
    }
}

async fn get(http: &reqwest::Client, url: String, key: &str) -> (u16, Value) {
    let r = http.get(url).bearer_auth(key).send().await.expect("sent");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// A EUR balance field, exactly.
fn eur(balances: &Value, field: &str) -> Decimal {
    balances["balances"]
        .as_array()
        .and_then(|l| l.iter().find(|b| b["currency_code"] == "EUR"))
        .and_then(|b| b[field].as_str())
        .and_then(|s| s.parse().ok())
        .expect("a EUR balance")
}

/// A decimal field of an order, exactly.
fn decimal(order: &Value, field: &str) -> Decimal {
    order[field]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect(field)
}

/// The keys the server wrote to `keys-out.json` in `dir` (demo: trader, reader, sub, admin).
fn issued_keys(dir: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(dir.join("keys-out.json")).expect("keys");
    serde_json::from_str(&text).expect("json")
}

async fn crash_and_recover(seed: u64) {
    let dir = std::env::temp_dir().join(format!("matchbook-crash-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut server = start(&dir);
    let keys = issued_keys(&dir);
    let key_of = |i: usize| keys[i]["key"].as_str().expect("key").to_owned();
    let (trader, sub_key, root) = (key_of(0), key_of(2), key_of(3));
    let main = keys[0]["account_id"].as_str().expect("id").to_owned();
    let sub = keys[2]["account_id"].as_str().expect("id").to_owned();
    let acked = Arc::new(Mutex::new(Acked::default()));
    let progress = Arc::new(Notify::new());
    let clients: Vec<_> = (0..2)
        .map(|c| {
            tokio::spawn(client(
                server.base.clone(),
                trader.clone(),
                sub.clone(),
                main.clone(),
                acked.clone(),
                progress.clone(),
                seed * 7 + c,
            ))
        })
        .collect();
    // The kill lands after a seeded number of acknowledgements (so at a seeded point of
    // the flow, whatever the machine's speed), while both clients are still sending, and
    // past the first snapshot (every 250 commands; an order comes with about 0.7 others).
    acknowledged(&acked, &progress, 200 + (seed as usize * 37) % 200).await;
    server.child.kill().expect("SIGKILL");
    let _ = server.child.wait();
    for c in clients {
        let _ = c.await;
    }
    let acked = std::mem::take(&mut *acked.lock().expect("lock"));
    assert!(
        acked.orders.len() > 20,
        "load ran: {} orders",
        acked.orders.len()
    );

    let mut server = start(&dir);
    let http = reqwest::Client::new();
    let (statuses, reserved) = order_statuses(&http, &server.base, &trader).await;
    check_acknowledged_orders(&acked, &statuses, seed);
    check_transfers(&http, &server.base, &sub_key, &acked).await;
    // Locked EUR equals what the open orders reserve.
    let (_, main_balances) = get(
        &http,
        format!("{}/v1/account/balances", server.base),
        &trader,
    )
    .await;
    assert_eq!(
        eur(&main_balances, "locked"),
        reserved,
        "locks match open orders exactly"
    );
    // The running state is exactly a fresh replay of the journal.
    let (_, state) = get(&http, format!("{}/admin/state", server.admin), &root).await;
    // Read while the server still runs (no lock taken, nothing written), through the
    // definition it recorded: the same state.
    let live = matchbook::recorded::load_recorded(&dir).expect("read the live directory");
    assert_eq!(
        state["state_hash"],
        format!("{:016x}", live.loaded.engine.state_hash()),
        "seed {seed}: the directory read while the server runs"
    );
    server.child.kill().expect("stop");
    let _ = server.child.wait();
    let snapshots = matchbook::store::list_snapshots(&dir).expect("list");
    assert!(
        snapshots.len() >= 2,
        "seed {seed}: snapshots were taken under load and at the stop ({snapshots:?})"
    );
    let recovered = recover(&dir);
    assert!(
        recovered.report.snapshot_seq.is_some(),
        "seed {seed}: resumed from a snapshot"
    );
    check_invariants(&recovered.engine, seed);
    assert_eq!(
        state["state_hash"],
        format!("{:016x}", recovered.engine.state_hash()),
        "seed {seed}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Waits (two minutes at the most) until `target` orders are acknowledged.
async fn acknowledged(acked: &Mutex<Acked>, progress: &Notify, target: usize) {
    let reached = async {
        while acked.lock().expect("lock").orders.len() < target {
            progress.notified().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(120), reached)
        .await
        .expect("the clients are acknowledged");
}

/// Every order of the trader's account (open, cancelled, filled), by pages: each one's
/// status by id, and what the open ones reserve in EUR.
async fn order_statuses(
    http: &reqwest::Client,
    base: &str,
    trader: &str,
) -> (std::collections::HashMap<String, String>, Decimal) {
    let mut statuses = std::collections::HashMap::new();
    let mut reserved = Decimal::ZERO;
    let base_query =
        "with_cancelled_and_rejected=true&with_just_filled_inactive=true&max_page_size=100";
    let mut query = base_query.to_owned();
    loop {
        let (status, page) = get(http, format!("{}/v1/account/orders?{query}", base), trader).await;
        assert_eq!(status, 200, "{page}");
        for entry in page["order_history"].as_array().expect("list") {
            let o = &entry["order"];
            let id = o["order_id"].as_str().expect("id").to_owned();
            if o["status"] == "OPEN" {
                reserved += decimal(o, "price") * decimal(o, "amount");
            }
            statuses.insert(id, o["status"].as_str().unwrap_or("").to_owned());
        }
        match page["cursor"].as_str() {
            Some(c) => query = format!("{base_query}&cursor={c}"),
            None => break,
        }
    }
    (statuses, reserved)
}

/// Every acknowledged order is there, and every acknowledged cancel.
fn check_acknowledged_orders(
    acked: &Acked,
    statuses: &std::collections::HashMap<String, String>,
    seed: u64,
) {
    for (id, _) in &acked.orders {
        let status = statuses.get(id).map(String::as_str);
        assert!(
            status.is_some(),
            "acknowledged order {id} lost (seed {seed})"
        );
        if acked.cancelled.contains(id) {
            assert_eq!(
                status,
                Some("CANCELLED"),
                "acknowledged cancel of {id} lost"
            );
        }
    }
}

/// Transfers: every acknowledged one is in, none twice (1 EUR each onto 100,000).
async fn check_transfers(http: &reqwest::Client, base: &str, sub_key: &str, acked: &Acked) {
    let (_, sub_balances) = get(http, format!("{}/v1/account/balances", base), sub_key).await;
    let received = eur(&sub_balances, "available") - Decimal::from(100_000);
    assert!(
        received >= Decimal::from(acked.transfers)
            && received <= Decimal::from(acked.transfers_sent),
        "transfers: {received} received, {} acknowledged, {} sent",
        acked.transfers,
        acked.transfers_sent
    );
}

/// The directory recovered by the library from its snapshot and journal.
fn recover(dir: &std::path::Path) -> matchbook::store::Recovery {
    let options = matchbook::store::StoreOptions {
        sync: matchbook::journal::SyncPolicy::Never,
        ..Default::default()
    };
    matchbook::store::recover(dir, options, || {
        let engine = matchbook::Engine::new(matchbook::demo::config()).expect("demo");
        let market =
            matchbook::market::MarketData::new(engine.instruments().len(), Default::default());
        (engine, market)
    })
    .expect("recover")
}

/// Every account's balances against the recovered state: money neither made nor lost
/// (balances plus fees equal what the demo holders were given), every lock backed by the
/// reservations of that account's open orders, and open interest balanced in every market.
fn check_invariants(engine: &matchbook::Engine, seed: u64) {
    use matchbook::{AccountId, HolderId, Side};
    let mut provisioned = matchbook::Engine::new(matchbook::demo::config()).expect("demo");
    matchbook_config::provision_engine(
        &mut provisioned,
        &matchbook_rest::config::Settings::demo().definition.holders,
        matchbook::Timestamp(0),
        &mut Vec::new(),
    )
    .expect("provision");
    let accounts = |e: &matchbook::Engine| -> Vec<AccountId> {
        (0..e.holder_count() as u32)
            .flat_map(|h| e.holder_accounts(HolderId(h)).expect("holder"))
            .map(|a| a.id)
            .collect()
    };
    let currencies = engine.currencies().len();
    let totals = |e: &matchbook::Engine| -> Vec<i128> {
        let mut sum = vec![0i128; currencies];
        for account in accounts(e) {
            let view = e.account(account).expect("account");
            for (c, b) in view.dense_balances().iter().enumerate() {
                sum[c] += i128::from(b.available) + i128::from(b.locked);
            }
        }
        for (c, fee) in e.fees_collected().iter().enumerate() {
            sum[c] += i128::from(*fee);
        }
        sum
    };
    assert_eq!(
        totals(engine),
        totals(&provisioned),
        "seed {seed}: money conserved"
    );
    let mut open_interest = vec![0i64; engine.instruments().len()];
    for account in accounts(engine) {
        let mut reserved = vec![0i64; currencies];
        for order in engine.open_orders(account) {
            let instrument = engine.instrument(order.instrument()).expect("instrument");
            let currency = match order.side() {
                Side::Buy => instrument.quote,
                Side::Sell => instrument.base,
            };
            reserved[usize::from(currency.0)] += order.reserved();
        }
        let view = engine.account(account).expect("account");
        let locked: Vec<i64> = view.dense_balances().iter().map(|b| b.locked).collect();
        assert_eq!(
            locked, reserved,
            "seed {seed}: locks of account {}",
            account.0
        );
        for position in engine.positions(account) {
            open_interest[usize::from(position.instrument.0)] += position.size;
        }
    }
    assert!(
        open_interest.iter().all(|&net| net == 0),
        "seed {seed}: long and short open interest differ: {open_interest:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_commands_survive_sigkill() {
    let seeds: Vec<u64> = std::env::var("MATCHBOOK_CRASH_SEEDS")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 2, 3]);
    for seed in seeds {
        crash_and_recover(seed).await;
    }
}
