//! Order and trade history: pages, windows, time parameters, many fills.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_history_pages_and_windows() {
    let x = Exchange::start().await;
    let k = &x.trader.key;
    let mut placed = Vec::new();
    for i in 0..5 {
        let (_, ack) = x
            .order(k, "BUY", &format!("5{i}000.00"), "0.01", json!({}))
            .await;
        placed.push(ack["order_id"].as_str().expect("id").to_owned());
    }
    x.delete(&format!("/v1/account/orders/{}", placed[0]), k)
        .await;
    // A taker order that fills completely against the demo asks.
    let (_, taker) = x.order(k, "BUY", "60200.00", "0.02", json!({})).await;

    let (_, open) = x.get("/v1/account/orders", Some(k)).await;
    let ids = |page: &Value| order_fields(page, "order_id");
    let open_ids = ids(&open);
    assert_eq!(open_ids.len(), 4, "open orders only by default");
    assert_eq!(open_ids[0], placed[4], "newest first");
    assert!(
        open["order_history"][0]["order"]
            .get("order_type")
            .is_none(),
        "history form"
    );

    let (_, all) = x
        .get(
            "/v1/account/orders?with_cancelled_and_rejected=true&with_just_filled_inactive=true",
            Some(k),
        )
        .await;
    let all_ids = ids(&all);
    assert_eq!(all_ids.len(), 6);
    let filled = &all["order_history"][0];
    assert_eq!(filled["order"]["order_id"], taker["order_id"]);
    assert_eq!(filled["order"]["status"], "FILLED_FULLY");
    assert_eq!(filled["order"]["average_price"], "60150.00");
    assert_eq!(filled["trades"].as_array().map(Vec::len), Some(2));
    let (_, just) = x
        .get(
            "/v1/account/orders?with_just_filled_inactive=true&with_just_orders=true",
            Some(k),
        )
        .await;
    assert_eq!(just["order_history"][0]["trades"], json!([]));

    // Pages of two, following cursors, cover everything once.
    let query = "/v1/account/orders?with_cancelled_and_rejected=true&with_just_filled_inactive=true&max_page_size=2";
    let mut seen = Vec::new();
    for page in x.pages(query, k).await {
        assert_eq!(page["max_page_size"], 2);
        seen.extend(ids(&page));
    }
    assert_eq!(seen, all_ids);
    let (_, page) = x.get("/v1/account/orders?max_page_size=2", Some(k)).await;
    let cursor = page["cursor"].as_str().expect("more pages").to_owned();
    let mut forged = cursor.clone().into_bytes();
    forged[20] = if forged[20] == b'a' { b'b' } else { b'a' };
    let forged = String::from_utf8(forged).expect("ascii");
    for (key, c) in [(k, forged.as_str()), (&x.sub.key, cursor.as_str())] {
        let (s, body) = x
            .get(&format!("/v1/account/orders?cursor={c}"), Some(key))
            .await;
        assert_eq!(
            (s, code(&body)),
            (StatusCode::BAD_REQUEST, "INVALID_CURSOR")
        );
    }
    bad_order_history_queries(&x).await;
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trade_history_lookups_and_time_parameters() {
    let x = Exchange::start().await;
    let (order_id, trades) = sweep_and_list(&x).await;
    trades_of_the_order(&x, &order_id).await;
    one_trade_and_isolation(&x, &order_id, &trades[0]).await;
    trade_pages(&x, &trades).await;
    time_parameters(&x).await;
    x.stop().await;
}

