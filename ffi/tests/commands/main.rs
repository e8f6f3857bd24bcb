//! Every command kind through the C ABI against the engine itself as the reference: a
//! script touching each `mb_command_kind` is applied through `mb_engine_submit`, through
//! `mb_session_submit` on the thread-safe handle, and as the equivalent Rust `Command`s
//! directly on an `Engine`; each step's status and ids must agree and the state hashes must
//! stay equal.

#![warn(clippy::too_many_lines)]
// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

#[path = "../common/mod.rs"]
mod common;

use std::collections::BTreeSet;
use std::ptr::{null, null_mut};

use common::{DEFINITION, START};
use matchbook::{
    AccountId, AccountKind, CancelScope, Command, CurrencyId, Engine, HolderId, InstrumentId,
    InstrumentState, NewOrder, OrderRef, OrderType, Price, Qty, Side, StpMode, TimeInForce,
    Timestamp, Uuid,
};
use matchbook_ffi::command::*;
use matchbook_ffi::constructors::*;
use matchbook_ffi::engine::*;
use matchbook_ffi::runtime::*;
use matchbook_ffi::types::*;
use matchbook_ffi::{MbCommand, MbResult, MbStatus};

/// The reference: the same definition provisioned on a plain engine at the same time.
fn reference() -> Engine {
    let exchange =
        matchbook_config::Exchange::from_toml(DEFINITION.to_str().expect("UTF-8")).expect("valid");
    let mut engine = Engine::new(exchange.engine_config().expect("config")).expect("engine");
    matchbook_config::provision_engine(
        &mut engine,
        &exchange.holders,
        Timestamp(START),
        &mut Vec::new(),
    )
    .expect("provisioned");
    engine
}

/// Client ids of the listed cancel (a list the C caller keeps alive across the submit).
static LISTED: [MbUuid; 2] = [MbUuid { bytes: [0x21; 16] }, MbUuid { bytes: [0x22; 16] }];

/// The engine's value of a C client id.
trait ToUuid {
    fn to_uuid(&self) -> Option<Uuid>;
}

impl ToUuid for MbUuid {
    fn to_uuid(&self) -> Option<Uuid> {
        Some(Uuid(u128::from_be_bytes(self.bytes)))
    }
}

mod script;

use script::{Step, script};

/// A blank command of `kind` (for kinds without a constructor of their own).
fn mb_cmd_advance_time_as(kind: MbCommandKind) -> MbCommand {
    MbCommand {
        kind: kind as u32,
        ..mb_cmd_advance_time()
    }
}

/// The status the C ABI reports for an engine result: an order accepted and ended at once
/// by its time in force reports its refusal.
fn status_of(result: &Result<matchbook::Applied, matchbook::EngineError>) -> MbStatus {
    match result {
        Ok(applied) => applied.rejected.map_or(MbStatus::Ok, MbStatus::from),
        Err(e) => MbStatus::from(*e),
    }
}

#[test]
fn every_command_kind_means_what_the_engine_means() {
    let mut direct = reference();
    // SAFETY: valid pointers throughout; handles freed at the end.
    unsafe {
        let paths = open_paths();
        let (engine, runtime, session) = (paths.engine, paths.runtime, paths.session);

        let btc_eur = direct.instrument_by_code("BTC_EUR").expect("market").0;
        let perp = direct.instrument_by_code("BTC_USD_PERP").expect("market").0;
        let eur = direct.currency_by_code("EUR").expect("EUR").0;
        let hash = |e: *const MbEngine| {
            let mut h = 0u64;
            assert_eq!(mb_engine_state_hash(e, &mut h), MbStatus::Ok);
            h
        };
        assert_eq!(hash(engine), direct.state_hash(), "same start");
        let mut steps = script(0, 1, btc_eur, perp, eur);
        let (mut kinds, placed, statuses) = run_script(&paths, &mut direct, &mut steps);
        assert!(
            statuses.contains(&(MbStatus::InsufficientLiquidity as u32)),
            "the fill-or-kill step was reported as its refusal: {statuses:?}"
        );
        let last = *placed.last().expect("orders were placed");
        amend_and_cancel(&paths, &mut direct, last, &mut kinds);
        assert_eq!(kinds.len(), 19, "every command kind was exercised");
        let mut session_hash = 0u64;
        assert_eq!(
            mb_session_state_hash(session, &mut session_hash),
            MbStatus::Ok
        );
        assert_eq!(
            session_hash,
            direct.state_hash(),
            "the threaded engine agrees bit for bit"
        );
        assert_eq!(hash(engine), direct.state_hash());
        assert_eq!(
            mb_engine_state_hash(null(), &mut session_hash),
            MbStatus::NullArgument
        );
        assert_eq!(
            mb_session_state_hash(session, null_mut()),
            MbStatus::NullArgument
        );
        // The session was opened with its events dropped: a poll says so (it answered an
        // empty success, as if nothing had happened).
        let mut len = 0usize;
        assert_eq!(
            mb_session_poll_events(session, null_mut(), 0, &mut len),
            MbStatus::EventsOff
        );
        mb_session_free(session);
        mb_runtime_free(runtime);
        mb_engine_free(engine);
    }
}

