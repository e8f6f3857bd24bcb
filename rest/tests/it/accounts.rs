//! Accounts, balances, fees and transfers over HTTP, with every transfer row of spec
//! section 7, scopes, authentication and rate limiting.

use crate::common;

use common::{Exchange, code, data_dir, order_fields, settings};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subaccounts_balances_and_fees() {
    let x = Exchange::start().await;
    let (status, list) = x.get("/v1/subaccounts", Some(&x.sub.key)).await;
    assert_eq!(status, StatusCode::OK);
    let accounts = list["subaccounts"].as_array().expect("array");
    assert_eq!(
        accounts.len(),
        2,
        "the whole holder, even from a subaccount key"
    );
    assert_eq!(accounts[0]["name"], "main");
    assert_eq!(accounts[0]["created"], "1970-01-01T00:00:00.000Z");
    assert_eq!(accounts[1]["name"], "trading");
    assert_eq!(accounts[1]["state"], "ACTIVE");
    assert_eq!(list["account_holder"], x.trader.holder.as_str());
    for field in ["account_equity", "margin_available", "margin_used"] {
        assert!(accounts[0][field].is_string(), "{field}");
    }

    let (_, balances) = x.get("/v1/account/balances", Some(&x.reader.key)).await;
    assert_eq!(balances["account_id"], x.reader.account_id.as_str());
    let btc = balances["balances"]
        .as_array()
        .expect("array")
        .iter()
        .find(|b| b["currency_code"] == "BTC")
        .expect("BTC balance")
        .clone();
    assert_eq!(btc["available"], "10.00000000");
    assert_eq!(btc["locked"], "0.00000000");
    assert_eq!(balances["account_equity"], "1000000.00000000", "USD cash");
    let (status, body) = x
        .get("/v1/account/balances?currency=BTC", Some(&x.reader.key))
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::BAD_REQUEST, "UNEXPECTED_PARAMETERS")
    );

    let (_, fees) = x.get("/v1/account/fees", Some(&x.reader.key)).await;
    assert_eq!(fees["active_fee_tiers"][0]["fee_group_id"], "SPOT");
    assert_eq!(fees["active_fee_tiers"][1]["fee_group_id"], "FUTURES");
    assert_eq!(fees["active_fee_tiers"][0]["taker_fee"], "0.1500");
    assert!(fees["running_volumes"][0]["volume"].is_number());
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transfers_follow_every_rule() {
    let x = Exchange::start().await;
    let (main, sub) = (x.trader.account_id.clone(), x.sub.account_id.clone());
    a_transfer_moves_funds(&x, &main, &sub).await;
    refused_transfers(&x, &main, &sub).await;
    transfers_need_the_scope_and_no_derisk(&x, &main, &sub).await;
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_scopes_and_listeners() {
    let x = Exchange::start().await;
    let (s, body) = x.get("/v1/account/balances", None).await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::UNAUTHORIZED, "MISSING_CREDENTIALS")
    );
    let (s, body) = x.get("/v1/account/balances", Some("mb_not_a_key")).await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::UNAUTHORIZED, "INVALID_APIKEY")
    );
    let (s, body) = x
        .call(
            reqwest::Method::GET,
            &format!("{}/v1/account/balances", x.base),
            None,
            None,
        )
        .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{body}");
    // A read-only key cannot trade; an admin key is not a trading key; a trading key never
    // reaches the admin listener.
    let (s, body) = x
        .order(&x.reader.key, "BUY", "100.00", "0.5", json!({}))
        .await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::FORBIDDEN, "MISSING_PERMISSION")
    );
    let (s, body) = x.get("/v1/account/balances", Some(&x.root.key)).await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::FORBIDDEN, "MISSING_PERMISSION")
    );
    let (s, body) = x
        .call(
            reqwest::Method::POST,
            &format!("{}/admin/holders", x.admin),
            Some(&x.trader.key),
            Some(json!({})),
        )
        .await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::FORBIDDEN, "MISSING_PERMISSION")
    );
    let (s, _) = x
        .call(
            reqwest::Method::POST,
            &format!("{}/admin/holders", x.base),
            Some(&x.root.key),
            Some(json!({})),
        )
        .await;
    assert_eq!(
        s,
        StatusCode::NOT_FOUND,
        "admin routes are not on the public listener"
    );
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_per_key_and_per_holder() {
    let mut s = settings(data_dir());
    s.rate_limit_per_minute = 5;
    let x = Exchange::with(s).await;
    let mut statuses = Vec::new();
    for _ in 0..7 {
        statuses.push(x.get("/v1/account/balances", Some(&x.reader.key)).await);
    }
    let ok = statuses
        .iter()
        .filter(|(s, _)| *s == StatusCode::OK)
        .count();
    let limited: Vec<_> = statuses
        .iter()
        .filter(|(s, _)| *s == StatusCode::TOO_MANY_REQUESTS)
        .collect();
    // A minute boundary may fall inside the loop and reopen the window once.
    assert!((5..=7).contains(&ok), "{ok}");
    assert!(limited.iter().all(|(_, b)| code(b) == "RATELIMIT"));
    assert!(ok == 5 || ok > 5 && limited.len() < 2);
    // Another key of the same holder has its own per-key window for balances...
    let (s, _) = x.get("/v1/account/balances", Some(&x.trader.key)).await;
    assert_eq!(s, StatusCode::OK);
    // ...but order lookups are limited per holder, across its keys.
    let mut limited = 0;
    for key in [&x.trader.key, &x.sub.key].iter().cycle().take(12) {
        let (s, _) = x
            .get(
                "/v1/account/orders/00000040-0000-8180-8000-000000000001",
                Some(key),
            )
            .await;
        limited += usize::from(s == StatusCode::TOO_MANY_REQUESTS);
    }
    assert!(limited >= 2, "{limited}");
    // History listings count against the key's window too: each walks the account's
    // history on the market stage, which every reader and stream shares.
    let listings = [
        "/v1/account/orders",
        "/v1/account/trades",
        "/v1/account/futures/positions-history",
        "/v1/account/futures/funding-payments",
    ];
    let mut limited = std::collections::BTreeSet::new();
    for path in listings.iter().cycle().take(16) {
        let (s, body) = x.get(path, Some(&x.sub.key)).await;
        if s == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(code(&body), "RATELIMIT");
            limited.insert(*path);
        }
    }
    // Six to eleven answers over the limit; any minute boundary reopens the window once.
    assert!(limited.len() >= 3, "{limited:?}");
    // Unlimited endpoints stay open.
    let (s, _) = x.get("/v1/subaccounts", Some(&x.reader.key)).await;
    assert_eq!(s, StatusCode::OK);
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_survive_a_restart() {
    let dir = data_dir();
    let x = Exchange::with(settings(dir.clone())).await;
    let key = x.trader.key.clone();
    x.server.stop().await.expect("clean stop");
    let server = matchbook_rest::Server::start(settings(dir.clone()))
        .await
        .expect("restart");
    assert!(server.issued_keys.is_empty(), "no new keys on a restart");
    let response = reqwest::Client::new()
        .get(format!("http://{}/v1/account/balances", server.addr))
        .bearer_auth(&key)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    let file = std::fs::read_to_string(dir.join("keys.json")).expect("key file");
    assert!(!file.contains(&key), "only digests are stored");
    server.stop().await.expect("stop");
    let _ = std::fs::remove_dir_all(dir);
}

