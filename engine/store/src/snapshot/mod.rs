//! Snapshots: the whole engine state and the market data built from its events, as of one
//! journal sequence number, in one checksummed file. Recovery loads the newest valid
//! snapshot and replays only the journal records after it, and old journal segments can be
//! deleted once a snapshot covers them.
//!
//! Layout (little-endian): 8-byte magic `MBSNAP01` | u8 version | u64 sequence | i64 time |
//! u64 engine length | engine bytes | u64 market length | market bytes | u32 crc32c of
//! everything after the magic. The engine part is the postcard encoding of the core's saved
//! form, [`EngineImage`] (state only: no configuration, no lookup index, no scratch
//! buffer); the market part that of [`MarketData`] (its caches are not written). They are
//! captured separately because they live on different threads in the runtime.
//!
//! Version 7 is version 8 without the dead-man switches at the end of the engine image;
//! it reads as an engine with none armed. Version 6, the format before the engine image,
//! wrote the engine's in-memory structure as it stood; it is still read (its decoder is
//! pinned by a committed file). Both are upgraded on load, so a data directory from those
//! versions starts, and its next snapshot is written as version 8. Any other version is
//! refused with the versions read named, not guessed at.

use crate::journal::crc32c;
use matchbook_core::Engine;
use matchbook_core::Timestamp;
use matchbook_core::image::EngineImage;
use matchbook_market::MarketData;

/// File magic of a snapshot.
pub const MAGIC: &[u8; 8] = b"MBSNAP01";
/// Snapshot format version written (bumped whenever a saved type changes shape).
pub const VERSION: u8 = 9;
/// The previous format version, still read: images without trigger terms (mark-price and
/// trailing orders).
pub const PREVIOUS_VERSION: u8 = 8;
/// The format before it, still read: also without dead-man switches.
pub const EARLIER_VERSION: u8 = 7;
/// The format before it, still read: the engine part is the in-memory engine.
pub const LEGACY_VERSION: u8 = 6;

/// Why a snapshot could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The bytes are not a complete, intact snapshot of this version.
    #[error("snapshot damaged: {0}")]
    Damaged(String),
    /// State that cannot be encoded (a bug, not an input error).
    #[error("snapshot encoding failed: {0}")]
    Encode(String),
}

/// A snapshot: engine and market-data state right after journal record `seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Format version of the file ([`VERSION`] unless read from an older file).
    pub version: u8,
    /// Last journal sequence number the state includes (0: before any command).
    pub seq: u64,
    /// Engine time at that point.
    pub time: Timestamp,
    /// Encoded engine.
    pub engine: Vec<u8>,
    /// Encoded market data (empty when the owner keeps none).
    pub market: Vec<u8>,
}

/// Encodes the engine's state (its [`EngineImage`]).
pub fn encode_engine(engine: &Engine) -> Result<Vec<u8>, SnapshotError> {
    let image = engine
        .image()
        .map_err(|e| SnapshotError::Encode(e.to_string()))?;
    postcard::to_stdvec(&image).map_err(|e| SnapshotError::Encode(e.to_string()))
}

/// Encodes market data.
pub fn encode_market(market: &MarketData) -> Result<Vec<u8>, SnapshotError> {
    postcard::to_stdvec(market).map_err(|e| SnapshotError::Encode(e.to_string()))
}

/// State copied out at a snapshot point, to be encoded and written away from the threads
/// that own it (copying is a fraction of the cost of encoding).
#[derive(Debug, Clone)]
pub struct Captured {
    /// Last journal sequence number the state includes.
    pub seq: u64,
    /// The engine.
    pub engine: Engine,
    /// Market data, when the owner keeps it.
    pub market: Option<MarketData>,
    /// The snapshot requests this copy answers: a count; every request numbered up to it
    /// (see `RuntimeHandle::request_snapshot`) was numbered before the state was copied,
    /// so the copy holds every command acknowledged before any of them was asked for.
    pub requests: u64,
}

impl Captured {
    /// Encodes the captured state.
    pub fn encode(&self) -> Result<Snapshot, SnapshotError> {
        Snapshot::capture(self.seq, &self.engine, self.market.as_ref())
    }
}

/// Where the runtime hands captured state (a [`crate::SnapshotWriter`]'s mailbox in
/// practice), and whether a copy handed over now would be written next.
#[derive(Clone)]
pub struct SnapshotSink {
    hand_over: std::sync::Arc<dyn Fn(Captured) + Send + Sync>,
    has_room: std::sync::Arc<dyn Fn() -> bool + Send + Sync>,
}

impl SnapshotSink {
    /// A sink that gives each copy to `hand_over` and asks `has_room` whether one would
    /// be written next (rather than wait behind, and then replace, one already waiting).
    pub fn new(
        hand_over: impl Fn(Captured) + Send + Sync + 'static,
        has_room: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Self {
        Self {
            hand_over: std::sync::Arc::new(hand_over),
            has_room: std::sync::Arc::new(has_room),
        }
    }

    /// Hands a copy over.
    pub fn hand_over(&self, captured: Captured) {
        (self.hand_over)(captured);
    }

    /// Whether no copy waits to be written: one taken now would be next. While one waits,
    /// a copy taken would only replace it, the time to take it spent for a single write.
    pub fn has_room(&self) -> bool {
        (self.has_room)()
    }
}

impl std::fmt::Debug for SnapshotSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotSink")
            .field("has_room", &self.has_room())
            .finish()
    }
}

