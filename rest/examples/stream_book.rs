//! A client that keeps a local order book from the `ORDER_BOOK` stream and checks it
//! against the REST order book at the same book sequence.
//!
//! ```text
//! make run                                   # in one terminal
//! cargo run -p matchbook-rest --example stream_book -- http://127.0.0.1:8080 BTC_EUR 20
//! ```
//!
//! Arguments: the exchange's base URL, the instrument, and how many checks to make (one a
//! second). It exits with an error on a sequence gap or a book that differs from REST's.
//! REST shows at most `max_order_book_depth` levels per side (1,000 by default): deeper
//! books differ from it beyond that depth.

#![warn(clippy::too_many_lines)]

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;
type Error = Box<dyn std::error::Error>;

/// Price -> amount per side ("BUY" / "SELL"), values as exact decimal text without
/// trailing zeros.
#[derive(Debug, Default, PartialEq)]
struct Book {
    sequence: u64,
    levels: BTreeMap<(String, String), String>,
}

fn trimmed(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text.to_owned()
    }
}

fn text(value: &Value) -> Result<&str, Error> {
    value
        .as_str()
        .ok_or_else(|| format!("not a string: {value}").into())
}

impl Book {
    fn set(&mut self, side: &str, price: &str, amount: &str) {
        let key = (side.to_owned(), trimmed(price));
        if trimmed(amount) == "0" {
            self.levels.remove(&key);
        } else {
            self.levels.insert(key, trimmed(amount));
        }
    }

    /// Applies a snapshot or an update frame of the stream.
    fn apply(&mut self, frame: &Value) -> Result<(), Error> {
        let kind = frame["type"].as_str();
        if !matches!(kind, Some("ORDER_BOOK_SNAPSHOT" | "ORDER_BOOK_UPDATE")) {
            return Ok(());
        }
        let sequence = frame["sequence"]
            .as_u64()
            .ok_or("a frame without sequence")?;
        match kind {
            Some("ORDER_BOOK_SNAPSHOT") => {
                *self = Book::default();
                for (side, key) in [("BUY", "bids"), ("SELL", "asks")] {
                    for pair in frame[key].as_array().ok_or("no levels")? {
                        self.set(side, text(&pair[0])?, text(&pair[1])?);
                    }
                }
            }
            Some("ORDER_BOOK_UPDATE") => {
                if sequence != self.sequence + 1 {
                    return Err(format!("gap: {} after {}", sequence, self.sequence).into());
                }
                for change in frame["changes"].as_array().ok_or("no changes")? {
                    self.set(text(&change[0])?, text(&change[1])?, text(&change[2])?);
                }
            }
            _ => return Ok(()),
        }
        self.sequence = sequence;
        Ok(())
    }

    /// The REST L2 book (up to the server's depth limit per side).
    async fn from_rest(http: &reqwest::Client, base: &str, code: &str) -> Result<Book, Error> {
        let url = format!("{base}/v1/order-book/{code}?level=2");
        let body: Value = http.get(url).send().await?.json().await?;
        let mut book = Book {
            sequence: body["sequence"].as_u64().ok_or("no sequence")?,
            ..Book::default()
        };
        for (side, key) in [("BUY", "bids"), ("SELL", "asks")] {
            for level in body[key].as_array().ok_or("no levels")? {
                book.set(side, text(&level["price"])?, text(&level["amount"])?);
            }
        }
        Ok(book)
    }
}

async fn next_frame(ws: &mut Socket) -> Result<Value, Error> {
    loop {
        match ws.next().await.ok_or("the stream ended")?? {
            Message::Text(text) => return Ok(serde_json::from_str(&text)?),
            Message::Close(_) => return Err("the server closed the stream".into()),
            _ => {}
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let base = args.first().map_or("http://127.0.0.1:8080", String::as_str);
    let code = args.get(1).map_or("BTC_EUR", String::as_str);
    let checks: u32 = args.get(2).map_or(Ok(10), |n| n.parse())?;
    let ws_url = base.replacen("http", "ws", 1);
    let (mut ws, _) = tokio_tungstenite::connect_async(ws_url).await?;
    let subscribe = json!({"type": "SUBSCRIBE",
        "channels": [{"name": "ORDER_BOOK", "instrument_codes": [code]}]});
    ws.send(Message::Text(subscribe.to_string().into())).await?;
    let http = reqwest::Client::new();
    let mut book = Book::default();
    let mut matched = 0;
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    while matched < checks {
        tokio::select! {
            frame = next_frame(&mut ws) => {
                let frame = frame?;
                if let Some(error) = frame.get("error") {
                    return Err(format!("the server refused: {error}").into());
                }
                book.apply(&frame)?;
            }
            _ = ticker.tick() => {
                let rest = Book::from_rest(&http, base, code).await?;
                // Catch up to REST's sequence; if the stream is already past it, the next
                // tick compares again.
                while book.sequence < rest.sequence {
                    book.apply(&next_frame(&mut ws).await?)?;
                }
                if book.sequence == rest.sequence {
                    if book.levels != rest.levels {
                        return Err(format!("the books differ at sequence {}", book.sequence).into());
                    }
                    matched += 1;
                    println!("sequence {}: {} levels, the same as REST", book.sequence, book.levels.len());
                }
            }
        }
    }
    Ok(())
}
