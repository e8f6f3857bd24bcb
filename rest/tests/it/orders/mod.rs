//! Orders and trades over HTTP: creation with every input error, the four time-in-force
//! rules, lookups, cancels, history pages with cursors, trade history, and isolation
//! between accounts.

use crate::common;

use common::{Exchange, code, order_fields};
use reqwest::StatusCode;
use serde_json::{Value, json};

mod amend;
mod entry;
mod history;
mod lookups;
