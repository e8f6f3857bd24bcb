//! The CPU's prefetch hint for the cache lines [`Engine::lookahead`] names.
//!
//! A host that applies commands in a row (the matching stage, a batch call, a replay)
//! calls [`ahead`] with the next command before applying the current one: the lines the
//! next command reads first are then on their way while the current one runs, instead of
//! being waited for one after another. The core computes the addresses (safe code); the
//! hint itself is an intrinsic Rust marks `unsafe`, which the core forbids, so it lives
//! here, in one function. It is sound for every address: a prefetch reads nothing the
//! program can observe and never faults (an address that is not mapped is dropped).
//! On targets other than x86-64 it does nothing.

#![deny(missing_docs)]

use matchbook_core::{Command, Engine, Lookahead};

/// Hints the lines `command` will read first (see [`Engine::lookahead`]).
#[inline]
pub fn ahead(engine: &Engine, command: &Command) {
    lines(engine.lookahead(command));
}

/// Hints every line `ahead` names.
#[inline]
pub fn lines(ahead: Lookahead) {
    // Skipping the absent ones: a hint at address 0 may still cost a page walk.
    for address in ahead.addresses() {
        if address != 0 {
            line(address);
        }
    }
}

/// Asks the CPU to bring the cache line at `address` into every cache level.
#[inline(always)]
pub fn line(address: usize) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: PREFETCHT0 is a hint with no architectural effect: it reads nothing the
    // program sees and raises no fault, whatever the address (an unmapped one is dropped).
    // SSE, which it belongs to, is part of the x86-64 baseline.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::without_provenance(address));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_address_is_hinted_without_a_fault() {
        let data = [7u64; 16];
        for address in [0, 1, usize::MAX, usize::MAX - 63, data.as_ptr() as usize] {
            line(address);
        }
        assert_eq!(data, [7u64; 16]);
    }
}
