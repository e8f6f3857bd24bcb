//! Nesting bombs from every door (issue 69): bodies nested 127, 128, 129, 2,000 and 10,000
//! levels and up to the body limit, objects and arrays, at the top and inside a field, sent
//! to every route both listeners describe in `/openapi.json`, with and without a key;
//! query strings of the same brackets; and every stream message type nested alike. The
//! server runs as a child process, so a stack overflow shows here as a process that
//! stopped answering rather than as this test binary aborting. Until 2026-12 the first
//! 10,000-deep object sent to `POST /v1/account/orders` killed the process.

use crate::common;

use std::path::Path;

use common::process::{Process, start};
use common::ws::Socket;
use futures_util::{SinkExt, StreamExt};
use matchbook_config::bounds::MAX_NESTING;
use matchbook_rest::http::MAX_BODY_BYTES;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

/// The depths the issue names, then one that fills the body limit with brackets.
const DEPTHS: [usize; 6] = [127, 128, 129, 2_000, 10_000, MAX_BODY_BYTES / 2];

/// `depth` levels of arrays or objects around a number, as one JSON text.
fn nested(depth: usize, objects: bool) -> String {
    let (open, close) = if objects {
        ("{\"a\":", "}")
    } else {
        ("[", "]")
    };
    let text = format!("{}1{}", open.repeat(depth), close.repeat(depth));
    // The deepest form is cut to fit the limit: it stays unbalanced, as a bomb may be.
    text.chars().take(MAX_BODY_BYTES).collect()
}

/// Every bomb: each depth, objects and arrays, as the body and as one field's value.
fn bombs() -> Vec<(String, String)> {
    let mut all = Vec::new();
    for depth in DEPTHS {
        for objects in [false, true] {
            let bomb = nested(depth, objects);
            let in_field = format!("{{\"amount\": \"1\", \"price\": {bomb}}}");
            let in_field: String = in_field.chars().take(MAX_BODY_BYTES).collect();
            let what = format!("{depth} levels of {}", if objects { "{" } else { "[" });
            all.push((format!("{what} at the top"), bomb));
            all.push((format!("{what} in a field"), in_field));
        }
    }
    all
}

/// The trader's key and the admin's the server is configured with.
const TRADER: &str = "mb_bomb_suite_trader_key";
const ADMIN: &str = "mb_bomb_suite_admin_key";

