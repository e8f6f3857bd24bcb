//! A session's socket: the client's messages read by a task of their own, batched writes
//! with one flush, and a close that sends its frame and code within a bounded wait.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::{SinkExt, StreamExt};

/// How long a closing frame may take to go out to a client that does not read.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// The client's messages, read by a task of their own: polling the socket's reader on
/// every pass of the session loop (once per frame sent) made it prepare its read buffer
/// each time, which cost more than sending the frames. The task stops when the client
/// closes or the session ends.
pub(super) fn read_apart(
    mut stream: futures_util::stream::SplitStream<WebSocket>,
) -> tokio::sync::mpsc::Receiver<Result<Message, axum::Error>> {
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        while let Some(message) = stream.next().await {
            if tx.send(message).await.is_err() {
                return;
            }
        }
    });
    rx
}

/// Whether reading stopped at a message or frame over the size limit.
pub(super) fn too_big(error: &axum::Error) -> bool {
    let inner = std::error::Error::source(error);
    matches!(
        inner.and_then(|e| e.downcast_ref::<tungstenite::Error>()),
        Some(tungstenite::Error::Capacity(_))
    )
}

/// Writes `messages` and flushes once, counting them in `sent` first (counted after, a
/// frame could reach its client before it was counted).
pub(super) async fn write_all<S>(
    sink: &mut S,
    messages: Vec<Message>,
    sent: &AtomicU64,
) -> Result<(), S::Error>
where
    S: SinkExt<Message> + Unpin,
{
    sent.fetch_add(messages.len() as u64, Ordering::Relaxed);
    for message in messages {
        sink.feed(message).await?;
    }
    sink.flush().await
}

/// Sends `frame`, then a close with `code`, giving up after [`CLOSE_WAIT`].
pub(super) async fn close<S>(sink: &mut S, frame: String, code: u16)
where
    S: SinkExt<Message> + Unpin,
{
    let _ = tokio::time::timeout(CLOSE_WAIT, async {
        let _ = sink.send(Message::Text(Utf8Bytes::from(frame))).await;
        let _ = sink
            .send(Message::Close(Some(CloseFrame {
                code,
                reason: Utf8Bytes::from_static(""),
            })))
            .await;
    })
    .await;
}