impl Snapshot {
    /// Encodes `engine` and `market` as of journal record `seq`.
    pub fn capture(
        seq: u64,
        engine: &Engine,
        market: Option<&MarketData>,
    ) -> Result<Self, SnapshotError> {
        Ok(Self {
            version: VERSION,
            seq,
            time: engine.now(),
            engine: encode_engine(engine)?,
            market: match market {
                Some(market) => encode_market(market)?,
                None => Vec::new(),
            },
        })
    }

    /// The file bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out =
            Vec::with_capacity(8 + 1 + 8 + 8 + 16 + self.engine.len() + self.market.len() + 4);
        out.extend_from_slice(MAGIC);
        out.push(self.version);
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&self.time.0.to_le_bytes());
        for part in [&self.engine, &self.market] {
            out.extend_from_slice(&(part.len() as u64).to_le_bytes());
            out.extend_from_slice(part);
        }
        let crc = crc32c(&out[MAGIC.len()..]);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Reads file bytes, checking magic, version, lengths and checksum.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, SnapshotError> {
        let damaged = |what: &str| SnapshotError::Damaged(what.to_owned());
        let body_end = bytes
            .len()
            .checked_sub(4)
            .filter(|&end| end >= MAGIC.len() + 1 + 8 + 8 + 16)
            .ok_or_else(|| damaged("too short"))?;
        if &bytes[..MAGIC.len()] != MAGIC {
            return Err(damaged("not a matchbook snapshot (bad magic)"));
        }
        let mut crc = [0u8; 4];
        crc.copy_from_slice(&bytes[body_end..]);
        if crc32c(&bytes[MAGIC.len()..body_end]) != u32::from_le_bytes(crc) {
            return Err(damaged("checksum mismatch"));
        }
        let mut reader = Reader {
            bytes: &bytes[MAGIC.len()..body_end],
        };
        let version = reader.take(1)?[0];
        if ![VERSION, PREVIOUS_VERSION, EARLIER_VERSION, LEGACY_VERSION].contains(&version) {
            return Err(SnapshotError::Damaged(format!(
                "format version {version}, this build reads {VERSION} (and upgrades \
                 {PREVIOUS_VERSION}, {EARLIER_VERSION} and {LEGACY_VERSION})"
            )));
        }
        let seq = reader.u64()?;
        let time = Timestamp(reader.u64()? as i64);
        let engine = reader.part()?;
        let market = reader.part()?;
        if !reader.bytes.is_empty() {
            return Err(damaged("trailing bytes"));
        }
        Ok(Self {
            version,
            seq,
            time,
            engine,
            market,
        })
    }

    /// Rebuilds the engine and checks it against `reference`, a fresh engine of the
    /// configuration it is to run with (see [`Engine::check_restored`]): a file that
    /// decodes but is not a state this engine could have reached is refused as damaged.
    pub fn engine(&self, reference: &Engine) -> Result<Engine, SnapshotError> {
        let damaged = |e: &dyn std::fmt::Display| SnapshotError::Damaged(e.to_string());
        if self.version == LEGACY_VERSION {
            let engine = Engine::decode_legacy(&self.engine).map_err(|e| damaged(&e))?;
            engine.check_restored(reference).map_err(|e| damaged(&e))?;
            return Ok(engine);
        }
        let image: EngineImage = postcard::from_bytes(&self.engine).map_err(|e| damaged(&e))?;
        Engine::restore(reference, image).map_err(|e| damaged(&e))
    }

    /// Rebuilds market data (`None` when the snapshot holds none), checked to belong to
    /// an engine of `instruments` instruments (see [`MarketData::check_restored`]).
    pub fn market(&self, instruments: usize) -> Result<Option<MarketData>, SnapshotError> {
        if self.market.is_empty() {
            return Ok(None);
        }
        let mut market: MarketData = postcard::from_bytes(&self.market)
            .map_err(|e| SnapshotError::Damaged(e.to_string()))?;
        market
            .check_restored(instruments)
            .map_err(|e| SnapshotError::Damaged(format!("inconsistent market data: {e}")))?;
        market.build_indexes();
        Ok(Some(market))
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], SnapshotError> {
        if self.bytes.len() < n {
            return Err(SnapshotError::Damaged("truncated".into()));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u64(&mut self) -> Result<u64, SnapshotError> {
        let mut word = [0u8; 8];
        word.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(word))
    }

    fn part(&mut self) -> Result<Vec<u8>, SnapshotError> {
        let len = usize::try_from(self.u64()?)
            .map_err(|_| SnapshotError::Damaged("part length too large".into()))?;
        Ok(self.take(len)?.to_vec())
    }
}

#[cfg(test)]
mod tests;
