//! What the order types beyond the exchange-core mix cost the matching path, in one
//! process, alternating: the plain mix; the same mix with 10 % of its commands replaced by
//! icebergs, stop-markets, take-profits, trailing stops, OCO pairs and brackets; and the
//! plain mix with 10,000 held stop orders parked where no trade reaches them (what a trade
//! that triggers nothing pays for held triggers). Per stream: median and minimum ns/command
//! of seven runs, p50/p99 of a timed run, and heap allocations per command after a warm-up
//! half (a counting allocator wraps the system one).
//!
//! `cargo run --release -p matchbook-bench --example order_types_cost -- [N] [on|off]`
//! (N commands, default 1,000,000; balances on or off, default off).

#![warn(clippy::too_many_lines)]
// A global allocator can only be written with `unsafe`; this one forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use matchbook_bench::workload::{self, EXCHANGE_CORE, Workload};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to `System`, which upholds the contract.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// ns/command over the whole stream.
fn throughput(w: &Workload) -> f64 {
    let mut engine = w.prepared_engine();
    let mut events = Vec::with_capacity(1024);
    let t = Instant::now();
    for (i, c) in w.commands.iter().enumerate() {
        events.clear();
        let _ = engine.apply(c, w.time_of_command(i), &mut events);
    }
    let ns = t.elapsed().as_nanos() as f64 / w.commands.len() as f64;
    std::hint::black_box(&engine);
    ns
}

/// (p50, p99) of per-command times in ns, and allocations per command over the second half.
fn timed(w: &Workload) -> (u128, u128, f64) {
    let mut engine = w.prepared_engine();
    let mut events = Vec::with_capacity(1024);
    let mut times = Vec::with_capacity(w.commands.len());
    let half = w.commands.len() / 2;
    let mut before = 0;
    for (i, c) in w.commands.iter().enumerate() {
        if i == half {
            before = ALLOCATIONS.load(Ordering::Relaxed);
        }
        events.clear();
        let t = Instant::now();
        let _ = engine.apply(c, w.time_of_command(i), &mut events);
        times.push(t.elapsed().as_nanos());
    }
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    times.sort_unstable();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    (
        at(0.5),
        at(0.99),
        allocations as f64 / (w.commands.len() - half) as f64,
    )
}

fn median_min(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0])
}

fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let balances = std::env::args().nth(2).as_deref() == Some("on");
    let plain = if balances {
        workload::generate_funded(EXCHANGE_CORE, 1, n)
    } else {
        workload::generate(EXCHANGE_CORE, 1, n)
    };
    let mixed = workload::generate_with_new_types(EXCHANGE_CORE, 1, n, balances, 0.10);
    let parked = workload::generate_with_parked_triggers(EXCHANGE_CORE, 1, n, balances, 10_000);
    let streams = [
        ("plain", &plain),
        ("10% new types", &mixed),
        ("plain + 10,000 held", &parked),
    ];
    let mut runs: Vec<Vec<f64>> = vec![Vec::new(); streams.len()];
    for _ in 0..7 {
        for (k, (_, w)) in streams.iter().enumerate() {
            runs[k].push(throughput(w));
        }
    }
    let (base, _) = median_min(runs[0].clone());
    println!(
        "exchange-core, {n} commands, balances {}:",
        if balances { "on" } else { "off" }
    );
    for (k, (name, w)) in streams.iter().enumerate() {
        let (median, min) = median_min(runs[k].clone());
        let (p50, p99, allocs) = timed(w);
        println!(
            "  {name}: {median:.1} ns/command (min {min:.1}), {:.2}x plain; p50 {p50} ns, \
             p99 {p99} ns; {allocs:.4} allocations/command",
            median / base
        );
    }
}
