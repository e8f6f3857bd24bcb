//! `ORDER_BOOK` and `BOOK_TICKER` over real sockets, checked against the REST order book:
//! a snapshot then one update per command that changed the book, numbered with the book
//! sequence REST shows; and, under a seeded random order flow, books rebuilt by clients
//! that subscribed at different moments equal REST's at every sequence it was read at (its
//! best levels, for a client that asked for a depth);
//! every snapshot is capped at the server's depth, as REST's book is.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use common::ws::{Socket, connect, next, send};
use common::{Exchange, Seeded};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A book as both sides show it: (side, price) -> amount, every amount a decimal string
/// compared by value.
type Levels = BTreeMap<(String, String), String>;

/// The REST L2 book, whole (up to 1,000 levels per side), with its sequence.
async fn rest_book(x: &Exchange) -> (u64, Levels) {
    let (status, v) = x.get("/v1/order-book/BTC_EUR?level=2", None).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let mut levels = Levels::new();
    for (side, key) in [("BUY", "bids"), ("SELL", "asks")] {
        for level in v[key].as_array().expect("levels") {
            let price = level["price"].as_str().expect("price");
            let amount = level["amount"].as_str().expect("amount");
            levels.insert((side.into(), norm(price)), norm(amount));
        }
    }
    (v["sequence"].as_u64().expect("sequence"), levels)
}