/// An order's trades come a page at a time: an order filled 230 times or more carries its
/// first 100 in its record (by id, and in the open-orders list), and its trades route
/// pages through all of them, oldest first, each once, following cursors. Every answer about such an
/// order held every fill: 96,000 fills made each one 48.7 MB of JSON and a server's peak
/// memory 85 -> 755 MB under 8 of them at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_with_many_fills_answers_its_trades_a_page_at_a_time() {
    let x = Exchange::start().await;
    let (maker, _) = x.new_holder(&["TRADE"]).await;
    let (taker, _) = x.new_holder(&["TRADE"]).await;
    let fills = 230;
    let id = x.much_filled_order(&maker, &taker, fills).await;
    let (s, one) = x
        .get(&format!("/v1/account/orders/{id}"), Some(&maker))
        .await;
    assert_eq!(s, StatusCode::OK, "{one}");
    let embedded = one["trades"].as_array().expect("trades");
    assert_eq!(embedded.len(), 100, "the first 100 fills");
    let (_, open) = x.get("/v1/account/orders", Some(&maker)).await;
    assert_eq!(
        open["order_history"][0]["trades"].as_array().map(Vec::len),
        Some(100)
    );

    let mut seen: Vec<String> = Vec::new();
    for page in x
        .pages(&format!("/v1/account/orders/{id}/trades"), &maker)
        .await
    {
        let trades = page["trade_history"].as_array().expect("trades");
        assert!(trades.len() <= 100, "a page at most");
        seen.extend(trades.iter().map(|t| t["trade"]["trade_id"].to_string()));
    }
    // The sales, and whatever of the opening book the order took as it was placed.
    assert!(seen.len() >= fills, "{}", seen.len());
    let distinct: std::collections::BTreeSet<&String> = seen.iter().collect();
    assert_eq!(distinct.len(), seen.len(), "each once");
    let first: Vec<String> = (embedded.iter())
        .map(|t| t["trade"]["trade_id"].to_string())
        .collect();
    assert_eq!(
        first,
        seen[..100],
        "the record carries the oldest, in order"
    );
    // A cursor of this order's list is refused for another order's.
    let (_, other) = x.order(&maker, "BUY", "900.00", "1", json!({})).await;
    let other = other["order_id"].as_str().expect("id").to_owned();
    let (_, page) = x
        .get(&format!("/v1/account/orders/{id}/trades"), Some(&maker))
        .await;
    let c = page["cursor"].as_str().expect("more follow");
    let (s, body) = x
        .get(
            &format!("/v1/account/orders/{other}/trades?cursor={c}"),
            Some(&maker),
        )
        .await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::BAD_REQUEST, "INVALID_CURSOR")
    );
    x.stop().await;
}

/// Sweeps five demo asks (five trades, 0.01 BTC each): the taker's history, newest first,
/// with the trade's and the fee's fields. The order's id and its trades.
async fn sweep_and_list(x: &Exchange) -> (String, Vec<Value>) {
    let k = &x.trader.key;
    let (s, ack) = x.order(k, "BUY", "60500.00", "0.05", json!({})).await;
    assert_eq!(s, StatusCode::OK, "{ack}");
    let order_id = ack["order_id"].as_str().expect("id").to_owned();
    let (_, history) = x.get("/v1/account/trades", Some(k)).await;
    let trades = history["trade_history"].as_array().expect("array").clone();
    assert_eq!(trades.len(), 5);
    assert_eq!(trades[0]["trade"]["price"], "60360.00", "newest first");
    let t = &trades[0];
    assert_eq!(t["trade"]["side"], "BUY");
    assert_eq!(t["trade"]["matched_as"], "TAKER");
    assert_eq!(t["fee"]["fee_type"], "TAKER");
    assert_eq!(t["fee"]["fee_currency"], "BTC");
    assert_eq!(t["fee"]["fee_amount"], "0.00001500");
    assert_eq!(t["fee"]["fee_percentage"], "0.1500");
    assert_eq!(t["trade"]["order_id"], order_id.as_str());
    (order_id, trades)
}

/// The order's own trades, oldest first; an unknown order has none.
async fn trades_of_the_order(x: &Exchange, order_id: &str) {
    let k = &x.trader.key;
    let (_, of_order) = x
        .get(&format!("/v1/account/orders/{order_id}/trades"), Some(k))
        .await;
    let list = of_order["trade_history"].as_array().expect("array");
    assert_eq!(list.len(), 5);
    assert_eq!(list[0]["trade"]["price"], "60120.00", "oldest first");
    let (s, empty) = x
        .get(
            "/v1/account/orders/00000040-0000-8180-8000-0000000fffff/trades",
            Some(k),
        )
        .await;
    assert_eq!(
        (s, empty["trade_history"].clone()),
        (StatusCode::OK, json!([]))
    );
}

/// One trade by id, at both paths; a foreign id and another holder see nothing.
async fn one_trade_and_isolation(x: &Exchange, order_id: &str, t: &Value) {
    let k = &x.trader.key;
    let trade_id = t["trade"]["trade_id"].as_str().expect("id").to_owned();
    let (s, one) = x
        .get(&format!("/v1/account/trade/{trade_id}"), Some(k))
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(one["trade"]["trade_id"], trade_id.as_str());
    // Older clients (bitpanda-aio) ask at `trades/{id}`: the same answer (404 before).
    let (s, older) = x
        .get(&format!("/v1/account/trades/{trade_id}"), Some(k))
        .await;
    assert_eq!((s, &older), (StatusCode::OK, &one));
    // The same number with a bit of the (unused) slot field set is no trade this server
    // issued: it used to name the same trade.
    let mut groups: Vec<String> = trade_id.split('-').map(str::to_owned).collect();
    let third = u16::from_str_radix(&groups[2], 16).expect("hex") | 4;
    groups[2] = format!("{third:04x}");
    let (s, body) = x
        .get(&format!("/v1/account/trade/{}", groups.join("-")), Some(k))
        .await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::NOT_FOUND, "INVALID_TRADE_ID")
    );
    // The maker saw the same trade from its side; strangers see nothing.
    let (other, _) = x.new_holder(&["TRADE"]).await;
    let (s, body) = x
        .get(&format!("/v1/account/trade/{trade_id}"), Some(&other))
        .await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::NOT_FOUND, "INVALID_TRADE_ID")
    );
    let (_, theirs) = x.get("/v1/account/trades", Some(&other)).await;
    assert_eq!(theirs["trade_history"], json!([]));
    let (_, theirs) = x
        .get(
            &format!("/v1/account/orders/{order_id}/trades"),
            Some(&other),
        )
        .await;
    assert_eq!(theirs["trade_history"], json!([]));
}

