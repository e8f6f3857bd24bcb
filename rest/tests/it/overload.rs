//! Overload: load well above the rate limit, and well above what the engine's queue holds,
//! is answered with 429 or 503 and the spec's JSON error (never another 5xx or a dropped
//! connection); every order acknowledged meanwhile is there, also after a restart; and the
//! exchange answers promptly again once the load stops.

use crate::common;

use std::time::Duration;

use common::raw::{raw_from, refusal, silent, status_and_code};
use common::{Exchange, code, data_dir, settings};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn above_the_rate_limit_every_answer_is_200_or_429() {
    let mut s = settings(data_dir());
    s.rate_limit_per_minute = 20;
    // Every client here is 127.0.0.1: the per-address share would refuse them first.
    s.max_connections_per_address = s.max_connections;
    let x = Exchange::with(s).await;
    let mut requests = tokio::task::JoinSet::new();
    // Balances are a rate-limited endpoint (spec section 8).
    for _ in 0..120 {
        let (http, url, key) = (
            x.http.clone(),
            format!("{}/v1/account/balances", x.base),
            x.trader.key.clone(),
        );
        requests.spawn(async move {
            let r = http
                .get(url)
                .bearer_auth(key)
                .send()
                .await
                .expect("answered");
            let status = r.status();
            (status, r.json::<Value>().await.unwrap_or(Value::Null))
        });
    }
    let mut limited = 0;
    while let Some(done) = requests.join_next().await {
        let (status, body) = done.expect("task");
        match status {
            StatusCode::OK => {}
            StatusCode::TOO_MANY_REQUESTS => {
                limited += 1;
                assert!(body["error"].is_string(), "{body}");
            }
            other => panic!("{other}: {body}"),
        }
    }
    assert!(
        limited >= 100,
        "20 a minute allowed, {limited} of 120 refused"
    );
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn above_the_queue_capacity_acknowledged_orders_survive_and_latency_recovers() {
    let dir = data_dir();
    let mut s = settings(dir.clone());
    s.rate_limit_per_minute = 1_000_000;
    s.max_connections_per_address = s.max_connections;
    s.queue_capacity = 1;
    let x = Exchange::with(s.clone()).await;
    let mut keys = Vec::new();
    for _ in 0..8 {
        keys.push(x.new_holder(&["TRADE"]).await.0);
    }
    let mut requests = tokio::task::JoinSet::new();
    for (k, key) in keys.iter().enumerate() {
        for i in 0..60 {
            let (http, url, key) = (
                x.http.clone(),
                format!("{}/v1/account/orders", x.base),
                key.clone(),
            );
            let side = if (i + k) % 2 == 0 { "BUY" } else { "SELL" };
            requests.spawn(async move {
                let body = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": side,
                    "price": format!("{}.00", 60_000 + (i % 7) * 10 - 30), "amount": "0.001"});
                let r = http
                    .post(url)
                    .bearer_auth(&key)
                    .json(&body)
                    .send()
                    .await
                    .expect("answered");
                let status = r.status();
                (key, status, r.json::<Value>().await.unwrap_or(Value::Null))
            });
        }
    }
    let (mut acked, mut busy) = (Vec::new(), 0);
    while let Some(done) = requests.join_next().await {
        let (key, status, body) = done.expect("task");
        match status {
            StatusCode::OK => acked.push((key, body["order_id"].as_str().expect("id").to_owned())),
            StatusCode::SERVICE_UNAVAILABLE => {
                busy += 1;
                assert!(body["error"].is_string(), "{body}");
            }
            StatusCode::UNPROCESSABLE_ENTITY => {} // an engine refusal (funds, limits)
            other => panic!("{other}: {body}"),
        }
    }
    assert!(
        busy > 0,
        "the queue of one overflowed under 480 concurrent orders"
    );
    assert!(!acked.is_empty(), "some orders got through");
    // Served again once the load stopped: the queue drained (a request still stuck behind
    // it would be 503 or, past the handler's deadline, 500).
    for _ in 0..10 {
        let (status, body) = x.get("/v1/account/balances", Some(&keys[0])).await;
        assert_eq!(status, StatusCode::OK, "{}", code(&body));
    }
    // Every acknowledged order is there, also after a restart.
    x.server.stop().await.expect("stop");
    let mut again = s;
    again.demo = false;
    let server = matchbook_rest::Server::start(again).await.expect("restart");
    let http = reqwest::Client::new();
    for (key, id) in &acked {
        let r = http
            .get(format!("http://{}/v1/account/orders/{id}", server.addr))
            .bearer_auth(key)
            .send()
            .await
            .expect("answered");
        assert_eq!(r.status(), StatusCode::OK, "acknowledged order {id}");
    }
    server.stop().await.expect("stop");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_are_closed_and_open_connections_are_bounded() {
    let mut s = settings(data_dir());
    s.max_connections = 2;
    s.idle_timeout = Duration::from_millis(600);
    let x = Exchange::with(s).await;
    let addr = x.server.addr;
    // Two clients connect and send nothing (or half a request line): they hold both places.
    let (idle, half) = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let idle = std::net::TcpStream::connect(addr).expect("connect");
        let mut half = std::net::TcpStream::connect(addr).expect("connect");
        half.write_all(b"GET /v1/time HTT").expect("write");
        (idle, half)
    })
    .await
    .expect("thread");
    let stats = x.server.public_connections.clone();
    while stats.open_connections() < 2 {
        tokio::task::yield_now().await;
    }
    assert_eq!(stats.closed_idle(), 0);
    // A third from the same address finds no place, and none can be made for it (its
    // address holds them all): told so at once.
    assert_eq!(
        refusal(addr).await,
        (503, "TOO_MANY_CONNECTIONS".to_owned())
    );
    assert_eq!((stats.refused_full(), stats.closed_for_room()), (1, 0));
    // The idle timeout frees the places.
    while stats.closed_idle() < 2 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, _) = x.get("/v1/time", None).await;
    assert_eq!(status, StatusCode::OK);
    // Both silent connections were closed by the server.
    let closed = tokio::task::spawn_blocking(move || {
        use std::io::Read;
        // Closed: end of stream or a reset. Still open: the read times out.
        let is_closed = |result: std::io::Result<usize>| match result {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
        };
        [idle, half].map(|mut c| {
            c.set_read_timeout(Some(Duration::from_secs(5)))
                .expect("timeout");
            let mut buf = [0u8; 256];
            // An error answer may come before the close; then the close must follow.
            let first = c.read(&mut buf);
            let answered = matches!(first, Ok(n) if n > 0);
            if answered {
                is_closed(c.read(&mut buf))
            } else {
                is_closed(first)
            }
        })
    })
    .await
    .expect("thread");
    assert_eq!(closed, [true, true], "silent connections are closed");
    x.stop().await;
}

