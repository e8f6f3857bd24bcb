//! Public market data over HTTP: time, currencies, instruments, fees, tickers, candles,
//! order book and the OpenAPI description, with their 400 and 404 cases.

use crate::common;

use common::{Exchange, code, data_dir, settings};
use reqwest::StatusCode;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_data_endpoints() {
    let x = Exchange::start().await;
    let (status, time) = x.get("/v1/time", None).await;
    assert_eq!(status, StatusCode::OK);
    let iso = time["iso"].as_str().expect("iso");
    assert!(iso.ends_with('Z') && iso.len() == 24, "{iso}");
    assert!(time["epoch_millis"].as_i64().expect("millis") > 1_700_000_000_000);

    let (_, currencies) = x.get("/v1/currencies", None).await;
    let codes: Vec<&str> = currencies
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|c| c["code"].as_str())
        .collect();
    for c in ["BTC", "ETH", "EUR", "USD", "USDT", "SHIB", "PEPE", "BTT"] {
        assert!(codes.contains(&c), "{c} listed");
    }
    assert!(currencies[0]["precision"].is_u64());
    assert!(currencies[0]["collateral_percentage"].is_number());

    let (_, all) = x.get("/v1/instruments", None).await;
    let all = all.as_array().expect("array").clone();
    let btc_eur = all.iter().find(|i| i["id"] == "BTC_EUR").expect("BTC_EUR");
    assert_eq!(btc_eur["base"]["code"], "BTC");
    assert_eq!(btc_eur["quote"]["precision"], 2);
    assert_eq!(btc_eur["min_size"], "10");
    assert_eq!(btc_eur["state"], "ACTIVE");
    let perp = all.iter().find(|i| i["type"] == "PERP").expect("a perp");
    assert_eq!(perp["funding_schedule"]["type"], "FIXED_INTERVAL");
    let (_, dated) = x.get("/v1/instruments?type=DATED_FUTURE", None).await;
    let dated = dated.as_array().expect("array");
    assert_eq!(dated.len(), 1);
    assert!(dated[0]["contract_expiry_date"].is_string());
    let (status, body) = x.get("/v1/instruments?type=BOGUS", None).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::BAD_REQUEST, "INVALID_QUERY")
    );

    let (_, fees) = x.get("/v1/fees", None).await;
    assert_eq!(fees[0]["fee_group_id"], "SPOT");
    let tiers = fees[0]["fee_tiers"].as_array().expect("tiers");
    assert!(tiers[0]["volume"].is_number());
    assert_eq!(tiers[0]["maker_fee"], "0.1000");
    let volumes: Vec<f64> = tiers.iter().filter_map(|t| t["volume"].as_f64()).collect();
    assert!(volumes.windows(2).all(|w| w[0] < w[1]), "ascending");
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tickers_and_order_book() {
    let x = Exchange::start().await;
    let (status, list) = x.get("/v1/market-ticker", None).await;
    assert_eq!(status, StatusCode::OK);
    let list = list.as_array().expect("array").clone();
    let btc = list
        .iter()
        .find(|t| t["instrument_code"] == "BTC_EUR")
        .expect("BTC_EUR ticker");
    for field in ["type", "global_volume", "best_bid", "highest_bid", "time"] {
        assert!(btc.get(field).is_some(), "{field}");
    }
    assert_eq!(btc["last_price"], "60060.00", "the demo trade");
    let (_, spot) = x.get("/v1/market-ticker?type=SPOT", None).await;
    assert!(
        spot.as_array()
            .expect("array")
            .iter()
            .all(|t| t["type"] == "SPOT")
    );

    let (_, one) = x.get("/v1/market-ticker/BTC_EUR", None).await;
    assert_eq!(one["highest_bid"], "59940.00");
    assert_eq!(one["lowest_ask"], "60120.00");
    assert!(one.get("type").is_none(), "type only in the list form");
    let (status, body) = x.get("/v1/market-ticker/NOPE_EUR", None).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "INVALID_INSTRUMENT_CODE")
    );

    // Suspending a market keeps it in the ticker; closing removes it.
    x.admin(
        "/admin/instruments/ETH_EUR/state",
        serde_json::json!({"state": "CLOSED"}),
    )
    .await;
    let (_, after) = x.get("/v1/market-ticker", None).await;
    assert!(
        !after
            .as_array()
            .expect("array")
            .iter()
            .any(|t| t["instrument_code"] == "ETH_EUR")
    );

    let (_, l1) = x.get("/v1/order-book/BTC_EUR?level=1", None).await;
    assert_eq!(l1["bids"].as_array().map(Vec::len), Some(1));
    assert_eq!(l1["bids"][0]["price"], "59940.00");
    let (_, l2) = x.get("/v1/order-book/BTC_EUR?level=2&depth=3", None).await;
    assert_eq!(l2["asks"].as_array().map(Vec::len), Some(3));
    assert_eq!(l2["asks"][0]["price"], "60120.00");
    assert_eq!(l2["asks"][1]["price"], "60180.00", "asks ascending");
    assert_eq!(l2["bids"][1]["price"], "59880.00", "bids descending");
    assert_eq!(l2["asks"][0]["number_of_orders"], 1);
    let (_, l3) = x.get("/v1/order-book/BTC_EUR", None).await;
    assert!(l3["bids"][0]["order_id"].is_string(), "level 3 by default");
    assert_eq!(l3["bids"].as_array().map(Vec::len), Some(10));
    for (query, want) in [
        ("level=4", "INVALID_ORDER_BOOK_LEVEL"),
        ("level=x", "INVALID_ORDER_BOOK_LEVEL"),
        ("depth=0", "INVALID_ORDER_BOOK_DEPTH"),
        ("depth=-1", "INVALID_ORDER_BOOK_DEPTH"),
    ] {
        let (status, body) = x
            .get(&format!("/v1/order-book/BTC_EUR?{query}"), None)
            .await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::BAD_REQUEST, want),
            "{query}"
        );
    }
    x.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn candlesticks_and_their_errors() {
    let x = Exchange::start().await;
    let (status, body) = x
        .get(
            "/v1/candlesticks/BTC_EUR?unit=MINUTES&period=1&countBack=10",
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "data");
    let candles = body["candlesticks"].as_array().expect("array");
    assert!(!candles.is_empty());
    let c = &candles[0];
    assert_eq!(c["granularity"]["unit"], "MINUTES");
    assert_eq!(c["close"], "60060.00");
    assert!(c["last_sequence"].is_u64());
    assert!(c["total_amount"].is_string() && c["volume"].is_string());
    let (_, daily) = x
        .get(
            "/v1/candlesticks/BTC_EUR?unit=DAYS&period=1&from=2026-01-01",
            None,
        )
        .await;
    assert_eq!(daily["status"], "data");
    for (query, status, want) in [
        (
            "unit=SECONDS&period=1",
            StatusCode::BAD_REQUEST,
            "INVALID_UNIT",
        ),
        (
            "unit=MINUTES&period=7",
            StatusCode::BAD_REQUEST,
            "INVALID_PERIOD",
        ),
        ("unit=MINUTES", StatusCode::BAD_REQUEST, "INVALID_PERIOD"),
        (
            "unit=MINUTES&period=1&from=None",
            StatusCode::BAD_REQUEST,
            "INVALID_TIME",
        ),
        (
            "unit=MINUTES&period=1&from=2026-01-01&to=2026-03-01",
            StatusCode::BAD_REQUEST,
            "CANDLESTICKS_TIME_RANGE_TOO_BIG",
        ),
        (
            "unit=MINUTES&period=1&from=2026-03-01&to=2026-01-01",
            StatusCode::BAD_REQUEST,
            "INVALID_TIME_RANGE",
        ),
    ] {
        let (s, body) = x
            .get(&format!("/v1/candlesticks/BTC_EUR?{query}"), None)
            .await;
        assert_eq!((s, code(&body)), (status, want), "{query}");
    }
    let (s, _) = x
        .get("/v1/candlesticks/XXX?unit=MINUTES&period=1", None)
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    x.stop().await;
}

