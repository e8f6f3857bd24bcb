//! Start-up provisioning after the node created the configured holders: the demo market
//! maker's quotes, and the keys (configured digests, or demo keys created and printed at
//! first start and kept as digests in the data directory).

use matchbook::{AccountId, Command, NewOrder, OrderType, Side, TimeInForce, Uuid};
use serde::Serialize;

use crate::auth::keys::{KeyRecord, Scope};
use crate::config::Settings;
use crate::error::ApiError;
use crate::state::Shared;

/// Why provisioning failed.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A command was refused or the runtime failed.
    #[error("{what}: {error}")]
    Command {
        /// What was being set up.
        what: String,
        /// Why.
        error: ApiError,
    },
    /// A key names a holder or account that is not configured.
    #[error("key for {holder}/{account}: no such holder or account")]
    UnknownKeyOwner {
        /// Holder name.
        holder: String,
        /// Account name.
        account: String,
    },
    /// The key file could not be written.
    #[error(transparent)]
    Keys(#[from] crate::auth::keys::KeyFileError),
    /// `--keys-out` could not be written (no key was kept: the next start issues them).
    #[error("--keys-out {path}: {source}")]
    KeysOut {
        /// The file asked for.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A key created at first start, as `--keys-out` writes it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct IssuedKey {
    /// The key text (shown once).
    pub key: String,
    /// Holder UUID.
    pub holder: String,
    /// Account UUID.
    pub account_id: String,
    /// Account name.
    pub account: String,
    /// Scopes.
    pub scopes: Vec<Scope>,
}

/// Holders by name, each with its accounts by name (as the node provisioned them).
pub use matchbook_config::Directory;

async fn run(
    state: &Shared,
    what: &str,
    command: Command,
) -> Result<matchbook::Applied, SetupError> {
    let fail = |error: ApiError| SetupError::Command {
        what: what.to_owned(),
        error,
    };
    // Waits to be admitted, as provisioning does: a start-up command refused because the
    // market stage had not caught up with the one before would fail the start.
    let runtime = state.runtime.clone();
    let outcome = tokio::task::spawn_blocking(move || runtime.apply_blocking(command))
        .await
        .map_err(|_| fail(ApiError::Runtime(matchbook::runtime::RuntimeError::Failed)))?
        .map_err(|e| fail(e.into()))?;
    outcome.result.map_err(|e| fail(e.into()))
}

/// Reference prices of the demo market maker's quotes.
const DEMO_QUOTES: [(&str, &str, &str); 5] = [
    ("BTC_EUR", "60000.00", "0.01000"),
    ("ETH_EUR", "3000.00", "0.1000"),
    ("ETH_BTC", "0.05000", "1.000"),
    ("BTC_USDT", "65000.00", "0.01000"),
    ("SHIB_EUR", "0.00002000", "1000000"),
];

/// The demo market maker quotes ten levels a side on the spot books and trades once on
/// each, so tickers, candles and books have something to show.
pub async fn seed_demo_liquidity(state: &Shared, maker: AccountId) -> Result<(), SetupError> {
    for (code, reference, size) in DEMO_QUOTES {
        let Some(market) = state.markets.market(code).cloned() else {
            continue;
        };
        let parse = |text: &str, decimals| matchbook::fixed::parse_scaled(text, decimals);
        let (Ok(mid), Ok(amount)) = (
            parse(reference, market.market_precision),
            parse(size, market.amount_precision),
        ) else {
            continue;
        };
        let step = (mid / 1_000).max(1);
        for level in 1..=10 {
            for (side, price) in [
                (Side::Buy, mid - step * level),
                (Side::Sell, mid + step * level),
            ] {
                let order = NewOrder::limit(
                    maker,
                    market.id,
                    side,
                    matchbook::Price(price),
                    matchbook::Qty(amount),
                );
                run(state, code, Command::PlaceOrder(order)).await?;
            }
        }
        let take = NewOrder {
            order_type: OrderType::Limit,
            ..NewOrder::limit(
                maker,
                market.id,
                Side::Buy,
                matchbook::Price(mid + step),
                matchbook::Qty(amount),
            )
        }
        .with_tif(TimeInForce::ImmediateOrCancelled);
        run(state, code, Command::PlaceOrder(take)).await?;
    }
    Ok(())
}

/// Installs the configured keys, and in demo mode creates the demo keys at first start.
/// Returns the keys created now (empty when they already existed).
pub async fn install_keys(
    state: &Shared,
    settings: &Settings,
    directory: &Directory,
    issue_demo_keys: bool,
) -> Result<Vec<IssuedKey>, SetupError> {
    let mut configured = Vec::new();
    for k in &settings.keys {
        let (holder, account) = directory
            .get(&k.holder)
            .and_then(|h| h.accounts.get(&k.account).map(|a| (h.holder, *a)))
            .ok_or_else(|| SetupError::UnknownKeyOwner {
                holder: k.holder.clone(),
                account: k.account.clone(),
            })?;
        configured.push(KeyRecord {
            digest: k.digest.to_ascii_lowercase(),
            holder: holder.0,
            account: account.0,
            scopes: k.scopes.clone(),
        });
    }
    for digest in state.keys.insert_configured(&configured)? {
        tracing::warn!(%digest, "the configuration declares a revoked key: it stays revoked");
    }
    if !settings.demo || !issue_demo_keys || !state.keys.is_empty() {
        return Ok(Vec::new());
    }
    let Some(demo) = directory.get("demo") else {
        return Ok(Vec::new());
    };
    let (holder, accounts) = (&demo.holder, &demo.accounts);
    let plan: [(&str, Vec<Scope>); 4] = [
        ("main", vec![Scope::Trade, Scope::SubaccountTransfer]),
        ("main", vec![Scope::ReadOnly]),
        ("trading", vec![Scope::Trade]),
        ("main", vec![Scope::Admin]),
    ];
    let (mut issued, mut records) = (Vec::new(), Vec::new());
    for (name, scopes) in plan {
        let Some(&account) = accounts.get(name) else {
            continue;
        };
        let (key, record) = KeyRecord::generate(*holder, account, scopes.clone())?;
        records.push(record);
        issued.push(IssuedKey {
            key,
            holder: Uuid::of_holder(*holder).to_string(),
            account_id: Uuid::of_account(account).to_string(),
            account: name.to_owned(),
            scopes,
        });
    }
    // The operator gets the keys before the server keeps them: a `--keys-out` that cannot
    // be written leaves no stored key nobody has seen, and the next start issues them.
    if let Some(path) = &settings.keys_out {
        write_keys_out(path, &issued)?;
    }
    state.keys.insert_all(records, true)?;
    Ok(issued)
}

/// Writes the issued keys as JSON to `path` (atomically).
fn write_keys_out(path: &std::path::Path, issued: &[IssuedKey]) -> Result<(), SetupError> {
    let failed = |source| SetupError::KeysOut {
        path: path.to_owned(),
        source,
    };
    let text =
        serde_json::to_string_pretty(issued).map_err(|e| failed(std::io::Error::other(e)))?;
    matchbook::store::write_file_atomically(path, text.as_bytes()).map_err(failed)
}