/// A client paging its order history through a restart: the cursor of the first page was
/// signed with a key made at random by each process, so the next page answered 400
/// `INVALID_CURSOR`. The key is now the data directory's (`cursor.key`, owner-only).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cursors_survive_a_restart() {
    use std::os::unix::fs::PermissionsExt;
    let dir = data_dir();
    let x = Exchange::with(settings(dir.clone())).await;
    let key = x.trader.key.clone();
    for price in ["101.00", "102.00", "103.00"] {
        let (s, body) = x.order(&key, "BUY", price, "0.1", json!({})).await;
        assert_eq!(s, StatusCode::OK, "{body}");
    }
    let list = "/v1/account/orders?with_cancelled_and_rejected=true&max_page_size=2";
    let (s, first) = x.get(list, Some(&key)).await;
    assert_eq!(s, StatusCode::OK, "{first}");
    let cursor = first["cursor"].as_str().expect("a second page").to_owned();
    x.server.stop().await.expect("clean stop");
    let again = matchbook_rest::Server::start(settings(dir.clone()))
        .await
        .expect("restart");
    let response = reqwest::Client::new()
        .get(format!("http://{}{list}&cursor={cursor}", again.addr))
        .bearer_auth(&key)
        .send()
        .await
        .expect("sent");
    let s = response.status();
    let second: Value = response.json().await.expect("json");
    assert_eq!(s, StatusCode::OK, "{second}");
    let ids = |page: &Value| order_fields(page, "order_id");
    assert_eq!(ids(&second).len(), 1, "{second}");
    assert!(!ids(&first).contains(&ids(&second)[0]), "{first} {second}");
    let mode = std::fs::metadata(dir.join("cursor.key"))
        .expect("kept")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    again.stop().await.expect("stop");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blp_threshold_and_closed_subaccounts() {
    let x = Exchange::start().await;
    let holder = x.trader.holder.clone();
    let blp = x
        .admin(
            "/admin/subaccounts",
            json!({"holder_id": holder, "name": "liquidity", "kind": "blp"}),
        )
        .await["account_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let main = x.trader.account_id.clone();
    x.admin(
        "/admin/deposits",
        json!({"account_id": blp, "currency": "EUR", "amount": "1000"}),
    )
    .await;
    x.admin(
        "/admin/blp-threshold",
        json!({"account_id": blp, "currency": "EUR", "amount": "800"}),
    )
    .await;
    let out = |amount: &str| {
        json!({"amount": amount, "currency": "EUR", "source_account_id": blp,
            "destination_account_id": main})
    };
    let (s, body) = x
        .post("/v1/subaccounts/transfers", &x.trader.key, out("300"))
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "below the BLP minimum: {body}");
    assert!(code(&body).contains("minimum"));
    let (s, _) = x
        .post("/v1/subaccounts/transfers", &x.trader.key, out("200"))
        .await;
    assert_eq!(s, StatusCode::OK);

    // A closed subaccount stays listed, without balances, and takes no transfers in.
    x.admin(&format!("/admin/accounts/{blp}/close"), json!({}))
        .await;
    let (_, list) = x.get("/v1/subaccounts", Some(&x.reader.key)).await;
    let closed = list["subaccounts"]
        .as_array()
        .expect("array")
        .iter()
        .find(|a| a["account_id"] == blp.as_str())
        .expect("listed")
        .clone();
    assert_eq!(closed["state"], "CLOSED");
    assert_eq!(closed["balances"], json!([]));
    let back = json!({"amount": "1", "currency": "EUR", "source_account_id": main,
        "destination_account_id": blp});
    let (s, body) = x
        .post("/v1/subaccounts/transfers", &x.trader.key, back)
        .await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, "ACCOUNT_CLOSED")
    );
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_file_sets_holders_keys_and_limits() {
    use sha2::Digest;
    let key = "mb_configured_key_for_tests";
    let digest: String = sha2::Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let dir = data_dir();
    let path = write_config_file(&dir, &digest);
    let settings = matchbook_rest::config::Settings::from_file(&path).expect("valid config");
    assert_eq!(settings.stream_buffer, 64);
    assert_eq!(settings.stream_heartbeat, std::time::Duration::from_secs(3));
    let server = matchbook_rest::Server::start(settings)
        .await
        .expect("starts");
    assert!(
        server.issued_keys.is_empty(),
        "no demo keys with a config file"
    );
    check_the_configured_server(&server, key).await;
    server.stop().await.expect("stop");
    restarts_and_refusals(&dir, &path).await;
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_dir_all(dir);
}