/// A few addresses that took every place early cannot keep everyone else out. Before,
/// a full listener left a newcomer in the kernel's backlog until a place freed: here
/// not before the silent connections' 60 s idle time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_listener_takes_a_place_back_for_a_client_holding_fewer() {
    let mut s = settings(data_dir());
    s.max_connections = 4;
    s.max_connections_per_address = 4;
    let x = Exchange::with(s).await;
    let addr = x.server.addr;
    let stats = x.server.public_connections.clone();
    let held = silent(addr, &stats, 4).await;
    let request = b"GET /v1/time HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
    let answer = tokio::time::timeout(
        Duration::from_secs(20),
        raw_from(addr, [127, 0, 0, 2], request),
    )
    .await
    .expect("the newcomer is answered before any place frees by itself");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!((stats.closed_for_room(), stats.refused_full()), (1, 0));
    let metrics = crate::public::scrape(&x).await;
    let public = |family: &str, reason: &str| {
        metrics[&format!("{family}{{listener=\"public\",reason=\"{reason}\"}}")]
    };
    assert_eq!(
        public("matchbook_connections_closed_total", "for_room"),
        1.0
    );
    assert_eq!(public("matchbook_connections_refused_total", "full"), 0.0);
    // Exactly one of the four gave its place back, told why (it was between requests).
    let told = tokio::task::spawn_blocking(move || {
        use std::io::Read;
        held.into_iter()
            .map(|mut c| {
                c.set_nonblocking(true).expect("nonblocking");
                let mut text = String::new();
                let _ = c.read_to_string(&mut text);
                text
            })
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
    })
    .await
    .expect("thread");
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(
        status_and_code(&told[0]),
        (503, "TOO_MANY_CONNECTIONS".to_owned())
    );
    x.stop().await;
}
