//! One accepted connection with the limits that sit below HTTP: it holds its place among
//! the listener's open connections (and its address's) until dropped; it is closed when
//! nothing arrives for the idle time, or when a request's headers, once begun, are not
//! complete within the head deadline (a client trickling header bytes, "slowloris", can
//! hold a connection no longer than that), or when the listener takes its place back for
//! a client holding fewer (`places`); and the bare refusals the HTTP parser writes
//! itself (414 for a long request line, 431 for too many or too large headers, 400 for an
//! unparseable head) go out with the `{"error": CODE}` body every other answer carries.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{Instant, Sleep};

use crate::net::places::AddressSlot;

/// Counters shared by a listener's connections.
#[derive(Debug, Default)]
pub struct Counters {
    /// Closed for sending nothing for the idle time.
    pub closed_idle: AtomicU64,
    /// Closed for not completing a request's headers in time.
    pub closed_slow_head: AtomicU64,
    /// Refused because their address held its share of the connections.
    pub refused_per_address: AtomicU64,
    /// Refused because every place was taken and none could be made for them.
    pub refused_full: AtomicU64,
    /// Asked to close to make room for a client holding fewer.
    pub closed_for_room: AtomicU64,
}

/// The end of a request head as written back to clients.
const HEAD_END: &[u8; 4] = b"\r\n\r\n";

/// Where the connection is in the request it is reading.
#[derive(Debug)]
struct Head {
    /// A new request's head may start with the next byte.
    awaiting: bool,
    /// When the head being read must be complete.
    until: Option<Instant>,
    /// Line feeds at the end of what was read, carriage returns aside.
    newlines: u8,
}

impl Head {
    /// Waiting for a request head to begin.
    fn awaiting() -> Self {
        Self {
            awaiting: true,
            until: None,
            newlines: 0,
        }
    }

    /// A head is complete: what follows is its body, until the answer goes out.
    fn done() -> Self {
        Self {
            awaiting: false,
            until: None,
            newlines: 0,
        }
    }
}

/// An accepted connection (see the module doc).
#[derive(Debug)]
pub struct LimitedStream {
    pub(crate) stream: TcpStream,
    pub(crate) permits: (OwnedSemaphorePermit, AddressSlot),
    pub(crate) idle: Duration,
    pub(crate) head_timeout: Duration,
    pub(crate) counters: Arc<Counters>,
    pub(crate) deadline: Pin<Box<Sleep>>,
    /// The time a write the client is not taking must go on by (the idle limit again).
    write_deadline: Pin<Box<Sleep>>,
    /// A write is waiting on the client (its deadline is set).
    write_waiting: bool,
    head: Head,
    /// A rewritten refusal still to be sent (the parser was told it went out).
    pending: Vec<u8>,
    /// The connection switched protocols (a WebSocket): no more HTTP heads to follow, only
    /// the idle limit.
    upgraded: bool,
}

impl LimitedStream {
    /// Wraps an accepted stream holding its permits.
    pub(crate) fn new(
        stream: TcpStream,
        permits: (OwnedSemaphorePermit, AddressSlot),
        idle: Duration,
        head_timeout: Duration,
        counters: Arc<Counters>,
    ) -> Self {
        let connection = Self {
            stream,
            permits,
            idle,
            head_timeout,
            counters,
            deadline: Box::pin(tokio::time::sleep(idle)),
            write_deadline: Box::pin(tokio::time::sleep(idle)),
            write_waiting: false,
            head: Head::awaiting(),
            pending: Vec::new(),
            upgraded: false,
        };
        connection.publish_idle();
        connection
    }

    /// Between requests: no request of the client is cut short if it closes.
    fn idle(&self) -> bool {
        self.head.awaiting && self.head.until.is_none() && !self.upgraded
    }

    /// Tells the listener whether the connection is between requests (a place it may take
    /// back for a newcomer at no request's cost).
    fn publish_idle(&self) {
        self.permits.1.place().set_idle(self.idle());
    }

    /// An error if the listener asked the connection to close, to make room; between
    /// requests it is told why first (inside an answer or a stream it would corrupt it).
    fn check_room(&self, cx: &Context<'_>) -> io::Result<()> {
        if self.permits.1.place().asked_to_close(cx.waker()) {
            if self.idle() && self.pending.is_empty() {
                let _ = self
                    .stream
                    .try_write(&json_response(503, "TOO_MANY_CONNECTIONS"));
            }
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "closed to make room for another client",
            ));
        }
        Ok(())
    }

    /// Follows the request head through newly read bytes: it ends at an empty line (two
    /// line feeds with nothing but carriage returns between them, as the parser accepts).
    fn track_head(&mut self, bytes: &[u8]) {
        if !self.head.awaiting || bytes.is_empty() {
            return;
        }
        if self.head.until.is_none() {
            self.head.until = Some(Instant::now() + self.head_timeout);
        }
        for &b in bytes {
            match b {
                b'\n' => self.head.newlines += 1,
                b'\r' => {}
                _ => self.head.newlines = 0,
            }
            if self.head.newlines == 2 {
                self.head = Head::done();
                return;
            }
        }
    }

    /// The time the connection must hear from the client by: the idle limit, or the head
    /// deadline while a head is being read.
    fn next_deadline(&self) -> Instant {
        let idle = Instant::now() + self.idle;
        self.head.until.map_or(idle, |until| until.min(idle))
    }

    /// Closes for a head not complete in time, with a best-effort 408 first.
    fn refuse_slow_head(&mut self) -> io::Error {
        self.counters
            .closed_slow_head
            .fetch_add(1, Ordering::Relaxed);
        let _ = self
            .stream
            .try_write(&json_response(408, "REQUEST_TIMEOUT"));
        io::Error::new(io::ErrorKind::TimedOut, "request headers too slow")
    }

    /// `write`'s outcome, with the idle limit applied to a write the client does not take:
    /// one that stops reading (its buffers full of answers) would otherwise hold the
    /// connection for good, since a blocked writer never reads and so never sees the idle
    /// timer. Bytes taken also count as the client being there.
    fn poll_written(
        &mut self,
        cx: &mut Context<'_>,
        write: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        if let Poll::Ready(result) = write {
            self.write_waiting = false;
            if matches!(result, Ok(n) if n > 0) && !self.upgraded {
                let next = self.next_deadline();
                self.deadline.as_mut().reset(next);
            }
            return Poll::Ready(result);
        }
        if !self.write_waiting {
            self.write_waiting = true;
            let until = Instant::now() + self.idle;
            self.write_deadline.as_mut().reset(until);
        }
        std::task::ready!(self.write_deadline.as_mut().poll(cx));
        self.counters.closed_idle.fetch_add(1, Ordering::Relaxed);
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client took no bytes for the idle time",
        )))
    }

    /// Writes what is left of a rewritten refusal.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            let write = Pin::new(&mut self.stream).poll_write(cx, &self.pending);
            let written = std::task::ready!(self.poll_written(cx, write))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.pending.drain(..written);
        }
        Poll::Ready(Ok(()))
    }
}

