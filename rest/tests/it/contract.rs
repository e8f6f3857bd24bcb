//! The answers against the server's own `/openapi.json`: a seeded run of requests over
//! every route (orders of every outcome, transfers, futures with funding, refusals), each
//! answer checked strictly against the schema of its operation and status: no field the
//! schema does not declare, no empty string, no null (see `contract/schema.rs`).

use crate::common;
mod schema;

use common::{Exchange, Seeded};
use reqwest::{Method, StatusCode};
use schema::Contract;
use serde_json::{Value, json};

/// Sends requests and checks every answer.
struct Run {
    x: Exchange,
    contract: Contract,
    answers: usize,
}

impl Run {
    /// `method path` (the real path, with its query) described as `template`.
    async fn send(
        &mut self,
        method: Method,
        template: &str,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let url = format!("{}{path}", self.x.base);
        let (status, answer) = self.x.call(method.clone(), &url, key, body).await;
        assert!(
            !status.is_server_error(),
            "{method} {path}: {status} {answer}"
        );
        self.contract
            .check(method.as_str(), template, status.as_u16(), &answer);
        self.answers += 1;
        (status, answer)
    }

    async fn get(&mut self, template: &str, path: &str, key: Option<&str>) -> Value {
        self.send(Method::GET, template, path, key, None).await.1
    }

    async fn create(&mut self, key: &str, body: Value) -> Value {
        let path = "/v1/account/orders";
        self.send(Method::POST, path, path, Some(key), Some(body))
            .await
            .1
    }
}

fn order(code: &str, kind: &str, side: &str, price: Option<&str>, amount: &str) -> Value {
    let mut body = json!({"instrument_code": code, "type": kind, "side": side, "amount": amount});
    if let Some(price) = price {
        body["price"] = json!(price);
    }
    body
}

fn with(mut body: Value, field: &str, value: Value) -> Value {
    body[field] = value;
    body
}

/// Orders of every outcome on BTC_EUR: resting, crossing, market, IOC, FOK and post-only
/// refusals, stop, good-till-time, a trailing stop, then a seeded flow with cancels. Returns resting ids.
async fn spot_flow(run: &mut Run, key: &str) -> Vec<String> {
    let limit = |side, price| order("BTC_EUR", "LIMIT", side, Some(price), "0.01");
    let bodies = [
        limit("BUY", "59000.00"),
        limit("BUY", "60200.00"),
        order("BTC_EUR", "MARKET", "SELL", None, "0.01"),
        with(limit("BUY", "60200.00"), "time_in_force", json!("IOC")),
        with(
            with(
                limit("BUY", "60200.00"),
                "time_in_force",
                json!("FILL_OR_KILL"),
            ),
            "amount",
            json!("5"),
        ),
        with(
            limit("SELL", "59000.00"),
            "time_in_force",
            json!("POST_ONLY"),
        ),
        with(
            order("BTC_EUR", "STOP", "SELL", Some("50000.00"), "0.01"),
            "trigger_price",
            json!("51000.00"),
        ),
        with(
            with(limit("BUY", "58000.00"), "time_in_force", json!("GTT")),
            "expire_after",
            json!("2099-01-01T00:00:00Z"),
        ),
        with(limit("BUY", "0"), "price", json!("-1")),
        // A record of an extension type, its distance sent as digits.
        with(
            order("BTC_EUR", "TRAILING_STOP", "SELL", None, "0.01"),
            "trailing_offset_bps",
            json!("25"),
        ),
    ];
    for body in bodies {
        run.create(key, body).await;
    }
    let mut rng = Seeded(0x5eed_1234_abcd_0001);
    let mut resting = Vec::new();
    for _ in 0..40 {
        let side = if rng.below(2) == 0 { "BUY" } else { "SELL" };
        let price = format!("{}.00", 59_800 + rng.below(500));
        let amount = format!("0.0{}", 1 + rng.below(5));
        let answer = run
            .create(key, order("BTC_EUR", "LIMIT", side, Some(&price), &amount))
            .await;
        if let Some(id) = answer["order_id"].as_str() {
            resting.push(id.to_owned());
        }
        if rng.below(4) == 0
            && let Some(id) = resting.pop()
        {
            let template = "/v1/account/orders/{order_id}";
            let path = format!("/v1/account/orders/{id}");
            run.send(Method::DELETE, template, &path, Some(key), None)
                .await;
        }
    }
    resting
}

