//! # matchbook-core
//!
//! The deterministic heart of matchbook: order books with price-time priority, matching for
//! limit, market and stop orders under every time in force, self-trade prevention, amends and
//! cancels; holders, accounts and subaccounts with per-currency balances, reservations and
//! settlement, fee tiers, transfers and futures funding. Prices and amounts are fixed-point
//! integers inside; decimal strings are parsed strictly at the edge. Time is an input: the
//! same commands at the same times give the same events and the same
//! [`Engine::state_hash`], bit for bit.
//!
//! The core owns no thread, file, clock or channel and depends on none of the other stages
//! (market data, store, runtime): they are built around it, from its commands and events.
//! The `matchbook` facade re-exports it with the stages, and its crate documentation shows
//! an engine in use.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(clippy::too_many_lines)]

// Lets fixtures written against the crate's public name (the demo reference data that
// `matchbook-config` owns) be compiled into this crate's unit tests.
#[cfg(test)]
extern crate self as matchbook_core;

pub mod account;
mod book;
pub mod calendar;
mod command;
#[cfg(test)]
#[path = "../../../config/src/demo.rs"]
pub(crate) mod demo;
mod engine;
mod error;
mod event;
pub mod fees;
pub mod fixed;
pub mod hashing;
mod ids;
pub mod image;
pub mod limits;
mod order;
pub mod persist;
mod refdata;
pub mod reference;
mod store;
pub mod wire_name;

pub use account::{AccountKind, AccountState, AccountView, Balance, Balances};
pub use book::view::{BookView, LevelView, OrderView};
pub use command::{CancelScope, Command};
pub use engine::{
    AccountFees, ActiveTier, Applied, DEFAULT_MAX_OPEN_ORDERS, Engine, EngineConfig, FundingView,
    FuturesSummary, IntegrityError, LevelChange, Lookahead, MAIN_ACCOUNT_NAME, MAX_ACCOUNT_NAME,
    MarginState, MarginTotals, PositionView, RATE_SCALE, RunningVolume, TopLevel,
    transfer_decimals,
};
pub use error::EngineError;
pub use event::{
    AcceptedOrder, CancelReason, CountingSink, Event, EventRecord, EventSink, OrderStatus, Trade,
};
pub use fixed::{
    Notional, ParseDecimalError, Price, Qty, TransferAmountError, parse_transfer_amount,
};
pub use hashing::StateHasher;
pub use ids::{
    AccountId, CurrencyId, HolderId, InstrumentId, OrderRef, Timestamp, TradeId, Uuid, UuidError,
};
pub use order::{
    BracketExits, LiveState, NewOrder, Order, OrderType, Side, StpMode, TimeInForce, Trail,
    TriggerRef,
};
pub use refdata::{
    ConfigError, Currency, FundingSchedule, FundingSettings, FuturesTerms, Instrument,
    InstrumentKind, InstrumentSpec, InstrumentState,
};
