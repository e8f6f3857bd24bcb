//! The boundary rules, export by export, called from Rust as a C caller would: a NULL for
//! each pointer argument returns `MB_STATUS_NULL_ARGUMENT`, each caller buffer too small
//! returns `MB_STATUS_BUFFER_TOO_SMALL` with the length needed (and writes nothing), and a
//! panic forced inside each export returns `MB_STATUS_PANIC`. Functions without a status
//! (`mb_cmd_*` value constructors, `mb_*_free`, `mb_*_refdata`) are checked for NULL
//! safety where they take pointers.

#![warn(clippy::too_many_lines)]
// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

#[path = "../common/mod.rs"]
mod common;

use std::ffi::{CStr, c_char};
use std::ptr::{null, null_mut};

use common::{DEFINITION, START};
use matchbook_ffi::command::*;
use matchbook_ffi::config::*;
use matchbook_ffi::constructors::*;
use matchbook_ffi::diagnostics::*;
use matchbook_ffi::engine::*;
use matchbook_ffi::query::*;
use matchbook_ffi::refdata::*;
use matchbook_ffi::runtime::*;
use matchbook_ffi::types::*;
use matchbook_ffi::{MbEvent, MbStatus};

const NULL: MbStatus = MbStatus::NullArgument;
const SMALL: MbStatus = MbStatus::BufferTooSmall;
const OK: MbStatus = MbStatus::Ok;

/// Runs `call` with a panic armed and checks it came back as `MB_STATUS_PANIC`.
fn panics(name: &str, call: impl FnOnce() -> MbStatus) {
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        // The forced panics are expected: keep them out of the log, report any other.
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let forced = info
                .payload()
                .downcast_ref::<&str>()
                .is_some_and(|m| m.starts_with("forced by"));
            if !forced {
                report(info);
            }
        }));
    });
    mb_debug_panic_next_call();
    assert_eq!(call(), MbStatus::Panic, "{name}: forced panic");
}

fn zeroed<T>() -> T {
    // SAFETY: only used for the plain repr(C) structs of the ABI, all-zero valid.
    unsafe { std::mem::zeroed() }
}

/// The engine setup every check starts from: a definition, an engine with two resting
/// orders and a trade on BTC_EUR, a futures position, and the ids to address them.
struct World {
    config: *mut MbConfig,
    engine: *mut MbEngine,
    refdata: *const MbRefData,
    maker: u32,
    taker: u32,
    btc_eur: u16,
    perp: u16,
    order: MbOrderRef,
    client_id: MbUuid,
}

impl World {
    fn new() -> Self {
        let config = common::config();
        let mut engine = null_mut();
        // SAFETY: valid pointers throughout; freed in Drop.
        unsafe {
            assert_eq!(mb_engine_new(config, &mut engine), OK);
            let refdata = mb_engine_refdata(engine);
            let (mut holder, mut maker, mut taker) = (0, 0, 0);
            assert_eq!(
                mb_refdata_account(
                    refdata,
                    c"maker".as_ptr(),
                    c"main".as_ptr(),
                    &mut holder,
                    &mut maker
                ),
                OK
            );
            assert_eq!(
                mb_refdata_account(
                    refdata,
                    c"taker".as_ptr(),
                    c"main".as_ptr(),
                    &mut holder,
                    &mut taker
                ),
                OK
            );
            let (mut btc_eur, mut perp) = (0, 0);
            assert_eq!(
                mb_refdata_instrument(refdata, c"BTC_EUR".as_ptr(), &mut btc_eur),
                OK
            );
            assert_eq!(
                mb_refdata_instrument(refdata, c"BTC_USD_PERP".as_ptr(), &mut perp),
                OK
            );
            let client_id = MbUuid { bytes: [7; 16] };
            let mut bid = mb_cmd_place_limit(maker, btc_eur, 0, 5_990_000, 10_000, 0);
            bid.client_id = client_id;
            let mut placed = MbResult::default();
            let t = START;
            assert_eq!(mb_engine_submit(engine, t, &bid, &mut placed), OK);
            let ask = mb_cmd_place_limit(maker, btc_eur, 1, 6_010_000, 10_000, 0);
            assert_eq!(mb_engine_submit(engine, t, &ask, null_mut()), OK);
            let lift = mb_cmd_place_limit(taker, btc_eur, 0, 6_010_000, 1_000, 1);
            assert_eq!(mb_engine_submit(engine, t + 1, &lift, null_mut()), OK);
            for c in [
                mb_cmd_set_index_price(perp, 600_000),
                mb_cmd_place_limit(maker, perp, 1, 600_000, 1_000, 0),
                mb_cmd_place_market(taker, perp, 0, 1_000, 0),
            ] {
                assert_eq!(mb_engine_submit(engine, t + 2, &c, null_mut()), OK);
            }
            Self {
                config,
                engine,
                refdata,
                maker,
                taker,
                btc_eur,
                perp,
                order: placed.order,
                client_id,
            }
        }
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // SAFETY: both from their constructors, freed once.
        unsafe {
            mb_engine_free(self.engine);
            mb_config_free(self.config);
        }
    }
}

mod commands;
mod configuration;
mod diagnostics;
mod engine;
mod handle;
mod queries;