fn digest(key: &str) -> String {
    use sha2::Digest;
    let bytes = sha2::Sha256::digest(key.as_bytes());
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A server whose rate limits no bomb reaches, so each is answered for its body, with a
/// funded holder whose keys are [`TRADER`] and [`ADMIN`].
fn unlimited_server(dir: &Path) -> Process {
    std::fs::create_dir_all(dir).expect("data dir");
    let config = dir.with_extension("toml");
    let text = format!(
        r#"
        [server]
        rate_limit_per_minute = 1000000
        public_rate_limit_per_minute = 1000000

        [[holders]]
        name = "alice"
        [[holders.accounts]]
        name = "main"
        deposits = {{ EUR = "100000", BTC = "10" }}

        [[keys]]
        digest = "{}"
        holder = "alice"
        account = "main"
        scopes = ["TRADE"]

        [[keys]]
        digest = "{}"
        holder = "alice"
        account = "main"
        scopes = ["ADMIN"]
        "#,
        digest(TRADER),
        digest(ADMIN)
    );
    std::fs::write(&config, text).expect("config");
    start(dir, &["--config", config.to_str().expect("UTF-8")])
}

/// Stops the server and removes its files.
fn remove(server: Process, dir: &Path) {
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_file(dir.with_extension("toml"));
}

/// Every operation `base` describes: method and path, parameters filled in.
async fn operations(http: &reqwest::Client, base: &str) -> Vec<(Method, String)> {
    let doc: Value = (http.get(format!("{base}/openapi.json")).send().await)
        .expect("openapi")
        .json()
        .await
        .expect("JSON");
    let mut all = Vec::new();
    for (template, item) in doc["paths"].as_object().expect("paths") {
        let path = fill_parameters(template);
        for method in item.as_object().expect("operations").keys() {
            if let Ok(method) = method.to_uppercase().parse::<Method>() {
                all.push((method, path.clone()));
            }
        }
    }
    assert!(all.len() > 10, "{base} describes its routes");
    all
}

/// `template` with each `{parameter}` given a value of its kind.
fn fill_parameters(template: &str) -> String {
    let mut path = String::new();
    for segment in template.split('/').skip(1) {
        path.push('/');
        path.push_str(match segment {
            "{instrument_code}" => "BTC_EUR",
            "{currency}" | "{currency_code}" => "EUR",
            s if s.starts_with('{') => "00000000-0000-4000-8000-000000000000",
            s => s,
        });
    }
    path
}

/// Whether the server still answers a plain read.
async fn still_serving(http: &reqwest::Client, server: &Process) -> bool {
    let answer = http.get(format!("{}/v1/time", server.base)).send().await;
    answer.is_ok_and(|a| a.status() == StatusCode::OK)
}

/// The answer every bomb gets.
fn invalid_body() -> (StatusCode, String) {
    (StatusCode::BAD_REQUEST, "INVALID_REQUEST_BODY".into())
}

/// `method path` with `body`: its status and error code.
async fn send(
    http: &reqwest::Client,
    (method, url): (&Method, &str),
    key: Option<&str>,
    body: String,
) -> (StatusCode, String) {
    let mut request = http.request(method.clone(), url).body(body);
    request = request.header("content-type", "application/json");
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let answer = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = answer.status();
    let body: Value = answer.json().await.unwrap_or_default();
    (
        status,
        body["error"].as_str().unwrap_or_default().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_of_both_listeners_refuses_every_bomb_and_keeps_serving() {
    let dir = common::data_dir();
    let server = unlimited_server(&dir);
    let http = reqwest::Client::new();
    // The attack as reported: a TRADE key, a 60 KB object nested 10,000 deep.
    let orders = format!("{}/v1/account/orders", server.base);
    let bomb = nested(10_000, true);
    let answer = send(&http, (&Method::POST, &orders), Some(TRADER), bomb).await;
    assert_eq!(answer, invalid_body());
    let bombs = bombs();
    for (base, key) in [(&server.base, TRADER), (&server.admin, ADMIN)] {
        for (method, path) in operations(&http, base).await {
            let url = format!("{base}{path}");
            for (what, bomb) in &bombs {
                for key in [Some(key), None] {
                    let answer = send(&http, (&method, &url), key, bomb.clone()).await;
                    let with_key = key.is_some();
                    assert_eq!(
                        answer,
                        invalid_body(),
                        "{method} {path}, {what}, key {with_key}"
                    );
                }
            }
            let over = "[".repeat(MAX_BODY_BYTES + 1);
            let answer = send(&http, (&method, &url), Some(key), over).await;
            assert_eq!(answer.0, StatusCode::PAYLOAD_TOO_LARGE, "{method} {path}");
            assert!(still_serving(&http, &server).await, "after {method} {path}");
        }
    }
    remove(server, &dir);
}

/// The one rule for bodies on a route that takes no fields: empty or a JSON object, else
/// `INVALID_REQUEST_BODY`. And a body at the nesting bound, past the guard, is answered by
/// every route for its shape: a 2xx where the field is ignored, else a 4xx with its code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_within_the_bound_are_answered_for_their_shape_on_every_route() {
    let dir = common::data_dir();
    let server = unlimited_server(&dir);
    let http = reqwest::Client::new();
    let holders = format!("{}/admin/holders", server.admin);
    let post = (&Method::POST, holders.as_str());
    for body in ["[]", "1", "\"x\"", "{", "{} {}", "not json"] {
        let answer = send(&http, post, Some(ADMIN), body.into()).await;
        assert_eq!(answer, invalid_body(), "POST /admin/holders {body:?}");
    }
    // The whole body at the bound: past the guard, so each route answers for its shape
    // (`price` of the wrong type where a route reads it, ignored where it does not).
    let within = nested(MAX_NESTING - 1, true);
    for (base, key) in [(&server.base, TRADER), (&server.admin, ADMIN)] {
        for (method, path) in operations(&http, base).await {
            let url = format!("{base}{path}");
            let body = format!("{{\"price\": {within}}}");
            let (status, code) = send(&http, (&method, &url), Some(key), body).await;
            let answered = status.is_success() || (status.is_client_error() && !code.is_empty());
            assert!(answered, "{method} {path}: {status} {code:?}");
        }
    }
    assert!(still_serving(&http, &server).await);
    remove(server, &dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_strings_and_cursors_of_brackets_are_refused_or_read_never_fatal() {
    let dir = common::data_dir();
    let server = unlimited_server(&dir);
    let http = reqwest::Client::new();
    let brackets = "%5B".repeat(10_000);
    for (method, path) in operations(&http, &server.base).await {
        if method != Method::GET {
            continue;
        }
        for query in [
            format!("cursor={brackets}"),
            format!("from={brackets}&to={brackets}"),
            format!("{brackets}={brackets}"),
        ] {
            let url = format!("{}{path}?{query}", server.base);
            let (status, _) = send(&http, (&method, &url), Some(TRADER), String::new()).await;
            assert!(
                !status.is_server_error(),
                "{method} {path}?{}: {status}",
                &query[..12]
            );
        }
        assert!(still_serving(&http, &server).await, "after {path}");
    }
    remove(server, &dir);
}

/// The stream message types, each with the field a bomb goes in.
const MESSAGES: [(&str, &str); 8] = [
    ("AUTHENTICATE", "api_token"),
    ("SUBSCRIBE", "channels"),
    ("UPDATE_SUBSCRIPTION", "channels"),
    ("UNSUBSCRIBE", "channels"),
    ("CREATE_ORDER", "order"),
    ("UPDATE_ORDER", "order"),
    ("CANCEL_ORDER", "order_id"),
    ("CANCEL_ALL_ORDERS", "order_ids"),
];

async fn connect(server: &Process) -> Socket {
    let url = format!("{}/ws", server.base.replace("http://", "ws://"));
    tokio_tungstenite::connect_async(url)
        .await
        .expect("upgrade")
        .0
}

/// The first JSON frame that is not a heartbeat, or none once the server closes.
async fn answer(ws: &mut Socket) -> Option<Value> {
    let wait = std::time::Duration::from_secs(10);
    while let Some(message) = tokio::time::timeout(wait, ws.next())
        .await
        .expect("in time")
    {
        if let Ok(Message::Text(text)) = message {
            let frame: Value = serde_json::from_str(&text).expect("JSON");
            if frame["type"] != "HEARTBEAT" {
                return Some(frame);
            }
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_stream_message_type_refuses_every_bomb_and_the_server_keeps_serving() {
    let dir = common::data_dir();
    let server = unlimited_server(&dir);
    let http = reqwest::Client::new();
    for (kind, field) in MESSAGES {
        for (what, bomb) in bombs() {
            let message = format!("{{\"type\": \"{kind}\", \"{field}\": {bomb}}}");
            let message: String = message.chars().take(MAX_BODY_BYTES).collect();
            for text in [message, bomb] {
                let mut ws = connect(&server).await;
                let login = format!("{{\"type\": \"AUTHENTICATE\", \"api_token\": \"{TRADER}\"}}");
                ws.send(Message::Text(login.into())).await.expect("send");
                assert_eq!(
                    answer(&mut ws).await.expect("login")["type"],
                    "AUTHENTICATED"
                );
                ws.send(Message::Text(text.into())).await.expect("send");
                let refusal = answer(&mut ws).await.expect("an answer");
                assert_eq!(refusal["error"], "INVALID_MESSAGE_FORMAT", "{kind}, {what}");
            }
        }
        assert!(still_serving(&http, &server).await, "after {kind}");
    }
    let mut ws = connect(&server).await;
    let subscribe = r#"{"type": "SUBSCRIBE", "channels": [{"name": "MARKET_TICKER", "instrument_codes": ["BTC_EUR"]}]}"#;
    ws.send(Message::Text(subscribe.into()))
        .await
        .expect("send");
    assert_eq!(
        answer(&mut ws).await.expect("answer")["type"],
        "SUBSCRIPTIONS"
    );
    remove(server, &dir);
}
