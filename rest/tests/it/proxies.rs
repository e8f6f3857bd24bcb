//! An exchange behind a proxy (a TLS terminator, a load balancer): with the proxy trusted,
//! each client behind it has its own public rate window, named by `X-Forwarded-For` (or
//! by `Forwarded`, when the operator says the proxies write that one instead), and
//! the proxy's connections are not held to one address's share; without it, the header
//! changes nothing, so a client cannot name itself another address to escape its limit;
//! and a follower of a replicated group relays for its clients as such a proxy does.

use crate::common;

use common::{Exchange, code, settings};
use matchbook_rest::net::proxies::{ForwardedHeader, TrustedProxies};
use reqwest::StatusCode;

const LIMIT: u32 = 3;

/// How many of `n` keyless requests naming `client` in `X-Forwarded-For` were answered 200
/// (the rest must be 429 `RATELIMIT`).
async fn admitted(exchange: &Exchange, client: &str, n: usize) -> usize {
    admitted_with(exchange, ("x-forwarded-for", client), n).await
}

/// How many of `n` keyless requests carrying `header` were answered 200 (the rest must
/// be 429 `RATELIMIT`).
async fn admitted_with(exchange: &Exchange, (name, value): (&str, &str), n: usize) -> usize {
    let http = reqwest::Client::new();
    let mut ok = 0;
    for _ in 0..n {
        let answer = (http.get(format!("{}/v1/time", exchange.base)))
            .header(name, value)
            .send()
            .await
            .expect("answered");
        match answer.status() {
            StatusCode::OK => ok += 1,
            status => {
                assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
                let body = answer.json().await.expect("json");
                assert_eq!(code(&body), "RATELIMIT");
            }
        }
    }
    ok
}

/// Waits until the current minute has at least 10 s left, so a window cannot turn in
/// the middle of a count.
async fn early_in_a_minute() {
    loop {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970");
        if now.as_secs() % 60 < 50 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_window() {
    let mut s = settings(common::data_dir());
    s.public_rate_limit_per_minute = LIMIT;
    s.max_connections_per_address = 2;
    s.trusted_proxies = TrustedProxies::new(vec!["127.0.0.1".parse().expect("network")]);
    let exchange = Exchange::with(s).await;
    early_in_a_minute().await;
    assert_eq!(admitted(&exchange, "203.0.113.7", 6).await, LIMIT as usize);
    // A second client behind the same proxy is not held back by the first; what a client
    // wrote itself at the left of the header is not believed.
    assert_eq!(admitted(&exchange, "203.0.113.8", 6).await, LIMIT as usize);
    assert_eq!(admitted(&exchange, "198.51.100.1, 203.0.113.7", 2).await, 0);
    // The proxy holds more connections than one address's share.
    let stats = exchange.server.public_connections.clone();
    let held = common::raw::silent(exchange.server.addr, &stats, 5).await;
    assert_eq!(stats.refused_per_address(), 0);
    drop(held);
    exchange.stop().await;
}

/// Proxies that write the standard `Forwarded` header: each client it names has its own
/// window, and an `X-Forwarded-For` (which such a proxy passes on as the client wrote
/// it) names nobody.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_proxy_writing_forwarded_that_header_alone_names_the_client() {
    let mut s = settings(common::data_dir());
    s.public_rate_limit_per_minute = LIMIT;
    s.trusted_proxies = TrustedProxies::new(vec!["127.0.0.1".parse().expect("network")])
        .reading(ForwardedHeader::Forwarded);
    let exchange = Exchange::with(s).await;
    early_in_a_minute().await;
    let v6 = ("forwarded", "for=\"[2001:db8::7]:4711\";proto=https");
    assert_eq!(admitted_with(&exchange, v6, 6).await, LIMIT as usize);
    let v4 = ("Forwarded", "for=unknown, for=203.0.113.8");
    assert_eq!(admitted_with(&exchange, v4, 6).await, LIMIT as usize);
    // Without a Forwarded header the request is the proxy's own, whatever else it says.
    assert_eq!(admitted(&exchange, "203.0.113.9", 6).await, LIMIT as usize);
    assert_eq!(
        admitted(&exchange, "203.0.113.10", 2).await,
        0,
        "127.0.0.1's window"
    );
    exchange.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_trusted_proxy_the_header_is_ignored() {
    let mut s = settings(common::data_dir());
    s.public_rate_limit_per_minute = LIMIT;
    let exchange = Exchange::with(s).await;
    early_in_a_minute().await;
    assert_eq!(admitted(&exchange, "203.0.113.7", 6).await, LIMIT as usize);
    assert_eq!(
        admitted(&exchange, "203.0.113.8", 3).await,
        0,
        "one window: 127.0.0.1's"
    );
    exchange.stop().await;
}

/// A client of `address` (another loopback address than 127.0.0.1, the nodes' own).
fn client_from(address: [u8; 4]) -> reqwest::Client {
    (reqwest::Client::builder())
        .local_address(std::net::IpAddr::from(address))
        .build()
        .expect("client")
}

/// A follower relays a request to the leader as a proxy does: it tells the leader the
/// client it came from, in place of whatever `X-Forwarded-For` the client sent. Before,
/// the client's own header went through unchanged, so a leader that trusts its followers
/// (as a group's leader must, or every client of a follower shares the follower's window
/// and its connection share) counted each relayed request against an address the client
/// chose: here another client's, whose own requests to the leader were then refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_names_the_client_it_relays_for_not_what_the_client_wrote() {
    let cluster = common::group::start_cluster("nats-rest-relay-client");
    let group_settings = |name: &str| {
        let mut s = common::group::node_settings(&cluster, common::data_dir(), name);
        s.public_rate_limit_per_minute = LIMIT;
        s.trusted_proxies = TrustedProxies::new(vec!["127.0.0.1".parse().expect("network")]);
        s
    };
    let leader = Exchange::with(group_settings("a")).await;
    let follower = matchbook_rest::Server::start(group_settings("b"))
        .await
        .expect("the second node follows");
    let follower_base = format!("http://{}", follower.addr);
    while common::group::health(&follower_base).await["leader"] != "a" {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    early_in_a_minute().await;
    let (sender, victim) = (client_from([127, 0, 0, 2]), client_from([127, 0, 0, 3]));
    for _ in 0..LIMIT {
        let relayed = (sender.get(format!("{follower_base}/v1/account/balances")))
            .bearer_auth("mb_not_a_key")
            .header("x-forwarded-for", "127.0.0.3")
            .send()
            .await
            .expect("answered");
        assert_eq!(
            relayed.status(),
            StatusCode::UNAUTHORIZED,
            "the leader's answer"
        );
    }
    let own = (victim.get(format!("{}/v1/time", leader.base)).send())
        .await
        .expect("answered");
    assert_eq!(
        own.status(),
        StatusCode::OK,
        "127.0.0.3 sent nothing before"
    );
    follower.stop().await.expect("clean stop");
    leader.stop().await;
}