/// A decimal without trailing zeros, so `"1.50"` and `"1.5"` compare equal.
fn norm(text: &str) -> String {
    if !text.contains('.') {
        return text.to_owned();
    }
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A client's book: the snapshot, then every update applied in order.
#[derive(Default)]
struct ClientBook {
    sequence: u64,
    levels: Levels,
}

impl ClientBook {
    fn snapshot(frame: &Value) -> Self {
        assert_eq!(frame["type"], "ORDER_BOOK_SNAPSHOT", "{frame}");
        let mut levels = Levels::new();
        for (side, key) in [("BUY", "bids"), ("SELL", "asks")] {
            for pair in frame[key].as_array().expect("levels") {
                let (price, amount) = (pair[0].as_str(), pair[1].as_str());
                let (price, amount) = (price.expect("price"), amount.expect("amount"));
                levels.insert((side.into(), norm(price)), norm(amount));
            }
        }
        Self {
            sequence: frame["sequence"].as_u64().expect("sequence"),
            levels,
        }
    }

    /// Applies an update; it must be the next sequence number.
    fn apply(&mut self, frame: &Value) {
        assert_eq!(frame["type"], "ORDER_BOOK_UPDATE", "{frame}");
        let sequence = frame["sequence"].as_u64().expect("sequence");
        assert_eq!(sequence, self.sequence + 1, "a gap before {frame}");
        self.sequence = sequence;
        for change in frame["changes"].as_array().expect("changes") {
            let field = |i: usize| change[i].as_str().expect("text").to_owned();
            let (side, price, amount) = (field(0), norm(&field(1)), norm(&field(2)));
            if amount == "0" {
                self.levels.remove(&(side, price));
            } else {
                self.levels.insert((side, price), amount);
            }
        }
    }
}

async fn subscribe_book(ws: &mut Socket, extra: Value) -> Value {
    let mut channel = json!({"name": "ORDER_BOOK", "instrument_codes": ["BTC_EUR"]});
    if let (Some(map), Value::Object(more)) = (channel.as_object_mut(), extra) {
        map.extend(more);
    }
    send(ws, json!({"type": "SUBSCRIBE", "channels": [channel]})).await;
    assert_eq!(next(ws).await["type"], "SUBSCRIPTIONS");
    next(ws).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_book_snapshot_and_updates_carry_the_rest_book_sequence() {
    let x = common::ws::exchange().await;
    let mut ws = connect(&x, "/ws").await;
    let snapshot = subscribe_book(&mut ws, json!({})).await;
    let mut book = ClientBook::snapshot(&snapshot);
    let (sequence, levels) = rest_book(&x).await;
    assert_eq!((book.sequence, &book.levels), (sequence, &levels));
    assert!(snapshot["time_nanos"].as_i64().is_some_and(|n| n > 0));

    // A bid below the book: one update, one level, the next sequence.
    let (status, placed) = x
        .order(&x.trader.key, "BUY", "100.00", "0.5", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{placed}");
    let update = next(&mut ws).await;
    assert_eq!(
        update["changes"],
        json!([["BUY", "100.00", "0.50000"]]),
        "{update}"
    );
    book.apply(&update);
    let (sequence, levels) = rest_book(&x).await;
    assert_eq!((book.sequence, &book.levels), (sequence, &levels));

    // Cancelled: the level goes, amount "0".
    let id = placed["order_id"].as_str().expect("id");
    let (status, _) = x
        .delete(&format!("/v1/account/orders/{id}"), &x.trader.key)
        .await;
    assert!(status.is_success());
    let update = next(&mut ws).await;
    assert_eq!(
        update["changes"],
        json!([["BUY", "100.00", "0"]]),
        "{update}"
    );
    book.apply(&update);
    let (sequence, levels) = rest_book(&x).await;
    assert_eq!((book.sequence, &book.levels), (sequence, &levels));
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_depth_limits_the_snapshot_per_side() {
    let x = common::ws::exchange().await;
    let mut ws = connect(&x, "/").await;
    let snapshot = subscribe_book(&mut ws, json!({"depth": 2})).await;
    let (_, levels) = rest_book(&x).await;
    let bids = levels.keys().filter(|(side, _)| side == "BUY").count();
    assert!(
        bids > 2,
        "the demo book is deeper than 2 levels: {levels:?}"
    );
    assert_eq!(
        snapshot["bids"].as_array().map(Vec::len),
        Some(2),
        "{snapshot}"
    );
    assert_eq!(
        snapshot["asks"].as_array().map(Vec::len),
        Some(2),
        "{snapshot}"
    );
    x.stop().await;
}

/// A new depth for a market already subscribed (ccxt's `watch_order_book` with another
/// limit sends `UPDATE_SUBSCRIPTION` with it) was ignored: the session kept the first
/// depth and sent no snapshot, so the client never got the levels it asked for. It now
/// gets the book at the new depth, then updates that keep it so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_depth_for_a_subscribed_book_sends_it_at_that_depth() {
    let x = common::ws::exchange().await;
    let mut ws = connect(&x, "/").await;
    let first = ClientBook::snapshot(&subscribe_book(&mut ws, json!({"depth": 1})).await);
    assert_eq!(first.levels.len(), 2, "{:?}", first.levels);
    let mut book = ClientBook::default();
    for depth in [0, 2] {
        let channel = json!({"name": "ORDER_BOOK", "instrument_codes": ["BTC_EUR"],
            "depth": depth});
        send(
            &mut ws,
            json!({"type": "UPDATE_SUBSCRIPTION", "channels": [channel]}),
        )
        .await;
        assert_eq!(next(&mut ws).await["type"], "SUBSCRIPTION_UPDATED");
        book = ClientBook::snapshot(&next(&mut ws).await);
        let (sequence, levels) = rest_book(&x).await;
        let wanted = best_levels(&levels, depth);
        assert_eq!(
            (book.sequence, &book.levels),
            (sequence, &wanted),
            "depth {depth}"
        );
    }
    // A bid just above the best enters the two-level window and pushes the second out.
    let (_, top) = x.get("/v1/order-book/BTC_EUR?level=1", None).await;
    let cents = |v: &Value| {
        let text = v["price"].as_str().expect("price");
        (text.parse::<f64>().expect("a price") * 100.0).round() as i64
    };
    let (bid, ask) = (cents(&top["bids"][0]), cents(&top["asks"][0]));
    assert!(bid + 1 < ask, "room inside the spread: {top}");
    let price = format!("{}.{:02}", (bid + 1) / 100, (bid + 1) % 100);
    let (status, placed) = x
        .order(&x.trader.key, "BUY", &price, "0.5", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{placed}");
    book.apply(&next(&mut ws).await);
    let (sequence, levels) = rest_book(&x).await;
    let wanted = best_levels(&levels, 2);
    assert_eq!((book.sequence, &book.levels), (sequence, &wanted));
    x.stop().await;
}

/// A snapshot of the whole book walked every level of it on the market stage, which
/// every reader shares, and wrote its frame there: one client subscribing again and again
/// to a 20,000-level book made keyless REST book reads 12 times slower. It is capped at
/// the server's `max_order_book_depth`, as REST's order book is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_depth_caps_every_snapshot() {
    let mut settings = common::settings(common::data_dir());
    settings.max_book_depth = 3;
    let x = Exchange::with(settings).await;
    let (_, levels) = rest_book(&x).await;
    assert_eq!(levels.len(), 6, "REST shows 3 a side: {levels:?}");
    for asked in [json!({}), json!({"depth": 0}), json!({"depth": 50})] {
        let mut ws = connect(&x, "/ws").await;
        let snapshot = subscribe_book(&mut ws, asked.clone()).await;
        let book = ClientBook::snapshot(&snapshot);
        assert_eq!(book.levels, levels, "asked {asked}");
    }
    x.stop().await;
}

/// Subscribing to a book again and again was not limited at all; each snapshot now counts
/// against the client address's public window, as a keyless REST book read does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn book_snapshots_count_against_the_address_rate_limit() {
    let channel = json!({"name": "ORDER_BOOK", "instrument_codes": ["BTC_EUR"]});
    let subscribe = json!({"type": "SUBSCRIBE", "channels": [channel]});
    let unsubscribe = json!({"type": "UNSUBSCRIBE", "channels": ["ORDER_BOOK"]});
    let book = Some("ORDER_BOOK_SNAPSHOT");
    snapshots_are_refused_past_the_limit([(subscribe, book), (unsubscribe, None)]).await;
}

/// The other public channels' snapshots are read on the market stage too (a ticker, the
/// last trades, the current candles, the top of a book): one client subscribing and
/// unsubscribing in a loop made 3,000-5,700 such reads a second on 20 sessions, where
/// REST lets it make 100 (`GET /v1/market-ticker` and the like). Each now counts against
/// the client address's public window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_public_snapshot_counts_against_the_address_rate_limit() {
    let candles = json!([{"instrument_code": "BTC_EUR",
        "time_granularity": {"unit": "MINUTES", "period": 1}}]);
    let channels = [
        (
            json!({"name": "MARKET_TICKER", "instrument_codes": ["BTC_EUR"]}),
            "MARKET_TICKER_UPDATES",
        ),
        (
            json!({"name": "PRICE_TICKS", "instrument_codes": ["BTC_EUR"]}),
            "PRICE_TICK_HISTORY",
        ),
        (
            json!({"name": "BOOK_TICKER", "instrument_codes": ["BTC_EUR"]}),
            "BOOK_TICKER_SNAPSHOT",
        ),
        (
            json!({"name": "CANDLESTICKS", "properties": candles}),
            "CANDLESTICK_SNAPSHOT",
        ),
    ];
    for (channel, snapshot) in channels {
        let subscribe = json!({"type": "SUBSCRIBE", "channels": [channel.clone()]});
        let unsubscribe = json!({"type": "UNSUBSCRIBE", "channels": [channel["name"]]});
        snapshots_are_refused_past_the_limit([(subscribe, Some(snapshot)), (unsubscribe, None)])
            .await;
    }
}

/// A new depth sends a snapshot, so switching between two depths counts like subscribing
/// again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_of_a_new_depth_count_against_the_address_rate_limit() {
    let at = |depth: u32| {
        let channel = json!({"name": "ORDER_BOOK", "instrument_codes": ["BTC_EUR"],
            "depth": depth});
        (
            json!({"type": "UPDATE_SUBSCRIPTION", "channels": [channel]}),
            Some("ORDER_BOOK_SNAPSHOT"),
        )
    };
    snapshots_are_refused_past_the_limit([at(1), at(0)]).await;
}