/// Pages of two with a cursor visit every trade once, newest first.
async fn trade_pages(x: &Exchange, trades: &[Value]) {
    let k = &x.trader.key;
    let mut seen = Vec::new();
    for page in x.pages("/v1/account/trades?max_page_size=2", k).await {
        let trades = page["trade_history"].as_array().expect("array");
        seen.extend(trades.iter().map(|t| t["trade"]["trade_id"].clone()));
    }
    let all: Vec<Value> = trades
        .iter()
        .map(|t| t["trade"]["trade_id"].clone())
        .collect();
    assert_eq!(seen, all);
}

/// Every form of time the spec allows, and each bad one refused with its code.
async fn time_parameters(x: &Exchange) {
    let k = &x.trader.key;
    let now_ms = x.get("/v1/time", None).await.1["epoch_millis"]
        .as_i64()
        .expect("millis");
    for query in [
        format!("from={}", now_ms / 1000 - 60),
        format!("from={}", now_ms - 60_000),
        format!("from={}", (now_ms - 60_000) * 1000),
        format!("to={}", (now_ms + 1000) * 1_000_000),
        "from=2026-01-01".to_owned(),
        "instrument_code=BTC_EUR,ETH_EUR".to_owned(),
    ] {
        let (s, page) = x.get(&format!("/v1/account/trades?{query}"), Some(k)).await;
        assert_eq!(s, StatusCode::OK, "{query}: {page}");
    }
    let (_, eth) = x
        .get("/v1/account/trades?instrument_code=ETH_EUR", Some(k))
        .await;
    assert_eq!(eth["trade_history"], json!([]));
    for (query, want) in [
        ("from=None".to_owned(), "INVALID_TIME"),
        (format!("from={}", now_ms + 3_600_000), "INVALID_TIME"),
        (
            "from=2026-03-01&to=2026-01-01".to_owned(),
            "INVALID_TIME_RANGE",
        ),
        (
            "from=2026-01-01&to=2026-03-01".to_owned(),
            "ACCOUNT_HISTORY_TIME_RANGE_TOO_BIG",
        ),
        (
            "from=1700-01-01&to=9000000000000000000".to_owned(),
            "ACCOUNT_HISTORY_TIME_RANGE_TOO_BIG",
        ),
        ("from=9223372036854775".to_owned(), "INVALID_TIME"),
        ("max_page_size=101".to_owned(), "INVALID_QUERY"),
        ("instrument_code=NOPE".to_owned(), "INVALID_INSTRUMENT_CODE"),
        ("cursor=abc".to_owned(), "INVALID_CURSOR"),
    ] {
        let (s, body) = x.get(&format!("/v1/account/trades?{query}"), Some(k)).await;
        assert_eq!((s, code(&body)), (StatusCode::BAD_REQUEST, want), "{query}");
    }
}

/// Order history's bad queries, each refused with its code.
async fn bad_order_history_queries(x: &Exchange) {
    let k = &x.trader.key;
    for (query, want) in [
        (
            "from=2026-01-01&to=2026-03-01",
            "ACCOUNT_HISTORY_TIME_RANGE_TOO_BIG",
        ),
        // 560 years: the span once overflowed and wrapped below the limit.
        (
            "from=1700-01-01&to=9000000000000000000",
            "ACCOUNT_HISTORY_TIME_RANGE_TOO_BIG",
        ),
        ("from=None", "INVALID_TIME"),
        ("max_page_size=101", "INVALID_QUERY"),
        ("with_just_orders=maybe", "INVALID_QUERY"),
        ("instrument_code=NOPE", "INVALID_INSTRUMENT_CODE"),
    ] {
        let (s, body) = x.get(&format!("/v1/account/orders?{query}"), Some(k)).await;
        assert_eq!((s, code(&body)), (StatusCode::BAD_REQUEST, want), "{query}");
    }
}
