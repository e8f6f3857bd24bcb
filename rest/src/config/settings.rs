//! Everything the server starts from ([`Settings`]), its defaults, and the embedded demo
//! exchange used when no file is given.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use matchbook::EngineConfig;
use matchbook::journal::SyncPolicy;
use matchbook::market::HistoryLimits;
use matchbook::store::StoreOptions;
use matchbook_config::{AccountConfig, Exchange, HolderConfig};
use serde::Deserialize;

use super::error::address;
use crate::auth::keys::Scope;

/// What history keeps at most by default: ten million orders and as many trades, about
/// 5 GB, a month of the spec's lookups at 300,000 orders a day (more at a quieter pace).
pub const DEFAULT_HISTORY_LIMITS: HistoryLimits = HistoryLimits {
    orders: 10_000_000,
    trades: 10_000_000,
};

/// Default public address.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";
/// Default admin address.
pub const DEFAULT_ADMIN_BIND: &str = "127.0.0.1:8081";
/// Default rate limit per key (or holder) and minute.
pub const DEFAULT_RATE_LIMIT: u32 = 240;
/// Requests per minute one address may send without a valid key, by default (100 a
/// second: far above any polling client, far below what would crowd out the others).
pub const DEFAULT_PUBLIC_RATE_LIMIT: u32 = 6_000;
/// Price levels per side the public order book answers with at most (and by default): a
/// book read walks every order of the levels it shows, so its cost is bounded here.
pub const DEFAULT_MAX_BOOK_DEPTH: usize = 1_000;

/// Default heartbeat interval of the streams (the contract's).
pub const DEFAULT_HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(10);
/// Default interval of `MARKET_TICKER` updates (the contract asks for at least one a
/// second for a market that changed).
pub const DEFAULT_TICKER_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);
/// Default stream broadcast buffer, in broadcasts (the frames of one batch of commands
/// each): how far a session may fall behind.
pub const DEFAULT_BUFFER: usize = 4096;

/// `[[keys]]`: a key given by its digest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyConfig {
    /// Lower-case hex SHA-256 of the key text.
    pub digest: String,
    /// Holder name.
    pub holder: String,
    /// Account name.
    pub account: String,
    /// Scopes.
    pub scopes: Vec<Scope>,
}

/// Everything the server starts from.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Public listener.
    pub bind: SocketAddr,
    /// Admin listener.
    pub admin_bind: SocketAddr,
    /// Data directory.
    pub data_dir: PathBuf,
    /// Rate limit per minute.
    pub rate_limit_per_minute: u32,
    /// Ingress queue capacity.
    pub queue_capacity: usize,
    /// When the journal fsyncs.
    pub journal_sync: SyncPolicy,
    /// Engine reference data and limits.
    pub engine: EngineConfig,
    /// The definition `engine` was built from (its reference-data sections as given, empty
    /// for the demo set) with the holders to create; recorded in the data directory.
    pub definition: Exchange,
    /// Keys from the configuration.
    pub keys: Vec<KeyConfig>,
    /// Demo mode: create and print demo keys at first start, seed demo liquidity.
    pub demo: bool,
    /// Where to write the demo keys as JSON when they are created.
    pub keys_out: Option<PathBuf>,
    /// Snapshot after this many journalled commands (0: only at stop).
    pub snapshot_every: u64,
    /// Snapshots kept.
    pub keep_snapshots: usize,
    /// Text of the configuration file, copied into the data directory at first start.
    pub source: Option<String>,
    /// Most connections open at once, per listener.
    pub max_connections: usize,
    /// A connection that sends nothing this long is closed.
    pub idle_timeout: std::time::Duration,
    /// Most connections open at once from one client address, per listener.
    pub max_connections_per_address: usize,
    /// Requests per minute one address may send to the public listener without a valid
    /// key (the public market-data routes); more are 429.
    pub public_rate_limit_per_minute: u32,
    /// Proxies in front of the exchange whose `X-Forwarded-For` names the client (none by
    /// default); their connections are exempt from the per-address connection share.
    pub trusted_proxies: crate::net::proxies::TrustedProxies,
    /// A request whose headers take longer than this once begun, or whose body takes
    /// longer than this after its headers, is refused (408).
    pub header_timeout: std::time::Duration,
    /// Price levels per side the order book answers with at most, and by default.
    pub max_book_depth: usize,
    /// Stream broadcasts (batches of frames) a WebSocket session may fall behind before it
    /// is closed.
    pub stream_buffer: usize,
    /// Interval of the stream heartbeat.
    pub stream_heartbeat: std::time::Duration,
    /// Most order and trade records history keeps, whatever their age.
    pub history_limits: matchbook::market::HistoryLimits,
    /// Interval of `MARKET_TICKER` updates.
    pub stream_ticker_interval: std::time::Duration,
    /// `--log`/`--node`: the commands go to the group's replicated log on NATS JetStream
    /// (written while this node holds the lease) instead of the local journal.
    pub replication: Option<matchbook_replica::node::NodeConfig>,
}

