//! The configuration file: its TOML shape ([`FileConfig`]: `[server]`, `[[keys]]` and the
//! exchange definition of `matchbook-config`) read into [`Settings`].

use matchbook_config::{CurrencyConfig, Exchange, FeeGroupConfig, HolderConfig, InstrumentConfig};
use serde::Deserialize;

use super::error::ConfigFileError;
use super::server::ServerSection;
use super::settings::{KeyConfig, Settings};

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

impl Settings {
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
    use crate::auth::keys::Scope;

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
