//! Operator mistakes and hostile inputs over real HTTP (issue 19): a second server on a
//! live data directory, key files, bodies of the wrong type, refusals from every layer
//! answered as JSON, and slow clients.

use crate::common;

use common::raw::{raw, raw_from, refusal, silent, status_and_code};
use common::{Exchange, code, settings};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_a_live_data_directory_is_refused_naming_it() {
    let exchange = Exchange::start().await;
    let dir = exchange.server.state.data_dir.clone();
    let refused = matchbook_rest::Server::start(settings(dir.clone())).await;
    let message = match refused {
        Ok(_) => panic!("a second server started on a live data directory"),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("in use by another engine"), "{message}");
    assert!(message.contains(dir.to_str().expect("UTF-8")), "{message}");
    assert!(
        message.contains(&format!("process {}", std::process::id())),
        "{message}"
    );
    exchange.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_out_into_the_key_store_is_refused_and_a_damaged_store_says_how_to_recover() {
    let dir = common::data_dir();
    let first = matchbook_rest::Server::start(settings(dir.clone()))
        .await
        .expect("first start");
    first.stop().await.expect("stop");
    let store = dir.join("keys.json");
    let digests = std::fs::read(&store).expect("key store");
    for reserved in [
        "keys.json",
        "config.toml",
        "lock",
        "journal-00000000000000000001.log",
    ] {
        let mut s = settings(dir.clone());
        s.keys_out = Some(dir.join(reserved));
        let message = match matchbook_rest::Server::start(s).await {
            Ok(_) => panic!("--keys-out {reserved} accepted"),
            Err(e) => e.to_string(),
        };
        assert!(message.contains("--keys-out"), "{message}");
    }
    assert_eq!(
        std::fs::read(&store).expect("key store"),
        digests,
        "untouched"
    );
    // A key store that does not parse stops the server with the way out in the message.
    std::fs::write(&store, b"[{\"digest\": \"mb_").expect("damage");
    let message = match matchbook_rest::Server::start(settings(dir.clone())).await {
        Ok(_) => panic!("a damaged key store was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("keys.json is damaged"), "{message}");
    assert!(
        message.contains("restore the file from a backup"),
        "{message}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A `--keys-out` the first start cannot write (its directory missing): the demo keys
/// used to be stored (as digests) before the file was written, so the start failed with
/// keys nobody had seen, and every later start, finding keys stored, issued none: the
/// operator was locked out of the data directory. Now the next start issues the keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keys_out_that_cannot_be_written_leaves_no_unseen_key_behind() {
    let dir = common::data_dir();
    let mut s = settings(dir.clone());
    s.keys_out = Some(dir.join("missing").join("keys.json"));
    let message = match matchbook_rest::Server::start(s).await {
        Ok(_) => panic!("a --keys-out in a missing directory was written"),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("--keys-out"), "{message}");
    assert!(message.contains("missing"), "{message}");
    let out = dir.with_extension("keys.json");
    let mut s = settings(dir.clone());
    s.keys_out = Some(out.clone());
    let again = matchbook_rest::Server::start(s)
        .await
        .expect("second start");
    assert_eq!(again.issued_keys.len(), 4, "the keys are issued now");
    let written: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&out).expect("--keys-out")).expect("JSON");
    assert_eq!(written.len(), 4);
    again.stop().await.expect("stop");
    let _ = std::fs::remove_file(out);
    let _ = std::fs::remove_dir_all(dir);
}

/// A start that cannot make its data directory or take its port says which (it said
/// `i/o: File exists (os error 17)` and `i/o: Address already in use (os error 98)`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_that_fails_names_the_directory_or_address() {
    let file = common::data_dir().with_extension("file");
    std::fs::write(&file, b"not a directory").expect("a file");
    let message = match matchbook_rest::Server::start(settings(file.clone())).await {
        Ok(_) => panic!("a file taken as the data directory"),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("data directory"), "{message}");
    assert!(message.contains(file.to_str().expect("UTF-8")), "{message}");
    let running = Exchange::start().await;
    let mut s = settings(common::data_dir());
    s.bind = running.server.addr;
    let message = match matchbook_rest::Server::start(s).await {
        Ok(_) => panic!("a port in use was bound"),
        Err(e) => e.to_string(),
    };
    assert!(
        message.contains(&format!("cannot listen on {}", running.server.addr)),
        "{message}"
    );
    running.stop().await;
    let _ = std::fs::remove_file(file);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_of_the_wrong_type_are_refused_never_dropped() {
    let exchange = Exchange::start().await;
    let key = exchange.trader.key.clone();
    let cases = [
        (
            json!({"time_in_force": ["FILL_OR_KILL"]}),
            "INVALID_TIME_IN_FORCE",
        ),
        (
            json!({"time_in_force": {"value": "FILL_OR_KILL"}}),
            "INVALID_TIME_IN_FORCE",
        ),
        (
            json!({"client_id": ["8b5d7f3a-5f04-4a4e-9c2b-1d3f1b7f0a11"]}),
            "INVALID_CLIENT_UUID",
        ),
        (json!({"client_id": {}}), "INVALID_CLIENT_UUID"),
        (json!({"is_post_only": "yes"}), "INVALID_TIME_IN_FORCE"),
        (json!({"reduce_only": 1}), "INVALID_REQUEST_BODY"),
        (
            json!({"time_in_force": "FILL_OR_KILL_PLEASE"}),
            "INVALID_TIME_IN_FORCE",
        ),
    ];
    for (extra, expected) in cases {
        let (status, body) = exchange
            .order(&key, "BUY", "100.00", "0.01", extra.clone())
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{extra}: {body}");
        assert_eq!(code(&body), expected, "{extra}");
    }
    // A key given twice: the body is refused whole, whichever value would have won.
    let raw = r#"{"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
        "price": "100.00", "amount": "0.01", "time_in_force": "FILL_OR_KILL",
        "time_in_force": "GOOD_TILL_CANCELLED"}"#;
    let response = exchange
        .http
        .post(format!("{}/v1/account/orders", exchange.base))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(raw)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(code(&body), "INVALID_REQUEST_BODY");
    // None of them rested.
    let (status, open) = exchange.get("/v1/account/orders", Some(&key)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        open["order_history"].as_array().map(Vec::len),
        Some(0),
        "{open}"
    );
    exchange.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_of_the_http_parser_carry_a_json_error() {
    let exchange = Exchange::start().await;
    let addr = exchange.server.addr;
    let answers = tokio::task::spawn_blocking(move || {
        let long_uri = format!("GET /v1/{} HTTP/1.1\r\nhost: x\r\n\r\n", "a".repeat(70_000));
        let many: String = (0..200).map(|i| format!("x-h{i}: v\r\n")).collect();
        let many_headers = format!("GET /v1/time HTTP/1.1\r\nhost: x\r\n{many}\r\n");
        let huge_header = format!(
            "GET /v1/time HTTP/1.1\r\nhost: x\r\nx-big: {}\r\n\r\n",
            "b".repeat(600_000)
        );
        [long_uri, many_headers, huge_header].map(|r| raw(addr, r.as_bytes()))
    })
    .await
    .expect("thread");
    let [long_uri, many_headers, huge_header] = answers.map(|a| status_and_code(&a));
    assert_eq!(long_uri, (414, "URI_TOO_LONG".to_owned()));
    assert_eq!(
        many_headers,
        (431, "REQUEST_HEADER_FIELDS_TOO_LARGE".to_owned())
    );
    assert_eq!(
        huge_header,
        (431, "REQUEST_HEADER_FIELDS_TOO_LARGE".to_owned())
    );
    // The exchange goes on answering.
    let (status, _) = exchange.get("/v1/time", None).await;
    assert_eq!(status, StatusCode::OK);
    exchange.stop().await;
}

/// Writes `head` then `trickle` one byte at a time, `gap` apart, and reads the answer.
fn trickled(
    addr: std::net::SocketAddr,
    head: &str,
    trickle: &[u8],
    gap: std::time::Duration,
) -> String {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .expect("timeout");
    c.write_all(head.as_bytes()).expect("head");
    for &b in trickle {
        std::thread::sleep(gap);
        if c.write_all(&[b]).is_err() {
            break;
        }
    }
    let mut answer = String::new();
    let _ = c.read_to_string(&mut answer);
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickled_body_is_408_and_trickled_headers_are_cut_off() {
    let mut s = settings(common::data_dir());
    s.header_timeout = std::time::Duration::from_millis(800);
    let exchange = Exchange::with(s).await;
    let addr = exchange.server.addr;
    let key = exchange.trader.key.clone();
    let stats = exchange.server.public_connections.clone();
    let gap = std::time::Duration::from_millis(200);
    let (body, head) = tokio::task::spawn_blocking(move || {
        let body = trickled(
            addr,
            &format!(
                "POST /v1/account/orders HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {key}\r\n\
                 content-type: application/json\r\ncontent-length: 40\r\n\r\n"
            ),
            &[b' '; 40],
            gap,
        );
        // Slowloris: a header line that never ends, one byte at a time.
        let head = trickled(addr, "GET /v1/time HTTP/1.1\r\nx-slow: ", &[b'a'; 40], gap);
        (body, head)
    })
    .await
    .expect("thread");
    assert_eq!(status_and_code(&body), (408, "REQUEST_TIMEOUT".to_owned()));
    assert_eq!(status_and_code(&head), (408, "REQUEST_TIMEOUT".to_owned()));
    assert_eq!(stats.closed_slow_head(), 1, "the trickled head was cut off");
    // The deadline is per request head: a kept-alive connection that waits between its
    // requests longer than it is not cut.
    let (status, _) = exchange.get("/v1/time", None).await;
    assert_eq!(status, StatusCode::OK);
    tokio::time::sleep(std::time::Duration::from_millis(1_200)).await;
    let (status, _) = exchange.get("/v1/time", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        stats.closed_slow_head(),
        1,
        "no connection cut between requests"
    );
    exchange.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_take_every_connection() {
    let mut s = settings(common::data_dir());
    s.max_connections_per_address = 2;
    let exchange = Exchange::with(s).await;
    let addr = exchange.server.addr;
    let stats = exchange.server.public_connections.clone();
    // Two silent connections from 127.0.0.1 hold that address's share.
    let held = silent(addr, &stats, 2).await;
    assert_eq!(
        refusal(addr).await,
        (429, "TOO_MANY_CONNECTIONS".to_owned())
    );
    assert_eq!(stats.refused_per_address(), 1);
    // Another address is served meanwhile.
    let answer = raw_from(
        addr,
        [127, 0, 0, 2],
        b"GET /v1/time HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    drop(held);
    exchange.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyless_requests_are_limited_per_address() {
    let mut s = settings(common::data_dir());
    s.public_rate_limit_per_minute = 3;
    let exchange = Exchange::with(s).await;
    let mut refused = 0;
    for _ in 0..20 {
        let (status, body) = exchange.get("/v1/order-book/BTC_EUR", None).await;
        if status == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(code(&body), "RATELIMIT");
            refused += 1;
        } else {
            assert_eq!(status, StatusCode::OK, "{body}");
        }
    }
    // At most two windows' worth (a minute may turn during the loop) got through.
    assert!(refused >= 14, "{refused} of 20 refused");
    // A route that takes no key counts a request that carries one by its address too:
    // it has no per-key limit, and any key lifted the address's limit (a reader's key
    // read the order book without any limit).
    let (status, _) = exchange
        .get("/v1/order-book/BTC_EUR", Some(&exchange.reader.key))
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    // The account routes limit a valid key per key and holder, not per address.
    let (status, _) = exchange
        .get("/v1/account/balances", Some(&exchange.reader.key))
        .await;
    assert_eq!(status, StatusCode::OK);
    // Another address has its own window.
    let other = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .build()
        .expect("client");
    let r = other
        .get(format!("{}/v1/order-book/BTC_EUR", exchange.base))
        .send()
        .await
        .expect("answered");
    assert_eq!(r.status(), StatusCode::OK);
    exchange.stop().await;
}

/// A query naming a parameter twice is refused on every kind of route: which one counts
/// would be a guess (the first was taken, so a filter in front that reads the last saw
/// another request than the exchange).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_parameter_given_twice_is_refused() {
    let x = Exchange::start().await;
    let trader = Some(x.trader.key.as_str());
    for (path, key) in [
        (
            "/v1/account/orders?max_page_size=1&max_page_size=100",
            trader,
        ),
        (
            "/v1/account/trades?instrument_code=BTC_EUR&instrument_code=ETH_EUR",
            trader,
        ),
        ("/v1/order-book/BTC_EUR?level=1&level=3", None),
        (
            "/v1/candlesticks/BTC_EUR?unit=HOURS&period=1&from=2026-01-01&to=2026-01-02&unit=DAYS",
            None,
        ),
    ] {
        let (status, body) = x.get(path, key).await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::BAD_REQUEST, "INVALID_QUERY"),
            "{path}"
        );
        let once = path.rsplit_once('&').map_or(path, |(head, _)| head);
        let (status, body) = x.get(once, key).await;
        assert_eq!(status, StatusCode::OK, "{once}: {body}");
    }
    x.stop().await;
}

/// An exchange with an idle limit of `idle_seconds`, and a connection to it with a receive
/// buffer of `buffer` bytes that has asked for 300 copies of `/openapi.json` (about 30 MB)
/// at once.
async fn pipelined_answers(idle_seconds: u64, buffer: u32) -> (Exchange, tokio::net::TcpStream) {
    let mut s = settings(common::data_dir());
    s.idle_timeout = std::time::Duration::from_secs(idle_seconds);
    let exchange = Exchange::with(s).await;
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(buffer).expect("receive buffer");
    let mut stream = socket.connect(exchange.server.addr).await.expect("connect");
    let ask = b"GET /openapi.json HTTP/1.1\r\nhost: x\r\n\r\n".repeat(300);
    tokio::io::AsyncWriteExt::write_all(&mut stream, &ask)
        .await
        .expect("requests sent");
    (exchange, stream)
}

/// A client that asks for more than the socket buffers hold and then reads nothing (a
/// "slow read"): the server's writes wait on it, and it must not hold its connection
/// past the idle limit (it held it for good: the idle timer was only looked at on reads,
/// which a blocked writer never makes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_loses_its_connection_after_the_idle_time() {
    // About 30 MB of answers asked for at once; nothing of them is ever read.
    let (exchange, stream) = pipelined_answers(1, 4096).await;
    let stats = exchange.server.public_connections.clone();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while stats.closed_idle() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "still held 30 s on, the idle limit being 1 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // What is left is the place the listener takes before it accepts the next one.
    assert!(
        stats.open_connections() <= 1,
        "{} open",
        stats.open_connections()
    );
    drop(stream);
    exchange.stop().await;
}

/// A client that pipelines many requests and reads the answers steadily, for longer in all
/// than the idle limit, is there all along: it gets every answer (the last one was cut off
/// by an idle timer that counted only what the client sent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_reading_a_long_run_of_answers_gets_them_all() {
    use tokio::io::AsyncReadExt;
    let (exchange, mut stream) = pipelined_answers(2, 65_536).await;
    let (started, mut answers) = (std::time::Instant::now(), Vec::new());
    let mut chunk = vec![0u8; 65_536];
    // Until the server closes the connection: the idle limit, once every answer is read.
    loop {
        let n = stream.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            break;
        }
        answers.extend_from_slice(&chunk[..n]);
        tokio::time::sleep(std::time::Duration::from_millis(6)).await;
    }
    let count = (answers.windows(17))
        .filter(|w| w == b"HTTP/1.1 200 OK\r\n")
        .count();
    assert!(
        started.elapsed() > std::time::Duration::from_secs(2),
        "the reading outlasts the idle limit"
    );
    assert_eq!(
        count,
        300,
        "every answer, read over {:?}",
        started.elapsed()
    );
    exchange.stop().await;
}
