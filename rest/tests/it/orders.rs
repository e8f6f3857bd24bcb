//! Orders and trades over HTTP: creation with every input error, the four time-in-force
//! rules, lookups, cancels, history pages with cursors, trade history, and isolation
//! between accounts.

use crate::common;

use common::{Exchange, code, order_fields};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_refuses_bad_input_with_the_addendum_codes() {
    let x = Exchange::start().await;
    let k = &x.trader.key;
    let (status, ack) = x
        .order(
            k,
            "BUY",
            "50000.00",
            "0.01",
            json!({"time_in_force": "POST_ONLY"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{ack}");
    for field in [
        "order_id",
        "client_id",
        "account_id",
        "instrument_code",
        "time",
        "side",
        "price",
        "amount",
        "type",
        "status",
        "time_in_force",
    ] {
        assert!(ack[field].is_string(), "{field}");
    }
    assert_eq!(ack["status"], "OPEN");
    assert_eq!(ack["type"], "LIMIT");
    assert_eq!(ack["time_in_force"], "POST_ONLY");
    let base = json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
        "price": "50000.00", "amount": "0.01"});
    let with = |key: &str, value: Value| {
        let mut b = base.clone();
        match value {
            Value::Null => {
                b.as_object_mut().map(|m| m.remove(key));
            }
            v => b[key] = v,
        }
        b
    };
    let cases = [
        (
            with("type", Value::Null),
            StatusCode::BAD_REQUEST,
            "MISSING_ORDER_TYPE",
        ),
        (
            with("type", json!("ICEBERG")),
            StatusCode::BAD_REQUEST,
            "INVALID_ORDER_TYPE",
        ),
        (
            with("side", Value::Null),
            StatusCode::BAD_REQUEST,
            "MISSING_SIDE",
        ),
        (
            with("side", json!("HOLD")),
            StatusCode::BAD_REQUEST,
            "INVALID_SIDE",
        ),
        (
            with("amount", Value::Null),
            StatusCode::BAD_REQUEST,
            "INVALID_AMOUNT",
        ),
        (
            with("amount", json!("-1")),
            StatusCode::BAD_REQUEST,
            "NEGATIVE_AMOUNT",
        ),
        (
            with("amount", json!("0.000001")),
            StatusCode::BAD_REQUEST,
            "BAD_AMOUNT_PRECISION",
        ),
        (
            with("amount", json!("1e3")),
            StatusCode::BAD_REQUEST,
            "INVALID_AMOUNT",
        ),
        (
            with("amount", json!("0")),
            StatusCode::BAD_REQUEST,
            "INVALID_AMOUNT",
        ),
        (
            with("price", Value::Null),
            StatusCode::BAD_REQUEST,
            "MISSING_PRICE",
        ),
        (
            with("price", json!("-5")),
            StatusCode::BAD_REQUEST,
            "NEGATIVE_PRICE",
        ),
        (
            with("price", json!("1.001")),
            StatusCode::BAD_REQUEST,
            "BAD_PRICE_PRECISION",
        ),
        (
            with("client_id", json!("abc")),
            StatusCode::BAD_REQUEST,
            "INVALID_CLIENT_UUID",
        ),
        (
            with("time_in_force", json!("FOREVER")),
            StatusCode::BAD_REQUEST,
            "INVALID_TIME_IN_FORCE",
        ),
        (
            with("amount", json!("0.0001")),
            StatusCode::BAD_REQUEST,
            "MIN_SIZE_NOT_SATISFIED",
        ),
        (
            with("instrument_code", json!("XYZ_EUR")),
            StatusCode::BAD_REQUEST,
            "INVALID_INSTRUMENT_CODE",
        ),
        (
            with("amount", json!("100")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "INSUFFICIENT_FUNDS",
        ),
        (
            with("time_in_force", json!("FILL_OR_KILL"))
                .as_object()
                .map(|m| {
                    let mut m = m.clone();
                    m.insert("price".into(), json!("60200.00"));
                    m.insert("amount".into(), json!("5"));
                    Value::Object(m)
                })
                .unwrap_or_default(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "INSUFFICIENT_LIQUIDITY",
        ),
        (
            json!({"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
                "price": "60200.00", "amount": "0.01", "time_in_force": "POST_ONLY"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "POST_ONLY_WOULD_TAKE",
        ),
    ];
    for (body, status, want) in cases {
        let (s, reply) = x.post("/v1/account/orders", k, body.clone()).await;
        assert_eq!((s, code(&reply)), (status, want), "{body}");
    }
    // The fill-or-kill and the post-only order the book refused were accepted and ended at
    // once: history lists them with their rejection, open orders do not.
    let statuses = |page: &Value| order_fields(page, "status");
    let (_, rejected) = x
        .get(
            "/v1/account/orders?with_cancelled_and_rejected=true",
            Some(k),
        )
        .await;
    let rejected = statuses(&rejected);
    assert_eq!(
        rejected,
        vec!["FILLED_REJECTED", "FILLED_REJECTED", "OPEN"],
        "newest first, the open post-only order last"
    );
    let (_, open) = x.get("/v1/account/orders", Some(k)).await;
    assert_eq!(statuses(&open), vec!["OPEN"]);
    let (s, reply) = x
        .call(
            reqwest::Method::POST,
            &format!("{}/v1/account/orders", x.base),
            Some(k),
            None,
        )
        .await;
    assert_eq!(
        (s, code(&reply)),
        (StatusCode::BAD_REQUEST, "INVALID_REQUEST_BODY")
    );
    // 200 open orders per holder (spec section 8), counted across its accounts: one is
    // open already, 199 more are accepted, the next is refused.
    let mut accepted = 0;
    let refusal = loop {
        let key = if accepted % 2 == 0 { k } else { &x.sub.key };
        let (s, reply) = x.order(key, "BUY", "50000.00", "0.01", json!({})).await;
        if s != StatusCode::OK {
            break (s, code(&reply).to_owned());
        }
        accepted += 1;
        assert!(accepted < 300, "no limit applied");
    };
    assert_eq!(accepted, 199);
    assert_eq!(
        refusal,
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "MAX_OPEN_ORDERS_EXCEEDED".to_owned()
        )
    );
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lookups_cancels_and_isolation() {
    let x = Exchange::start().await;
    let k = &x.trader.key;
    let client_id = "123e4567-e89b-42d3-a456-426614174000";
    let (_, ack) = x
        .order(
            k,
            "BUY",
            "59000.00",
            "0.01",
            json!({"client_id": client_id}),
        )
        .await;
    let id = ack["order_id"].as_str().expect("id").to_owned();
    assert_eq!(ack["client_id"], client_id);

    let (s, found) = x.get(&format!("/v1/account/orders/{id}"), Some(k)).await;
    assert_eq!(s, StatusCode::OK);
    let order = &found["order"];
    assert_eq!(order["status"], "OPEN");
    assert_eq!(order["order_type"], "API");
    assert!(order["time_nanos"].is_string() && order["time_last_updated_nanos"].is_string());
    assert_eq!(order["fee_currency"], "BTC");
    assert_eq!(found["trades"], json!([]));
    let (_, by_client) = x
        .get(&format!("/v1/account/orders/client/{client_id}"), Some(k))
        .await;
    assert_eq!(by_client["order"]["order_id"], id.as_str());

    // Another holder, and another account of the same holder, see nothing of it.
    let (other, _) = x.new_holder(&["TRADE"]).await;
    for key in [&other, &x.sub.key] {
        let (s, body) = x.get(&format!("/v1/account/orders/{id}"), Some(key)).await;
        assert_eq!((s, code(&body)), (StatusCode::NOT_FOUND, "ORDER_NOT_FOUND"));
        let (s, body) = x.delete(&format!("/v1/account/orders/{id}"), key).await;
        assert_eq!((s, code(&body)), (StatusCode::NOT_FOUND, "ORDER_NOT_FOUND"));
        let (s, body) = x
            .get(&format!("/v1/account/orders/client/{client_id}"), Some(key))
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{body}");
    }
    let (s, body) = x.get("/v1/account/orders/not-a-uuid", Some(k)).await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::BAD_REQUEST, "INVALID_ORDER_ID")
    );
    let (s, body) = x
        .delete(
            &format!("/v1/account/orders/{id}?instrument_code=ETH_EUR"),
            k,
        )
        .await;
    assert_eq!((s, code(&body)), (StatusCode::NOT_FOUND, "ORDER_NOT_FOUND"));

    let (s, cancelled) = x
        .delete(
            &format!("/v1/account/orders/{id}?instrument_code=BTC_EUR"),
            k,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{cancelled}");
    assert_eq!(cancelled["status"], "CANCELLED");
    assert!(cancelled.get("time_in_force").is_none());
    let (s, _) = x.delete(&format!("/v1/account/orders/{id}"), k).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "already cancelled");
    let (_, found) = x.get(&format!("/v1/account/orders/{id}"), Some(k)).await;
    assert_eq!(found["order"]["status"], "CANCELLED");

    // Cancel by client id takes the newest open order with it.
    let (_, first) = x
        .order(
            k,
            "BUY",
            "58000.00",
            "0.01",
            json!({"client_id": client_id}),
        )
        .await;
    let (_, second) = x
        .order(
            k,
            "BUY",
            "58100.00",
            "0.01",
            json!({"client_id": client_id}),
        )
        .await;
    let (s, c) = x
        .delete(&format!("/v1/account/orders/client/{client_id}"), k)
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(c["order_id"], second["order_id"]);
    let (_, still) = x
        .get(
            &format!(
                "/v1/account/orders/{}",
                first["order_id"].as_str().unwrap_or("")
            ),
            Some(k),
        )
        .await;
    assert_eq!(still["order"]["status"], "OPEN");
    let (s, body) = x
        .delete(
            "/v1/account/orders/client/223e4567-e89b-42d3-a456-426614174000",
            k,
        )
        .await;
    assert_eq!((s, code(&body)), (StatusCode::NOT_FOUND, "ORDER_NOT_FOUND"));

    // Cancel all: by ids, by instrument, everything; parameters are exclusive.
    let (_, eth) = x
        .post(
            "/v1/account/orders",
            k,
            json!({"instrument_code": "ETH_EUR", "type": "LIMIT",
            "side": "BUY", "price": "2000.00", "amount": "0.1"}),
        )
        .await;
    let (s, body) = x
        .delete("/v1/account/orders?instrument_code=BTC_EUR&ids=x", k)
        .await;
    assert_eq!((s, code(&body)), (StatusCode::BAD_REQUEST, "INVALID_QUERY"));
    let (s, ids) = x
        .delete("/v1/account/orders?instrument_code=ETH_EUR", k)
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(ids, json!([eth["order_id"]]));
    let (_, extra) = x.order(k, "BUY", "57000.00", "0.01", json!({})).await;
    let (_, ids) = x
        .delete(
            &format!(
                "/v1/account/orders?ids={}",
                extra["order_id"].as_str().unwrap_or("")
            ),
            k,
        )
        .await;
    assert_eq!(ids, json!([extra["order_id"]]));
    let (_, ids) = x.delete("/v1/account/orders", k).await;
    assert_eq!(ids, json!([first["order_id"]]));
    let (_, open) = x.get("/v1/account/orders", Some(k)).await;
    assert_eq!(open["order_history"], json!([]));
    x.stop().await;
}

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
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trade_history_lookups_and_time_parameters() {
    let x = Exchange::start().await;
    let k = &x.trader.key;
    // Sweep five demo asks: five trades, 0.01 BTC each.
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

    // Pages of two with a cursor.
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

/// An open order could not be amended over REST at all (the engine, C and Python could):
/// `PUT` on the order or its client id was 405. It now amends as the engine does: a
/// smaller amount keeps the order's place, a new price moves it; what the order then is
/// shows in the answer, the order's record and the book; the checks are REST's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_order_is_amended_by_id_or_client_id() {
    let x = Exchange::start().await;
    let k = &x.trader.key;
    let client_id = "4d2f8e9a-7b41-4c55-9e2a-0f6b1c3d5e70";
    let (s, placed) = (x.order(k, "BUY", "100.00", "0.5", json!({"client_id": client_id}))).await;
    assert_eq!(s, StatusCode::OK, "{placed}");
    let id = placed["order_id"].as_str().expect("id").to_owned();
    let put = async |path: String, key: &str, body: Value| {
        let url = format!("{}{path}", x.base);
        x.call(reqwest::Method::PUT, &url, Some(key), Some(body))
            .await
    };
    let level = |book: &Value, price: &str| {
        (book["bids"].as_array().expect("bids").iter())
            .find(|l| l["price"] == price)
            .map(|l| l["amount"].clone())
    };

    let (s, ack) = put(
        format!("/v1/account/orders/{id}"),
        k,
        json!({"amount": "0.2"}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{ack}");
    assert_eq!(
        (ack["amount"].as_str(), ack["price"].as_str()),
        (Some("0.20000"), Some("100.00"))
    );
    let (_, book) = x.get("/v1/order-book/BTC_EUR?level=2", None).await;
    assert_eq!(level(&book, "100.00"), Some(json!("0.20000")), "{book}");

    let path = format!("/v1/account/orders/client/{client_id}");
    let (s, ack) = put(path.clone(), k, json!({"price": "101.00"})).await;
    assert_eq!(s, StatusCode::OK, "{ack}");
    assert_eq!(
        (ack["order_id"].as_str(), ack["price"].as_str()),
        (Some(&*id), Some("101.00"))
    );
    let (_, record) = x.get(&format!("/v1/account/orders/{id}"), Some(k)).await;
    assert_eq!(record["order"]["price"], "101.00", "{record}");
    let (_, book) = x.get("/v1/order-book/BTC_EUR?level=2", None).await;
    assert_eq!(level(&book, "101.00"), Some(json!("0.20000")), "{book}");
    assert_eq!(level(&book, "100.00"), None, "{book}");

    let (other, _) = x.new_holder(&["TRADE"]).await;
    let order_path = format!("/v1/account/orders/{id}");
    for (key, body, status, error) in [
        (
            k.as_str(),
            json!({}),
            StatusCode::BAD_REQUEST,
            "INVALID_AMEND",
        ),
        (
            k,
            json!({"amount": "-1"}),
            StatusCode::BAD_REQUEST,
            "NEGATIVE_AMOUNT",
        ),
        // A field no amend changes is refused, not ignored while the rest applies.
        (
            k,
            json!({"amount": "0.1", "side": "SELL"}),
            StatusCode::BAD_REQUEST,
            "INVALID_AMEND",
        ),
        (
            k,
            json!({"price": "102.00", "instrument_code": "ETH_EUR"}),
            StatusCode::BAD_REQUEST,
            "INVALID_AMEND",
        ),
        (
            k,
            json!({"price": "1.001"}),
            StatusCode::BAD_REQUEST,
            "BAD_PRICE_PRECISION",
        ),
        (
            &other,
            json!({"amount": "0.1"}),
            StatusCode::NOT_FOUND,
            "ORDER_NOT_FOUND",
        ),
        (
            &x.reader.key,
            json!({"amount": "0.1"}),
            StatusCode::FORBIDDEN,
            "MISSING_PERMISSION",
        ),
    ] {
        let (s, v) = put(order_path.clone(), key, body.clone()).await;
        assert_eq!((s, code(&v)), (status, error), "{body}");
    }
    let (_, record) = x.get(&order_path, Some(k)).await;
    assert_eq!(
        (
            record["order"]["amount"].as_str(),
            record["order"]["price"].as_str()
        ),
        (Some("0.20000"), Some("101.00")),
        "a refused amend changes nothing"
    );
    let unknown = "/v1/account/orders/client/4d2f8e9a-7b41-4c55-9e2a-0f6b1c3d5e71".to_owned();
    let (s, v) = put(unknown, k, json!({"amount": "0.1"})).await;
    assert_eq!((s, code(&v)), (StatusCode::NOT_FOUND, "ORDER_NOT_FOUND"));
    x.stop().await;
}
