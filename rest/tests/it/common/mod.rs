//! A demo exchange started in-process on loopback (free ports, a fresh data directory) and a
//! small JSON client for the HTTP tests. Each test gets its own exchange and stops it.

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the helpers"
)]

pub mod group;
pub mod process;
pub mod raw;
pub mod ws;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use matchbook_rest::Server;
use matchbook_rest::config::Settings;
use matchbook_rest::setup::IssuedKey;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

static NEXT_DIR: AtomicU32 = AtomicU32::new(0);

/// A fresh, empty data directory for one exchange.
pub fn data_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "matchbook-rest-test-{}-{}",
        std::process::id(),
        NEXT_DIR.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Demo settings on free loopback ports.
pub fn settings(dir: PathBuf) -> Settings {
    let mut s = Settings::demo();
    s.bind = "127.0.0.1:0".parse().expect("address");
    s.admin_bind = "127.0.0.1:0".parse().expect("address");
    s.data_dir = dir;
    s
}

/// A running exchange and a client for it.
pub struct Exchange {
    pub server: Server,
    pub http: reqwest::Client,
    pub base: String,
    pub admin: String,
    /// Demo keys: trader (TRADE + SUBACCOUNT_TRANSFER on main), reader (READ_ONLY on main),
    /// sub (TRADE on the `trading` subaccount), root (ADMIN).
    pub trader: IssuedKey,
    pub reader: IssuedKey,
    pub sub: IssuedKey,
    pub root: IssuedKey,
}

impl Exchange {
    pub async fn start() -> Self {
        Self::with(settings(data_dir())).await
    }

    pub async fn with(settings: Settings) -> Self {
        let server = Server::start(settings).await.expect("server starts");
        let keys = server.issued_keys.clone();
        assert_eq!(keys.len(), 4, "demo keys at first start");
        Self {
            base: format!("http://{}", server.addr),
            admin: format!("http://{}", server.admin_addr),
            http: reqwest::Client::new(),
            trader: keys[0].clone(),
            reader: keys[1].clone(),
            sub: keys[2].clone(),
            root: keys[3].clone(),
            server,
        }
    }

    pub async fn stop(self) {
        let dir = self.server.state.data_dir.clone();
        self.server.stop().await.expect("clean stop");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Sends a request; returns the status and the JSON body (Null when not JSON).
    pub async fn call(
        &self,
        method: Method,
        url: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.http.request(method, url);
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request sent");
        let status = response.status();
        let text = response.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub async fn get(&self, path: &str, key: Option<&str>) -> (StatusCode, Value) {
        self.call(Method::GET, &format!("{}{path}", self.base), key, None)
            .await
    }

    pub async fn post(&self, path: &str, key: &str, body: Value) -> (StatusCode, Value) {
        self.call(
            Method::POST,
            &format!("{}{path}", self.base),
            Some(key),
            Some(body),
        )
        .await
    }

    pub async fn delete(&self, path: &str, key: &str) -> (StatusCode, Value) {
        self.call(
            Method::DELETE,
            &format!("{}{path}", self.base),
            Some(key),
            None,
        )
        .await
    }

    /// The operator's view of the pipeline (`GET /admin/pipeline`); panics unless 200.
    pub async fn pipeline(&self) -> Value {
        let url = format!("{}/admin/pipeline", self.admin);
        let (status, v) = self
            .call(Method::GET, &url, Some(&self.root.key), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        v
    }

    /// An admin call; panics unless it succeeds. A 503 (the engine's input queue was full,
    /// as tests with a queue of one make it while background commands run) is retried, as
    /// its contract asks of any client.
    pub async fn admin(&self, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.admin);
        let mut retries = 0;
        loop {
            let (status, v) = self
                .call(Method::POST, &url, Some(&self.root.key), Some(body.clone()))
                .await;
            if status == StatusCode::SERVICE_UNAVAILABLE && retries < 100 {
                retries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
            assert_eq!(status, StatusCode::OK, "{path}: {v}");
            return v;
        }
    }

    /// A new holder with a funded main account and a key with `scopes` on it.
    pub async fn new_holder(&self, scopes: &[&str]) -> (String, String) {
        let created = self.admin("/admin/holders", json!({})).await;
        let account = created["account_id"].as_str().expect("id").to_owned();
        for (currency, amount) in [("BTC", "10"), ("EUR", "1000000")] {
            self.admin(
                "/admin/deposits",
                json!({"account_id": account, "currency": currency, "amount": amount}),
            )
            .await;
        }
        let key = self
            .admin(
                "/admin/keys",
                json!({"account_id": account, "scopes": scopes}),
            )
            .await;
        (key["key"].as_str().expect("key").to_owned(), account)
    }

    /// Places a BTC_EUR limit order with the given key; returns (status, body).
    pub async fn order(
        &self,
        key: &str,
        side: &str,
        price: &str,
        amount: &str,
        extra: Value,
    ) -> (StatusCode, Value) {
        let mut body = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": side,
            "price": price, "amount": amount});
        if let (Some(map), Value::Object(more)) = (body.as_object_mut(), extra) {
            map.extend(more);
        }
        self.post("/v1/account/orders", key, body).await
    }

    /// Every page of `path` (its query included) that `key` reads by following each page's
    /// `cursor`, in order; each must answer 200. Past 1,000 pages the paging is a loop.
    pub async fn pages(&self, path: &str, key: &str) -> Vec<Value> {
        let joint = if path.contains('?') { '&' } else { '?' };
        let mut pages = Vec::new();
        let mut next = path.to_owned();
        loop {
            let (s, page) = self.get(&next, Some(key)).await;
            assert_eq!(s, StatusCode::OK, "{next}: {page}");
            let cursor = page["cursor"].as_str().map(str::to_owned);
            pages.push(page);
            let Some(cursor) = cursor else {
                return pages;
            };
            assert!(pages.len() < 1_000, "{path}: the pages do not end");
            next = format!("{path}{joint}cursor={cursor}");
        }
    }

    /// A BTC_EUR buy of `maker`'s above every bid of the opening book, then `fills`
    /// immediate-or-cancel sales of `taker`'s, each filling it: the buy's order id.
    pub async fn much_filled_order(&self, maker: &str, taker: &str, fills: usize) -> String {
        let (s, ack) = self.order(maker, "BUY", "100000.00", "5", json!({})).await;
        assert_eq!(s, StatusCode::OK, "{ack}");
        for _ in 0..fills {
            let ioc = json!({"time_in_force": "IMMEDIATE_OR_CANCELLED"});
            let (s, body) = self.order(taker, "SELL", "100000.00", "0.01", ioc).await;
            assert_eq!(s, StatusCode::OK, "{body}");
            assert_eq!(body["filled_amount"], "0.01000", "{body}");
        }
        ack["order_id"].as_str().expect("id").to_owned()
    }
}

/// A small fixed-seed xorshift, so a run (and a failing one) is the same every time.
pub struct Seeded(pub u64);

impl Seeded {
    /// The next number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One string field of every order in an order-history page, in page order.
pub fn order_fields(page: &Value, field: &str) -> Vec<String> {
    page["order_history"]
        .as_array()
        .map(|l| {
            l.iter()
                .filter_map(|e| e["order"][field].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The `error` code of a body.
pub fn code(body: &Value) -> &str {
    body["error"].as_str().unwrap_or("<no error field>")
}
