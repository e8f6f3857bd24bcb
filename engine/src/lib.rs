//! # matchbook
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
//! assert_eq!(engine.account(taker).unwrap().balances[btc.0 as usize].available, 50_000_000 - 75_000);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod account;
mod book;
mod command;
pub mod demo;
mod engine;
mod error;
mod event;
pub mod fees;
pub mod fixed;
mod hashing;
mod ids;
pub mod journal;
pub mod limits;
pub mod market;
mod order;
mod refdata;
pub mod runtime;
pub mod snapshot;
pub mod store;

pub use account::{AccountKind, AccountState, AccountView, Balance};
pub use book::view::{BookView, LevelView, OrderView};
pub use command::{CancelScope, Command};
pub use engine::{
    AccountFees, ActiveTier, Applied, DEFAULT_MAX_OPEN_ORDERS, Engine, EngineConfig, FundingView,
    FuturesSummary, IntegrityError, MAIN_ACCOUNT_NAME, MAX_ACCOUNT_NAME, MarginState, MarginTotals,
    PositionView, RATE_SCALE, RunningVolume, transfer_decimals,
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
pub use order::{LiveState, NewOrder, Order, OrderType, Side, StpMode, TimeInForce};
pub use refdata::{
    ConfigError, Currency, FundingSchedule, FundingSettings, FuturesTerms, Instrument,
    InstrumentKind, InstrumentSpec, InstrumentState,
};
