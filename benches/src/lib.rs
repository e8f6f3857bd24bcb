//! Benchmark support for matchbook: a small seeded random generator and workload profiles
//! (DESIGN section 6) that produce command streams any engine run can replay.
#![deny(missing_docs)]

pub mod rng;
pub mod workload;
