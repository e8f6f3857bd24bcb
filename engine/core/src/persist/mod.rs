//! Serde helpers for the state a snapshot saves: stores restored slot for slot, hash maps
//! written in key order, decimals as their exact 16 bytes. Shared by the core and market data
//! so both encode deterministically.

pub mod added_last;
pub mod decimal_bytes;
pub(crate) mod legacy_order;
pub mod slab_image;
pub mod sorted_map;
