//! Futures over HTTP: positions from trades on the perpetual, the summary and positions
//! views, ticker futures fields, index price and time moved by the admin listener, funding
//! rates and payments, positions history, position trades, liquidation and the margin
//! refusal.

use crate::common;

use common::{Exchange, code};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn perp_order(
    x: &Exchange,
    key: &str,
    side: &str,
    price: &str,
    amount: &str,
) -> (StatusCode, Value) {
    x.post(
        "/v1/account/orders",
        key,
        json!({"instrument_code": "BTC_USD_PERP", "type": "LIMIT", "side": side,
            "price": price, "amount": amount}),
    )
    .await
}

/// The exchange's time, in milliseconds.
async fn server_millis(x: &Exchange) -> i64 {
    let (_, time) = x.get("/v1/time", None).await;
    time["epoch_millis"].as_i64().expect("millis")
}

/// How many funding settlements of the perpetual (every four hours from midnight UTC)
/// fall after `from` and up to `to`, both in milliseconds.
fn settlements_between(from: i64, to: i64) -> usize {
    const PERIOD_MS: i64 = 4 * 3_600_000;
    usize::try_from(to / PERIOD_MS - from / PERIOD_MS).expect("forward")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn positions_funding_and_liquidation_over_http() {
    let x = Exchange::start().await;
    let (long, long_account) = x.new_holder(&["TRADE"]).await;
    let (short, short_account) = x.new_holder(&["TRADE"]).await;
    for (account, amount) in [(&long_account, "2000"), (&short_account, "100000")] {
        x.admin(
            "/admin/deposits",
            json!({"account_id": account, "currency": "USD", "amount": amount}),
        )
        .await;
    }
    // Initial margin: 0.2 BTC x 60,000 x 10 % = 1,200 USD, within 2,000.
    let (s, body) = perp_order(&x, &short, "SELL", "60000.0", "0.2").await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let (s, body) = perp_order(&x, &long, "BUY", "60000.0", "0.2").await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let (s, body) = perp_order(&x, &long, "BUY", "50000.0", "0.2").await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, "INSUFFICIENT_FUNDS")
    );
    let position_id = check_the_position(&x, &long).await;
    let indexed_at = index_above_the_mark(&x).await;
    check_the_funding(&x, (&long, &short), &position_id, indexed_at).await;
    liquidate_and_check(&x, (&long, &short), &long_account, &position_id).await;
    x.stop().await;
}

/// The long's position and margin as REST shows them: its direction, volume and entry
/// price, the futures summary, the balances' margin. Its id.
async fn check_the_position(x: &Exchange, long: &str) -> String {
    let (_, positions) = x.get("/v1/account/futures/positions", Some(long)).await;
    let p = &positions["positions"][0];
    assert_eq!(p["direction"], "LONG");
    assert_eq!(p["open_volume"], "0.2000");
    assert_eq!(p["entry_price"], "60000.0");
    let position_id = p["position_id"].as_str().expect("id").to_owned();
    assert!(position_id.parse::<u64>().is_ok(), "numeric string");
    let (_, summary) = x.get("/v1/account/futures/summary", Some(long)).await;
    for field in [
        "equity",
        "margin_used",
        "margin_available",
        "maintenance_margin",
        "account_ratio",
    ] {
        assert!(summary[field].is_string(), "{field}");
    }
    assert_eq!(summary["margin_used"], "1200.00000000");
    let (_, balances) = x.get("/v1/account/balances", Some(long)).await;
    assert_eq!(
        balances["margin_used"], "1200.00000000",
        "balances carry the futures margin"
    );
    position_id
}

