//! `stream_message`: an input read as stream messages (a key to log in with or none, then
//! one message: the input's bytes, or a nesting bomb it describes) sent over a WebSocket to
//! the demo exchange `rest_request` serves. Whatever the message, the session answers it
//! and then a probe (`UNSUBSCRIBE` of nothing), or refuses it with an `ERROR` frame and
//! closes; every frame is a JSON object with a `type`, and the next input connects again.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use super::Input;
use super::nesting::nested_text;
use super::rest::exchange;

/// Longest a session may take to answer (a loaded machine included).
const ANSWER_WITHIN: Duration = Duration::from_secs(20);

const PROBE: &str = r#"{"type": "UNSUBSCRIBE", "channels": []}"#;

/// Sends the messages an input describes and checks the answers.
pub fn stream_message(data: &[u8]) {
    let exchange = exchange();
    let mut input = Input::new(data);
    let flags = input.u8();
    let key = exchange
        .keys
        .get(usize::from(input.u8()) % (exchange.keys.len() + 1));
    let message = if flags & 1 != 0 {
        nested_text(&mut input, matchbook_rest::ws::MAX_MESSAGE_BYTES)
    } else {
        input.rest().to_vec()
    };
    let message = String::from_utf8_lossy(&message).into_owned();
    let url = format!("ws://{}/ws", exchange.addr);
    exchange.runtime.block_on(async move {
        let (mut ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("the server accepts");
        if let Some(key) = key {
            let login = format!(r#"{{"type": "AUTHENTICATE", "api_token": "{key}"}}"#);
            ws.send(Message::Text(login.into())).await.expect("send");
        }
        for text in [message, PROBE.to_owned()] {
            // A send after the server closed (it refused the message) is not a failure.
            let _ = ws.send(Message::Text(text.into())).await;
        }
        let mut last_type = String::new();
        loop {
            let next = tokio::time::timeout(ANSWER_WITHIN, ws.next()).await;
            let frame = match next.expect("the session answers in time") {
                Some(Ok(Message::Text(text))) => text,
                Some(Ok(Message::Close(_)) | Err(_)) | None => break,
                Some(Ok(_)) => continue,
            };
            let value: serde_json::Value = serde_json::from_str(&frame).expect("a JSON frame");
            last_type = value["type"].as_str().expect("a frame type").to_owned();
            if last_type == "UNSUBSCRIBED" {
                return;
            }
        }
        assert_eq!(
            last_type, "ERROR",
            "a session closed after an error frame only"
        );
    });
}
