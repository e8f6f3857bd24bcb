//! A subscriber that never reads is closed as a slow consumer, and nobody else notices: a
//! reading client's latency (order sent to its book update received) and the exchange's
//! order throughput while the other one is stuck stay within a ratio of what they were
//! before it came, measured in the same run.

use crate::common;

use std::time::{Duration, Instant};

use common::Exchange;
use common::ws::{Socket, connect, next, send};
use futures_util::StreamExt;
use reqwest::StatusCode;
use serde_json::json;

/// A socket that holds at most a few kilobytes unread, so a client that stops reading
/// fills the path from the server quickly.
async fn stingy_socket(x: &Exchange) -> Socket {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("receive buffer");
    let stream = socket.connect(x.server.addr).await.expect("connect");
    let url = format!("ws://{}/", x.server.addr);
    tokio_tungstenite::client_async(url, tokio_tungstenite::MaybeTlsStream::Plain(stream))
        .await
        .expect("upgrade")
        .0
}

/// Places and cancels `count` resting orders (new price levels, away from the book) and
/// returns the time from sending each to `reader` receiving its book update, and the time
/// each order took on average (with its cancel).
async fn flow(x: &Exchange, reader: &mut Socket, start: usize, count: usize) -> (Vec<f64>, f64) {
    let began = Instant::now();
    let mut latencies = Vec::with_capacity(count);
    for i in start..start + count {
        let (side, price) = if i % 2 == 0 {
            ("BUY", format!("{}.00", 10_000 + i % 10_000))
        } else {
            ("SELL", format!("{}.00", 900_000 + i % 10_000))
        };
        let sent = Instant::now();
        let (status, v) = x
            .order(&x.trader.key, side, &price, "0.01", json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        let update = next(reader).await;
        latencies.push(sent.elapsed().as_secs_f64());
        assert_eq!(update["changes"][0][1], price.as_str(), "{update}");
        let id = v["order_id"].as_str().expect("id");
        let (status, _) = x
            .delete(&format!("/v1/account/orders/{id}"), &x.trader.key)
            .await;
        assert!(status.is_success());
        let update = next(reader).await;
        assert_eq!(update["changes"][0][2], "0", "{update}");
    }
    (latencies, began.elapsed().as_secs_f64() / count as f64)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

async fn slow_consumers(x: &Exchange) -> u64 {
    let v = x.pipeline().await;
    v["slow_consumers"].as_u64().expect("slow_consumers")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_never_reads_is_closed_and_slows_nobody() {
    let mut settings = common::settings(common::data_dir());
    settings.rate_limit_per_minute = 10_000_000;
    settings.stream_heartbeat = Duration::from_millis(500);
    let x = Exchange::with(settings).await;
    let mut reader = connect(&x, "/").await;
    let book = json!({"type": "SUBSCRIBE", "channels": [{"name": "ORDER_BOOK",
        "instrument_codes": ["BTC_EUR"]}]});
    send(&mut reader, book.clone()).await;
    assert_eq!(next(&mut reader).await["type"], "SUBSCRIPTIONS");
    assert_eq!(next(&mut reader).await["type"], "ORDER_BOOK_SNAPSHOT");
    let (before, per_order_before) = flow(&x, &mut reader, 0, 200).await;

    // The stuck client: every public channel of every market, then it never reads again.
    let mut stuck = stingy_socket(&x).await;
    send(
        &mut stuck,
        json!({"type": "SUBSCRIBE", "channels": [{"name": "ORDER_BOOK"}, {"name": "BOOK_TICKER"},
            {"name": "PRICE_TICKS"}]}),
    )
    .await;
    let mut during = Vec::new();
    let mut per_order_during = Vec::new();
    let mut placed = 200;
    while slow_consumers(&x).await == 0 {
        assert!(placed < 20_000, "the stuck client was never closed");
        let (latencies, per_order) = flow(&x, &mut reader, placed, 100).await;
        during.extend(latencies);
        per_order_during.push(per_order);
        placed += 100;
    }
    let (latency_before, latency_during) = (median(before), median(during));
    let throughput_ratio = per_order_before / median(per_order_during);
    eprintln!(
        "closed after {placed} orders; median latency {latency_before:.6} s before, \
         {latency_during:.6} s while stuck; throughput ratio {throughput_ratio:.2}"
    );
    assert!(
        latency_during <= 3.0 * latency_before,
        "the reader's median latency went from {latency_before:.6} s to {latency_during:.6} s"
    );
    assert!(
        throughput_ratio >= 1.0 / 3.0,
        "order throughput fell to {throughput_ratio:.2} of what it was"
    );

    // The stuck client finds its stream ended once it reads what was buffered.
    let ended = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(Ok(message)) = stuck.next().await {
            if message.is_close() {
                break;
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the stuck client's stream ends");
    // The reader goes on.
    flow(&x, &mut reader, placed, 10).await;
    x.stop().await;
}
