//! Opaque, tamper-evident page cursors: the position (a record number, or a wider key such
//! as a closed position's close time and number) bound to the query kind and the account,
//! signed with HMAC-SHA-256. A cursor edited, forged, or taken from another account or
//! endpoint is `INVALID_CURSOR`. The key is the data directory's (`cursor.key`, made on the
//! first start) or, on a replicated group, the group's, so a cursor outlives a restart and
//! a change of leader.

use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use matchbook::Timestamp;
use matchbook::market::futures::ClosedKey;
use matchbook::market::query::QueryError;
use sha2::Sha256;

use crate::auth::key_files::{hex, unhex};
use crate::error::ApiError;

/// Name of the file in a data directory holding its cursor key (64 hex digits).
pub const CURSOR_KEY_FILE: &str = "cursor.key";

const KEY_LEN: usize = 32;
const TAG_LEN: usize = 16;
const PAYLOAD_LEN: usize = 21;

/// Which listing a cursor belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum CursorKind {
    /// `GET /v1/account/trades`.
    Trades = 1,
    /// `GET /v1/account/orders`.
    Orders = 2,
    /// `GET /v1/account/futures/positions-history`.
    Positions = 3,
    /// `GET /v1/account/futures/funding-payments`.
    FundingPayments = 4,
    /// `GET /v1/account/orders/{order_id}/trades`.
    OrderTrades = 5,
    /// `GET /v1/account/futures/positions/{position_id}/trades`.
    PositionTrades = 6,
}

/// Signs and checks cursors.
#[derive(Clone)]
pub struct CursorSigner {
    key: [u8; KEY_LEN],
}

/// The data directory's cursor key cannot be read, made or stored.
#[derive(Debug, thiserror::Error)]
pub enum CursorKeyError {
    /// Reading or writing the file failed.
    #[error("cursor key {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file holds something other than 64 hex digits.
    #[error(
        "cursor key {0}: not 64 hex digits; restore it from a backup, or delete it to make \
         a new one (cursors already handed out then answer INVALID_CURSOR)"
    )]
    Malformed(PathBuf),
    /// No randomness for a new key.
    #[error("random source: {0}")]
    Random(String),
}

impl std::fmt::Debug for CursorSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorSigner(..)")
    }
}

impl CursorSigner {
    /// A signer with a random key.
    pub fn random() -> Result<Self, getrandom::Error> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key)?;
        Ok(Self { key })
    }

    /// A signer with the key written as 64 hex digits (see [`CursorSigner::to_hex`]).
    pub fn from_hex(text: &str) -> Option<Self> {
        unhex(text.trim()).map(|key| Self { key })
    }

    /// The key as 64 hex digits.
    pub fn to_hex(&self) -> String {
        hex(&self.key)
    }

    /// The signer of data directory `dir`: the key in its `cursor.key`, or, on the first
    /// start, a new random key stored there (readable by the owner only), so that the
    /// cursors a client holds stay good across restarts.
    pub fn of_data_dir(dir: &Path) -> Result<Self, CursorKeyError> {
        let path = dir.join(CURSOR_KEY_FILE);
        let io = |source| CursorKeyError::Io {
            path: path.clone(),
            source,
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                Self::from_hex(&text).ok_or_else(|| CursorKeyError::Malformed(path.clone()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let signer = Self::random().map_err(|e| CursorKeyError::Random(e.to_string()))?;
                matchbook::store::write_file_atomically(&path, signer.to_hex().as_bytes())
                    .map_err(io)?;
                Ok(signer)
            }
            Err(e) => Err(io(e)),
        }
    }

    fn tag(&self, payload: &[u8]) -> [u8; TAG_LEN] {
        let mut out = [0u8; TAG_LEN];
        // HMAC accepts keys of any length, so this cannot fail.
        if let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.key) {
            mac.update(payload);
            out.copy_from_slice(&mac.finalize().into_bytes()[..TAG_LEN]);
        }
        out
    }

    /// The cursor text for `position` in `kind` of `account`.
    pub fn encode(&self, kind: CursorKind, account: u32, position: u128) -> String {
        let mut payload = [0u8; PAYLOAD_LEN];
        payload[0] = kind as u8;
        payload[1..5].copy_from_slice(&account.to_le_bytes());
        payload[5..].copy_from_slice(&position.to_le_bytes());
        let tag = self.tag(&payload);
        hex(&payload) + &hex(&tag)
    }

    /// The position in the request's `cursor` parameter, if one was given.
    pub fn param(
        &self,
        params: &crate::params::Params,
        kind: CursorKind,
        account: u32,
    ) -> Result<Option<u128>, ApiError> {
        params
            .get("cursor")
            .map(|c| self.decode(c, kind, account))
            .transpose()
    }

    /// The cursor of the next page, when another page follows.
    pub fn next_page(
        &self,
        kind: CursorKind,
        account: u32,
        next: Option<impl Into<u128>>,
    ) -> Option<String> {
        next.map(|next| self.encode(kind, account, next.into()))
    }

    /// The position inside a cursor, if it is genuine and belongs to `kind` and `account`.
    pub fn decode(&self, text: &str, kind: CursorKind, account: u32) -> Result<u128, ApiError> {
        let invalid = || ApiError::Query(QueryError::InvalidCursor);
        let bytes: [u8; PAYLOAD_LEN + TAG_LEN] = unhex(text).ok_or_else(invalid)?;
        let (payload, tag) = bytes.split_at(PAYLOAD_LEN);
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).map_err(|_| invalid())?;
        mac.update(payload);
        mac.verify_truncated_left(tag).map_err(|_| invalid())?;
        let mut account_bytes = [0u8; 4];
        account_bytes.copy_from_slice(&payload[1..5]);
        if payload[0] != kind as u8 || u32::from_le_bytes(account_bytes) != account {
            return Err(invalid());
        }
        let mut position = [0u8; 16];
        position.copy_from_slice(&payload[5..]);
        Ok(u128::from_le_bytes(position))
    }
}

