//! Every command kind through the C ABI against the engine itself as the reference: a
//! script touching each `mb_command_kind` is applied through `mb_engine_submit`, through
//! `mb_session_submit` on the thread-safe handle, and as the equivalent Rust `Command`s
//! directly on an `Engine`; each step's status and ids must agree and the state hashes must
//! stay equal.

#![warn(clippy::too_many_lines)]
// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

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
use matchbook_ffi::config::*;
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

/// One scripted step: the C command and the Rust command it must mean.
struct Step {
    c: MbCommand,
    rust: Command,
}

fn script(maker: u32, taker: u32, btc_eur: u16, perp: u16, eur: u16) -> Vec<Step> {
    let mut steps = account_steps(taker, eur);
    steps.extend(spot_order_steps(maker, taker, btc_eur, perp));
    steps.extend(futures_and_other_steps(maker, taker, perp, eur));
    steps.extend(closing_steps(maker, taker));
    let (m, spot) = (AccountId(maker), InstrumentId(btc_eur));
    // An amend and a cancel of an order placed in the script: the maker's first bid.
    steps.push(Step {
        c: mb_cmd_place_limit(maker, btc_eur, 0, 5_000_000, 1_000, 0),
        rust: Command::PlaceOrder(NewOrder::limit(
            m,
            spot,
            Side::Buy,
            Price(5_000_000),
            Qty(1_000),
        )),
    });
    steps
}

/// Holders, subaccounts, funds, transfers and account settings.
fn account_steps(taker: u32, eur: u16) -> Vec<Step> {
    let t = AccountId(taker);
    vec![
        Step {
            c: mb_cmd_create_holder(),
            rust: Command::CreateHolder,
        },
        Step {
            c: mb_cmd_create_subaccount(1, c"sub".as_ptr(), MbAccountKind::Regular as u32),
            rust: Command::CreateSubaccount {
                holder: HolderId(1),
                name: "sub".into(),
                kind: AccountKind::Regular,
            },
        },
        Step {
            c: mb_cmd_deposit(taker, eur, 1_000),
            rust: Command::Deposit {
                account: t,
                currency: CurrencyId(eur),
                amount: 1_000,
            },
        },
        Step {
            c: mb_cmd_withdraw(taker, eur, 10),
            rust: Command::Withdraw {
                account: t,
                currency: CurrencyId(eur),
                amount: 10,
            },
        },
        Step {
            c: mb_cmd_transfer(1, taker, 3, eur, 100),
            rust: Command::Transfer {
                holder: HolderId(1),
                source: t,
                destination: AccountId(3),
                currency: CurrencyId(eur),
                amount: 100,
            },
        },
        Step {
            c: MbCommand {
                account: taker,
                stp: MbStp::CancelNewest as u32,
                ..mb_cmd_advance_time_as(MbCommandKind::SetStpMode)
            },
            rust: Command::SetStpMode {
                account: t,
                mode: StpMode::CancelNewest,
            },
        },
    ]
}

