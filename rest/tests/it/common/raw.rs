//! Requests written to a socket by hand, for what a client library would not send (or
//! would hide): a bare head, a connection from another loopback address.

use std::net::SocketAddr;

use serde_json::Value;

use super::code;

/// Reads a raw answer until the server closes or a JSON body ends.
fn read_answer(c: &mut std::net::TcpStream) -> String {
    use std::io::Read;
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = c.read(&mut buf) {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buf[..n]);
        if answer.windows(4).any(|w| w == b"\r\n\r\n") && answer.ends_with(b"}") {
            break;
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// Sends `request` raw over `c` and reads the answer (20 s at most).
fn exchange_raw(mut c: std::net::TcpStream, request: &[u8]) -> String {
    use std::io::Write;
    c.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .expect("timeout");
    // The server may answer and close before it read everything: a failed write is fine.
    let _ = c.write_all(request);
    read_answer(&mut c)
}

/// Sends `request` raw from 127.0.0.1 and reads the answer.
pub fn raw(addr: SocketAddr, request: &[u8]) -> String {
    exchange_raw(
        std::net::TcpStream::connect(addr).expect("connect"),
        request,
    )
}

/// Sends `request` raw from the loopback address `local` and reads the answer.
pub async fn raw_from(addr: SocketAddr, local: [u8; 4], request: &'static [u8]) -> String {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    let from = SocketAddr::from((local, 0));
    socket.bind(from).expect("bind a loopback address");
    let stream = socket.connect(addr).await.expect("connect");
    let stream = stream.into_std().expect("std stream");
    stream.set_nonblocking(false).expect("blocking");
    tokio::task::spawn_blocking(move || exchange_raw(stream, request))
        .await
        .expect("thread")
}

/// The status and `error` code of a bare `GET /v1/time` from 127.0.0.1 (for a refusal).
pub async fn refusal(addr: SocketAddr) -> (u16, String) {
    let answer =
        tokio::task::spawn_blocking(move || raw(addr, b"GET /v1/time HTTP/1.1\r\nhost: x\r\n\r\n"))
            .await
            .expect("thread");
    status_and_code(&answer)
}

/// `n` connections from 127.0.0.1 that send nothing, once the listener of `stats` holds
/// at least `n` open.
pub async fn silent(
    addr: SocketAddr,
    stats: &matchbook_rest::net::listener::ListenerStats,
    n: usize,
) -> Vec<std::net::TcpStream> {
    let held: Vec<_> = (0..n)
        .map(|_| std::net::TcpStream::connect(addr).expect("connect"))
        .collect();
    while stats.open_connections() < n {
        tokio::task::yield_now().await;
    }
    held
}

/// The status and `error` code of a raw answer.
pub fn status_and_code(answer: &str) -> (u16, String) {
    let status = answer
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {answer:?}"));
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{answer}"
    );
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    let value: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON: {answer}"));
    (status, code(&value).to_owned())
}