/// The record number a cursor of a record-numbered listing holds (orders, trades, funding
/// payments); a signed cursor of such a listing always holds one.
pub fn record_number(position: u128) -> Result<u64, ApiError> {
    u64::try_from(position).map_err(|_| ApiError::Query(QueryError::InvalidCursor))
}

/// A closed position's place in the history as a cursor position: its close time in the
/// high half, its number in the low.
pub fn from_closed_key((closed, position_id): ClosedKey) -> u128 {
    (u128::from(closed.0 as u64) << 64) | u128::from(position_id)
}

/// The closed position's place a positions-history cursor holds.
pub fn to_closed_key(position: u128) -> ClosedKey {
    (Timestamp((position >> 64) as u64 as i64), position as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_edits_and_foreign_cursors() {
        let s = CursorSigner::random().expect("random");
        let c = s.encode(CursorKind::Trades, 7, 12_345);
        assert_eq!(s.decode(&c, CursorKind::Trades, 7), Ok(12_345));
        assert!(
            s.decode(&c, CursorKind::Orders, 7).is_err(),
            "other endpoint"
        );
        assert!(
            s.decode(&c, CursorKind::Trades, 8).is_err(),
            "other account"
        );
        let mut edited = c.clone().into_bytes();
        edited[12] = if edited[12] == b'0' { b'1' } else { b'0' };
        let edited = String::from_utf8(edited).expect("ascii");
        assert!(s.decode(&edited, CursorKind::Trades, 7).is_err(), "edited");
        let other = CursorSigner::random().expect("random");
        assert!(
            other.decode(&c, CursorKind::Trades, 7).is_err(),
            "other key"
        );
        assert!(s.decode("zz", CursorKind::Trades, 7).is_err());
    }

    #[test]
    fn a_data_directorys_key_is_made_once_and_kept() {
        let dir = std::env::temp_dir().join(format!("mb-cursor-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let first = CursorSigner::of_data_dir(&dir).expect("made");
        let cursor = first.encode(CursorKind::Orders, 3, 99);
        let again = CursorSigner::of_data_dir(&dir).expect("read back");
        assert_eq!(again.decode(&cursor, CursorKind::Orders, 3), Ok(99));
        let other = std::env::temp_dir().join(format!("mb-cursor-key-{}-b", std::process::id()));
        let _ = std::fs::remove_dir_all(&other);
        std::fs::create_dir_all(&other).expect("dir");
        let elsewhere = CursorSigner::of_data_dir(&other).expect("made");
        assert!(
            elsewhere.decode(&cursor, CursorKind::Orders, 3).is_err(),
            "its own key"
        );
        std::fs::write(dir.join(CURSOR_KEY_FILE), "not a key").expect("spoiled");
        assert!(matches!(
            CursorSigner::of_data_dir(&dir),
            Err(CursorKeyError::Malformed(_))
        ));
        assert!(CursorSigner::from_hex(&elsewhere.to_hex()).is_some());
        let _ = std::fs::remove_dir_all(dir);
        let _ = std::fs::remove_dir_all(other);
    }
}
