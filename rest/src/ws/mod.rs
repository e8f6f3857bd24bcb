//! WebSocket streams: the public exchange's stream contract (docs/api.md), served on the public
//! listener at `/` and `/ws` (one socket for public and private channels, the REST keys
//! and scopes).
//!
//! ```text
//!  runtime output ──> hub thread ──(frames, serialised once)──> broadcast ──> session task
//!  (every batch)      one per server                           (bounded)      one per socket
//! ```
//!
//! The hub ([`hub`]) follows the runtime's published batches and makes each frame once;
//! every session ([`session`]) keeps the frames of its channels and instruments. Neither
//! the matching thread nor the hub ever waits for a session: a session a whole buffer
//! behind is closed with `SLOW_CONSUMER`.
//!
//! Served: the session messages (AUTHENTICATE, SUBSCRIBE, UPDATE_SUBSCRIPTION,
//! UNSUBSCRIBE, CANCEL_ALL_AFTER), the heartbeat, the error frames, the public channels
//! `ORDER_BOOK`, `BOOK_TICKER`, `MARKET_TICKER`, `CANDLESTICKS` and `PRICE_TICKS`, and the
//! private `ACCOUNT_HISTORY` (with its aliases) and `TRADING` (order events, and order entry
//! with `CREATE_ORDER` and `CANCEL_ORDER`).

pub mod account_frames;
pub mod account_messages;
pub mod accounts;
pub mod book_frames;
pub mod depth;
pub mod frames;
pub mod hub;
pub mod market_frames;
pub mod messages;
pub mod order_entry;
pub mod replies;
pub mod session;
mod socket;
pub mod streams;
mod subscribe_snapshots;
pub mod trading;
pub mod upgrade;
mod window;

pub use streams::{Counters, MAX_MESSAGE_BYTES, Streams};
pub use upgrade::upgrade;
