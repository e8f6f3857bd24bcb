//! The CPU's prefetch hints: the instructions the core and the runtime need and cannot
//! issue themselves.
//!
//! The core computes where the records it will read next lie (safe code: plain addresses,
//! nothing read through them) and asks for them early, so their misses overlap the work in
//! between instead of being waited for one after another: the matching loop for the next
//! maker, a host for the next command's lines ([`Engine::lookahead`] in the core). The
//! runtime's matching thread claims the lines it will write next ([`line_for_write`]). The
//! hints are intrinsics Rust marks `unsafe`, which the core forbids, so they live here,
//! with no dependency. They are sound for every address: a prefetch reads nothing the
//! program can observe and never faults (an address that is not mapped is dropped). On
//! targets other than x86-64 they do nothing.
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

/// Asks the CPU to bring the cache line at `address` into this core's cache ready to be
/// written: a line another core last wrote or read (a buffer handed back by a consumer
/// thread, a record a producer thread filled) is claimed now, so the store that comes
/// later neither waits for it nor fills the store buffer behind it. PREFETCHW where the
/// processor has it (AMD since K8, Intel since Broadwell), PREFETCHT0 elsewhere.
#[inline(always)]
pub fn line_for_write(address: usize) {
    #[cfg(target_arch = "x86_64")]
    if x86::has_prefetchw() {
        x86::prefetchw(address);
    } else {
        line(address);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::sync::atomic::{AtomicU8, Ordering};

    /// Whether the processor has PREFETCHW: 0 not asked yet, 1 yes, 2 no.
    static PREFETCHW: AtomicU8 = AtomicU8::new(0);

    /// Whether PREFETCHW may be issued (asked of CPUID once).
    #[inline(always)]
    pub(super) fn has_prefetchw() -> bool {
        match PREFETCHW.load(Ordering::Relaxed) {
            1 => true,
            2 => false,
            _ => detect(),
        }
    }

    #[cold]
    #[allow(unsafe_code, unused_unsafe)]
    fn detect() -> bool {
        use std::arch::x86_64::__cpuid;
        // SAFETY: CPUID exists on every x86-64 processor and only reports; leaf
        // 0x8000_0001 is read only when leaf 0x8000_0000 says it exists. Its ECX bit 8
        // (3DNowPrefetch) is the PREFETCHW flag.
        let yes = unsafe {
            __cpuid(0x8000_0000).eax >= 0x8000_0001 && __cpuid(0x8000_0001).ecx & (1 << 8) != 0
        };
        PREFETCHW.store(if yes { 1 } else { 2 }, Ordering::Relaxed);
        yes
    }

    /// PREFETCHW of the line at `address`.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn prefetchw(address: usize) {
        // SAFETY: only called where CPUID reports the instruction. Like PREFETCHT0 it is a
        // hint with no architectural effect: it reads and writes nothing the program sees
        // and never faults, whatever the address (an unmapped one is dropped).
        unsafe {
            std::arch::asm!(
                "prefetchw byte ptr [{0}]",
                in(reg) address,
                options(nostack, preserves_flags, readonly)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_write_hint_is_detected_as_the_kernel_reports_it() {
        // Linux names CPUID's PREFETCHW flag `3dnowprefetch` in its cpu flags.
        let Ok(cpuinfo) = std::fs::read_to_string("/proc/cpuinfo") else {
            return;
        };
        let kernel = cpuinfo
            .lines()
            .find(|l| l.starts_with("flags"))
            .is_some_and(|l| l.split_whitespace().any(|f| f == "3dnowprefetch"));
        assert_eq!(x86::has_prefetchw(), kernel);
        assert_eq!(x86::has_prefetchw(), kernel, "the cached answer");
    }

    #[test]
    fn any_address_is_hinted_without_a_fault() {
        let data = [7u64; 16];
        for address in [0, 1, usize::MAX, usize::MAX - 63, data.as_ptr() as usize] {
            line(address);
            line_for_write(address);
        }
        assert_eq!(data, [7u64; 16]);
    }
}
