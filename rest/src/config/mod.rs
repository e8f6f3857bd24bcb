//! Server configuration: the TOML file (`[server]` limits, addresses and data directory,
//! `[[keys]]` as SHA-256 digests, and the exchange definition of `matchbook-config`:
//! reference data, fee groups, holders) and the embedded demo default used when no file is
//! given.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use matchbook::EngineConfig;
use matchbook::journal::SyncPolicy;
use matchbook::store::StoreOptions;
pub use matchbook_config::{
    AccountConfig, CurrencyConfig, Exchange, FeeGroupConfig, HolderConfig, InstrumentConfig,
};
use serde::Deserialize;

use crate::auth::keys::Scope;

mod server;
pub use server::{DEFAULT_HISTORY_LIMITS, ServerSection};

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

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// The file could not be read.
    #[error("config {path}: {source}")]
    Read {
        /// File.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// Not valid TOML of this shape.
    #[error("config {path}: {source}")]
    Parse {
        /// File.
        path: PathBuf,
        /// Cause.
        source: Box<toml::de::Error>,
    },
    /// A value that does not fit (address, decimal, type, state).
    #[error("config: {0}")]
    Invalid(String),
    /// Larger than an exchange definition may be (`bounds::MAX_DEFINITION_BYTES`): not read.
    #[error("config {path}: {source}")]
    TooLarge {
        /// File.
        path: PathBuf,
        /// The bound it passes.
        source: matchbook_config::bounds::BoundError,
    },
}

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

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Listener and limits.
    #[serde(default)]
    pub server: ServerSection,
    /// Currencies (empty: the demo set).
    #[serde(default)]
    pub currencies: Vec<CurrencyConfig>,
    /// Instruments (empty: the demo set).
    #[serde(default)]
    pub instruments: Vec<InstrumentConfig>,
    /// Fee groups (empty: the default schedule).
    #[serde(default)]
    pub fee_groups: Vec<FeeGroupConfig>,
    /// Holders created at start.
    #[serde(default)]
    pub holders: Vec<HolderConfig>,
    /// Keys accepted.
    #[serde(default)]
    pub keys: Vec<KeyConfig>,
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

