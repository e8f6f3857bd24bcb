//! Test support shared by matchbook's cross-crate tests: a naive reference engine written for
//! clarity, against which the real engine is compared event by event.
#![deny(missing_docs)]

pub mod normalize;
pub mod reference;