/// Orders on the spot market: every type, time in force and option.
fn spot_order_steps(maker: u32, taker: u32, btc_eur: u16, perp: u16) -> Vec<Step> {
    let (m, t) = (AccountId(maker), AccountId(taker));
    let spot = InstrumentId(btc_eur);
    let client = MbUuid { bytes: [0x11; 16] };
    let client_id = Uuid(u128::from_be_bytes([0x11; 16]));
    let bid = NewOrder::limit(t, spot, Side::Buy, Price(5_900_000), Qty(1_000));
    let mut steps = vec![
        Step {
            c: MbCommand {
                client_id: client,
                ..mb_cmd_place_limit(taker, btc_eur, 0, 5_900_000, 1_000, 0)
            },
            rust: Command::PlaceOrder(NewOrder {
                client_id: Some(client_id),
                ..bid
            }),
        },
        // Nothing to sell to it: accepted and ended at once, reported as the refusal.
        Step {
            c: mb_cmd_place_limit(
                taker,
                btc_eur,
                0,
                5_900_000,
                1_000,
                MbTimeInForce::FillOrKill as u32,
            ),
            rust: Command::PlaceOrder(bid.with_tif(TimeInForce::FillOrKill)),
        },
        Step {
            c: MbCommand {
                expire_at_ns: START + 60_000_000_000,
                ..mb_cmd_place_limit(
                    taker,
                    btc_eur,
                    0,
                    5_800_000,
                    1_000,
                    MbTimeInForce::GoodTillTime as u32,
                )
            },
            rust: Command::PlaceOrder(NewOrder {
                price: Some(Price(5_800_000)),
                time_in_force: TimeInForce::GoodTillTime,
                expire_at: Some(Timestamp(START + 60_000_000_000)),
                ..bid
            }),
        },
        Step {
            c: MbCommand {
                order_type: MbOrderType::Stop as u32,
                trigger_price: 5_500_000,
                stp: MbStp::CancelBoth as u32,
                ..mb_cmd_place_limit(maker, btc_eur, 1, 5_400_000, 1_000, 0)
            },
            rust: Command::PlaceOrder(NewOrder {
                order_type: OrderType::Stop,
                trigger_price: Some(Price(5_500_000)),
                stp: Some(StpMode::CancelBoth),
                ..NewOrder::limit(m, spot, Side::Sell, Price(5_400_000), Qty(1_000))
            }),
        },
    ];
    steps.extend(spot_cancel_steps(maker, taker, btc_eur, perp));
    steps
}

/// A market order, cancels by client id and scope and amends on the spot market, and the
/// perpetual's index.
fn spot_cancel_steps(maker: u32, taker: u32, btc_eur: u16, perp: u16) -> Vec<Step> {
    let (m, t) = (AccountId(maker), AccountId(taker));
    let (spot, fut) = (InstrumentId(btc_eur), InstrumentId(perp));
    let client = MbUuid { bytes: [0x11; 16] };
    let client_id = Uuid(u128::from_be_bytes([0x11; 16]));
    let bid = NewOrder::limit(t, spot, Side::Buy, Price(5_900_000), Qty(1_000));
    vec![
        Step {
            c: mb_cmd_place_market(maker, btc_eur, 1, 500, 5_000_000),
            rust: Command::PlaceOrder(NewOrder {
                order_type: OrderType::Market,
                time_in_force: TimeInForce::ImmediateOrCancelled,
                price: Some(Price(5_000_000)),
                ..NewOrder::limit(m, spot, Side::Sell, Price(5_000_000), Qty(500))
            }),
        },
        Step {
            c: mb_cmd_cancel_by_client_id(taker, client),
            rust: Command::CancelByClientId {
                account: t,
                client_id,
            },
        },
        Step {
            c: mb_cmd_set_instrument_state(btc_eur, MbInstrumentState::PostOnly as u32),
            rust: Command::SetInstrumentState {
                instrument: spot,
                state: InstrumentState::PostOnly,
            },
        },
        Step {
            c: mb_cmd_place_limit(taker, btc_eur, 0, 6_100_000, 1_000, 0),
            rust: Command::PlaceOrder(NewOrder {
                price: Some(Price(6_100_000)),
                ..bid
            }),
        },
        Step {
            c: mb_cmd_set_instrument_state(btc_eur, MbInstrumentState::Active as u32),
            rust: Command::SetInstrumentState {
                instrument: spot,
                state: InstrumentState::Active,
            },
        },
        Step {
            c: MbCommand {
                client_id: LISTED[1],
                ..mb_cmd_place_limit(taker, btc_eur, 0, 5_700_000, 1_000, 0)
            },
            rust: Command::PlaceOrder(NewOrder {
                price: Some(Price(5_700_000)),
                client_id: LISTED[1].to_uuid(),
                ..bid
            }),
        },
        Step {
            c: mb_cmd_cancel_client_ids(taker, LISTED.as_ptr(), LISTED.len()),
            rust: Command::CancelAll {
                account: t,
                scope: CancelScope::ClientIds(LISTED.iter().filter_map(|u| u.to_uuid()).collect()),
            },
        },
        Step {
            c: mb_cmd_cancel_all(taker, 1, btc_eur),
            rust: Command::CancelAll {
                account: t,
                scope: CancelScope::Instrument(spot),
            },
        },
        Step {
            c: mb_cmd_set_index_price(perp, 600_000),
            rust: Command::SetIndexPrice {
                instrument: fut,
                price: Price(600_000),
            },
        },
    ]
}

