//! The `[server]` section of the configuration file: listeners, data directory, journal
//! and snapshot policy, and the limits; each value is checked against the range the server
//! can run with, so a typo such as a timeout of 2^64 seconds is refused at start with its
//! name instead of failing every connection later.

use std::fmt::Display;
use std::path::PathBuf;
use std::time::Duration;

use matchbook::journal::SyncPolicy;
use serde::Deserialize;

use super::error::{ConfigFileError, address};
use super::settings::Settings;

/// The most commands in flight a server may be configured for: the queues are allocated
/// whole at start.
pub const MAX_QUEUE_CAPACITY: usize = 1 << 20;
/// The most stream broadcasts a session may be let fall behind (allocated at start).
pub const MAX_STREAM_BUFFER: usize = 1 << 20;
/// The most connections a listener (or one address) may be configured to hold.
pub const MAX_CONNECTIONS: usize = 1 << 16;
/// The longest idle time a connection may be given, in seconds (a day).
pub const MAX_IDLE_SECONDS: u64 = 86_400;
/// The longest head (and body) deadline and heartbeat interval, in seconds (an hour).
pub const MAX_DEADLINE_SECONDS: u64 = 3_600;

/// `[server]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// Public listener.
    pub bind: Option<String>,
    /// Admin listener.
    pub admin_bind: Option<String>,
    /// Keys (and, later, the journal) live here.
    pub data_dir: Option<PathBuf>,
    /// Requests per minute per key on rate-limited endpoints.
    pub rate_limit_per_minute: Option<u32>,
    /// Commands in flight at most (default 65,536; 1 to [`MAX_QUEUE_CAPACITY`]).
    pub queue_capacity: Option<usize>,
    /// Open orders per holder.
    pub max_open_orders: Option<u32>,
    /// `every-batch` (default: fsync before answering) or `never` (benchmarks only).
    pub journal_sync: Option<String>,
    /// Snapshot after this many journalled commands (default 100000; 0: only at stop).
    pub snapshot_every: Option<u64>,
    /// Snapshots kept in the data directory (default 2, at least 1).
    pub keep_snapshots: Option<usize>,
    /// Most connections open at once per listener (default 1024; 1 to [`MAX_CONNECTIONS`]).
    pub max_connections: Option<usize>,
    /// Seconds a connection may send nothing before it is closed (default 60; 1 to
    /// [`MAX_IDLE_SECONDS`]).
    pub idle_timeout_seconds: Option<u64>,
    /// Most connections open at once from one client address (default 256; 1 to
    /// [`MAX_CONNECTIONS`]).
    pub max_connections_per_address: Option<usize>,
    /// Requests per minute one address may send without a valid key (default 6000).
    pub public_rate_limit_per_minute: Option<u32>,
    /// Addresses or networks of the proxies in front of the exchange, whose
    /// `X-Forwarded-For` (or `forwarded_header`) names the client (default none).
    pub trusted_proxies: Option<Vec<String>>,
    /// The header the trusted proxies name the client in: `X-Forwarded-For` (default) or
    /// `Forwarded` (RFC 7239).
    pub forwarded_header: Option<String>,
    /// Seconds a request's headers may take once begun, and its body after them (default
    /// 10; 1 to [`MAX_DEADLINE_SECONDS`]).
    pub header_timeout_seconds: Option<u64>,
    /// Price levels per side of the order book at most (default 1000, at least 1).
    pub max_order_book_depth: Option<usize>,
    /// Stream broadcasts (the frames of one batch of commands each) a WebSocket session may
    /// fall behind before it is closed as a slow consumer (default 4096; 1 to
    /// [`MAX_STREAM_BUFFER`]).
    pub stream_buffer: Option<usize>,
    /// Seconds between stream heartbeats (default 10; 1 to [`MAX_DEADLINE_SECONDS`]).
    pub stream_heartbeat_seconds: Option<u64>,
    /// Order records history keeps at most, the oldest forgotten first (open orders are
    /// kept); default [`super::settings::DEFAULT_HISTORY_LIMITS`], at least 1.
    pub history_max_orders: Option<usize>,
    /// Trade records history keeps at most, the oldest forgotten first; default
    /// [`super::settings::DEFAULT_HISTORY_LIMITS`], at least 1.
    pub history_max_trades: Option<usize>,
}

/// `value`, the `[server]` key `name`'s, if it is at least `min` and at most `max` (when
/// there is a most).
fn within<T: PartialOrd + Display>(
    name: &str,
    value: T,
    min: T,
    max: Option<T>,
) -> Result<T, ConfigFileError> {
    let range = match &max {
        Some(max) => format!("from {min} to {max}"),
        None => format!("at least {min}"),
    };
    if value < min || max.is_some_and(|max| value > max) {
        return Err(ConfigFileError::Invalid(format!(
            "[server] {name} = {value}: {range}"
        )));
    }
    Ok(value)
}

