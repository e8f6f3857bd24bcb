//! Read-your-writes through the thread-safe C handle: every producer thread, on its own
//! `mb_session`, finds the order it was just told was placed and no longer finds the one it
//! was just told was cancelled, although reads are answered by the runtime's market stage
//! while other threads keep the matching thread busy.

#![warn(clippy::too_many_lines)]
// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

mod common;

use std::ptr::null_mut;

use common::DEFINITION;
use matchbook_ffi::command::*;
use matchbook_ffi::config::*;
use matchbook_ffi::constructors::*;
use matchbook_ffi::query::MbOrder;
use matchbook_ffi::refdata::*;
use matchbook_ffi::runtime::*;
use matchbook_ffi::status::MbStatus;

const OK: MbStatus = MbStatus::Ok;

/// The runtime pointer, handed to producer threads (the runtime is thread-safe).
#[derive(Clone, Copy)]
struct Shared(*mut MbRuntime);
// SAFETY: `mb_runtime` is the thread-safe handle: any thread may open a session on it.
unsafe impl Send for Shared {}

/// One producer: place a bid, read it back, cancel it, read again; `rounds` times.
///
/// # Safety
/// `runtime` live for the whole call.
unsafe fn produce(runtime: Shared, account: u32, instrument: u16, rounds: i64) {
    // SAFETY: the caller keeps the runtime alive; every pointer is valid.
    unsafe {
        let mut session = null_mut();
        assert_eq!(mb_session_new(runtime.0, 0, &mut session), OK);
        for i in 0..rounds {
            let bid = mb_cmd_place_limit(account, instrument, 0, 5_000_000 + i, 1_000, 0);
            let mut placed = MbResult::default();
            assert_eq!(mb_session_submit(session, &bid, &mut placed), OK);
            // SAFETY: a plain repr(C) struct of integers, valid all zero.
            let mut order: MbOrder = std::mem::zeroed();
            assert_eq!(
                mb_session_order(session, account, placed.order, &mut order),
                OK,
                "round {i}: the order just placed is found"
            );
            assert_eq!(order.order, placed.order);
            let cancel = mb_cmd_cancel(account, placed.order);
            assert_eq!(mb_session_submit(session, &cancel, null_mut()), OK);
            assert_eq!(
                mb_session_order(session, account, placed.order, &mut order),
                MbStatus::OrderNotFound,
                "round {i}: the order just cancelled is gone"
            );
        }
        mb_session_free(session);
    }
}

#[test]
fn every_session_reads_its_own_commands() {
    // SAFETY: valid pointers throughout; everything is freed at the end.
    unsafe {
        let mut config = null_mut();
        assert_eq!(mb_config_parse(DEFINITION.as_ptr(), 0, &mut config), OK);
        let runtime = common::runtime(config, 64);
        let refdata = mb_runtime_refdata(runtime);
        let (mut holder, mut maker, mut btc_eur) = (0, 0, 0);
        let (name, main) = (c"maker".as_ptr(), c"main".as_ptr());
        assert_eq!(
            mb_refdata_account(refdata, name, main, &mut holder, &mut maker),
            OK
        );
        assert_eq!(
            mb_refdata_instrument(refdata, c"BTC_EUR".as_ptr(), &mut btc_eur),
            OK
        );
        let shared = Shared(runtime);
        let producers: Vec<_> = (0..3)
            .map(|_| {
                // SAFETY: the runtime outlives the threads (joined below).
                std::thread::spawn(move || produce(shared, maker, btc_eur, 150))
            })
            .collect();
        for p in producers {
            p.join().expect("producer");
        }
        mb_runtime_free(runtime);
    }
}