/// The start of the answer that switches the connection to another protocol.
const SWITCHING_PROTOCOLS: &[u8] = b"HTTP/1.1 101 ";

/// A complete `{"error": code}` response that closes the connection.
pub(crate) fn json_response(status: u16, code: &str) -> Vec<u8> {
    let reason = match status {
        400 => "Bad Request",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        503 => "Service Unavailable",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    };
    let body = format!("{{\"error\":\"{code}\"}}");
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The JSON version of a bare refusal the HTTP parser wrote itself (a head with no body:
/// every answer of the routers has one), or `None` for anything else.
fn rewritten_refusal(bytes: &[u8]) -> Option<Vec<u8>> {
    let status = bytes.strip_prefix(b"HTTP/1.1 ")?.get(..3)?;
    let head_end = bytes.windows(4).position(|w| w == HEAD_END)?;
    if head_end + HEAD_END.len() != bytes.len() {
        return None;
    }
    let announces_body = bytes[..head_end].split(|&b| b == b'\n').any(|line| {
        let line = line.to_ascii_lowercase();
        line.starts_with(b"transfer-encoding:")
            || line
                .strip_prefix(b"content-length:")
                .is_some_and(|v| v.trim_ascii() != b"0")
    });
    if announces_body {
        return None;
    }
    let (status, code) = match status {
        b"400" => (400, "BAD_REQUEST"),
        b"414" => (414, "URI_TOO_LONG"),
        b"431" => (431, "REQUEST_HEADER_FIELDS_TOO_LARGE"),
        _ => return None,
    };
    Some(json_response(status, code))
}

impl AsyncRead for LimitedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        this.check_room(cx)?;
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(result) => {
                this.track_head(&buf.filled()[before..]);
                this.publish_idle();
                let next = this.next_deadline();
                this.deadline.as_mut().reset(next);
                Poll::Ready(result)
            }
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) if this.head.until.is_some_and(|u| u <= Instant::now()) => {
                    Poll::Ready(Err(this.refuse_slow_head()))
                }
                Poll::Ready(()) => {
                    this.counters.closed_idle.fetch_add(1, Ordering::Relaxed);
                    Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "connection idle too long",
                    )))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for LimitedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        this.check_room(cx)?;
        std::task::ready!(this.poll_pending(cx))?;
        if this.upgraded {
            let write = Pin::new(&mut this.stream).poll_write(cx, buf);
            return this.poll_written(cx, write);
        }
        if buf.starts_with(SWITCHING_PROTOCOLS) {
            // What the client sends from now on are frames of another protocol: a head
            // deadline would cut a long-lived stream off (and write HTTP into it).
            this.upgraded = true;
            this.head = Head::done();
            this.publish_idle();
            let write = Pin::new(&mut this.stream).poll_write(cx, buf);
            return this.poll_written(cx, write);
        }
        // A response going out: the next bytes read start a new request head.
        if !this.head.awaiting {
            this.head = Head::awaiting();
            this.publish_idle();
        }
        if let Some(json) = rewritten_refusal(buf) {
            // Taken whole: what the socket does not take now goes out on the next flush.
            this.pending = json;
            if let Poll::Ready(Err(e)) = this.poll_pending(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        let write = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.poll_written(cx, write)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bare_parser_refusals_are_rewritten() {
        let bare = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n";
        let json = rewritten_refusal(bare).expect("rewritten");
        let text = String::from_utf8(json).expect("text");
        assert!(text.starts_with("HTTP/1.1 431 "), "{text}");
        assert!(
            text.ends_with("{\"error\":\"REQUEST_HEADER_FIELDS_TOO_LARGE\"}"),
            "{text}"
        );
        assert!(rewritten_refusal(b"HTTP/1.1 414 URI Too Long\r\n\r\n").is_some());
        // Answers of the routers carry a body, or are not refusals of the parser.
        let with_body = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 12\r\n\r\n{\"error\":1}";
        assert!(rewritten_refusal(with_body).is_none());
        let announced = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 12\r\n\r\n";
        assert!(rewritten_refusal(announced).is_none());
        assert!(rewritten_refusal(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
    }
}
