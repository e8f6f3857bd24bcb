//! The CPU's prefetch hint: the one instruction the core needs and cannot issue itself.
//!
//! The core computes where the records it will read next lie (safe code: plain addresses,
//! nothing read through them) and asks for them early, so their misses overlap the work in
//! between instead of being waited for one after another: the matching loop for the next
//! maker, a host for the next command's lines ([`Engine::lookahead`] in the core). The hint
//! is an intrinsic Rust marks `unsafe`, which the core forbids, so it lives here, in one
//! function with no dependency. It is sound for every address: a prefetch reads nothing the
//! program can observe and never faults (an address that is not mapped is dropped). On
//! targets other than x86-64 it does nothing.
//!
//! [`Engine::lookahead`]: https://docs.rs/matchbook-core

#![deny(missing_docs)]
#![warn(clippy::too_many_lines)]

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
