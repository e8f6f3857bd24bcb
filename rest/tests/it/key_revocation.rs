//! Listing API keys (`GET /admin/keys`, digests only) and revoking one (`POST
//! /admin/keys/revoke`): refused at once by REST and by the stream sessions it
//! authenticated (401 `APIKEY_REVOKED`), still refused after a restart (a configured one
//! too), named by its text or its digest; the last admin key stays; keys the
//! configuration declares never go into the key file, so taking one out of the
//! configuration revokes it; a key is issued with a scope at least.

use crate::common;

use common::ws::{Socket, connect, next, send};
use common::{Exchange, code, data_dir, settings};
use futures_util::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::Digest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

fn digest(key: &str) -> String {
    sha2::Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Sends `request` with `key`: the status and the JSON body (Null when not JSON).
async fn send_with(request: reqwest::RequestBuilder, key: &str) -> (StatusCode, Value) {
    let response = request.bearer_auth(key).send().await.expect("sent");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn revoke(x: &Exchange, admin_key: &str, body: Value) -> (StatusCode, Value) {
    let url = format!("{}/admin/keys/revoke", x.admin);
    x.call(Method::POST, &url, Some(admin_key), Some(body))
        .await
}

/// `GET /admin/keys`: this node's keys.
async fn keys(x: &Exchange) -> Vec<Value> {
    let url = format!("{}/admin/keys", x.admin);
    let (status, v) = x.call(Method::GET, &url, Some(&x.root.key), None).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    v["keys"].as_array().expect("a list").clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_is_refused_at_once_and_after_a_restart() {
    let dir = data_dir();
    let x = Exchange::with(settings(dir.clone())).await;
    let (leaked, account) = x.new_holder(&["TRADE"]).await;
    let (kept, _) = x.new_holder(&["TRADE"]).await;
    let (status, _) = x.order(&leaked, "BUY", "100.00", "0.1", json!({})).await;
    assert_eq!(status, StatusCode::OK);

    bad_revocations_and_the_key_list(&x, &leaked).await;

    let (status, v) = revoke(&x, &x.root.key, json!({"key": leaked})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["digest"], digest(&leaked).as_str());
    assert_eq!(v["account_id"], account.as_str());
    assert_eq!(v["scopes"], json!(["TRADE"]));
    assert_eq!(v["in_configuration"], false);
    // The public exchange's code for a revoked key (it was INVALID_APIKEY, as for a typo).
    let (status, v) = x.get("/v1/account/balances", Some(&leaked)).await;
    assert_eq!(
        (status, code(&v)),
        (StatusCode::UNAUTHORIZED, "APIKEY_REVOKED")
    );
    let (status, v) = x.order(&leaked, "BUY", "100.00", "0.1", json!({})).await;
    assert_eq!(
        (status, code(&v)),
        (StatusCode::UNAUTHORIZED, "APIKEY_REVOKED")
    );
    let (status, v) = x.get("/v1/account/balances", Some("mb_never-issued")).await;
    assert_eq!(
        (status, code(&v)),
        (StatusCode::UNAUTHORIZED, "INVALID_APIKEY")
    );
    let (status, v) = revoke(&x, &x.root.key, json!({"key": leaked})).await;
    assert_eq!((status, code(&v)), (StatusCode::NOT_FOUND, "KEY_NOT_FOUND"));
    // By digest, as the key file holds it (upper case accepted).
    let by_digest = json!({"digest": digest(&x.reader.key).to_uppercase()});
    assert_eq!(revoke(&x, &x.root.key, by_digest).await.0, StatusCode::OK);
    let listed = keys(&x).await;
    assert_eq!(listed.len(), 4, "{listed:?}");
    assert!(
        !listed
            .iter()
            .any(|k| k["digest"] == digest(&leaked).as_str())
    );

    let (root, trader, reader) = (
        x.root.key.clone(),
        x.trader.key.clone(),
        x.reader.key.clone(),
    );
    x.server.stop().await.expect("clean stop");
    let server = matchbook_rest::Server::start(settings(dir.clone()))
        .await
        .expect("restarts");
    assert!(server.issued_keys.is_empty(), "no demo keys again");
    // A revocation appends to the revoked keys' file; the start rewrites the key file.
    let file = std::fs::read_to_string(dir.join("keys.json")).expect("key file");
    assert!(!file.contains(&digest(&leaked)) && !file.contains(&digest(&reader)));
    assert!(file.contains(&digest(&kept)));
    let http = reqwest::Client::new();
    let balances = format!("http://{}/v1/account/balances", server.addr);
    for (key, expected) in [
        (&leaked, (StatusCode::UNAUTHORIZED, "APIKEY_REVOKED")),
        (&reader, (StatusCode::UNAUTHORIZED, "APIKEY_REVOKED")),
        (&kept, (StatusCode::OK, "")),
        (&trader, (StatusCode::OK, "")),
    ] {
        let (status, v) = send_with(http.get(&balances), key).await;
        let error = v.get("error").and_then(Value::as_str).unwrap_or_default();
        assert_eq!((status, error), expected, "{key} after the restart");
    }
    let pipeline = http.get(format!("http://{}/admin/pipeline", server.admin_addr));
    let (status, _) = send_with(pipeline, &root).await;
    assert_eq!(status, StatusCode::OK, "the admin key stays");
    server.stop().await.expect("clean stop");
    let _ = std::fs::remove_dir_all(dir);
}

/// Revocations refused (no key, both forms, a bad digest, a trading key on the admin
/// listener), and the key list: the demo's four and two more, by digest, never a key's
/// text.
async fn bad_revocations_and_the_key_list(x: &Exchange, leaked: &str) {
    for bad in [
        json!({}),
        json!({"key": leaked, "digest": digest(leaked)}),
        json!({"digest": "abc"}),
    ] {
        let (status, v) = revoke(x, &x.root.key, bad.clone()).await;
        assert_eq!(
            (status, code(&v)),
            (StatusCode::BAD_REQUEST, "INVALID_KEY"),
            "{bad}"
        );
    }
    let (status, v) = revoke(x, &x.trader.key, json!({"key": leaked})).await;
    assert!(
        status.is_client_error(),
        "a trading key on the admin listener: {v}"
    );

    let listed = keys(x).await;
    assert_eq!(listed.len(), 6, "the demo's four and two: {listed:?}");
    assert!(
        listed
            .iter()
            .any(|k| k["digest"] == digest(leaked).as_str())
    );
    let text = serde_json::to_string(&listed).expect("JSON");
    assert!(
        !text.contains(leaked) && !text.contains(&x.root.key),
        "never a key text"
    );
}

/// A session authenticated with `key`, subscribed to its account's channels, past their
/// snapshots.
async fn private_session(x: &Exchange, key: &str) -> Socket {
    let mut ws = connect(x, "/").await;
    send(&mut ws, json!({"type": "AUTHENTICATE", "api_token": key})).await;
    assert_eq!(next(&mut ws).await["type"], "AUTHENTICATED");
    let channels = json!([{"name": "TRADING"}, {"name": "ACCOUNT_HISTORY"}]);
    send(&mut ws, json!({"type": "SUBSCRIBE", "channels": channels})).await;
    assert_eq!(next(&mut ws).await["type"], "SUBSCRIPTIONS");
    while next(&mut ws).await["type"] != "BALANCES_SNAPSHOT" {}
    ws
}

/// The frames up to the close that ends `ws`, and its code.
async fn until_closed(ws: &mut Socket) -> (Vec<Value>, Option<CloseCode>) {
    let mut frames = Vec::new();
    loop {
        match ws.next().await {
            Some(Ok(Message::Close(frame))) => return (frames, frame.map(|f| f.code)),
            Some(Ok(Message::Text(text))) => {
                frames.push(serde_json::from_str::<Value>(&text).expect("JSON"));
            }
            Some(Ok(_)) => {}
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

/// A session kept acting with a revoked key: it placed orders and was sent the account's
/// updates for as long as it stayed open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_session_ends_when_its_key_is_revoked() {
    let x = common::ws::exchange().await;
    let order = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
        "amount": "0.1", "price": "100.00"});
    // What the account does next (a deposit) reaches the session: it is closed instead.
    let (watched, account) = x.new_holder(&["TRADE"]).await;
    let mut ws = private_session(&x, &watched).await;
    assert_eq!(
        revoke(&x, &x.root.key, json!({"key": watched})).await.0,
        StatusCode::OK
    );
    let deposit = json!({"account_id": account, "currency": "EUR", "amount": "5"});
    x.admin("/admin/deposits", deposit).await;
    let (frames, close) = until_closed(&mut ws).await;
    assert_eq!(close, Some(CloseCode::Library(4003)), "{frames:?}");
    assert_eq!(frames.len(), 1, "only the refusal: {frames:?}");
    assert_eq!(frames[0]["error"], "AUTHENTICATION_FAILED");
    // An order sent after the revocation is not placed.
    let (trading, account) = x.new_holder(&["TRADE"]).await;
    let mut ws = private_session(&x, &trading).await;
    assert_eq!(
        revoke(&x, &x.root.key, json!({"key": trading})).await.0,
        StatusCode::OK
    );
    send(&mut ws, json!({"type": "CREATE_ORDER", "order": order})).await;
    let (frames, close) = until_closed(&mut ws).await;
    assert_eq!(close, Some(CloseCode::Library(4003)), "{frames:?}");
    assert_eq!(frames.len(), 1, "only the refusal: {frames:?}");
    let key = x
        .admin(
            "/admin/keys",
            json!({"account_id": account, "scopes": ["READ_ONLY"]}),
        )
        .await;
    let (_, open) = x.get("/v1/account/orders", key["key"].as_str()).await;
    assert_eq!(open["order_history"], json!([]), "no order placed: {open}");
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_admin_key_is_kept_until_another_is_issued() {
    let x = Exchange::start().await;
    let root = x.root.key.clone();
    let (status, v) = revoke(&x, &root, json!({"key": root})).await;
    assert_eq!(
        (status, code(&v)),
        (StatusCode::BAD_REQUEST, "LAST_ADMIN_KEY")
    );
    let main = x.root.account_id.clone();
    let second = x
        .admin(
            "/admin/keys",
            json!({"account_id": main, "scopes": ["ADMIN"]}),
        )
        .await["key"]
        .as_str()
        .expect("key")
        .to_owned();
    let (status, v) = revoke(&x, &second, json!({"key": root})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let (status, _) = revoke(&x, &root, json!({"key": second})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the revoked admin key");
    let (status, v) = revoke(&x, &second, json!({"key": second})).await;
    assert_eq!(
        (status, code(&v)),
        (StatusCode::BAD_REQUEST, "LAST_ADMIN_KEY")
    );
    x.stop().await;
}

/// A key declared in the configuration was written into the key file with the next key
/// issued through the admin listener, so taking it out of the configuration (the way to
/// retire it) left it valid for good. Revoked through the admin listener, it came back at
/// the next start while the configuration still declared it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_key_stays_out_of_the_key_file() {
    let (configured, admin) = ("mb_configured_trading_key", "mb_configured_admin_key");
    let dir = data_dir();
    let config = |keys: &[(&str, &str)]| {
        let mut text = format!(
            "[server]\nbind = \"127.0.0.1:0\"\nadmin_bind = \"127.0.0.1:0\"\ndata_dir = \"{}\"\n\
             [[holders]]\nname = \"alice\"\n[[holders.accounts]]\nname = \"main\"\n",
            dir.display()
        );
        for (key, scope) in keys {
            text += &format!(
                "[[keys]]\ndigest = \"{}\"\nholder = \"alice\"\naccount = \"main\"\n\
                 scopes = [\"{scope}\"]\n",
                digest(key)
            );
        }
        let path = dir.with_extension("toml");
        std::fs::write(&path, text).expect("config written");
        matchbook_rest::config::Settings::from_file(&path).expect("valid config")
    };
    let both = [(configured, "TRADE"), (admin, "ADMIN")];
    let server = matchbook_rest::Server::start(config(&both))
        .await
        .expect("starts");
    let http = reqwest::Client::new();
    let admin_url = format!("http://{}/admin", server.admin_addr);
    let holders = http.post(format!("{admin_url}/holders")).json(&json!({}));
    let (_, issued) = send_with(holders, admin).await;
    let body = json!({"account_id": issued["account_id"], "scopes": ["READ_ONLY"]});
    let (status, _) = send_with(http.post(format!("{admin_url}/keys")).json(&body), admin).await;
    assert_eq!(status, StatusCode::OK);
    let file = std::fs::read_to_string(dir.join("keys.json")).expect("key file");
    assert!(
        !file.contains(&digest(configured)) && !file.contains(&digest(admin)),
        "configured keys stay in the configuration: {file}"
    );
    let revoke = http.post(format!("{admin_url}/keys/revoke"));
    let (_, revoked) = send_with(revoke.json(&json!({"key": configured})), admin).await;
    assert_eq!(revoked["in_configuration"], true, "{revoked}");
    let (_, listed) = send_with(http.get(format!("{admin_url}/keys")), admin).await;
    let configured_flags: Vec<(&str, bool)> = (listed["keys"].as_array().expect("list").iter())
        .map(|k| {
            (
                k["scopes"][0].as_str().unwrap_or(""),
                k["in_configuration"] == true,
            )
        })
        .collect();
    assert_eq!(
        configured_flags,
        [("ADMIN", true), ("READ_ONLY", false)],
        "the configured admin key and the issued one: {listed}"
    );
    server.stop().await.expect("clean stop");

    // Still declared by the configuration: it came back at the next start; it stays
    // revoked now, as it does in a replicated group.
    let server = matchbook_rest::Server::start(config(&both))
        .await
        .expect("restarts");
    let balances = http.get(format!("http://{}/v1/account/balances", server.addr));
    let (status, v) = send_with(balances, configured).await;
    assert_eq!(
        (status, code(&v)),
        (StatusCode::UNAUTHORIZED, "APIKEY_REVOKED")
    );
    server.stop().await.expect("clean stop");

    // Taken out of the configuration: refused from the next start on.
    let server = matchbook_rest::Server::start(config(&[(admin, "ADMIN")]))
        .await
        .expect("restarts");
    let balances = http.get(format!("http://{}/v1/account/balances", server.addr));
    assert_eq!(
        send_with(balances, configured).await.0,
        StatusCode::UNAUTHORIZED
    );
    server.stop().await.expect("clean stop");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(dir.with_extension("toml"));
}

/// `"scopes": []` issued a key that read the account all the same (any valid key reads):
/// a slip for `READ_ONLY` or a missing scope, now refused; a scope given twice is kept once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_needs_a_scope_and_has_each_once() {
    let x = Exchange::start().await;
    let url = format!("{}/admin/keys", x.admin);
    let account = x.trader.account_id.clone();
    let empty = json!({"account_id": account, "scopes": []});
    let (status, v) = x
        .call(Method::POST, &url, Some(&x.root.key), Some(empty))
        .await;
    assert_eq!(
        (status, code(&v)),
        (StatusCode::BAD_REQUEST, "INVALID_SCOPES")
    );
    let twice = json!({"account_id": account, "scopes": ["TRADE", "READ_ONLY", "TRADE"]});
    let issued = x.admin("/admin/keys", twice).await;
    assert_eq!(issued["scopes"], json!(["TRADE", "READ_ONLY"]));
    x.stop().await;
}