/// The three ways in: a single-threaded engine, and a session on a runtime, both on the
/// demo definition at `START`.
struct Paths {
    engine: *mut MbEngine,
    runtime: *mut MbRuntime,
    session: *mut MbSession,
}

unsafe fn open_paths() -> Paths {
    // SAFETY: valid pointers throughout.
    unsafe {
        let config = common::config();
        let mut engine = null_mut();
        assert_eq!(mb_engine_new(config, &mut engine), MbStatus::Ok);
        let runtime = common::runtime(config, 0);
        let mut session = null_mut();
        assert_eq!(mb_session_new(runtime, 0, &mut session), MbStatus::Ok);
        Paths {
            engine,
            runtime,
            session,
        }
    }
}

/// Every step through the engine and the session, each against the Rust engine `direct`
/// at the same time: the same status, ids and state hash. The command kinds used, the
/// orders placed and the statuses seen.
unsafe fn run_script(
    paths: &Paths,
    direct: &mut Engine,
    steps: &mut [Step],
) -> (BTreeSet<u32>, Vec<OrderRef>, BTreeSet<u32>) {
    let Paths {
        engine,
        runtime,
        session,
    } = *paths;
    let mut sink = Vec::new();
    let hash = |e: *const MbEngine| {
        let mut h = 0u64;
        // SAFETY: a live engine, a writable out.
        assert_eq!(unsafe { mb_engine_state_hash(e, &mut h) }, MbStatus::Ok);
        h
    };
    // SAFETY: live handles; each step's command valid for the call.
    unsafe {
        let mut kinds = BTreeSet::new();
        let mut placed = Vec::new();
        let mut statuses = BTreeSet::new();
        for (i, step) in steps.iter_mut().enumerate() {
            let time = START + 1_000 * (i as i64 + 1);
            let mut via_c = MbResult::default();
            let status = mb_engine_submit(engine, time, &step.c, &mut via_c);
            let mut via_session = MbResult::default();
            assert_eq!(mb_runtime_set_time(runtime, time), MbStatus::Ok);
            let session_status = mb_session_submit(session, &step.c, &mut via_session);
            let expected = direct.apply(&step.rust, Timestamp(time), &mut sink);
            assert_eq!(status, status_of(&expected), "step {i}: {:?}", step.rust);
            assert_eq!(session_status, status, "step {i}: the session agrees");
            statuses.insert(status as u32);
            if let Ok(applied) = expected {
                assert_eq!(
                    via_c.order.id,
                    applied.order.map_or(0, |o| o.id),
                    "step {i}"
                );
                assert_eq!(
                    via_c.account,
                    applied.account.map_or(0, |a| a.0),
                    "step {i}"
                );
                assert_eq!(via_session, via_c, "step {i}");
                if let Some(o) = applied.order {
                    placed.push(o);
                }
            }
            assert_eq!(
                hash(engine),
                direct.state_hash(),
                "step {i}: {:?}",
                step.rust
            );
            kinds.insert(step.c.kind);
        }
        (kinds, placed, statuses)
    }
}

/// An amend and two cancels of order `last`, through both paths, each as `direct` says.
unsafe fn amend_and_cancel(
    paths: &Paths,
    direct: &mut Engine,
    last: OrderRef,
    kinds: &mut BTreeSet<u32>,
) {
    let Paths {
        engine,
        runtime,
        session,
    } = *paths;
    let mut sink = Vec::new();
    // SAFETY: live handles; the list outlives the submits.
    unsafe {
        let handle = MbOrderRef {
            id: last.id,
            slot: last.slot,
        };
        let handles = [handle];
        let time = START + 1_000_000;
        assert_eq!(mb_runtime_set_time(runtime, time), MbStatus::Ok);
        for (c, rust) in [
            (
                mb_cmd_amend(0, handle, 2_000, 5_000_100),
                Command::AmendOrder {
                    account: AccountId(0),
                    order: OrderRef {
                        id: last.id,
                        slot: last.slot,
                    },
                    amount: Some(Qty(2_000)),
                    price: Some(Price(5_000_100)),
                },
            ),
            (
                mb_cmd_cancel_orders(0, handles.as_ptr(), handles.len()),
                Command::CancelAll {
                    account: AccountId(0),
                    scope: CancelScope::Orders(vec![OrderRef {
                        id: last.id,
                        slot: last.slot,
                    }]),
                },
            ),
            (
                mb_cmd_cancel(0, handle),
                Command::CancelOrder {
                    account: AccountId(0),
                    order: OrderRef {
                        id: last.id,
                        slot: last.slot,
                    },
                },
            ),
        ] {
            let status = mb_engine_submit(engine, time, &c, null_mut());
            assert_eq!(mb_session_submit(session, &c, null_mut()), status);
            assert_eq!(
                status,
                status_of(&direct.apply(&rust, Timestamp(time), &mut sink))
            );
            kinds.insert(c.kind);
        }
    }
}
