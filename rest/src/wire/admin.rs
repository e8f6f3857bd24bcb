//! The admin listener's answers.

use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::keys::Scope;

/// `POST /admin/holders`.
#[derive(Debug, Serialize, ToSchema)]
pub struct HolderCreated {
    /// The holder.
    pub holder_id: String,
    /// Its main account.
    pub account_id: String,
}

/// An account (a new subaccount, a liquidated account).
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountBody {
    /// The account.
    pub account_id: String,
}

/// `POST /admin/accounts/{account_id}/close`.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountClosed {
    /// The account.
    pub account_id: String,
    /// `CLOSED`.
    pub state: &'static str,
}

/// An operation that has nothing to report but that it was done.
#[derive(Debug, Serialize, ToSchema)]
pub struct Done {
    /// Always true.
    pub ok: bool,
}

/// `POST /admin/keys`: the key text, shown only here.
#[derive(Debug, Serialize, ToSchema)]
pub struct IssuedKeyBody {
    /// The key text.
    pub key: String,
    /// Holder it acts for.
    pub holder_id: String,
    /// Account it acts on.
    pub account_id: String,
    /// What it may do.
    pub scopes: Vec<Scope>,
}

/// An API key as the operator sees it (never its text): `GET /admin/keys` lists them,
/// `POST /admin/keys/revoke` answers with the one revoked.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyEntry {
    /// Lower-case hex SHA-256 of the key text, as the key file and the configuration
    /// hold it.
    pub digest: String,
    /// Holder it acts for.
    pub holder_id: String,
    /// Account it acts on.
    pub account_id: String,
    /// What it may do.
    pub scopes: Vec<Scope>,
    /// Whether the configuration file declares it: it is accepted at every start until it
    /// is taken out of the file.
    pub in_configuration: bool,
}

/// `GET /admin/keys`: this node's keys.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeysBody {
    /// By holder, then account.
    pub keys: Vec<KeyEntry>,
}

/// `POST /admin/instruments/{instrument_code}/state`.
#[derive(Debug, Serialize, ToSchema)]
pub struct InstrumentStateBody {
    /// Instrument.
    pub instrument_code: String,
    /// New state.
    pub state: &'static str,
}

/// `POST /admin/time/advance`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClockBody {
    /// Exchange time after the move.
    pub time: String,
    /// Total offset from the wall clock.
    pub offset_seconds: i64,
}

/// `POST /admin/index-price`.
#[derive(Debug, Serialize, ToSchema)]
pub struct IndexPriceBody {
    /// Instrument.
    pub instrument_code: String,
    /// The price set.
    pub index_price: String,
}

/// `GET /admin/state`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EngineStateBody {
    /// Sequence number of the last event.
    pub sequence: u64,
    /// Engine time.
    pub time: String,
    /// State hash (16 hex digits).
    pub state_hash: String,
}

/// Matching-thread time per command, nanoseconds (`null` before any command).
#[derive(Debug, Serialize, ToSchema)]
pub struct Quantiles {
    /// Median.
    pub p50: Option<u64>,
    /// 99th percentile.
    pub p99: Option<u64>,
}

/// `GET /admin/pipeline`: the stages' counters.
#[derive(Debug, Serialize, ToSchema)]
pub struct PipelineBody {
    /// Commands logged by the sequencer.
    pub sequenced: u64,
    /// Commands applied by matching.
    pub matched: u64,
    /// Commands answered.
    pub acknowledged: u64,
    /// Commands applied by the market stage.
    pub market: u64,
    /// Admitted but not answered.
    pub in_flight: u64,
    /// Refused at ingress (`Busy`).
    pub refused: u64,
    /// Reads answered.
    pub reads: u64,
    /// Subscribers dropped for lag.
    pub dropped_subscribers: u64,
    /// Stream sessions open now.
    pub stream_sessions: u64,
    /// Stream sessions closed as slow consumers since the start.
    pub slow_consumers: u64,
    /// Replica divergences (0 unless there is a bug).
    pub divergences: u64,
    /// Snapshot copies made.
    pub snapshots: u64,
    /// Longest snapshot copy.
    pub longest_snapshot_copy_ns: u64,
    /// How far the system clock stood behind the exchange's at the last command, in
    /// nanoseconds (nonzero after it stepped back: time stands still until it catches up).
    pub clock_behind_ns: u64,
    /// Longest matching batch.
    pub longest_matching_batch_ns: u64,
    /// Matching time per command.
    pub matching_ns_per_command: Quantiles,
}

/// `POST /admin/snapshot`: the snapshot taken for the request.
#[derive(Debug, Serialize, ToSchema)]
pub struct SnapshotBody {
    /// Whether its file is written (false: still being written when the answer left;
    /// `matchbook_snapshot_last_sequence` in `/admin/metrics` tells when it is).
    pub written: bool,
    /// Command sequence number of the state it holds: every command acknowledged before the
    /// request (when written, that of the file; else the least it will be).
    pub sequence: u64,
    /// The file in the data directory, when written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Its size in bytes, when written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}
