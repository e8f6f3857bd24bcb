//! Benchmark support for matchbook: a small seeded random generator and workload profiles
//! (DESIGN section 6) that produce command streams any engine run can replay, and a minimal
//! keep-alive HTTP/1.1 client for the REST load generator.
#![deny(missing_docs)]
#![warn(clippy::too_many_lines)]

pub mod cli;
pub mod harness;
pub mod http;
pub mod plot;
pub mod profiles;
pub mod report;
pub mod rng;
pub mod script;
pub mod script_terms;
pub mod venues;
pub mod workload;