/// Sends the two messages by turns (each answered, then a snapshot of the type given, if
/// any) until one is refused with `RATELIMIT`; that comes within twice the public limit,
/// not before it.
async fn snapshots_are_refused_past_the_limit(messages: [(Value, Option<&str>); 2]) {
    const LIMIT: u32 = 3;
    let mut settings = common::settings(common::data_dir());
    settings.public_rate_limit_per_minute = LIMIT;
    let x = Exchange::with(settings).await;
    let mut ws = connect(&x, "/ws").await;
    // A minute may turn once while this runs, so the window may start afresh once.
    let (mut snapshots, mut refused) = (0, None);
    for (message, snapshot) in messages.iter().cycle().take(4 * LIMIT as usize + 4) {
        send(&mut ws, message.clone()).await;
        let answer = next(&mut ws).await;
        if answer.get("error").is_some() {
            refused = Some(answer);
            break;
        }
        if let Some(kind) = snapshot {
            assert_eq!(next(&mut ws).await["type"], *kind, "after {message}");
            snapshots += 1;
        }
    }
    let answer = refused.unwrap_or_else(|| panic!("refused within twice the limit: {messages:?}"));
    assert_eq!(answer["error"], "RATELIMIT", "{answer}");
    assert!(
        snapshots >= LIMIT - 1,
        "the upgrade and {snapshots} snapshots were admitted"
    );
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn book_ticker_sends_the_top_then_each_change_of_it() {
    let x = common::ws::exchange().await;
    let mut ws = connect(&x, "/").await;
    send(
        &mut ws,
        json!({"type": "SUBSCRIBE", "channels": [{"name": "BOOK_TICKER",
        "instrument_codes": ["BTC_EUR"]}]}),
    )
    .await;
    assert_eq!(next(&mut ws).await["type"], "SUBSCRIPTIONS");
    let snapshot = next(&mut ws).await;
    assert_eq!(snapshot["type"], "BOOK_TICKER_SNAPSHOT", "{snapshot}");
    let (status, top) = x.get("/v1/order-book/BTC_EUR?level=1", None).await;
    assert_eq!(status, StatusCode::OK);
    let data = &snapshot["data"];
    assert_eq!(
        data["best_bid"], top["bids"][0]["price"],
        "{snapshot} {top}"
    );
    assert_eq!(data["bid_amount"], top["bids"][0]["amount"]);
    assert_eq!(data["best_ask"], top["asks"][0]["price"]);
    assert_eq!(data["ask_amount"], top["asks"][0]["amount"]);
    assert_eq!(snapshot["sequence"], top["sequence"]);

    // A bid below the top changes nothing here; a better bid is the next tick.
    let (status, _) = x
        .order(&x.trader.key, "BUY", "100.00", "0.5", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let best: f64 = data["best_bid"]
        .as_str()
        .and_then(|p| p.parse().ok())
        .expect("bid");
    let better = format!("{:.2}", best + 0.01);
    let (status, v) = x
        .order(&x.trader.key, "BUY", &better, "0.25", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let tick = next(&mut ws).await;
    assert_eq!(tick["type"], "BOOK_TICK", "{tick}");
    assert_eq!(tick["data"]["best_bid"], better.as_str());
    assert_eq!(tick["data"]["bid_amount"], "0.25000");
    assert_eq!(tick["data"]["best_ask"], data["best_ask"]);
    let (_, top) = x.get("/v1/order-book/BTC_EUR?level=1", None).await;
    assert_eq!(tick["sequence"], top["sequence"]);
    x.stop().await;
}

/// Random orders and cancels around the demo book's middle by two traders; after each
/// command, REST's book is recorded by its sequence.
async fn order_flow(x: &Exchange, traders: &[String], commands: usize) -> HashMap<u64, Levels> {
    let mut flow = Seeded(0x9e37_79b9_7f4a_7c15);
    let (_, top) = x.get("/v1/order-book/BTC_EUR?level=1", None).await;
    let price = |v: &Value| v["price"].as_str().and_then(|p| p.parse::<f64>().ok());
    let (bid, ask) = (price(&top["bids"][0]), price(&top["asks"][0]));
    let middle = ((bid.expect("bid") + ask.expect("ask")) / 2.0 * 100.0).round() as i64;
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut seen = HashMap::new();
    for _ in 0..commands {
        let trader = flow.below(traders.len() as u64) as usize;
        if flow.below(10) < 3 && !open.is_empty() {
            let (owner, id) = open.swap_remove(flow.below(open.len() as u64) as usize);
            let (status, v) = x
                .delete(&format!("/v1/account/orders/{id}"), &traders[owner])
                .await;
            assert!(
                status.is_success() || status == StatusCode::NOT_FOUND,
                "{v}"
            );
        } else {
            let side = if flow.below(2) == 0 { "BUY" } else { "SELL" };
            let cents = middle + flow.below(41) as i64 - 20;
            let price = format!("{}.{:02}", cents / 100, cents % 100);
            let amount = format!("0.0{}", 1 + flow.below(9));
            let (status, v) = x
                .order(&traders[trader], side, &price, &amount, json!({}))
                .await;
            assert_eq!(status, StatusCode::OK, "{v}");
            open.push((trader, v["order_id"].as_str().expect("id").to_owned()));
        }
        let (sequence, levels) = rest_book(x).await;
        seen.insert(sequence, levels);
    }
    seen
}

/// The best `depth` levels a side of `levels` (all of them for depth 0).
fn best_levels(levels: &Levels, depth: usize) -> Levels {
    let mut kept = Levels::new();
    for (side, best_first) in [("BUY", true), ("SELL", false)] {
        let mut prices: Vec<(f64, &(String, String))> = (levels.keys())
            .filter(|(s, _)| s == side)
            .map(|key| (key.1.parse().expect("a price"), key))
            .collect();
        prices.sort_by(|a, b| a.0.total_cmp(&b.0));
        if best_first {
            prices.reverse();
        }
        let wanted = if depth == 0 { prices.len() } else { depth };
        for (_, key) in prices.into_iter().take(wanted) {
            kept.insert(key.clone(), levels[key].clone());
        }
    }
    kept
}

/// A client subscribed at some moment: its snapshot and every update up to `until`.
async fn follow(mut ws: Socket, until: u64) -> Vec<Value> {
    let mut frames = vec![next(&mut ws).await];
    let mut sequence = frames[0]["sequence"].as_u64().expect("sequence");
    while sequence < until {
        let frame = next(&mut ws).await;
        sequence = frame["sequence"].as_u64().expect("sequence");
        frames.push(frame);
    }
    frames
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_joining_at_different_moments_rebuild_the_rest_book_without_gaps() {
    let mut settings = common::settings(common::data_dir());
    settings.rate_limit_per_minute = 1_000_000;
    let x = Exchange::with(settings).await;
    let mut traders = Vec::new();
    for _ in 0..2 {
        traders.push(x.new_holder(&["TRADE"]).await.0);
    }
    let mut seen = HashMap::new();
    let mut clients = Vec::new();
    // Three times three clients, each three subscribing after another stretch of the
    // flow: to the whole book, and to its best level and best three levels a side.
    for stretch in [0, 60, 120] {
        seen.extend(order_flow(&x, &traders, stretch).await);
        for depth in [0, 1, 3] {
            let mut ws = connect(&x, "/").await;
            send(
                &mut ws,
                json!({"type": "SUBSCRIBE", "channels": [{"name": "ORDER_BOOK",
                "instrument_codes": ["BTC_EUR"], "depth": depth}]}),
            )
            .await;
            assert_eq!(next(&mut ws).await["type"], "SUBSCRIPTIONS");
            clients.push((ws, depth));
        }
    }
    seen.extend(order_flow(&x, &traders, 120).await);
    let (last, levels) = rest_book(&x).await;
    seen.insert(last, levels);
    let mut compared = 0;
    for (ws, depth) in clients {
        let frames = tokio::time::timeout(Duration::from_secs(60), follow(ws, last))
            .await
            .expect("every update within a minute");
        let mut book = ClientBook::snapshot(&frames[0]);
        if let Some(levels) = seen.get(&book.sequence) {
            let levels = best_levels(levels, depth);
            assert_eq!(book.levels, levels, "snapshot at {}", book.sequence);
        }
        for frame in &frames[1..] {
            book.apply(frame);
            if let Some(levels) = seen.get(&book.sequence) {
                let levels = best_levels(levels, depth);
                assert_eq!(book.levels, levels, "depth {depth}, at {}", book.sequence);
                compared += 1;
            }
        }
        assert_eq!(book.sequence, last);
    }
    // Most commands changed the book, and each client saw a good share of them.
    assert!(compared > 900, "only {compared} books compared");
    x.stop().await;
}