/// Two holders trade the perpetual, then funding settles once.
async fn futures_flow(run: &mut Run) -> (String, String) {
    let (long, long_account) = run.x.new_holder(&["TRADE"]).await;
    let (short, short_account) = run.x.new_holder(&["TRADE"]).await;
    for account in [&long_account, &short_account] {
        run.x
            .admin(
                "/admin/deposits",
                json!({"account_id": account, "currency": "USD", "amount": "100000"}),
            )
            .await;
    }
    let perp = |side| order("BTC_USD_PERP", "LIMIT", side, Some("60000.0"), "0.2");
    run.create(&short, perp("SELL")).await;
    run.create(&long, perp("BUY")).await;
    run.x
        .admin(
            "/admin/index-price",
            json!({"instrument_code": "BTC_USD_PERP", "price": "61000.0"}),
        )
        .await;
    run.x
        .admin("/admin/time/advance", json!({"seconds": 4 * 3600 + 60}))
        .await;
    let positions = run
        .get(
            "/v1/account/futures/positions",
            "/v1/account/futures/positions",
            Some(&long),
        )
        .await;
    let position = positions["positions"][0]["position_id"]
        .as_str()
        .unwrap_or("0")
        .to_owned();
    (long, position)
}

/// Every read route, with the ids the flows made.
async fn reads(run: &mut Run, key: &str, order_id: &str, futures_key: &str, position: &str) {
    public_reads(run).await;
    account_reads(run, key, order_id).await;
    futures_reads(run, key, futures_key, position).await;
}

/// The public routes: reference data, tickers, candles, funding, books of each level.
async fn public_reads(run: &mut Run) {
    let public = [
        ("/v1/time", "/v1/time".to_owned()),
        ("/v1/currencies", "/v1/currencies".into()),
        ("/v1/instruments", "/v1/instruments".into()),
        ("/v1/fees", "/v1/fees".into()),
        ("/v1/market-ticker", "/v1/market-ticker".into()),
        (
            "/v1/market-ticker/{instrument_code}",
            "/v1/market-ticker/BTC_USD_PERP".into(),
        ),
        (
            "/v1/market-ticker/{instrument_code}",
            "/v1/market-ticker/BTC_USD_2027Q1".into(),
        ),
        (
            "/v1/candlesticks/{instrument_code}",
            "/v1/candlesticks/BTC_EUR?unit=MINUTES&period=1".into(),
        ),
        (
            "/v1/candlesticks/{instrument_code}",
            "/v1/candlesticks/ETH_BTC?unit=HOURS&period=4".into(),
        ),
        ("/v1/funding-rate", "/v1/funding-rate".into()),
        (
            "/v1/funding-rate/history",
            "/v1/funding-rate/history?instrument_code=BTC_USD_PERP".into(),
        ),
        (
            "/v1/funding-rate/settings",
            "/v1/funding-rate/settings".into(),
        ),
    ];
    for (template, path) in public {
        run.get(template, &path, None).await;
    }
    for level in 1..=3 {
        let template = "/v1/order-book/{instrument_code}";
        for code in ["BTC_EUR", "BTC_USD_2027Q1"] {
            let path = format!("/v1/order-book/{code}?level={level}");
            run.get(template, &path, None).await;
        }
    }
}