/// Every route of the public listener.
const PUBLIC_ROUTES: [&str; 28] = [
    "/v1/time",
    "/v1/currencies",
    "/v1/instruments",
    "/v1/fees",
    "/v1/market-ticker",
    "/v1/market-ticker/{instrument_code}",
    "/v1/candlesticks/{instrument_code}",
    "/v1/order-book/{instrument_code}",
    "/v1/subaccounts",
    "/v1/subaccounts/transfers",
    "/v1/account/balances",
    "/v1/account/fees",
    "/v1/account/orders",
    "/v1/account/orders/{order_id}",
    "/v1/account/orders/client/{client_id}",
    "/v1/account/orders/{order_id}/trades",
    "/v1/account/trades",
    "/v1/account/trade/{trade_id}",
    "/v1/account/trades/{trade_id}",
    "/v1/funding-rate",
    "/v1/funding-rate/history",
    "/v1/funding-rate/settings",
    "/v1/account/futures/summary",
    "/v1/account/futures/positions",
    "/v1/account/futures/positions-history",
    "/v1/account/futures/positions/{position_id}/trades",
    "/v1/account/futures/positions/{position_id}/funding-payments",
    "/v1/account/futures/funding-payments",
];

/// Every route of the admin listener.
const ADMIN_ROUTES: [&str; 14] = [
    "/admin/holders",
    "/admin/subaccounts",
    "/admin/accounts/{account_id}/close",
    "/admin/deposits",
    "/admin/withdrawals",
    "/admin/derisk",
    "/admin/blp-threshold",
    "/admin/keys",
    "/admin/instruments/{instrument_code}/state",
    "/admin/time/advance",
    "/admin/index-price",
    "/admin/liquidate",
    "/admin/state",
    "/admin/pipeline",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_describes_every_public_route_and_unknown_routes_are_json_404() {
    let x = Exchange::start().await;
    let (status, doc) = x.get("/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    let paths = doc["paths"].as_object().expect("paths");
    for p in PUBLIC_ROUTES {
        assert!(paths.contains_key(p), "{p} documented");
    }
    assert!(doc["components"]["securitySchemes"]["api_key"].is_object());
    let (status, admin) = x
        .call(
            reqwest::Method::GET,
            &format!("{}/openapi.json", x.admin),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let admin_paths = admin["paths"].as_object().expect("paths");
    for p in ADMIN_ROUTES {
        assert!(
            admin_paths.contains_key(p),
            "{p} documented on the admin listener"
        );
    }
    assert!(
        !paths.keys().any(|p| p.starts_with("/admin")),
        "admin routes are not described on the public listener"
    );
    assert_described_by_types(&doc);
    assert_described_by_types(&admin);
    // An announced body over the limit is refused before it is read (raw socket: a client
    // still writing the body when the answer comes would see a broken pipe instead).
    let addr = x.server.addr;
    let reply = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(addr).expect("connect");
        s.write_all(
            b"POST /v1/account/orders HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n",
        )
        .expect("write");
        let mut buf = vec![0u8; 4096];
        let n = s.read(&mut buf).expect("read");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    })
    .await
    .expect("thread");
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    assert!(reply.contains("PAYLOAD_TOO_LARGE"), "{reply}");
    let (status, body) = x.get("/v1/nothing-here", None).await;
    assert_eq!((status, code(&body)), (StatusCode::NOT_FOUND, "NOT_FOUND"));
    let (status, body) = x
        .call(
            reqwest::Method::PUT,
            &format!("{}/v1/time", x.base),
            None,
            None,
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED")
    );
    x.stop().await;
}

/// The order book never answers with more levels than the server's cap, asked or not: a
/// public read's cost is bounded (the demo book has 10 bid levels).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_book_depth_is_capped_by_configuration() {
    let mut capped = settings(data_dir());
    capped.max_book_depth = 4;
    let x = Exchange::with(capped).await;
    for query in ["", "?depth=100", "?level=2", "?level=2&depth=100"] {
        let (status, book) = x.get(&format!("/v1/order-book/BTC_EUR{query}"), None).await;
        assert_eq!(status, StatusCode::OK, "{query}");
        assert_eq!(book["bids"].as_array().map(Vec::len), Some(4), "{query}");
    }
    let (_, two) = x.get("/v1/order-book/BTC_EUR?level=2&depth=2", None).await;
    assert_eq!(
        two["bids"].as_array().map(Vec::len),
        Some(2),
        "below the cap"
    );
    x.stop().await;
}

