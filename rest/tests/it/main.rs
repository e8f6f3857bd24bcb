//! The HTTP, stream and process tests of the exchange server, one module per subject,
//! in one test binary: the helpers (`common`) and the server crate are compiled once for
//! all of them instead of once per file. Each test still starts its own exchange (free
//! ports, a fresh data directory) and stops it.

#![warn(clippy::too_many_lines)]

mod common;

mod accounts;
mod bombs;
mod cluster_tool;
mod contract;
mod crash;
mod fairness;
mod fidelity;
mod futures;
mod hardening;
mod history_limits;
mod key_revocation;
mod log_failure;
mod order_types;
mod orders;
mod overload;
mod proxies;
mod public;
mod read_your_writes;
mod replicated;
mod replicated_faults;
mod replicated_trim;
mod snapshots;
mod stream_accounts;
mod stream_books;
mod stream_dead_man;
mod stream_slow;
mod stream_trading;
mod streams;
