//! WebSocket helpers for the stream tests: an exchange whose streams tick fast, a client
//! socket, and reading frames with a deadline.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

use super::{Exchange, data_dir, settings};

/// A client's socket.
pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// An exchange whose streams tick fast (heartbeat 150 ms, tickers every 50 ms).
pub async fn exchange() -> Exchange {
    let mut s = settings(data_dir());
    s.stream_heartbeat = Duration::from_millis(150);
    s.stream_ticker_interval = Duration::from_millis(50);
    Exchange::with(s).await
}

pub async fn connect(x: &Exchange, path: &str) -> Socket {
    let url = format!("ws://{}{path}", x.server.addr);
    tokio_tungstenite::connect_async(url)
        .await
        .expect("upgrade")
        .0
}

pub async fn send(ws: &mut Socket, message: Value) {
    ws.send(Message::Text(message.to_string().into()))
        .await
        .expect("send");
}

/// The next JSON frame within 10 s (control frames skipped); heartbeats too unless
/// `heartbeats`.
pub async fn next_frame(ws: &mut Socket, heartbeats: bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let message = tokio::time::timeout_at(deadline, ws.next())
            .await
            .expect("the frame within 10 s")
            .expect("the socket is open")
            .expect("a frame");
        if let Message::Text(text) = message {
            let v: Value = serde_json::from_str(&text).expect("JSON");
            if heartbeats || v["type"] != "HEARTBEAT" {
                return v;
            }
        }
    }
}

pub async fn next(ws: &mut Socket) -> Value {
    next_frame(ws, false).await
}

/// Waits for two heartbeats (each longer than a ticker interval), so that the tickers of
/// what changed before the test (the demo's opening trades) have gone out, to nobody.
pub async fn settle(ws: &mut Socket) {
    for _ in 0..2 {
        assert_eq!(next_frame(ws, true).await["type"], "HEARTBEAT");
    }
}
