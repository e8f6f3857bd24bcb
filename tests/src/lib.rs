//! Test support shared by matchbook's cross-crate tests: a naive reference engine written for
//! clarity, against which the real engine is compared event by event, and the fuzz
//! harnesses that the cargo-fuzz targets in `fuzz/` run.
#![deny(missing_docs)]
#![warn(clippy::too_many_lines)]

pub mod fuzz;
pub mod normalize;
pub mod reference;