/// Every success answer and every request body of a description is a schema generated
/// from a Rust type (a `$ref` into the components, or an array of one), and every `$ref`
/// resolves: no operation is described in prose only.
fn assert_described_by_types(doc: &Value) {
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    // A `$ref` that resolves, an array of one, or a plain JSON type (an array of strings).
    let resolves = |schema: &Value| {
        let schema = if schema["type"] == "array" {
            &schema["items"]
        } else {
            schema
        };
        match schema["$ref"].as_str() {
            Some(r) => r
                .strip_prefix("#/components/schemas/")
                .is_some_and(|n| schemas.contains_key(n)),
            None => ["string", "integer", "number", "boolean"]
                .contains(&schema["type"].as_str().unwrap_or("")),
        }
    };
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("operations") {
            // JSON, but for the metrics' text: the one media type the answer has.
            let content = operation["responses"]["200"]["content"].as_object();
            let ok = content
                .filter(|c| c.len() == 1)
                .and_then(|c| c.values().next())
                .map_or(&Value::Null, |media| &media["schema"]);
            assert!(resolves(ok), "{method} {path}: 200 answer is a type: {ok}");
            if let Some(body) = operation.get("requestBody") {
                let schema = &body["content"]["application/json"]["schema"];
                assert!(
                    resolves(schema),
                    "{method} {path}: body is a type: {schema}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 14, "{checked} operations");
    let text = doc.to_string();
    for reference in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
        let name = reference.split('"').next().unwrap_or_default();
        assert!(schemas.contains_key(name), "dangling $ref {name}");
    }
}

/// One scrape of `/admin/metrics`, checked as Prometheus's text format: every sample's
/// family has its `# HELP` and `# TYPE` (counter, gauge or histogram) before it, every
/// value is a number, no sample repeats, and every histogram's buckets rise to `+Inf`,
/// which equals its `_count`. Returns the samples by `name{labels}`.
pub(crate) async fn scrape(x: &Exchange) -> std::collections::BTreeMap<String, f64> {
    let response = x
        .http
        .get(format!("{}/admin/metrics", x.admin))
        .bearer_auth(&x.root.key)
        .send()
        .await
        .expect("scraped");
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers()["content-type"].to_str().expect("text");
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let text = response.text().await.expect("body");
    let mut kinds = std::collections::BTreeMap::new();
    let mut samples = std::collections::BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("name and type");
            assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
            assert!(
                kinds.insert(name.to_owned(), kind).is_none(),
                "{name} typed twice"
            );
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("series and value");
        let name = series.split('{').next().expect("name");
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| {
                name.strip_suffix(s)
                    .filter(|f| kinds.get(*f) == Some(&"histogram"))
            })
            .unwrap_or(name);
        assert!(kinds.contains_key(family), "{line}: no # TYPE before it");
        let value: f64 = value.parse().expect("a number");
        assert!(
            samples.insert(series.to_owned(), value).is_none(),
            "{series} twice"
        );
    }
    for (name, _) in kinds.iter().filter(|(_, kind)| **kind == "histogram") {
        check_histogram(name, &samples);
    }
    samples
}