/// The index set above the mark (a negative premium: shorts pay longs at the next
/// settlement), as the ticker and the funding routes show it. The exchange's time just
/// before it was set.
async fn index_above_the_mark(x: &Exchange) -> i64 {
    let indexed_at = server_millis(x).await;
    x.admin(
        "/admin/index-price",
        json!({"instrument_code": "BTC_USD_PERP", "price": "61000.0"}),
    )
    .await;
    let (_, ticker) = x.get("/v1/market-ticker/BTC_USD_PERP", None).await;
    assert_eq!(ticker["open_interest"], "0.2000");
    assert_eq!(ticker["mark_price"], "60000.0");
    assert!(
        ticker["funding_rate"]
            .as_str()
            .is_some_and(|r| r.starts_with('-'))
    );
    assert!(ticker["next_funding_payment"].is_string());
    let (_, rates) = x
        .get("/v1/funding-rate?instrument_code=BTC_USD_PERP", None)
        .await;
    assert_eq!(rates[0]["instrument_code"], "BTC_USD_PERP");
    let (_, settings) = x.get("/v1/funding-rate/settings", None).await;
    assert_eq!(
        settings.as_array().map(Vec::len),
        Some(1),
        "only the perp has funding"
    );
    assert_eq!(settings[0]["period"], 240);
    indexed_at
}

/// A settlement: the long received, the short paid, by position and in the rate history.
async fn check_the_funding(
    x: &Exchange,
    (long, short): (&str, &str),
    position_id: &str,
    indexed_at: i64,
) {
    x.admin("/admin/time/advance", json!({"seconds": 4 * 3600 + 60}))
        .await;
    // One settlement in the advance, and one more if the real clock crossed a settlement
    // (every four hours from midnight UTC) since the index was set.
    let settlements = settlements_between(indexed_at, server_millis(x).await);
    let (_, paid) = x
        .get("/v1/account/futures/funding-payments", Some(long))
        .await;
    let payment = &paid["funding_payments"][0];
    assert_eq!(payment["position_id"], position_id);
    assert!(
        !payment["funding_payment"]
            .as_str()
            .unwrap_or("-")
            .starts_with('-'),
        "the long received"
    );
    assert!(
        payment["time"].as_str().is_some_and(|t| t.len() == 30),
        "nanosecond time"
    );
    let (_, short_paid) = x
        .get("/v1/account/futures/funding-payments", Some(short))
        .await;
    assert!(
        short_paid["funding_payments"][0]["funding_payment"]
            .as_str()
            .unwrap_or("")
            .starts_with('-')
    );
    let (_, by_position) = x
        .get(
            &format!("/v1/account/futures/positions/{position_id}/funding-payments"),
            Some(long),
        )
        .await;
    assert_eq!(
        by_position["funding_payments"].as_array().map(Vec::len),
        Some(settlements)
    );
    let (_, history) = x
        .get(
            "/v1/funding-rate/history?instrument_code=BTC_USD_PERP",
            None,
        )
        .await;
    assert_eq!(history.as_array().map(Vec::len), Some(settlements));
}

/// The index falls: the long is below maintenance and in de-risk; the admin liquidates it
/// into a bid; its closed position, trades and fees; another account sees none of it.
async fn liquidate_and_check(
    x: &Exchange,
    (long, short): (&str, &str),
    long_account: &str,
    position_id: &str,
) {
    x.admin(
        "/admin/index-price",
        json!({"instrument_code": "BTC_USD_PERP", "price": "48000.0"}),
    )
    .await;
    let (_, summary) = x.get("/v1/account/futures/summary", Some(long)).await;
    assert_eq!(summary["derisk"], true, "{summary}");
    let (s, body) = perp_order(x, long, "BUY", "50000.0", "0.01").await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, "USER_MGMT_USER_IN_DERISK")
    );
    perp_order(x, short, "BUY", "50400.0", "0.2").await;
    x.admin("/admin/liquidate", json!({"account_id": long_account}))
        .await;
    let (_, positions) = x.get("/v1/account/futures/positions", Some(long)).await;
    assert_eq!(positions["positions"], json!([]));
    let (_, closed) = x
        .get("/v1/account/futures/positions-history", Some(long))
        .await;
    assert_eq!(closed["positions"][0]["position_id"], position_id);
    let (_, trades) = x
        .get(
            &format!("/v1/account/futures/positions/{position_id}/trades"),
            Some(long),
        )
        .await;
    let trades = trades["trade_history"].as_array().expect("array").clone();
    assert_eq!(trades.len(), 2, "opened and liquidated");
    assert_eq!(trades[0]["trade"]["position_id"], position_id);
    assert_eq!(trades[1]["trade"]["open_position_amount"], "0.0000");
    assert_eq!(
        trades[0]["fee"]["fee_currency"], "USD",
        "futures fees are in USD"
    );
    assert_eq!(trades[0]["fee"]["fee_percentage"], "0.0500", "taker");
    // Another account sees none of it.
    let (s, foreign) = x
        .get(
            &format!("/v1/account/futures/positions/{position_id}/trades"),
            Some(short),
        )
        .await;
    assert_eq!(
        (s, code(&foreign)),
        (StatusCode::FORBIDDEN, "MISSING_PERMISSION")
    );
    let (s, body) = x
        .get("/v1/account/futures/positions/abc/trades", Some(long))
        .await;
    assert_eq!(
        (s, code(&body)),
        (StatusCode::BAD_REQUEST, "INVALID_POSITION_ID")
    );
    let (s, _) = x
        .get("/v1/funding-rate/history?instrument_code=BTC_EUR", None)
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "not a future");
}