/// `within`, for a key that may be left out.
fn optional<T: PartialOrd + Display + Copy>(
    name: &str,
    value: Option<T>,
    min: T,
    max: Option<T>,
) -> Result<Option<T>, ConfigFileError> {
    value.map(|v| within(name, v, min, max)).transpose()
}

impl Settings {
    /// The `[server]` section over these settings: what it names replaces them.
    pub(super) fn apply_server(&mut self, server: &ServerSection) -> Result<(), ConfigFileError> {
        if let Some(bind) = &server.bind {
            self.bind = address(bind)?;
        }
        if let Some(bind) = &server.admin_bind {
            self.admin_bind = address(bind)?;
        }
        if let Some(dir) = &server.data_dir {
            self.data_dir = dir.clone();
        }
        self.journal_sync = match server.journal_sync.as_deref() {
            None | Some("every-batch") => SyncPolicy::EveryBatch,
            Some("never") => SyncPolicy::Never,
            Some(other) => {
                return Err(ConfigFileError::Invalid(format!(
                    "journal_sync {other:?}: every-batch or never"
                )));
            }
        };
        self.rate_limit_per_minute =
            (server.rate_limit_per_minute).unwrap_or(self.rate_limit_per_minute);
        self.public_rate_limit_per_minute =
            (server.public_rate_limit_per_minute).unwrap_or(self.public_rate_limit_per_minute);
        if let Some(networks) = &server.trusted_proxies {
            let networks = (networks.iter())
                .map(|n| n.parse())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ConfigFileError::Invalid(format!("[server] trusted_proxies {e}")))?;
            self.trusted_proxies = crate::net::proxies::TrustedProxies::new(networks);
        }
        if let Some(name) = &server.forwarded_header {
            let header = name
                .parse()
                .map_err(|e| ConfigFileError::Invalid(format!("[server] forwarded_header {e}")))?;
            self.trusted_proxies = self.trusted_proxies.clone().reading(header);
        }
        self.snapshot_every = server.snapshot_every.unwrap_or(self.snapshot_every);
        self.apply_sizes(server)?;
        self.apply_times(server)
    }

    /// The counted limits: queues, buffers, connections, snapshots, book depth.
    fn apply_sizes(&mut self, server: &ServerSection) -> Result<(), ConfigFileError> {
        let s = server;
        let queue = optional(
            "queue_capacity",
            s.queue_capacity,
            1,
            Some(MAX_QUEUE_CAPACITY),
        )?;
        self.queue_capacity = queue.unwrap_or(self.queue_capacity);
        let kept = optional("keep_snapshots", s.keep_snapshots, 1, None)?;
        self.keep_snapshots = kept.unwrap_or(self.keep_snapshots);
        let open = optional(
            "max_connections",
            s.max_connections,
            1,
            Some(MAX_CONNECTIONS),
        )?;
        self.max_connections = open.unwrap_or(self.max_connections);
        let per = s.max_connections_per_address;
        let per = optional("max_connections_per_address", per, 1, Some(MAX_CONNECTIONS))?;
        self.max_connections_per_address = per.unwrap_or(self.max_connections_per_address);
        let depth = optional("max_order_book_depth", s.max_order_book_depth, 1, None)?;
        self.max_book_depth = depth.unwrap_or(self.max_book_depth);
        let buffer = optional("stream_buffer", s.stream_buffer, 1, Some(MAX_STREAM_BUFFER))?;
        self.stream_buffer = buffer.unwrap_or(self.stream_buffer);
        let limits = &mut self.history_limits;
        let orders = optional("history_max_orders", s.history_max_orders, 1, None)?;
        limits.orders = orders.unwrap_or(limits.orders);
        let trades = optional("history_max_trades", s.history_max_trades, 1, None)?;
        limits.trades = trades.unwrap_or(limits.trades);
        Ok(())
    }

    /// The timeouts and intervals, in whole seconds.
    fn apply_times(&mut self, server: &ServerSection) -> Result<(), ConfigFileError> {
        let s = server;
        let seconds = |name, value, max| {
            Ok::<_, ConfigFileError>(optional(name, value, 1, Some(max))?.map(Duration::from_secs))
        };
        let idle = seconds(
            "idle_timeout_seconds",
            s.idle_timeout_seconds,
            MAX_IDLE_SECONDS,
        )?;
        self.idle_timeout = idle.unwrap_or(self.idle_timeout);
        let head = s.header_timeout_seconds;
        let head = seconds("header_timeout_seconds", head, MAX_DEADLINE_SECONDS)?;
        self.header_timeout = head.unwrap_or(self.header_timeout);
        let beat = s.stream_heartbeat_seconds;
        let beat = seconds("stream_heartbeat_seconds", beat, MAX_DEADLINE_SECONDS)?;
        self.stream_heartbeat = beat.unwrap_or(self.stream_heartbeat);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::file::FileConfig;

    fn settings(server: &str) -> Result<Settings, ConfigFileError> {
        let file: FileConfig = toml::from_str(&format!("[server]\n{server}\n")).expect("TOML");
        Settings::from_config(file)
    }

    #[test]
    fn a_limit_out_of_its_range_is_refused_by_name() {
        let huge = u64::MAX;
        let refused = [
            format!("idle_timeout_seconds = {huge}"),
            format!("idle_timeout_seconds = {}", MAX_IDLE_SECONDS + 1),
            "idle_timeout_seconds = 0".to_owned(),
            format!("header_timeout_seconds = {huge}"),
            "header_timeout_seconds = 0".to_owned(),
            format!("stream_heartbeat_seconds = {huge}"),
            "stream_heartbeat_seconds = 0".to_owned(),
            format!("queue_capacity = {huge}"),
            format!("queue_capacity = {}", MAX_QUEUE_CAPACITY + 1),
            "queue_capacity = 0".to_owned(),
            format!("stream_buffer = {huge}"),
            "stream_buffer = 0".to_owned(),
            format!("max_connections = {huge}"),
            "max_connections = 0".to_owned(),
            format!("max_connections_per_address = {}", MAX_CONNECTIONS + 1),
            "keep_snapshots = 0".to_owned(),
            "max_order_book_depth = 0".to_owned(),
            "history_max_orders = 0".to_owned(),
            "history_max_trades = 0".to_owned(),
        ];
        for line in refused {
            let key = line.split(' ').next().unwrap_or_default();
            match settings(&line) {
                Err(ConfigFileError::Invalid(why)) => assert!(why.contains(key), "{line}: {why}"),
                other => panic!("{line}: {:?}", other.map(|_| "accepted")),
            }
        }
    }

    #[test]
    fn a_limit_at_either_end_of_its_range_is_taken() {
        let low = settings(
            "idle_timeout_seconds = 1\nheader_timeout_seconds = 1\nstream_heartbeat_seconds = 1\n\
             queue_capacity = 1\nstream_buffer = 1\nmax_connections = 1\nkeep_snapshots = 1",
        )
        .expect("the lowest values");
        assert_eq!(low.idle_timeout, Duration::from_secs(1));
        assert_eq!(
            (low.queue_capacity, low.stream_buffer, low.max_connections),
            (1, 1, 1)
        );
        let high = settings(&format!(
            "idle_timeout_seconds = {MAX_IDLE_SECONDS}\nheader_timeout_seconds = \
             {MAX_DEADLINE_SECONDS}\nqueue_capacity = {MAX_QUEUE_CAPACITY}\n\
             stream_buffer = {MAX_STREAM_BUFFER}\nmax_connections_per_address = {MAX_CONNECTIONS}"
        ))
        .expect("the highest values");
        assert_eq!(
            high.header_timeout,
            Duration::from_secs(MAX_DEADLINE_SECONDS)
        );
        assert_eq!(high.queue_capacity, MAX_QUEUE_CAPACITY);
        assert_eq!(high.max_connections_per_address, MAX_CONNECTIONS);
        let absent = settings("").expect("no limits named");
        assert_eq!(absent.idle_timeout, Settings::demo().idle_timeout);
    }

    #[test]
    fn trusted_proxies_are_addresses_or_networks() {
        let taken = settings(r#"trusted_proxies = ["127.0.0.1", "10.0.0.0/8", "fd00::/8"]"#)
            .expect("addresses and networks");
        let proxies = taken.trusted_proxies;
        assert!(proxies.trusts("10.9.8.7".parse().expect("ip")));
        assert!(!proxies.trusts("192.0.2.1".parse().expect("ip")));
        assert!(
            !Settings::demo()
                .trusted_proxies
                .trusts("127.0.0.1".parse().expect("ip"))
        );
        match settings(r#"trusted_proxies = ["10.0.0.0/40"]"#) {
            Err(ConfigFileError::Invalid(why)) => {
                assert!(
                    why.contains("trusted_proxies") && why.contains("10.0.0.0/40"),
                    "{why}"
                );
            }
            other => panic!("{:?}", other.map(|_| "accepted")),
        }
    }

    #[test]
    fn the_forwarded_header_is_one_of_two_names() {
        use crate::net::proxies::ForwardedHeader;
        let header = |text: &str| settings(text).map(|s| s.trusted_proxies.header());
        assert_eq!(header("").ok(), Some(ForwardedHeader::XForwardedFor));
        let standard = r#"forwarded_header = "Forwarded"
            trusted_proxies = ["127.0.0.1"]"#;
        assert_eq!(header(standard).ok(), Some(ForwardedHeader::Forwarded));
        let taken = settings(standard).expect("both");
        assert!(
            taken
                .trusted_proxies
                .trusts("127.0.0.1".parse().expect("ip"))
        );
        match settings(r#"forwarded_header = "X-Real-IP""#) {
            Err(ConfigFileError::Invalid(why)) => {
                assert!(
                    why.contains("forwarded_header") && why.contains("X-Real-IP"),
                    "{why}"
                );
            }
            other => panic!("{:?}", other.map(|_| "accepted")),
        }
    }
}
