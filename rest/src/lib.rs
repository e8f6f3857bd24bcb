//! # matchbook-rest
//!
//! The reference REST adapter: serves `rest-api-v1.md` (and the addendum's endpoints) over
//! HTTP on top of the threaded engine runtime (`matchbook::runtime`). Handlers validate and
//! convert at the edge (strings to fixed point, UUIDs to handles, keys to accounts), submit
//! commands or reads through the runtime's lock-free queue, await the answer without
//! blocking a worker, and format the result. Every failure is `{"error": CODE}` with the
//! status of spec section 7, mapped once in [`error`].
//!
//! Two listeners: the public one (spec section 4, `/openapi.json`) and an admin one
//! (holders, deposits, keys, clock) that only admin keys can use.
//!
//! ```no_run
//! # async fn run() -> Result<(), matchbook_rest::ServerError> {
//! let server = matchbook_rest::Server::start(matchbook_rest::config::Settings::demo()).await?;
//! println!("listening on {}", server.addr);
//! server.stop().await?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
#![warn(clippy::too_many_lines)]

pub mod auth;
pub mod body;
pub mod config;
pub mod cursor;
pub mod entry;
pub mod error;
pub mod format;
pub mod history;
pub mod http;
pub mod market_bodies;
pub mod markets;
pub mod metrics;
pub mod net;
pub mod openapi;
pub mod params;
pub mod records;
pub mod server;
pub mod setup;
pub mod snapshots;
mod startup;
pub mod state;
pub mod trade_lists;
pub mod wire;
pub mod ws;

pub use server::{Server, ServerError};