/// A transfer's body: `amount` of BTC from account `from` to account `to`.
fn transfer_body(amount: Value, from: &str, to: &str) -> Value {
    json!({"amount": amount, "currency": "BTC", "source_account_id": from,
        "destination_account_id": to})
}

/// A transfer to the subaccount, cut to 8 decimals: its record and the new balance.
async fn a_transfer_moves_funds(x: &Exchange, main: &str, sub: &str) {
    let (status, body) = x
        .post(
            "/v1/subaccounts/transfers",
            &x.trader.key,
            transfer_body(json!("1.123456789"), main, sub),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let record = &body["transfer"];
    assert_eq!(record["amount"], "1.12345678", "truncated to 8 decimals");
    assert_eq!(record["source_account_id"], main);
    assert_eq!(record["account_holder"], x.trader.holder.as_str());
    assert!(record["transfer_id"].is_string() && record["time"].is_string());
    let (_, balances) = x.get("/v1/account/balances", Some(&x.sub.key)).await;
    let btc = balances["balances"]
        .as_array()
        .expect("array")
        .iter()
        .find(|b| b["currency_code"] == "BTC")
        .expect("BTC")
        .clone();
    assert_eq!(btc["available"], "2.12345678");
}

/// Transfers refused with the public exchange's messages: no amount, bad amounts, the
/// same account, another holder's or an unknown account, more than the balance.
async fn refused_transfers(x: &Exchange, main: &str, sub: &str) {
    let (_, outsider) = x.new_holder(&["TRADE"]).await;
    let cases = [
        (
            json!({"currency": "BTC", "source_account_id": main, "destination_account_id": sub}),
            StatusCode::BAD_REQUEST,
            "amount is required.",
        ),
        (
            transfer_body(json!("1e5"), main, sub),
            StatusCode::BAD_REQUEST,
            "invalid amount.",
        ),
        (
            transfer_body(json!("-1"), main, sub),
            StatusCode::BAD_REQUEST,
            "invalid amount.",
        ),
        (
            transfer_body(json!("1"), main, main),
            StatusCode::BAD_REQUEST,
            "source_account_id and destination_account_id cannot be the same.",
        ),
        (
            transfer_body(json!("1"), main, &outsider),
            StatusCode::FORBIDDEN,
            "Permission denied.",
        ),
        (
            transfer_body(json!("1"), &outsider, main),
            StatusCode::FORBIDDEN,
            "Permission denied.",
        ),
        (
            transfer_body(json!("1"), "not-a-uuid", main),
            StatusCode::FORBIDDEN,
            "Permission denied.",
        ),
    ];
    for (body, status, want) in cases {
        let (s, reply) = x
            .post("/v1/subaccounts/transfers", &x.trader.key, body.clone())
            .await;
        assert_eq!((s, code(&reply)), (status, want), "{body}");
    }
    let (s, reply) = x
        .post(
            "/v1/subaccounts/transfers",
            &x.trader.key,
            transfer_body(json!("1000"), main, sub),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let message = code(&reply);
    assert!(
        message.contains(main) && message.contains("1000.00000000"),
        "names the account, its balance and the amount: {message}"
    );
}

/// A key without the transfer scope, and an account in de-risk, are refused.
async fn transfers_need_the_scope_and_no_derisk(x: &Exchange, main: &str, sub: &str) {
    let (s, reply) = x
        .post(
            "/v1/subaccounts/transfers",
            &x.sub.key,
            transfer_body(json!("0.1"), sub, main),
        )
        .await;
    assert_eq!(
        (s, code(&reply)),
        (StatusCode::FORBIDDEN, "Permission denied.")
    );
    x.admin("/admin/derisk", json!({"account_id": main, "on": true}))
        .await;
    let (s, reply) = x
        .post(
            "/v1/subaccounts/transfers",
            &x.trader.key,
            transfer_body(json!("0.1"), main, sub),
        )
        .await;
    assert_eq!(
        (s, code(&reply)),
        (StatusCode::UNPROCESSABLE_ENTITY, "USER_MGMT_USER_IN_DERISK")
    );
}

/// A configuration file for a server in `dir`: limits, stream settings, a holder with two
/// accounts and deposits, and a key of digest `digest`. Its path.
fn write_config_file(dir: &std::path::Path, digest: &str) -> std::path::PathBuf {
    let text = format!(
        r#"
        [server]
        bind = "127.0.0.1:0"
        admin_bind = "127.0.0.1:0"
        data_dir = "{}"
        rate_limit_per_minute = 3
        stream_buffer = 64
        stream_heartbeat_seconds = 3

        [[holders]]
        name = "alice"
        [[holders.accounts]]
        name = "main"
        deposits = {{ EUR = "1000", BTC = "1" }}
        [[holders.accounts]]
        name = "bots"

        [[keys]]
        digest = "{digest}"
        holder = "alice"
        account = "main"
        scopes = ["TRADE"]
        "#,
        dir.display()
    );
    let path = std::env::temp_dir().join(format!("matchbook-config-{}.toml", std::process::id()));
    std::fs::write(&path, text).expect("write config");
    path
}

/// The server the file configured: no demo keys, the key's rate limit of 3 a minute, the
/// holder's subaccount, and the demo markets when the file names none.
async fn check_the_configured_server(server: &matchbook_rest::Server, key: &str) {
    let http = reqwest::Client::new();
    let url = format!("http://{}/v1/account/balances", server.addr);
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(
            http.get(&url)
                .bearer_auth(key)
                .send()
                .await
                .expect("sent")
                .status(),
        );
    }
    assert_eq!(statuses[0], StatusCode::OK);
    assert!(
        statuses.contains(&StatusCode::TOO_MANY_REQUESTS),
        "limit 3: {statuses:?}"
    );
    let list: serde_json::Value = http
        .get(format!("http://{}/v1/subaccounts", server.addr))
        .bearer_auth(key)
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    assert_eq!(list["subaccounts"][1]["name"], "bots");
    let status = http
        .get(format!("http://{}/v1/instruments", server.addr))
        .send()
        .await
        .expect("sent")
        .status();
    assert_eq!(
        status,
        StatusCode::OK,
        "the demo markets when the file names none"
    );
}

/// The data directory keeps a copy of the file it was first started with, and a shutdown
/// snapshot; the copy starts it again, its recorded definition reads back, a
/// configuration changed in code is not recorded, and another configuration is refused.
async fn restarts_and_refusals(dir: &std::path::Path, path: &std::path::Path) {
    let copy = dir.join(matchbook_rest::server::CONFIG_COPY);
    assert_eq!(
        std::fs::read_to_string(&copy).expect("copied"),
        std::fs::read_to_string(path).expect("original")
    );
    assert_eq!(
        matchbook::store::list_snapshots(dir).expect("list").len(),
        1,
        "snapshot at the stop"
    );
    let settings = matchbook_rest::config::Settings::from_file(&copy).expect("valid copy");
    let server = matchbook_rest::Server::start(settings)
        .await
        .expect("restarts from its copy");
    server.stop().await.expect("stop");
    // The definition recorded beside the pin builds the pinned configuration again: the
    // directory reads back with the file's holders.
    let read = matchbook::recorded::load_recorded(dir).expect("read");
    assert_eq!(read.exchange.holders[0].name, "alice");
    assert_eq!(read.loaded.engine.holder_count(), 1);
    // A configuration changed in code is one its definition does not build: not recorded.
    let mut changed = matchbook_rest::config::Settings::from_file(path).expect("valid");
    changed.data_dir = data_dir();
    changed.engine.max_open_orders += 1;
    let server = matchbook_rest::Server::start(changed.clone())
        .await
        .expect("starts");
    server.stop().await.expect("stop");
    let recorded = changed.data_dir.join(matchbook_config::RECORDED_DEFINITION);
    assert!(!recorded.exists(), "a definition of another configuration");
    let _ = std::fs::remove_dir_all(&changed.data_dir);
    let mut other = matchbook_rest::config::Settings::from_file(path).expect("valid");
    other.engine.max_open_orders += 1;
    match matchbook_rest::Server::start(other).await {
        Err(e) => assert!(e.to_string().contains("another configuration"), "{e}"),
        Ok(_) => panic!("a changed configuration must be refused"),
    }
}
