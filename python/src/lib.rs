//! # matchbook-python
//!
//! The native half of the Python package `matchbook` (`matchbook._native`): one
//! `NativeEngine` class holding an engine and its market data, driven with explicit times
//! so a backtest replays bit for bit. Decimal values cross as strings (the pure-Python
//! layer turns them into `decimal.Decimal`), bulk data as numpy columns, and engine errors
//! as the exception classes of `matchbook.errors`, chosen there from the engine's code.
//! `NativeNode` is the exchange node (durable, deadlines kept, thread-safe) on the node's
//! own clock.

#![warn(clippy::too_many_lines)]

use pyo3::prelude::*;

mod account_feed;
mod batch;
mod cancels;
mod durable;
mod engine;
mod errors;
mod events;
mod ints;
mod lookups;
mod node;
mod node_feed;
mod operator;
mod order_entry;
mod pickling;
mod queries;
mod refdata;
mod values;

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<engine::NativeEngine>()?;
    m.add_class::<node::NativeNode>()?;
    m.add_class::<node::NativeFeed>()?;
    m.add_class::<node_feed::NativeMarketFeed>()?;
    m.add_class::<account_feed::NativeAccountFeed>()?;
    Ok(())
}
