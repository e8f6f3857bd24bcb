//! # matchbook
//!
//! The one import of matchbook's adapters: it re-exports the stages, each a crate of its
//! own: the deterministic core ([`matchbook_core`], at this crate's root), market data
//! ([`market`]), the journal, snapshots and recovery ([`store`], [`journal`], [`snapshot`])
//! and the threaded pipeline ([`runtime`]); [`demo`] is the embedded reference data, and
//! [`recorded`] reads a server's data directory into memory.
//!
//! A deterministic, single-writer exchange engine: order books with price-time priority,
//! matching for limit, market and stop orders under every time in force, self-trade
//! prevention, amends and cancels; holders, accounts and subaccounts with per-currency
//! balances, reservations and settlement, fee tiers and transfers. Prices and amounts are fixed-point integers inside;
//! decimal strings are parsed strictly at the edge. Time is an input: the same commands
//! at the same times give the same events and the same [`Engine::state_hash`], bit for bit.
//!
//! ```
//! use matchbook::{Command, Engine, Event, NewOrder, Side, Timestamp};
//!
//! let mut engine = Engine::new(matchbook::demo::config()).expect("valid config");
//! let mut events = Vec::new();
//! let t = Timestamp::from_millis(1_767_225_600_000);
//! let maker = engine.apply(&Command::CreateHolder, t, &mut events).unwrap().account.unwrap();
//! let taker = engine.apply(&Command::CreateHolder, t, &mut events).unwrap().account.unwrap();
//! let btc_eur = engine.instrument_by_code("BTC_EUR").unwrap();
//! let (btc, eur) = (engine.currency_by_code("BTC").unwrap(), engine.currency_by_code("EUR").unwrap());
//! // Balances are integers at each currency's balance scale (8 decimals for BTC and EUR here).
//! engine.apply(&Command::Deposit { account: maker, currency: btc, amount: 100_000_000 }, t, &mut events).unwrap();
//! engine.apply(&Command::Deposit { account: taker, currency: eur, amount: 20_000_00000000 }, t, &mut events).unwrap();
//!
//! let inst = engine.instrument(btc_eur).unwrap();
//! let (price, amount) = (inst.parse_price("30000.00").unwrap(), inst.parse_qty("0.5").unwrap());
//! engine.apply(&Command::PlaceOrder(NewOrder::limit(maker, btc_eur, Side::Sell, price, amount)), t, &mut events).unwrap();
//! events.clear();
//! engine.apply(&Command::PlaceOrder(NewOrder::limit(taker, btc_eur, Side::Buy, price, amount)), t, &mut events).unwrap();
//! assert!(events.iter().any(|e| matches!(e.event, Event::Trade(_))));
//! // The taker paid 15,000 EUR and received 0.5 BTC less the 0.15 % taker fee.
//! assert_eq!(engine.account(taker).unwrap().balances.get(btc).available, 50_000_000 - 75_000);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(clippy::too_many_lines)]

pub mod recorded;

pub use matchbook_config::demo;
pub use matchbook_core::*;
pub use matchbook_market as market;
pub use matchbook_prefetch as prefetch;
pub use matchbook_runtime as runtime;
pub use matchbook_store as store;
pub use matchbook_store::{journal, snapshot};