/// A histogram's buckets of each series rise with their bound to `+Inf`, which equals the
/// series' `_count`.
fn check_histogram(name: &str, samples: &std::collections::BTreeMap<String, f64>) {
    let prefix = format!("{name}_bucket{{");
    let mut by_series: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    for (series, value) in samples
        .range(prefix.clone()..)
        .take_while(|(s, _)| s.starts_with(&prefix))
    {
        let le = series
            .rsplit_once("le=\"")
            .expect("le")
            .1
            .trim_end_matches("\"}");
        let rest = series
            .replace(&format!(",le=\"{le}\""), "")
            .replace(&format!("le=\"{le}\""), "");
        let bound = if le == "+Inf" {
            f64::INFINITY
        } else {
            le.parse().expect("bound")
        };
        by_series.entry(rest).or_default().push((bound, *value));
    }
    for (series, mut buckets) in by_series {
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(
            buckets.windows(2).all(|w| w[0].1 <= w[1].1),
            "{series} buckets fall"
        );
        let labels = series.trim_start_matches(&format!("{name}_bucket"));
        let labels = if labels == "{}" {
            String::new()
        } else {
            labels.to_owned()
        };
        let count = samples[&format!("{name}_count{labels}")];
        assert_eq!(
            buckets.last().map(|b| (b.0, b.1)),
            Some((f64::INFINITY, count))
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_metrics_count_commands_and_answers_for_prometheus() {
    let x = Exchange::start().await;
    let url = format!("{}/admin/metrics", x.admin);
    let (status, body) = x.call(reqwest::Method::GET, &url, None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let (status, _) = x
        .call(reqwest::Method::GET, &url, Some(&x.trader.key), None)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let before = scrape(&x).await;
    for code in [401, 403] {
        let series = format!(r#"matchbook_http_responses_total{{listener="admin",code="{code}"}}"#);
        assert_eq!(before.get(&series), Some(&1.0), "{series}");
    }
    let (status, _) = x
        .order(&x.trader.key, "BUY", "1000", "0.1", Value::Null)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = x.get("/v1/nothing-here", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let mut ws = common::ws::connect(&x, "/").await;
    let subscribe = serde_json::json!({"type": "SUBSCRIBE", "channels": [
        {"name": "ORDER_BOOK", "instrument_codes": ["BTC_EUR"]}]});
    common::ws::send(&mut ws, subscribe).await;
    assert_eq!(common::ws::next(&mut ws).await["type"], "SUBSCRIPTIONS");
    let after = scrape(&x).await;
    let grew = |series: &str, by: f64| {
        let is = *after
            .get(series)
            .unwrap_or_else(|| panic!("no {series} in {after:?}"));
        let was = before.get(series).copied().unwrap_or(0.0);
        assert!(is >= was + by, "{series}: {was} -> {is}, expected +{by}");
    };
    grew("matchbook_commands_acknowledged_total", 1.0);
    grew("matchbook_commands_sequenced_total", 1.0);
    // The matching thread records a batch's time after handing it on: the provisioning's
    // batches are in by now, the order's may not be.
    assert!(after["matchbook_matching_command_seconds_count"] > 0.0);
    grew(
        r#"matchbook_http_responses_total{listener="public",code="200"}"#,
        1.0,
    );
    grew(
        r#"matchbook_http_responses_total{listener="public",code="404"}"#,
        1.0,
    );
    grew(
        r#"matchbook_http_request_duration_seconds_count{listener="public"}"#,
        2.0,
    );
    // The first scrape, counted once answered.
    grew(
        r#"matchbook_http_request_duration_seconds_count{listener="admin"}"#,
        1.0,
    );
    // The sequencer records a batch's commit before matching (and so the answer) sees it.
    grew("matchbook_log_commit_seconds_count", 1.0);
    grew("matchbook_stream_sessions_total", 1.0);
    grew("matchbook_stream_frames_sent_total", 1.0);
    assert_eq!(after["matchbook_stream_sessions"], 1.0);
    assert_eq!(after["matchbook_replica_divergences_total"], 0.0);
    // The keyless requests above came from one client, with a window of its own.
    assert_eq!(after["matchbook_rate_limit_clients_tracked"], 1.0);
    assert_eq!(after["matchbook_rate_limit_overflow_total"], 0.0);
    x.stop().await;
}