/// Positions history pages in its own order: an account whose positions close in another
/// order than they opened (so their numbers are not in close order) gets each of them
/// once, newest closed first, paging one at a time. Cursors were position numbers, so the
/// page after the perpetual (opened first, closed last) skipped the dated future.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn positions_history_pages_by_close_order() {
    let x = Exchange::start().await;
    let (trader, trader_account) = x.new_holder(&["TRADE"]).await;
    let (other, other_account) = x.new_holder(&["TRADE"]).await;
    for account in [&trader_account, &other_account] {
        x.admin(
            "/admin/deposits",
            json!({"account_id": account, "currency": "USD", "amount": "100000"}),
        )
        .await;
    }
    let trade = |code: &'static str, buyer: String, seller: String| {
        let x = &x;
        async move {
            for (key, side) in [(&seller, "SELL"), (&buyer, "BUY")] {
                let (s, body) = x
                    .post(
                        "/v1/account/orders",
                        key,
                        json!({"instrument_code": code, "type": "LIMIT", "side": side,
                            "price": "60000.0", "amount": "0.1"}),
                    )
                    .await;
                assert_eq!(s, StatusCode::OK, "{body}");
            }
        }
    };
    let (perp, dated) = ("BTC_USD_PERP", "BTC_USD_2027Q1");
    trade(perp, trader.clone(), other.clone()).await;
    trade(dated, trader.clone(), other.clone()).await;
    trade(dated, other.clone(), trader.clone()).await;
    trade(perp, other.clone(), trader.clone()).await;

    let (mut seen, mut ids) = (Vec::new(), Vec::new());
    let history = "/v1/account/futures/positions-history?limit=1";
    for page in x.pages(history, &trader).await {
        for p in page["positions"].as_array().expect("positions") {
            seen.push(p["instrument_code"].as_str().expect("code").to_owned());
            ids.push(p["position_id"].as_str().expect("id").to_owned());
        }
    }
    assert_eq!(seen, [perp, dated], "newest closed first, each once");

    // A position's trades page the same way: the perpetual's opening and closing trade,
    // one a page, oldest first.
    let trades = format!(
        "/v1/account/futures/positions/{}/trades?max_page_size=1",
        ids[0]
    );
    let (s, first) = x.get(&trades, Some(&trader)).await;
    assert_eq!(s, StatusCode::OK, "{first}");
    let c = first["cursor"].as_str().expect("a second trade follows");
    let (s, second) = x.get(&format!("{trades}&cursor={c}"), Some(&trader)).await;
    assert_eq!(s, StatusCode::OK, "{second}");
    assert!(second["cursor"].is_null(), "{second}");
    let side = |page: &Value| page["trade_history"][0]["trade"]["side"].clone();
    assert_eq!((side(&first), side(&second)), (json!("BUY"), json!("SELL")));
}