fn deposits(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(c, a)| ((*c).to_owned(), (*a).to_owned()))
        .collect()
}

/// The demo's holders: `demo` with a main account and a `trading` subaccount, and the
/// `market-maker` that quotes the spot books.
fn demo_holders() -> Vec<HolderConfig> {
    let funds = [
        ("BTC", "10"),
        ("ETH", "100"),
        ("EUR", "1000000"),
        ("USD", "1000000"),
        ("USDT", "1000000"),
        ("SHIB", "100000000"),
    ];
    vec![
        HolderConfig {
            name: "demo".into(),
            accounts: vec![
                AccountConfig {
                    name: "main".into(),
                    kind: None,
                    deposits: deposits(&funds),
                },
                AccountConfig {
                    name: "trading".into(),
                    kind: None,
                    deposits: deposits(&[("BTC", "1"), ("EUR", "100000")]),
                },
            ],
        },
        HolderConfig {
            name: "market-maker".into(),
            accounts: vec![AccountConfig {
                name: "main".into(),
                kind: None,
                deposits: deposits(&[
                    ("BTC", "1000"),
                    ("ETH", "10000"),
                    ("EUR", "100000000"),
                    ("USD", "100000000"),
                    ("USDT", "100000000"),
                    ("SHIB", "100000000000"),
                ]),
            }],
        },
    ]
}

impl Settings {
    /// The embedded default: demo markets, a demo holder with a main account and a
    /// subaccount, a market-maker holder that quotes the spot books, local data directory.
    pub fn demo() -> Self {
        Self {
            bind: address(DEFAULT_BIND)
                .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 8080))),
            admin_bind: address(DEFAULT_ADMIN_BIND)
                .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 8081))),
            data_dir: PathBuf::from("data"),
            rate_limit_per_minute: DEFAULT_RATE_LIMIT,
            queue_capacity: matchbook::runtime::DEFAULT_QUEUE_CAPACITY,
            journal_sync: SyncPolicy::EveryBatch,
            engine: matchbook::demo::config(),
            definition: Exchange {
                holders: demo_holders(),
                ..Exchange::default()
            },
            keys: Vec::new(),
            demo: true,
            keys_out: None,
            snapshot_every: StoreOptions::default().snapshot_every,
            keep_snapshots: StoreOptions::default().keep_snapshots,
            source: None,
            max_connections: crate::net::listener::DEFAULT_MAX_CONNECTIONS,
            idle_timeout: crate::net::listener::DEFAULT_IDLE_TIMEOUT,
            max_connections_per_address: crate::net::listener::DEFAULT_MAX_PER_ADDRESS,
            public_rate_limit_per_minute: DEFAULT_PUBLIC_RATE_LIMIT,
            trusted_proxies: Default::default(),
            header_timeout: crate::net::listener::DEFAULT_HEAD_TIMEOUT,
            max_book_depth: DEFAULT_MAX_BOOK_DEPTH,
            stream_buffer: DEFAULT_BUFFER,
            stream_heartbeat: DEFAULT_HEARTBEAT,
            history_limits: DEFAULT_HISTORY_LIMITS,
            stream_ticker_interval: DEFAULT_TICKER_INTERVAL,
            replication: None,
        }
    }
}
