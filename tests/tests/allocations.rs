//! Zero heap allocations per command in steady state: a counting global allocator wraps the
//! system one, each workload (book only, and with balances and fees) runs through a warm-up,
//! then the measured part must not allocate at all (event sink cleared, never reallocated);
//! the same for futures orders on a USD-margined perpetual, and for the exchange-core mix
//! with a tenth of its commands replaced by trigger, trailing, iceberg, OCO and bracket
//! orders, and for the comparison harness's price-jumps workload (levels far from the
//! touch).

#![warn(clippy::too_many_lines)]
// A global allocator can only be written with `unsafe`; this one forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use matchbook::EventRecord;
use matchbook_bench::workload::{self, DEEP_BOOK, EXCHANGE_CORE, Profile, Workload};

struct Counting;

// Per thread: the tests of this file run in parallel, and one test's set-up must not count
// against another's measured window.
thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds the contract.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations over the second half of `w`, the caller's event buffer holding `sink`
/// events from the start.
fn allocations_in_steady_state(w: &Workload, sink: usize) -> (u64, usize) {
    let n = w.commands.len();
    let mut engine = w.prepared_engine();
    let mut events: Vec<EventRecord> = Vec::with_capacity(sink);
    let warm_up = n / 2;
    for (i, command) in w.commands[..warm_up].iter().enumerate() {
        events.clear();
        let _ = engine.apply(command, w.time_of_command(i), &mut events);
    }
    let before = allocations();
    for (i, command) in w.commands.iter().enumerate().skip(warm_up) {
        events.clear();
        let _ = engine.apply(command, w.time_of_command(i), &mut events);
    }
    (allocations() - before, n - warm_up)
}

#[test]
fn no_allocation_per_command_after_warm_up() {
    let profiles: [(Profile, usize); 2] = [(EXCHANGE_CORE, 400_000), (DEEP_BOOK, 200_000)];
    for (profile, n) in profiles {
        for funded in [false, true] {
            let w = if funded {
                workload::generate_funded(profile, 1, n)
            } else {
                workload::generate(profile, 1, n)
            };
            let (allocations, commands) = allocations_in_steady_state(&w, 1024);
            assert_eq!(
                allocations, 0,
                "{} (balances {funded}): {allocations} allocations over {commands} commands",
                profile.name
            );
        }
    }
}

#[test]
fn no_allocation_per_futures_command_after_warm_up() {
    let w = workload::generate_futures(EXCHANGE_CORE, 1, 200_000);
    let engine = w.prepared_engine();
    assert!(
        engine.funding_view(workload::INSTRUMENT).is_ok(),
        "the workload trades a future"
    );
    let (allocations, commands) = allocations_in_steady_state(&w, 1024);
    assert_eq!(
        allocations, 0,
        "futures: {allocations} allocations over {commands} commands"
    );
}

#[test]
fn no_allocation_per_command_with_every_order_type_after_warm_up() {
    for balances in [false, true] {
        let w = workload::generate_with_new_types(EXCHANGE_CORE, 1, 400_000, balances, 0.10);
        // A stop-market fires into a market order that may sweep the whole book (about a
        // thousand resting orders, five events a fill with balances) in one command: the
        // caller's buffer is sized for that, so what is counted is the engine's own.
        let (allocations, commands) = allocations_in_steady_state(&w, 16_384);
        assert_eq!(
            allocations, 0,
            "new types (balances {balances}): {allocations} allocations over {commands} commands"
        );
    }
}

/// Allocations over the measured part of a generated comparison workload (from the
/// start of it, or from its middle when `steady_only`) run through the harness's
/// matchbook venue (book only, or with balances and fees).
fn venue_allocations(profile: &str, venue: &str, n: usize, steady_only: bool) -> (u64, usize) {
    use matchbook_bench::script::OrderCounter;
    use matchbook_bench::venues::{self, Outcome};
    let profile = matchbook_bench::profiles::by_name(profile).expect("a profile");
    let script = matchbook_bench::profiles::generate(profile, 1, n);
    let mut engine = venues::open(venue, &script).expect("a venue");
    let (mut numbers, mut out) = (OrderCounter::default(), Outcome::default());
    let half = if steady_only {
        script.measured.len() / 2
    } else {
        0
    };
    let mut before = 0;
    for (i, line) in script.setup.iter().chain(&script.measured).enumerate() {
        if i == script.setup.len() + half {
            before = allocations();
        }
        out.clear();
        let number = numbers.number(line);
        engine.apply(line, number, &mut out, false);
    }
    (allocations() - before, script.measured.len() - half)
}

/// Prices that jump far from the touch put levels outside the ladder's window: they are
/// kept without allocating (a tree allocated a node on every split: 1,725 allocations over
/// 500,000 commands before).
#[test]
fn no_allocation_per_command_when_prices_jump() {
    for venue in ["matchbook", "matchbook-balances"] {
        let (allocations, commands) = venue_allocations("price-jumps", venue, 1_000_000, true);
        assert_eq!(
            allocations, 0,
            "price-jumps ({venue}): {allocations} allocations over {commands} commands"
        );
    }
}

/// The harness times every measured command, not only a warm half: with room made for
/// the script's orders and for the prices each book sees, no profile allocates from the
/// first measured command on (before: books' level stores grew 15 times in 1 M
/// many-markets commands, and once in exchange-core; with balances the venue's event
/// buffer of 64 grew once on a sweep).
#[test]
fn no_allocation_over_the_measured_part_of_any_profile() {
    for profile in matchbook_bench::profiles::PROFILES {
        for venue in ["matchbook", "matchbook-balances"] {
            let (allocations, commands) = venue_allocations(profile.name, venue, 200_000, false);
            assert_eq!(
                allocations, 0,
                "{} ({venue}): {allocations} allocations over {commands} commands",
                profile.name
            );
        }
    }
}

#[test]
fn the_counter_sees_allocations() {
    let before = allocations();
    let v: Vec<u64> = std::hint::black_box(Vec::with_capacity(10));
    drop(v);
    assert!(allocations() > before);
}