fn address(text: &str) -> Result<SocketAddr, ConfigFileError> {
    text.parse()
        .map_err(|_| ConfigFileError::Invalid(format!("bad address {text:?}")))
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
            stream_buffer: crate::ws::DEFAULT_BUFFER,
            stream_heartbeat: crate::ws::DEFAULT_HEARTBEAT,
            history_limits: DEFAULT_HISTORY_LIMITS,
            stream_ticker_interval: crate::ws::DEFAULT_TICKER_INTERVAL,
            replication: None,
        }
    }

    /// Settings from a TOML file; sections left out take the demo defaults for reference
    /// data and fee groups, and no holders or keys.
    pub fn from_file(path: &std::path::Path) -> Result<Self, ConfigFileError> {
        use matchbook_config::bounds::{MAX_DEFINITION_BYTES, check_size};
        use std::io::Read;
        // One byte past the bound is enough to refuse it; a larger file is not read whole.
        let mut text = String::new();
        let read = std::fs::File::open(path).and_then(|file| {
            let most =
                u64::try_from(MAX_DEFINITION_BYTES).map_or(u64::MAX, |n| n.saturating_add(1));
            file.take(most).read_to_string(&mut text)
        });
        read.map_err(|source| ConfigFileError::Read {
            path: path.to_owned(),
            source,
        })?;
        // Its nesting is bounded by the TOML parser (see `Exchange::from_toml`).
        check_size(text.len(), MAX_DEFINITION_BYTES).map_err(|source| {
            ConfigFileError::TooLarge {
                path: path.to_owned(),
                source,
            }
        })?;
        let file: FileConfig = toml::from_str(&text).map_err(|source| ConfigFileError::Parse {
            path: path.to_owned(),
            source: Box::new(source),
        })?;
        let mut settings = Self::from_config(file)?;
        settings.source = Some(text);
        Ok(settings)
    }

    /// Settings from a parsed file.
    pub fn from_config(file: FileConfig) -> Result<Self, ConfigFileError> {
        let exchange = Exchange {
            currencies: file.currencies,
            instruments: file.instruments,
            fee_groups: file.fee_groups,
            holders: file.holders,
            max_open_orders: file.server.max_open_orders,
        };
        let engine = exchange
            .engine_config()
            .map_err(|e| ConfigFileError::Invalid(e.to_string()))?;
        let mut settings = Self {
            engine,
            definition: exchange,
            keys: file.keys,
            demo: false,
            ..Self::demo()
        };
        settings.apply_server(&file.server)?;
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_listeners_default_to_loopback() {
        let demo = Settings::demo();
        assert!(demo.bind.ip().is_loopback(), "{}", demo.bind);
        assert!(demo.admin_bind.ip().is_loopback(), "{}", demo.admin_bind);
        let file = Settings::from_config(FileConfig::default()).expect("empty file");
        assert!(file.bind.ip().is_loopback() && file.admin_bind.ip().is_loopback());
    }

    #[test]
    fn a_small_file_replaces_the_defaults_it_names() {
        let text = r#"
            [server]
            bind = "127.0.0.1:9000"
            rate_limit_per_minute = 10

            [[currencies]]
            code = "BTC"
            precision = 8
            name = "Bitcoin"
            [[currencies]]
            code = "EUR"
            precision = 2
            name = "Euro"

            [[instruments]]
            code = "BTC_EUR"
            base = "BTC"
            quote = "EUR"
            amount_precision = 5
            market_precision = 2
            min_size = "10"
            min_price = "0.01"
            max_price = "1000000"
            type = "SPOT"

            [[holders]]
            name = "alice"
            [[holders.accounts]]
            name = "main"
            deposits = { EUR = "1000" }

            [[keys]]
            digest = "00"
            holder = "alice"
            account = "main"
            scopes = ["TRADE"]
        "#;
        let file: FileConfig = toml::from_str(text).expect("parses");
        let s = Settings::from_config(file).expect("valid");
        assert_eq!(s.bind.port(), 9000);
        assert_eq!(s.rate_limit_per_minute, 10);
        assert_eq!(s.engine.instruments.len(), 1);
        assert_eq!(s.engine.currencies.len(), 2);
        assert!(!s.demo);
        assert_eq!(s.keys[0].scopes, vec![Scope::Trade]);
        assert!(
            toml::from_str::<FileConfig>("[server]\nbindd = \"x\"").is_err(),
            "unknown keys are refused"
        );
    }

    /// A configuration file past the definition's size bound is refused unread; one nested
    /// 10,000 deep is a parse error, read on a thread with a small stack (issue 69).
    #[test]
    fn a_file_past_the_bounds_is_refused_with_its_path() {
        let dir =
            std::env::temp_dir().join(format!("matchbook-config-bounds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let large = dir.join("large.toml");
        let padding = " ".repeat(matchbook_config::bounds::MAX_DEFINITION_BYTES + 1);
        std::fs::write(&large, padding).expect("write");
        let refused = Settings::from_file(&large).err().map(|e| e.to_string());
        assert!(
            refused
                .as_deref()
                .is_some_and(|e| e.contains("more than the limit")),
            "{refused:?}"
        );
        let deep = dir.join("deep.toml");
        let nesting = 10_000;
        let text = format!(
            "max_open_orders = {}1{}\n",
            "[".repeat(nesting),
            "]".repeat(nesting)
        );
        std::fs::write(&deep, text).expect("write");
        let parsed = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || Settings::from_file(&deep).err().map(|e| e.to_string()))
            .expect("thread")
            .join()
            .expect("the parser returned");
        assert!(parsed.is_some_and(|e| e.contains("deep.toml")));
        let _ = std::fs::remove_dir_all(dir);
    }
}
