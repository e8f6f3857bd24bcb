//! The WebSocket streams over real sockets on loopback: session messages, errors, the
//! heartbeat and the `MARKET_TICKER` channel, checked against what REST shows.

use crate::common;

use std::time::Duration;

use common::ws::{connect, exchange, next, next_frame, send, settle};
use common::{Exchange, data_dir, settings};
use futures_util::{SinkExt, StreamExt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_that_is_not_json_is_answered_with_an_error_then_close_4000() {
    let x = exchange().await;
    let mut ws = connect(&x, "/").await;
    ws.send(Message::Text("{not json".into()))
        .await
        .expect("send");
    let v = next(&mut ws).await;
    assert_eq!(v["error"], "INVALID_MESSAGE_FORMAT", "{v}");
    assert_eq!(v["channel_name"], "SYSTEM");
    let close = loop {
        match ws.next().await {
            Some(Ok(Message::Close(frame))) => break frame,
            Some(Ok(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    };
    assert_eq!(close.map(|f| f.code), Some(CloseCode::Library(4000)));
    x.stop().await;
}

/// The close frame that ends `ws`, skipping what comes before it.
async fn close_code(ws: &mut common::ws::Socket) -> Option<CloseCode> {
    loop {
        match ws.next().await {
            Some(Ok(Message::Close(frame))) => return frame.map(|f| f.code),
            Some(Ok(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

/// A stopping server dropped every stream connection without a word: clients saw the
/// socket vanish (no close frame, an abnormal closure), and clients of the older protocol
/// (`bitpanda-aio`, `cryptoxlib-aio`), which reconnect on `CONNECTION_CLOSING`, stopped
/// instead. Each session is now told and closed (going away) before the server ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_server_tells_each_session_and_closes_it() {
    let x = exchange().await;
    let mut ws = connect(&x, "/").await;
    let book = json!({"name": "ORDER_BOOK", "instrument_codes": ["BTC_EUR"]});
    send(&mut ws, json!({"type": "SUBSCRIBE", "channels": [book]})).await;
    assert_eq!(next(&mut ws).await["type"], "SUBSCRIPTIONS");
    assert_eq!(next(&mut ws).await["type"], "ORDER_BOOK_SNAPSHOT");
    let stopping = tokio::spawn(x.stop());
    let told = next(&mut ws).await;
    assert_eq!(
        (told["type"].as_str(), told["channel_name"].as_str()),
        (Some("CONNECTION_CLOSING"), Some("SYSTEM"))
    );
    assert_eq!(close_code(&mut ws).await, Some(CloseCode::Away));
    stopping.await.expect("stopped");
}

/// A SUBSCRIBE of `BOOK_TICKER` padded with spaces to `bytes`.
fn padded_subscribe(bytes: usize) -> String {
    let message = json!({"type": "SUBSCRIBE", "channels": [
        {"name": "BOOK_TICKER", "instrument_codes": ["BTC_EUR"]}]})
    .to_string();
    format!("{message}{}", " ".repeat(bytes - message.len()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_the_size_limit_is_refused_before_it_is_held() {
    let x = exchange().await;
    // Under the limit: an ordinary message however padded.
    let mut ws = connect(&x, "/ws").await;
    let fits = padded_subscribe(matchbook_rest::ws::MAX_MESSAGE_BYTES);
    ws.send(Message::Text(fits.into())).await.expect("send");
    assert_eq!(next(&mut ws).await["type"], "SUBSCRIPTIONS");
    assert_eq!(next(&mut ws).await["type"], "BOOK_TICKER_SNAPSHOT");
    // Over it, in one frame or in pieces: an error frame, then close 1009 (too big).
    let over = padded_subscribe(matchbook_rest::ws::MAX_MESSAGE_BYTES + 1);
    ws.send(Message::Text(over.into())).await.expect("send");
    let v = next(&mut ws).await;
    assert_eq!(v["error"], "INVALID_MESSAGE_FORMAT", "{v}");
    assert_eq!(close_code(&mut ws).await, Some(CloseCode::Size));
    let mut pieces = connect(&x, "/ws").await;
    let piece = " ".repeat(16 * 1024);
    let head = Message::Frame(Frame::message(
        piece.clone(),
        OpCode::Data(Data::Text),
        false,
    ));
    pieces.send(head).await.expect("send");
    for _ in 0..8 {
        let more = Frame::message(piece.clone(), OpCode::Data(Data::Continue), false);
        if pieces.send(Message::Frame(more)).await.is_err() {
            break;
        }
    }
    assert_eq!(next(&mut pieces).await["error"], "INVALID_MESSAGE_FORMAT");
    assert_eq!(close_code(&mut pieces).await, Some(CloseCode::Size));
    x.stop().await;
}

/// A session could send `AUTHENTICATE` with a new guess as often as it liked, where REST
/// counts every request without a valid key against the client address's window. Failed
/// attempts now count against that window; past it the session gets `RATELIMIT` and is
/// closed (1008), and a new one is refused at the upgrade. A valid key is not counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_authentications_count_against_the_address_window() {
    const LIMIT: u32 = 4;
    let mut s = settings(data_dir());
    s.public_rate_limit_per_minute = LIMIT;
    let x = Exchange::with(s).await;
    let mut ws = connect(&x, "/ws").await;
    let authenticate = |token: &str| json!({"type": "AUTHENTICATE", "api_token": token});
    // A minute may turn once while this runs, so the window may start afresh once.
    let mut failures = 0;
    let refused = loop {
        send(&mut ws, authenticate(&x.trader.key)).await;
        assert_eq!(next(&mut ws).await["type"], "AUTHENTICATED");
        send(&mut ws, authenticate("mb_not-a-key")).await;
        let answer = next(&mut ws).await;
        if answer["error"] != "AUTHENTICATION_FAILED" {
            break answer;
        }
        failures += 1;
        assert!(failures <= 2 * LIMIT, "{failures} failed attempts answered");
    };
    assert_eq!(refused["error"], "RATELIMIT", "{refused}");
    assert!(
        failures >= LIMIT - 1,
        "the upgrade and {failures} failures were admitted"
    );
    assert_eq!(close_code(&mut ws).await, Some(CloseCode::Policy));
    let again = tokio_tungstenite::connect_async(format!("ws://{}/ws", x.server.addr)).await;
    match again {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        }
        other => panic!("a new session was not refused: {:?}", other.map(|r| r.1)),
    }
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_errors_are_frames_and_the_session_goes_on() {
    let x = exchange().await;
    let mut ws = connect(&x, "/ws").await;
    send(
        &mut ws,
        json!({"type": "AUTHENTICATE", "api_token": "not-a-key"}),
    )
    .await;
    assert_eq!(next(&mut ws).await["error"], "AUTHENTICATION_FAILED");
    send(&mut ws, json!({"type": "SHOUT"})).await;
    let v = next(&mut ws).await;
    assert_eq!(v["error"], "INVALID_MESSAGE_FORMAT", "{v}");
    send(
        &mut ws,
        json!({"type": "SUBSCRIBE", "channels": [{"name": "NEWS"}]}),
    )
    .await;
    let v = next(&mut ws).await;
    assert_eq!(
        (v["error"].as_str(), v["channel_name"].as_str()),
        (Some("INVALID_CHANNEL"), Some("NEWS"))
    );
    send(
        &mut ws,
        json!({"type": "SUBSCRIBE", "channels": [
        {"name": "MARKET_TICKER", "instrument_codes": ["BTC_EUR", "DOGE_EUR", "XYZ"]}]}),
    )
    .await;
    let v = next(&mut ws).await;
    assert_eq!(v["error"], "INVALID_INSTRUMENT_CODES", "{v}");
    assert_eq!(v["invalid_instruments"], json!(["DOGE_EUR", "XYZ"]));
    assert_eq!(v["channel_name"], "MARKET_TICKER");
    send(
        &mut ws,
        json!({"type": "SUBSCRIBE", "channels": [{"name": "TRADING",
        "instrument_codes": ["BTC_EUR"]}]}),
    )
    .await;
    assert_eq!(next(&mut ws).await["error"], "MISSING_AUTHENTICATION");
    // None of the refusals closed the session or subscribed anything.
    send(
        &mut ws,
        json!({"type": "AUTHENTICATE", "api_token": x.trader.key}),
    )
    .await;
    let v = next(&mut ws).await;
    assert_eq!(
        (v["type"].as_str(), v["channel_name"].as_str()),
        (Some("AUTHENTICATED"), Some("SYSTEM"))
    );
    send(
        &mut ws,
        json!({"type": "UNSUBSCRIBE", "channels": ["MARKET_TICKER"]}),
    )
    .await;
    let v = next(&mut ws).await;
    assert_eq!(
        (v["type"].as_str(), &v["channels"]),
        (Some("UNSUBSCRIBED"), &json!([]))
    );
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_heartbeat_comes_on_its_own_with_time_and_nanoseconds() {
    let x = exchange().await;
    let mut ws = connect(&x, "/").await;
    let v = next_frame(&mut ws, true).await;
    assert_eq!(
        (
            v["channel_name"].as_str(),
            v["subscription"].as_str(),
            v["type"].as_str()
        ),
        (Some("SYSTEM"), Some("SYSTEM"), Some("HEARTBEAT")),
        "{v}"
    );
    assert!(v["time"].as_str().is_some_and(|t| t.ends_with('Z')), "{v}");
    assert!(v["time_nanos"].as_i64().is_some_and(|n| n > 0), "{v}");
    x.stop().await;
}

/// Buys at the best ask of `code` as the demo trader: one trade at that price.
async fn take_the_ask(x: &Exchange, code: &str) -> String {
    let (status, book) = x.get(&format!("/v1/order-book/{code}?level=1"), None).await;
    assert_eq!(status, StatusCode::OK);
    let ask = book["asks"][0]["price"]
        .as_str()
        .expect("an ask")
        .to_owned();
    let (status, v) = x
        .post(
            "/v1/account/orders",
            &x.trader.key,
            json!({"instrument_code": code,
            "type": "LIMIT", "side": "BUY", "amount": "0.01", "price": ask}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    ask
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn market_ticker_sends_a_snapshot_then_the_markets_that_change() {
    let x = exchange().await;
    let mut ws = connect(&x, "/").await;
    settle(&mut ws).await;
    // ccxt's subscription, extra keys included.
    send(&mut ws, json!({"type": "SUBSCRIBE", "bp_remaining_quota": 200, "channels": [
        {"name": "MARKET_TICKER", "price_points_mode": "INLINE", "instrument_codes": ["BTC_EUR"]}]})).await;
    let v = next(&mut ws).await;
    assert_eq!(v["type"], "SUBSCRIPTIONS", "{v}");
    assert_eq!(
        v["channels"],
        json!([{"name": "MARKET_TICKER", "instrument_codes": ["BTC_EUR"]}])
    );
    let snapshot = next(&mut ws).await;
    assert_eq!(
        (snapshot["channel_name"].as_str(), snapshot["type"].as_str()),
        (Some("MARKET_TICKER"), Some("MARKET_TICKER_UPDATES")),
        "{snapshot}"
    );
    let (_, rest_ticker) = x.get("/v1/market-ticker/BTC_EUR", None).await;
    let first = &snapshot["ticker_updates"][0];
    assert_eq!(first["instrument"], "BTC_EUR");
    assert_eq!(first["best_ask"], rest_ticker["best_ask"]);
    assert_eq!(first["volume"], rest_ticker["quote_volume"]);
    // A trade on a market not subscribed sends nothing; one on BTC_EUR sends its ticker.
    take_the_ask(&x, "ETH_EUR").await;
    let price = take_the_ask(&x, "BTC_EUR").await;
    // (An update from before the trade may still be on its way: read up to the trade's.)
    let ticker = loop {
        let update = next(&mut ws).await;
        assert_eq!(update["type"], "MARKET_TICKER_UPDATES", "{update}");
        let ticker = update["ticker_updates"][0].clone();
        assert_eq!(
            ticker["instrument"], "BTC_EUR",
            "only the market subscribed: {update}"
        );
        if ticker["last_price"].as_str() == Some(price.as_str()) {
            break ticker;
        }
    };
    let (_, rest_ticker) = x.get("/v1/market-ticker/BTC_EUR", None).await;
    for field in [
        "last_price",
        "high",
        "low",
        "price_change",
        "best_bid",
        "best_ask",
    ] {
        assert_eq!(ticker[field], rest_ticker[field], "{field}");
    }
    // Unsubscribed, a trade sends nothing before the next two heartbeats.
    send(
        &mut ws,
        json!({"type": "UNSUBSCRIBE", "channels": ["MARKET_TICKER"]}),
    )
    .await;
    assert_eq!(next(&mut ws).await["type"], "UNSUBSCRIBED");
    take_the_ask(&x, "BTC_EUR").await;
    for _ in 0..2 {
        let v = next_frame(&mut ws, true).await;
        assert_eq!(
            v["type"], "HEARTBEAT",
            "only heartbeats once unsubscribed: {v}"
        );
    }
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_subscription_snapshots_only_the_markets_it_adds() {
    let x = exchange().await;
    let mut ws = connect(&x, "/").await;
    settle(&mut ws).await;
    send(
        &mut ws,
        json!({"type": "SUBSCRIBE", "channels": [
        {"name": "MARKET_TICKER", "instrument_codes": ["BTC_EUR"]}]}),
    )
    .await;
    assert_eq!(next(&mut ws).await["type"], "SUBSCRIPTIONS");
    assert_eq!(
        next(&mut ws).await["ticker_updates"][0]["instrument"],
        "BTC_EUR"
    );
    send(
        &mut ws,
        json!({"type": "UPDATE_SUBSCRIPTION", "channels": [
        {"name": "MARKET_TICKER", "instrument_codes": ["BTC_EUR", "ETH_EUR"]}]}),
    )
    .await;
    let v = next(&mut ws).await;
    assert_eq!(v["type"], "SUBSCRIPTION_UPDATED", "{v}");
    assert_eq!(
        v["channels"][0]["instrument_codes"],
        json!(["BTC_EUR", "ETH_EUR"])
    );
    let snapshot = next(&mut ws).await;
    let markets: Vec<&str> = snapshot["ticker_updates"]
        .as_array()
        .expect("updates")
        .iter()
        .filter_map(|t| t["instrument"].as_str())
        .collect();
    assert_eq!(markets, vec!["ETH_EUR"], "{snapshot}");
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_request_to_the_stream_paths_is_a_json_404() {
    let x = exchange().await;
    for path in ["/", "/ws"] {
        let (status, v) = x.get(path, None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(v["error"], "NOT_FOUND");
    }
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn candlesticks_are_keyed_by_their_last_millisecond_in_rest_and_streams() {
    let x = exchange().await;
    let mut ws = connect(&x, "/").await;
    settle(&mut ws).await;
    send(&mut ws, json!({"type": "SUBSCRIBE", "channels": [{"name": "CANDLESTICKS",
        "properties": [{"instrument_code": "BTC_EUR", "time_granularity": {"unit": "MINUTES", "period": 7}}]}]})).await;
    let v = next(&mut ws).await;
    assert_eq!(
        (v["error"].as_str(), v["channel_name"].as_str()),
        (Some("INVALID_MESSAGE_FORMAT"), Some("CANDLESTICKS")),
        "{v}"
    );
    send(&mut ws, json!({"type": "SUBSCRIBE", "channels": [{"name": "CANDLESTICKS",
        "properties": [{"instrument_code": "BTC_EUR", "time_granularity": {"unit": "MINUTES", "period": 1}}]}]})).await;
    let v = next(&mut ws).await;
    assert_eq!(
        v["channels"],
        json!([{"name": "CANDLESTICKS", "instrument_codes": ["BTC_EUR"]}]),
        "{v}"
    );
    // The demo's opening trade made a candle: the snapshot is the REST endpoint's newest.
    let snapshot = next(&mut ws).await;
    assert_eq!(snapshot["type"], "CANDLESTICK_SNAPSHOT", "{snapshot}");
    assert_eq!(
        snapshot["granularity"],
        json!({"unit": "MINUTES", "period": 1})
    );
    let rest = newest_rest_candle(&x).await;
    assert!(
        rest["time"]
            .as_str()
            .is_some_and(|t| t.ends_with(":59.999Z")),
        "{rest}"
    );
    assert_eq!(
        (&snapshot["time"], &snapshot["close"]),
        (&rest["time"], &rest["close"])
    );
    let price = take_the_ask(&x, "BTC_EUR").await;
    let update = loop {
        let v = next(&mut ws).await;
        assert_eq!(v["type"], "CANDLESTICK", "{v}");
        assert_eq!(
            v["granularity"],
            json!({"unit": "MINUTES", "period": 1}),
            "only the one asked for"
        );
        if v["close"].as_str() == Some(price.as_str()) {
            break v;
        }
    };
    let rest = newest_rest_candle(&x).await;
    for field in ["time", "open", "high", "low", "close", "volume"] {
        assert_eq!(update[field], rest[field], "{field}");
    }
    assert!(
        update["time_nanos"]
            .as_i64()
            .is_some_and(|n| n % 60_000_000_000 == 59_999_000_000),
        "{update}"
    );
    x.stop().await;
}

/// The newest BTC_EUR minute candle as REST answers it.
async fn newest_rest_candle(x: &Exchange) -> Value {
    let path = "/v1/candlesticks/BTC_EUR?unit=MINUTES&period=1&countBack=1";
    x.get(path, None).await.1["candlesticks"][0].clone()
}

/// The listener's deadline for a request head applies to HTTP only: a stream that lives
/// many head deadlines keeps receiving clean frames (it used to be cut off after one, with
/// an HTTP 408 written into the WebSocket).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_outlives_the_request_head_deadline() {
    let mut s = settings(data_dir());
    s.stream_heartbeat = Duration::from_millis(100);
    s.header_timeout = Duration::from_millis(250);
    let x = Exchange::with(s).await;
    let mut ws = connect(&x, "/").await;
    // Client frames too, which never end in an HTTP head's empty line.
    send(&mut ws, json!({"type": "UNSUBSCRIBE", "channels": []})).await;
    assert_eq!(next(&mut ws).await["type"], "UNSUBSCRIBED");
    for _ in 0..8 {
        let v = next_frame(&mut ws, true).await;
        assert_eq!(v["type"], "HEARTBEAT", "{v}");
    }
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn price_ticks_send_the_recent_tape_then_each_trade_once() {
    let x = exchange().await;
    let mut ws = connect(&x, "/").await;
    send(
        &mut ws,
        json!({"type": "SUBSCRIBE", "channels": [
        {"name": "PRICE_TICKS", "instrument_codes": ["BTC_EUR"]}]}),
    )
    .await;
    assert_eq!(next(&mut ws).await["type"], "SUBSCRIPTIONS");
    let history = next(&mut ws).await;
    assert_eq!(
        (
            history["channel_name"].as_str(),
            history["type"].as_str(),
            history["instrument_code"].as_str()
        ),
        (
            Some("PRICE_TICKS"),
            Some("PRICE_TICK_HISTORY"),
            Some("BTC_EUR")
        ),
        "{history}"
    );
    // The demo's opening trade is on the tape.
    let tape = history["history"].as_array().expect("history");
    assert_eq!(tape.len(), 1, "{history}");
    assert_eq!(tape[0]["price"], "60060.00");
    let before = {
        let (_, book) = x.get("/v1/order-book/BTC_EUR?level=1", None).await;
        (
            book["bids"][0]["price"].clone(),
            book["asks"][0]["price"].clone(),
        )
    };
    let price = take_the_ask(&x, "BTC_EUR").await;
    let tick = next(&mut ws).await;
    assert_eq!(tick["type"], "PRICE_TICK", "{tick}");
    assert_eq!(tick["price"].as_str(), Some(price.as_str()));
    assert_eq!(
        (tick["amount"].as_str(), tick["taker_side"].as_str()),
        (Some("0.01000"), Some("BUY"))
    );
    assert_eq!(
        (&tick["best_bid"], &tick["best_ask"]),
        (&before.0, &before.1),
        "the top before the trade"
    );
    let (_, mine) = x.get("/v1/account/trades", Some(&x.trader.key)).await;
    let newest = &mine["trade_history"][0]["trade"];
    assert_eq!(
        (&tick["price"], &tick["time"]),
        (&newest["price"], &newest["time"])
    );
    // A later subscriber finds that trade at the head of its history, and no stale tick.
    let mut late = connect(&x, "/").await;
    send(
        &mut late,
        json!({"type": "SUBSCRIBE", "channels": [
        {"name": "PRICE_TICKS", "instrument_codes": ["BTC_EUR"]}]}),
    )
    .await;
    assert_eq!(next(&mut late).await["type"], "SUBSCRIPTIONS");
    let history = next(&mut late).await;
    assert_eq!(
        history["history"][0]["price"].as_str(),
        Some(price.as_str()),
        "{history}"
    );
    for _ in 0..2 {
        let v = next_frame(&mut late, true).await;
        assert_eq!(v["type"], "HEARTBEAT", "nothing but heartbeats: {v}");
    }
    x.stop().await;
}