/// The perpetual's orders, de-risking, a BLP threshold, a liquidation.
fn futures_and_other_steps(maker: u32, taker: u32, perp: u16, eur: u16) -> Vec<Step> {
    let (m, t) = (AccountId(maker), AccountId(taker));
    let fut = InstrumentId(perp);
    vec![
        Step {
            c: mb_cmd_place_limit(maker, perp, 1, 600_000, 2_000, 0),
            rust: Command::PlaceOrder(NewOrder::limit(
                m,
                fut,
                Side::Sell,
                Price(600_000),
                Qty(2_000),
            )),
        },
        Step {
            c: mb_cmd_place_market(taker, perp, 0, 1_000, 0),
            rust: Command::PlaceOrder(NewOrder {
                order_type: OrderType::Market,
                time_in_force: TimeInForce::ImmediateOrCancelled,
                price: None,
                ..NewOrder::limit(t, fut, Side::Buy, Price(1), Qty(1_000))
            }),
        },
        Step {
            c: MbCommand {
                flag: 1,
                ..mb_cmd_place_limit(taker, perp, 0, 600_000, 500, 0)
            },
            rust: Command::PlaceOrder(NewOrder {
                reduce_only: true,
                ..NewOrder::limit(t, fut, Side::Buy, Price(600_000), Qty(500))
            }),
        },
        Step {
            c: MbCommand {
                account: 3,
                flag: 1,
                ..mb_cmd_advance_time_as(MbCommandKind::SetDerisk)
            },
            rust: Command::SetDerisk {
                account: AccountId(3),
                on: true,
            },
        },
        Step {
            c: MbCommand {
                account: 3,
                currency: eur,
                amount: 5,
                ..mb_cmd_advance_time_as(MbCommandKind::SetBlpThreshold)
            },
            rust: Command::SetBlpThreshold {
                account: AccountId(3),
                currency: CurrencyId(eur),
                amount: 5,
            },
        },
        Step {
            c: mb_cmd_liquidate(taker),
            rust: Command::Liquidate { account: t },
        },
    ]
}

/// Time passing, dead-man switches set and cleared, a cancel of everything, a subaccount
/// closed.
fn closing_steps(maker: u32, taker: u32) -> Vec<Step> {
    let (m, t) = (AccountId(maker), AccountId(taker));
    vec![
        Step {
            c: mb_cmd_advance_time(),
            rust: Command::AdvanceTime,
        },
        Step {
            c: mb_cmd_set_cancel_all_after(maker, 60_000_000_000),
            rust: Command::SetCancelAllAfter {
                account: m,
                timeout: 60_000_000_000,
            },
        },
        Step {
            c: mb_cmd_set_cancel_all_after(taker, 0),
            rust: Command::SetCancelAllAfter {
                account: t,
                timeout: 0,
            },
        },
        Step {
            c: mb_cmd_cancel_all(maker, 0, 0),
            rust: Command::CancelAll {
                account: m,
                scope: CancelScope::All,
            },
        },
        Step {
            c: MbCommand {
                account: 3,
                ..mb_cmd_advance_time_as(MbCommandKind::CloseSubaccount)
            },
            rust: Command::CloseSubaccount {
                account: AccountId(3),
            },
        },
    ]
}

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
        let mut config = null_mut();
        assert_eq!(
            mb_config_parse(DEFINITION.as_ptr(), 0, &mut config),
            MbStatus::Ok
        );
        assert_eq!(mb_config_set_start_time(config, START), MbStatus::Ok);
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