/// The account's routes: orders with each flag, one order and its trades, by client id,
/// balances, fees, subaccounts, trades and one trade.
async fn account_reads(run: &mut Run, key: &str, order_id: &str) {
    let flags = [
        "",
        "?with_cancelled_and_rejected=true",
        "?with_just_filled_inactive=true",
        "?with_just_orders=true&with_cancelled_and_rejected=true",
    ];
    for query in flags {
        let path = format!("/v1/account/orders{query}");
        run.get("/v1/account/orders", &path, Some(key)).await;
    }
    let record = run
        .get(
            "/v1/account/orders/{order_id}",
            &format!("/v1/account/orders/{order_id}"),
            Some(key),
        )
        .await;
    let client_id = record["order"]["client_id"]
        .as_str()
        .unwrap_or("-")
        .to_owned();
    let private = [
        ("/v1/account/balances", "/v1/account/balances".to_owned()),
        ("/v1/account/fees", "/v1/account/fees".into()),
        ("/v1/subaccounts", "/v1/subaccounts".into()),
        ("/v1/account/trades", "/v1/account/trades".into()),
        (
            "/v1/account/orders/{order_id}/trades",
            format!("/v1/account/orders/{order_id}/trades"),
        ),
        (
            "/v1/account/orders/client/{client_id}",
            format!("/v1/account/orders/client/{client_id}"),
        ),
    ];
    for (template, path) in private {
        run.get(template, &path, Some(key)).await;
    }
    let trades = run
        .get("/v1/account/trades", "/v1/account/trades", Some(key))
        .await;
    let trade_id = trades["trade_history"][0]["trade"]["trade_id"]
        .as_str()
        .unwrap_or("-");
    let path = format!("/v1/account/trade/{trade_id}");
    run.get("/v1/account/trade/{trade_id}", &path, Some(key))
        .await;
}

/// The futures routes of the account holding `position`, and another account's refusal.
async fn futures_reads(run: &mut Run, key: &str, futures_key: &str, position: &str) {
    let futures = [
        (
            "/v1/account/futures/summary",
            "/v1/account/futures/summary".to_owned(),
        ),
        (
            "/v1/account/futures/positions-history",
            "/v1/account/futures/positions-history".into(),
        ),
        (
            "/v1/account/futures/funding-payments",
            "/v1/account/futures/funding-payments".into(),
        ),
        (
            "/v1/account/futures/positions/{position_id}/trades",
            format!(
                "/v1/account/futures/positions/{position_id}/trades",
                position_id = position
            ),
        ),
        (
            "/v1/account/futures/positions/{position_id}/funding-payments",
            format!("/v1/account/futures/positions/{position}/funding-payments"),
        ),
    ];
    for (template, path) in futures {
        run.get(template, &path, Some(futures_key)).await;
    }
    // Another account's position: refused, and the refusal is described too.
    let path = format!("/v1/account/futures/positions/{position}/trades");
    run.get(
        "/v1/account/futures/positions/{position_id}/trades",
        &path,
        Some(key),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_matches_its_schema_strictly() {
    let x = Exchange::start().await;
    let (_, doc) = x.get("/openapi.json", None).await;
    let mut run = Run {
        contract: Contract::new(doc),
        x,
        answers: 0,
    };
    let key = run.x.trader.key.clone();
    let resting = spot_flow(&mut run, &key).await;
    let transfer = json!({"currency": "EUR", "amount": "10.5",
        "source_account_id": run.x.trader.account_id, "destination_account_id": run.x.sub.account_id});
    let path = "/v1/subaccounts/transfers";
    run.send(Method::POST, path, path, Some(&key), Some(transfer))
        .await;
    let (futures_key, position) = futures_flow(&mut run).await;
    let order_id = resting.first().cloned().unwrap_or_default();
    reads(&mut run, &key, &order_id, &futures_key, &position).await;
    let template = "/v1/account/orders/client/{client_id}";
    let path = "/v1/account/orders/client/00000000-0000-4000-8000-000000000000";
    run.send(Method::DELETE, template, path, Some(&key), None)
        .await;
    let path = "/v1/account/orders?instrument_code=BTC_EUR";
    run.send(Method::DELETE, "/v1/account/orders", path, Some(&key), None)
        .await;
    assert!(run.answers > 100, "{} answers checked", run.answers);
    let Run { x, contract, .. } = run;
    x.stop().await;
    assert!(
        contract.problems.is_empty(),
        "{} problems:\n{}",
        contract.problems.len(),
        contract.problems.join("\n")
    );
}
