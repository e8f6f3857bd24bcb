//! The boundary rules, export by export, called from Rust as a C caller would: a NULL for
//! each pointer argument returns `MB_STATUS_NULL_ARGUMENT`, each caller buffer too small
//! returns `MB_STATUS_BUFFER_TOO_SMALL` with the length needed (and writes nothing), and a
//! panic forced inside each export returns `MB_STATUS_PANIC`. Functions without a status
//! (`mb_cmd_*` value constructors, `mb_*_free`, `mb_*_refdata`) are checked for NULL
//! safety where they take pointers.

// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

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
        let mut config = null_mut();
        let mut engine = null_mut();
        // SAFETY: valid pointers throughout; freed in Drop.
        unsafe {
            assert_eq!(mb_config_parse(DEFINITION.as_ptr(), 0, &mut config), OK);
            assert_eq!(mb_config_set_start_time(config, START), OK);
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

#[test]
fn configuration_exports() {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let mut config = null_mut();
        assert_eq!(mb_config_new_demo(null_mut()), NULL);
        panics("mb_config_new_demo", || mb_config_new_demo(&mut config));
        assert_eq!(mb_config_new_demo(&mut config), OK);

        assert_eq!(mb_config_parse(null(), 0, &mut config), NULL);
        assert_eq!(mb_config_parse(DEFINITION.as_ptr(), 0, null_mut()), NULL);
        assert_eq!(
            mb_config_parse(DEFINITION.as_ptr(), 2, &mut config),
            MbStatus::InvalidArgument
        );
        let mut parsed = null_mut();
        assert_eq!(
            mb_config_parse(c"{\"holderz\": []}".as_ptr(), 1, &mut parsed),
            MbStatus::InvalidConfig
        );
        assert!(parsed.is_null(), "nothing is created on failure");
        panics("mb_config_parse", || {
            mb_config_parse(DEFINITION.as_ptr(), 0, &mut parsed)
        });

        let (code, name) = (c"XAU".as_ptr(), c"Gold".as_ptr());
        assert_eq!(mb_config_add_currency(null_mut(), code, 2, name), NULL);
        assert_eq!(mb_config_add_currency(config, null(), 2, name), NULL);
        assert_eq!(mb_config_add_currency(config, code, 2, null()), NULL);
        panics("mb_config_add_currency", || {
            mb_config_add_currency(config, code, 2, name)
        });

        let mut spec = MbInstrumentSpec {
            code: c"XAU_EUR".as_ptr(),
            base: c"XAU".as_ptr(),
            quote: c"EUR".as_ptr(),
            amount_precision: 2,
            market_precision: 2,
            min_size: c"1".as_ptr(),
            min_price: c"0.01".as_ptr(),
            max_price: c"100000".as_ptr(),
            kind: c"SPOT".as_ptr(),
            futures: null(),
        };
        assert_eq!(mb_config_add_instrument(null_mut(), &spec), NULL);
        assert_eq!(mb_config_add_instrument(config, null()), NULL);
        spec.min_size = null();
        assert_eq!(mb_config_add_instrument(config, &spec), NULL);
        spec.min_size = c"1".as_ptr();
        panics("mb_config_add_instrument", || {
            mb_config_add_instrument(config, &spec)
        });

        let tier = [c"SPOT", c"EUR", c"0", c"0.1", c"0.2"].map(CStr::as_ptr);
        for i in 0..tier.len() {
            let mut args = tier;
            args[i] = null();
            assert_eq!(
                mb_config_add_fee_tier(config, args[0], args[1], args[2], args[3], args[4]),
                NULL,
                "tier arg {i}"
            );
        }
        assert_eq!(
            mb_config_add_fee_tier(null_mut(), tier[0], tier[1], tier[2], tier[3], tier[4]),
            NULL
        );
        panics("mb_config_add_fee_tier", || {
            mb_config_add_fee_tier(config, tier[0], tier[1], tier[2], tier[3], tier[4])
        });

        assert_eq!(mb_config_add_holder(null_mut(), c"a".as_ptr()), NULL);
        assert_eq!(mb_config_add_holder(config, null()), NULL);
        panics("mb_config_add_holder", || {
            mb_config_add_holder(config, c"a".as_ptr())
        });
        assert_eq!(mb_config_add_holder(config, c"a".as_ptr()), OK);
        assert_eq!(
            mb_config_add_holder(config, c"a".as_ptr()),
            MbStatus::InvalidArgument
        );

        let (h, a, cur, amt) = (
            c"a".as_ptr(),
            c"main".as_ptr(),
            c"EUR".as_ptr(),
            c"5".as_ptr(),
        );
        assert_eq!(
            mb_config_add_deposit(null_mut(), h, a, null(), cur, amt),
            NULL
        );
        assert_eq!(
            mb_config_add_deposit(config, null(), a, null(), cur, amt),
            NULL
        );
        assert_eq!(
            mb_config_add_deposit(config, h, null(), null(), cur, amt),
            NULL
        );
        assert_eq!(
            mb_config_add_deposit(config, h, a, null(), null(), amt),
            NULL
        );
        assert_eq!(
            mb_config_add_deposit(config, c"nobody".as_ptr(), a, null(), cur, amt),
            MbStatus::UnknownHolder
        );
        panics("mb_config_add_deposit", || {
            mb_config_add_deposit(config, h, a, null(), cur, amt)
        });

        assert_eq!(mb_config_set_max_open_orders(null_mut(), 5), NULL);
        panics("mb_config_set_max_open_orders", || {
            mb_config_set_max_open_orders(config, 5)
        });
        assert_eq!(mb_config_set_start_time(null_mut(), 1), NULL);
        panics("mb_config_set_start_time", || {
            mb_config_set_start_time(config, 1)
        });
        assert_eq!(mb_config_set_market_data(null_mut(), 1), NULL);
        panics("mb_config_set_market_data", || {
            mb_config_set_market_data(config, 1)
        });

        // What was added builds: the new market and the holder's deposit are there.
        assert_eq!(mb_config_add_currency(config, code, 2, name), OK);
        assert_eq!(
            mb_config_add_currency(config, c"EUR".as_ptr(), 2, c"Euro".as_ptr()),
            OK
        );
        assert_eq!(mb_config_add_instrument(config, &spec), OK);
        assert_eq!(
            mb_config_add_fee_tier(config, tier[0], tier[1], tier[2], tier[3], tier[4]),
            OK
        );
        assert_eq!(mb_config_add_deposit(config, h, a, null(), cur, amt), OK);
        let mut engine = null_mut();
        let mut len = 0usize;
        assert_eq!(mb_engine_new(null(), &mut engine), NULL);
        assert_eq!(mb_engine_new(config, null_mut()), NULL);
        panics("mb_engine_new", || mb_engine_new(config, &mut engine));
        let built = mb_engine_new(config, &mut engine);
        let mut reason = [0 as c_char; 256];
        mb_last_error(reason.as_mut_ptr(), reason.len(), &mut len);
        assert_eq!(built, OK, "{:?}", CStr::from_ptr(reason.as_ptr()));
        let refdata = mb_engine_refdata(engine);
        let mut id = 9;
        assert_eq!(
            mb_refdata_instrument(refdata, c"XAU_EUR".as_ptr(), &mut id),
            OK
        );
        assert_eq!(id, 0, "the added market replaced the demo set");
        let (mut holder, mut account) = (0, 0);
        assert_eq!(
            mb_refdata_account(refdata, h, a, &mut holder, &mut account),
            OK
        );
        let mut balances = [zeroed::<MbBalance>(); 2];
        let mut n = 0;
        assert_eq!(
            mb_engine_balances(engine, account, balances.as_mut_ptr(), 2, &mut n),
            OK
        );
        assert_eq!(
            (n, balances[1].available, balances[1].scale),
            (2, 500_000_000, 8)
        );
        mb_engine_free(engine);

        assert_eq!(mb_engine_new_demo(null_mut()), NULL);
        panics("mb_engine_new_demo", || mb_engine_new_demo(&mut engine));
        mb_config_free(config);
        mb_config_free(null_mut());
        mb_engine_free(null_mut());
        assert!(mb_engine_refdata(null()).is_null());
    }
}

#[test]
fn command_and_reference_data_exports() {
    let w = World::new();
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        // Subaccounts: the name is read at submit; NULL, too long or a bad kind refused.
        let submit = |c: &MbCommand| mb_engine_submit(w.engine, START + 5, c, null_mut());
        let mut result = MbResult::default();
        assert_eq!(submit(&mb_cmd_create_subaccount(0, null(), 0)), NULL);
        let long = std::ffi::CString::new("n".repeat(MB_MAX_NAME + 1)).expect("no NUL");
        assert_eq!(
            submit(&mb_cmd_create_subaccount(0, long.as_ptr(), 0)),
            MbStatus::InvalidAccountName
        );
        assert_eq!(
            submit(&mb_cmd_create_subaccount(0, c"hedge".as_ptr(), 7)),
            MbStatus::InvalidArgument
        );
        let hedge = mb_cmd_create_subaccount(0, c"hedge".as_ptr(), MbAccountKind::Blp as u32);
        assert_eq!(
            mb_engine_submit(w.engine, START + 5, &hedge, &mut result),
            OK
        );
        assert!(result.account > w.taker, "a new account id");

        let mut command = zeroed::<MbCommand>();
        let (code, price, amount) = (c"BTC_EUR".as_ptr(), c"60000.00".as_ptr(), c"0.5".as_ptr());
        assert_eq!(
            mb_cmd_place_decimal(null(), w.taker, code, 0, 0, 0, price, amount, &mut command),
            NULL
        );
        assert_eq!(
            mb_cmd_place_decimal(
                w.refdata,
                w.taker,
                null(),
                0,
                0,
                0,
                price,
                amount,
                &mut command
            ),
            NULL
        );
        assert_eq!(
            mb_cmd_place_decimal(
                w.refdata,
                w.taker,
                code,
                0,
                0,
                0,
                price,
                null(),
                &mut command
            ),
            NULL
        );
        assert_eq!(
            mb_cmd_place_decimal(w.refdata, w.taker, code, 0, 0, 0, price, amount, null_mut()),
            NULL
        );
        assert_eq!(
            mb_cmd_place_decimal(
                w.refdata,
                w.taker,
                code,
                0,
                0,
                0,
                c"60000.001".as_ptr(),
                amount,
                &mut command
            ),
            MbStatus::InvalidArgument,
            "more decimals than the market has"
        );
        panics("mb_cmd_place_decimal", || {
            mb_cmd_place_decimal(
                w.refdata,
                w.taker,
                code,
                0,
                0,
                0,
                price,
                amount,
                &mut command,
            )
        });
        assert_eq!(
            mb_cmd_place_decimal(
                w.refdata,
                w.taker,
                code,
                0,
                0,
                0,
                price,
                amount,
                &mut command
            ),
            OK
        );
        assert_eq!(
            (command.price, command.amount, command.instrument),
            (6_000_000, 50_000, w.btc_eur)
        );

        let mut id = 0u16;
        let mut scale = 0u8;
        assert_eq!(mb_refdata_instrument(null(), code, &mut id), NULL);
        assert_eq!(mb_refdata_instrument(w.refdata, null(), &mut id), NULL);
        assert_eq!(mb_refdata_instrument(w.refdata, code, null_mut()), NULL);
        assert_eq!(
            mb_refdata_instrument(w.refdata, c"NOPE".as_ptr(), &mut id),
            MbStatus::UnknownInstrument
        );
        panics("mb_refdata_instrument", || {
            mb_refdata_instrument(w.refdata, code, &mut id)
        });
        let eur = c"EUR".as_ptr();
        assert_eq!(mb_refdata_currency(null(), eur, &mut id, &mut scale), NULL);
        assert_eq!(
            mb_refdata_currency(w.refdata, null(), &mut id, &mut scale),
            NULL
        );
        assert_eq!(
            mb_refdata_currency(w.refdata, eur, null_mut(), &mut scale),
            NULL
        );
        assert_eq!(
            mb_refdata_currency(w.refdata, eur, &mut id, null_mut()),
            NULL
        );
        panics("mb_refdata_currency", || {
            mb_refdata_currency(w.refdata, eur, &mut id, &mut scale)
        });
        let (mut holder, mut account) = (0, 0);
        let (h, a) = (c"maker".as_ptr(), c"main".as_ptr());
        assert_eq!(
            mb_refdata_account(null(), h, a, &mut holder, &mut account),
            NULL
        );
        assert_eq!(
            mb_refdata_account(w.refdata, null(), a, &mut holder, &mut account),
            NULL
        );
        assert_eq!(
            mb_refdata_account(w.refdata, h, null(), &mut holder, &mut account),
            NULL
        );
        assert_eq!(
            mb_refdata_account(w.refdata, h, a, null_mut(), &mut account),
            NULL
        );
        assert_eq!(
            mb_refdata_account(w.refdata, h, a, &mut holder, null_mut()),
            NULL
        );
        assert_eq!(
            mb_refdata_account(w.refdata, h, c"spare".as_ptr(), &mut holder, &mut account),
            MbStatus::UnknownAccount
        );
        panics("mb_refdata_account", || {
            mb_refdata_account(w.refdata, h, a, &mut holder, &mut account)
        });

        let mut value = 0i64;
        type Parse =
            unsafe extern "C" fn(*const MbRefData, u16, *const c_char, *mut i64) -> MbStatus;
        for (name, parse, index) in [
            ("mb_refdata_price", mb_refdata_price as Parse, w.btc_eur),
            ("mb_refdata_amount", mb_refdata_amount, w.btc_eur),
            ("mb_refdata_funds", mb_refdata_funds, 0),
        ] {
            assert_eq!(
                parse(null(), index, c"1".as_ptr(), &mut value),
                NULL,
                "{name}"
            );
            assert_eq!(parse(w.refdata, index, null(), &mut value), NULL, "{name}");
            assert_eq!(
                parse(w.refdata, index, c"1".as_ptr(), null_mut()),
                NULL,
                "{name}"
            );
            assert_eq!(
                parse(w.refdata, index, c"abc".as_ptr(), &mut value),
                MbStatus::InvalidArgument,
                "{name}"
            );
            assert_eq!(
                parse(w.refdata, 999, c"1".as_ptr(), &mut value) as i32 / 1000,
                1,
                "{name}: unknown index"
            );
            panics(name, || parse(w.refdata, index, c"1".as_ptr(), &mut value));
        }

        let mut text = [0 as c_char; 16];
        let mut len = 0usize;
        assert_eq!(
            mb_refdata_format(
                null(),
                0,
                w.btc_eur,
                6_000_050,
                text.as_mut_ptr(),
                16,
                &mut len
            ),
            NULL
        );
        assert_eq!(
            mb_refdata_format(w.refdata, 0, w.btc_eur, 6_000_050, null_mut(), 16, &mut len),
            NULL
        );
        assert_eq!(
            mb_refdata_format(
                w.refdata,
                0,
                w.btc_eur,
                6_000_050,
                text.as_mut_ptr(),
                16,
                null_mut()
            ),
            NULL
        );
        assert_eq!(
            mb_refdata_format(
                w.refdata,
                0,
                w.btc_eur,
                6_000_050,
                text.as_mut_ptr(),
                8,
                &mut len
            ),
            SMALL
        );
        assert_eq!(
            (len, text[0]),
            (9, 0),
            "the size needed, NUL included, reported; nothing written"
        );
        panics("mb_refdata_format", || {
            mb_refdata_format(w.refdata, 0, w.btc_eur, 1, text.as_mut_ptr(), 16, &mut len)
        });
        assert_eq!(
            mb_refdata_format(
                w.refdata,
                0,
                w.btc_eur,
                6_000_050,
                text.as_mut_ptr(),
                9,
                &mut len
            ),
            OK
        );
        assert_eq!(CStr::from_ptr(text.as_ptr()).to_str(), Ok("60000.50"));
        assert_eq!(len, 9, "a buffer of the reported size fits");
        assert_eq!(
            mb_refdata_format(w.refdata, 7, 0, 1, text.as_mut_ptr(), 16, &mut len),
            MbStatus::InvalidArgument
        );
    }
}

#[test]
fn single_threaded_engine_exports() {
    let w = World::new();
    let e = w.engine;
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let cancel = mb_cmd_cancel(w.maker, MbOrderRef { id: 999, slot: 999 });
        let mut result = MbResult::default();
        assert_eq!(mb_engine_submit(null_mut(), 0, &cancel, &mut result), NULL);
        assert_eq!(mb_engine_submit(e, 0, null(), &mut result), NULL);
        assert_eq!(
            mb_engine_submit(e, START + 10, &cancel, null_mut()),
            MbStatus::OrderNotFound
        );
        let mut bad = cancel;
        bad.kind = 99;
        assert_eq!(
            mb_engine_submit(e, START + 10, &bad, null_mut()),
            MbStatus::InvalidArgument
        );
        panics("mb_engine_submit", || {
            mb_engine_submit(e, START + 10, &cancel, null_mut())
        });

        // Listed cancels read their list at submit: NULL with entries is refused, an
        // empty list needs no pointer.
        assert_eq!(
            mb_engine_submit(
                e,
                START + 10,
                &mb_cmd_cancel_orders(w.maker, null(), 2),
                null_mut()
            ),
            NULL
        );
        assert_eq!(
            mb_engine_submit(
                e,
                START + 10,
                &mb_cmd_cancel_client_ids(w.maker, null(), 1),
                null_mut()
            ),
            NULL
        );
        assert_eq!(
            mb_engine_submit(
                e,
                START + 10,
                &mb_cmd_cancel_orders(w.maker, null(), 0),
                null_mut()
            ),
            OK
        );
        let mut hash = 0u64;
        assert_eq!(mb_engine_state_hash(null(), &mut hash), NULL);
        assert_eq!(mb_engine_state_hash(e, null_mut()), NULL);
        panics("mb_engine_state_hash", || {
            mb_engine_state_hash(e, &mut hash)
        });

        // The fast paths: the same checks, and a placed order can be cancelled once.
        let mut order = MbOrderRef::default();
        let place = |order: *mut MbOrderRef| {
            mb_engine_place_limit(
                e,
                START + 10,
                w.maker,
                w.btc_eur,
                0,
                5_000_000,
                100,
                3,
                order,
            )
        };
        assert_eq!(
            mb_engine_place_limit(
                null_mut(),
                START + 10,
                w.maker,
                w.btc_eur,
                0,
                5_000_000,
                100,
                3,
                &mut order
            ),
            NULL
        );
        assert_eq!(
            mb_engine_place_limit(
                e,
                START + 10,
                w.maker,
                w.btc_eur,
                9,
                5_000_000,
                100,
                3,
                &mut order
            ),
            MbStatus::InvalidArgument
        );
        assert_eq!(
            mb_engine_place_limit(
                e,
                START + 10,
                w.maker,
                w.btc_eur,
                0,
                5_000_000,
                100,
                9,
                &mut order
            ),
            MbStatus::InvalidArgument
        );
        panics("mb_engine_place_limit", || place(&mut order));
        assert_eq!(place(null_mut()), OK, "the handle is optional");
        let mut open = [zeroed::<MbOrder>(); 8];
        let mut n = 0usize;
        assert_eq!(
            mb_engine_open_orders(e, w.maker, open.as_mut_ptr(), 8, &mut n),
            OK
        );
        let unnamed = open[..n]
            .iter()
            .find(|o| o.price == 5_000_000)
            .expect("placed");
        assert_eq!(mb_engine_cancel(e, START + 10, w.maker, unnamed.order), OK);
        assert_eq!(place(&mut order), OK);
        assert_ne!(order, MbOrderRef::default());
        assert_eq!(
            mb_engine_cancel(null_mut(), START + 10, w.maker, order),
            NULL
        );
        panics("mb_engine_cancel", || {
            mb_engine_cancel(e, START + 10, w.maker, order)
        });
        assert_eq!(
            mb_engine_cancel(e, START + 10, w.taker, order),
            MbStatus::OrderNotFound
        );
        assert_eq!(mb_engine_cancel(e, START + 10, w.maker, order), OK);
        assert_eq!(
            mb_engine_cancel(e, START + 10, w.maker, order),
            MbStatus::OrderNotFound
        );

        let mut events = [zeroed::<MbEvent>(); 64];
        let mut len = 0usize;
        assert_eq!(
            mb_engine_poll_events(null_mut(), events.as_mut_ptr(), 64, &mut len),
            NULL
        );
        assert_eq!(
            mb_engine_poll_events(e, events.as_mut_ptr(), 64, null_mut()),
            NULL
        );
        assert_eq!(mb_engine_poll_events(e, null_mut(), 64, &mut len), NULL);
        assert_eq!(
            mb_engine_poll_events(e, events.as_mut_ptr(), 1, &mut len),
            SMALL
        );
        let pending = len;
        assert!(pending > 1 && pending <= events.len(), "{pending} events");
        panics("mb_engine_poll_events", || {
            mb_engine_poll_events(e, events.as_mut_ptr(), 64, &mut len)
        });
        assert_eq!(
            mb_engine_poll_events(e, events.as_mut_ptr(), pending, &mut len),
            OK
        );
        assert_eq!(len, pending);
        assert_eq!(
            mb_engine_poll_events(e, null_mut(), 0, &mut len),
            OK,
            "nothing pending: no buffer needed"
        );
        assert_eq!(mb_engine_clear_events(null_mut()), NULL);
        panics("mb_engine_clear_events", || mb_engine_clear_events(e));
    }
    check_queries(&w, &EngineQueries(e));
}

#[test]
fn thread_safe_handle_exports() {
    let w = World::new();
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let mut config = null_mut();
        assert_eq!(mb_config_parse(DEFINITION.as_ptr(), 0, &mut config), OK);
        let options = MbRuntimeOptions {
            queue_capacity: 16,
            manual_clock: 1,
            start_time_ns: 1_767_225_600_000_000_000,
            market_data_thread: 1,
        };
        let mut runtime = null_mut();
        assert_eq!(mb_runtime_new(null(), &options, &mut runtime), NULL);
        assert_eq!(mb_runtime_new(config, &options, null_mut()), NULL);
        panics("mb_runtime_new", || {
            mb_runtime_new(config, &options, &mut runtime)
        });
        assert_eq!(mb_runtime_new(config, &options, &mut runtime), OK);
        mb_config_free(config);
        assert_eq!(mb_runtime_refdata(runtime), mb_runtime_refdata(runtime));
        assert!(mb_runtime_refdata(null()).is_null());

        assert_eq!(mb_runtime_set_time(null(), 0), NULL);
        assert_eq!(
            mb_runtime_set_time(runtime, 0),
            MbStatus::InvalidArgument,
            "never backwards"
        );
        panics("mb_runtime_set_time", || {
            mb_runtime_set_time(runtime, options.start_time_ns + 1)
        });

        let mut session = null_mut();
        assert_eq!(mb_session_new(null(), 1, &mut session), NULL);
        assert_eq!(mb_session_new(runtime, 1, null_mut()), NULL);
        panics("mb_session_new", || {
            mb_session_new(runtime, 1, &mut session)
        });
        assert_eq!(mb_session_new(runtime, 1, &mut session), OK);

        // The same trades as the single-threaded world, through the session.
        let place = |c: MbCommand| {
            let mut r = MbResult::default();
            assert_eq!(mb_session_submit(session, &c, &mut r), OK);
            r
        };
        let placed = {
            let mut bid = mb_cmd_place_limit(w.maker, w.btc_eur, 0, 5_990_000, 10_000, 0);
            bid.client_id = w.client_id;
            place(bid)
        };
        assert_eq!(
            placed.time_ns, options.start_time_ns,
            "time from the manual clock"
        );
        place(mb_cmd_place_limit(
            w.maker, w.btc_eur, 1, 6_010_000, 10_000, 0,
        ));
        assert_eq!(mb_runtime_set_time(runtime, options.start_time_ns + 1), OK);
        place(mb_cmd_place_limit(
            w.taker, w.btc_eur, 0, 6_010_000, 1_000, 1,
        ));
        place(mb_cmd_set_index_price(w.perp, 600_000));
        place(mb_cmd_place_limit(w.maker, w.perp, 1, 600_000, 1_000, 0));
        place(mb_cmd_place_market(w.taker, w.perp, 0, 1_000, 0));

        let cancel = mb_cmd_cancel(w.maker, MbOrderRef { id: 999, slot: 999 });
        assert_eq!(mb_session_submit(null_mut(), &cancel, null_mut()), NULL);
        assert_eq!(mb_session_submit(session, null(), null_mut()), NULL);
        assert_eq!(
            mb_session_submit(session, &cancel, null_mut()),
            MbStatus::OrderNotFound
        );
        panics("mb_session_submit", || {
            mb_session_submit(session, &cancel, null_mut())
        });

        let mut events = [zeroed::<MbEvent>(); 64];
        let mut len = 0usize;
        assert_eq!(
            mb_session_poll_events(null_mut(), events.as_mut_ptr(), 64, &mut len),
            NULL
        );
        assert_eq!(
            mb_session_poll_events(session, events.as_mut_ptr(), 64, null_mut()),
            NULL
        );
        assert_eq!(
            mb_session_poll_events(session, events.as_mut_ptr(), 1, &mut len),
            SMALL
        );
        panics("mb_session_poll_events", || {
            mb_session_poll_events(session, events.as_mut_ptr(), 64, &mut len)
        });
        assert_eq!(
            mb_session_poll_events(session, events.as_mut_ptr(), 64, &mut len),
            OK
        );
        assert!(len > 5, "the session's own events");

        let mut hash = 0u64;
        assert_eq!(mb_session_state_hash(null(), &mut hash), NULL);
        assert_eq!(mb_session_state_hash(session, null_mut()), NULL);
        panics("mb_session_state_hash", || {
            mb_session_state_hash(session, &mut hash)
        });
        check_queries(&w, &SessionQueries(session));

        // Freed runtime: the session answers STOPPED instead of hanging.
        mb_runtime_free(runtime);
        mb_runtime_free(null_mut());
        assert_eq!(
            mb_session_submit(session, &cancel, null_mut()),
            MbStatus::Stopped
        );
        let mut top = MbTop::default();
        assert_eq!(
            mb_session_book_top(session, w.btc_eur, &mut top),
            MbStatus::Stopped
        );
        mb_session_free(session);
        mb_session_free(null_mut());
    }
}

/// The query exports of one handle kind, as function pointers over an opaque handle.
trait Queries {
    unsafe fn balances(
        &self,
        h: bool,
        account: u32,
        buf: *mut MbBalance,
        cap: usize,
        len: *mut usize,
    ) -> MbStatus;
    unsafe fn open_orders(
        &self,
        h: bool,
        account: u32,
        buf: *mut MbOrder,
        cap: usize,
        len: *mut usize,
    ) -> MbStatus;
    unsafe fn order(&self, h: bool, account: u32, order: MbOrderRef, out: *mut MbOrder)
    -> MbStatus;
    unsafe fn order_by_client_id(
        &self,
        h: bool,
        account: u32,
        id: MbUuid,
        out: *mut MbOrder,
    ) -> MbStatus;
    unsafe fn top(&self, h: bool, instrument: u16, out: *mut MbTop) -> MbStatus;
    #[allow(clippy::too_many_arguments)]
    unsafe fn levels(
        &self,
        h: bool,
        instrument: u16,
        depth: usize,
        b: *mut MbLevel,
        bc: usize,
        bl: *mut usize,
        a: *mut MbLevel,
        ac: usize,
        al: *mut usize,
    ) -> MbStatus;
    #[allow(clippy::too_many_arguments)]
    unsafe fn orders(
        &self,
        h: bool,
        instrument: u16,
        depth: usize,
        b: *mut MbBookOrder,
        bc: usize,
        bl: *mut usize,
        a: *mut MbBookOrder,
        ac: usize,
        al: *mut usize,
    ) -> MbStatus;
    #[allow(clippy::too_many_arguments)]
    unsafe fn candles(
        &self,
        h: bool,
        instrument: u16,
        unit: u32,
        period: u32,
        from: i64,
        to: i64,
        buf: *mut MbCandle,
        cap: usize,
        len: *mut usize,
    ) -> MbStatus;
    unsafe fn ticker(&self, h: bool, instrument: u16, out: *mut MbTicker) -> MbStatus;
    unsafe fn positions(
        &self,
        h: bool,
        account: u32,
        buf: *mut MbPosition,
        cap: usize,
        len: *mut usize,
    ) -> MbStatus;
}

struct EngineQueries(*mut MbEngine);
struct SessionQueries(*mut MbSession);

macro_rules! queries {
    ($t:ty, $handle:ty, $balances:ident, $open:ident, $order:ident, $by_client:ident, $top:ident, $levels:ident, $orders:ident, $candles:ident, $ticker:ident, $positions:ident) => {
        impl $t {
            fn handle(&self, valid: bool) -> *const $handle {
                if valid { self.0 } else { null() }
            }
        }
        impl Queries for $t {
            unsafe fn balances(
                &self,
                h: bool,
                account: u32,
                buf: *mut MbBalance,
                cap: usize,
                len: *mut usize,
            ) -> MbStatus {
                unsafe { $balances(self.handle(h), account, buf, cap, len) }
            }
            unsafe fn open_orders(
                &self,
                h: bool,
                account: u32,
                buf: *mut MbOrder,
                cap: usize,
                len: *mut usize,
            ) -> MbStatus {
                unsafe { $open(self.handle(h), account, buf, cap, len) }
            }
            unsafe fn order(
                &self,
                h: bool,
                account: u32,
                order: MbOrderRef,
                out: *mut MbOrder,
            ) -> MbStatus {
                unsafe { $order(self.handle(h), account, order, out) }
            }
            unsafe fn order_by_client_id(
                &self,
                h: bool,
                account: u32,
                id: MbUuid,
                out: *mut MbOrder,
            ) -> MbStatus {
                unsafe { $by_client(self.handle(h), account, id, out) }
            }
            unsafe fn top(&self, h: bool, instrument: u16, out: *mut MbTop) -> MbStatus {
                unsafe { $top(self.handle(h), instrument, out) }
            }
            unsafe fn levels(
                &self,
                h: bool,
                instrument: u16,
                depth: usize,
                b: *mut MbLevel,
                bc: usize,
                bl: *mut usize,
                a: *mut MbLevel,
                ac: usize,
                al: *mut usize,
            ) -> MbStatus {
                unsafe { $levels(self.handle(h), instrument, depth, b, bc, bl, a, ac, al) }
            }
            unsafe fn orders(
                &self,
                h: bool,
                instrument: u16,
                depth: usize,
                b: *mut MbBookOrder,
                bc: usize,
                bl: *mut usize,
                a: *mut MbBookOrder,
                ac: usize,
                al: *mut usize,
            ) -> MbStatus {
                unsafe { $orders(self.handle(h), instrument, depth, b, bc, bl, a, ac, al) }
            }
            unsafe fn candles(
                &self,
                h: bool,
                instrument: u16,
                unit: u32,
                period: u32,
                from: i64,
                to: i64,
                buf: *mut MbCandle,
                cap: usize,
                len: *mut usize,
            ) -> MbStatus {
                unsafe {
                    $candles(
                        self.handle(h),
                        instrument,
                        unit,
                        period,
                        from,
                        to,
                        buf,
                        cap,
                        len,
                    )
                }
            }
            unsafe fn ticker(&self, h: bool, instrument: u16, out: *mut MbTicker) -> MbStatus {
                unsafe { $ticker(self.handle(h), instrument, out) }
            }
            unsafe fn positions(
                &self,
                h: bool,
                account: u32,
                buf: *mut MbPosition,
                cap: usize,
                len: *mut usize,
            ) -> MbStatus {
                unsafe { $positions(self.handle(h), account, buf, cap, len) }
            }
        }
    };
}

queries!(
    EngineQueries,
    MbEngine,
    mb_engine_balances,
    mb_engine_open_orders,
    mb_engine_order,
    mb_engine_order_by_client_id,
    mb_engine_book_top,
    mb_engine_book_levels,
    mb_engine_book_orders,
    mb_engine_candles,
    mb_engine_ticker,
    mb_engine_positions
);
queries!(
    SessionQueries,
    MbSession,
    mb_session_balances,
    mb_session_open_orders,
    mb_session_order,
    mb_session_order_by_client_id,
    mb_session_book_top,
    mb_session_book_levels,
    mb_session_book_orders,
    mb_session_candles,
    mb_session_ticker,
    mb_session_positions
);

/// Every query of one handle against the world's state (the same on both handles): NULL
/// handle and outs, short buffers, a forced panic, then the values.
fn check_queries(w: &World, q: &impl Queries) {
    const T: i64 = 1_767_225_600_000_000_000;
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let mut len = 0usize;
        let mut balances = [zeroed::<MbBalance>(); 16];
        assert_eq!(
            q.balances(false, w.taker, balances.as_mut_ptr(), 16, &mut len),
            NULL
        );
        assert_eq!(
            q.balances(true, w.taker, balances.as_mut_ptr(), 16, null_mut()),
            NULL
        );
        assert_eq!(q.balances(true, w.taker, null_mut(), 16, &mut len), NULL);
        assert_eq!(
            q.balances(true, w.taker, null_mut(), 0, &mut len),
            SMALL,
            "NULL, 0 asks the length"
        );
        assert_eq!(
            q.balances(true, w.taker, balances.as_mut_ptr(), 1, &mut len),
            SMALL
        );
        let needed = len;
        assert_eq!(
            q.balances(true, 999, balances.as_mut_ptr(), 16, &mut len),
            MbStatus::UnknownAccount
        );
        panics("balances", || {
            q.balances(true, w.taker, balances.as_mut_ptr(), 16, &mut len)
        });
        assert_eq!(
            q.balances(true, w.taker, balances.as_mut_ptr(), needed, &mut len),
            OK
        );
        let btc = balances
            .iter()
            .position(|b| b.available == 998_500)
            .expect("0.01 BTC less the 0.15% fee");
        assert_eq!(balances[btc].scale, 8);

        let mut orders = [zeroed::<MbOrder>(); 8];
        assert_eq!(
            q.open_orders(false, w.maker, orders.as_mut_ptr(), 8, &mut len),
            NULL
        );
        assert_eq!(
            q.open_orders(true, w.maker, orders.as_mut_ptr(), 8, null_mut()),
            NULL
        );
        assert_eq!(
            q.open_orders(true, w.maker, orders.as_mut_ptr(), 1, &mut len),
            SMALL
        );
        assert_eq!(len, 2, "the bid and the rest of the ask");
        panics("open_orders", || {
            q.open_orders(true, w.maker, orders.as_mut_ptr(), 8, &mut len)
        });
        assert_eq!(
            q.open_orders(true, w.maker, orders.as_mut_ptr(), 8, &mut len),
            OK
        );
        assert!(
            orders[..2]
                .iter()
                .any(|o| o.amount == 10_000 && o.filled == 1_000)
        );

        let mut one = zeroed::<MbOrder>();
        assert_eq!(q.order(false, w.maker, w.order, &mut one), NULL);
        assert_eq!(q.order(true, w.maker, w.order, null_mut()), NULL);
        assert_eq!(
            q.order(true, w.taker, w.order, &mut one),
            MbStatus::OrderNotFound,
            "someone else's"
        );
        panics("order", || q.order(true, w.maker, w.order, &mut one));
        assert_eq!(q.order(true, w.maker, w.order, &mut one), OK);
        assert_eq!((one.price, one.client_id), (5_990_000, w.client_id));
        assert_eq!(
            q.order_by_client_id(false, w.maker, w.client_id, &mut one),
            NULL
        );
        assert_eq!(
            q.order_by_client_id(true, w.maker, w.client_id, null_mut()),
            NULL
        );
        assert_eq!(
            q.order_by_client_id(true, w.maker, MbUuid::default(), &mut one),
            MbStatus::InvalidArgument
        );
        panics("order_by_client_id", || {
            q.order_by_client_id(true, w.maker, w.client_id, &mut one)
        });
        assert_eq!(
            q.order_by_client_id(true, w.maker, w.client_id, &mut one),
            OK
        );
        assert_eq!(one.order, w.order);

        let mut top = MbTop::default();
        assert_eq!(q.top(false, w.btc_eur, &mut top), NULL);
        assert_eq!(q.top(true, w.btc_eur, null_mut()), NULL);
        assert_eq!(q.top(true, 999, &mut top), MbStatus::UnknownInstrument);
        panics("top", || q.top(true, w.btc_eur, &mut top));
        assert_eq!(q.top(true, w.btc_eur, &mut top), OK);
        assert_eq!(
            (top.bid, top.bid_amount, top.ask, top.ask_amount),
            (5_990_000, 10_000, 6_010_000, 9_000)
        );

        let (mut bids, mut asks) = ([zeroed::<MbLevel>(); 4], [zeroed::<MbLevel>(); 4]);
        let (mut nb, mut na) = (0usize, 0usize);
        let (b, a) = (bids.as_mut_ptr(), asks.as_mut_ptr());
        assert_eq!(
            q.levels(false, w.btc_eur, 4, b, 4, &mut nb, a, 4, &mut na),
            NULL
        );
        assert_eq!(
            q.levels(true, w.btc_eur, 4, b, 4, null_mut(), a, 4, &mut na),
            NULL
        );
        assert_eq!(
            q.levels(true, w.btc_eur, 4, b, 4, &mut nb, a, 4, null_mut()),
            NULL
        );
        assert_eq!(
            q.levels(true, w.btc_eur, 4, b, 4, &mut nb, a, 0, &mut na),
            SMALL
        );
        assert_eq!(na, 1);
        panics("levels", || {
            q.levels(true, w.btc_eur, 4, b, 4, &mut nb, a, 4, &mut na)
        });
        assert_eq!(
            q.levels(true, w.btc_eur, 4, b, 4, &mut nb, a, 4, &mut na),
            OK
        );
        assert_eq!((nb, na, bids[0].orders, asks[0].amount), (1, 1, 1, 9_000));

        let (mut bids, mut asks) = ([zeroed::<MbBookOrder>(); 4], [zeroed::<MbBookOrder>(); 4]);
        let (b, a) = (bids.as_mut_ptr(), asks.as_mut_ptr());
        assert_eq!(
            q.orders(false, w.btc_eur, 4, b, 4, &mut nb, a, 4, &mut na),
            NULL
        );
        assert_eq!(
            q.orders(true, w.btc_eur, 4, null_mut(), 4, &mut nb, a, 4, &mut na),
            NULL
        );
        assert_eq!(
            q.orders(true, w.btc_eur, 4, b, 0, &mut nb, a, 4, &mut na),
            SMALL
        );
        panics("orders", || {
            q.orders(true, w.btc_eur, 4, b, 4, &mut nb, a, 4, &mut na)
        });
        assert_eq!(
            q.orders(true, w.btc_eur, 4, b, 4, &mut nb, a, 4, &mut na),
            OK
        );
        assert_eq!((bids[0].order, bids[0].account), (w.order, w.maker));

        let mut candles = [zeroed::<MbCandle>(); 4];
        let c = candles.as_mut_ptr();
        let (from, to) = (T - 60_000_000_000, T + 60_000_000_000);
        assert_eq!(
            q.candles(false, w.btc_eur, 0, 1, from, to, c, 4, &mut len),
            NULL
        );
        assert_eq!(
            q.candles(true, w.btc_eur, 0, 1, from, to, c, 4, null_mut()),
            NULL
        );
        assert_eq!(
            q.candles(true, w.btc_eur, 0, 7, from, to, c, 4, &mut len),
            MbStatus::InvalidArgument
        );
        assert_eq!(
            q.candles(true, w.btc_eur, 9, 1, from, to, c, 4, &mut len),
            MbStatus::InvalidArgument
        );
        assert_eq!(
            q.candles(true, w.btc_eur, 0, 1, from, to, c, 0, &mut len),
            SMALL
        );
        panics("candles", || {
            q.candles(true, w.btc_eur, 0, 1, from, to, c, 4, &mut len)
        });
        assert_eq!(
            q.candles(true, w.btc_eur, 0, 1, from, to, c, 4, &mut len),
            OK
        );
        let traded = candles[..len]
            .iter()
            .find(|c| c.total_amount > 0)
            .expect("the trade's candle");
        assert_eq!(
            (traded.open, traded.close, traded.total_amount),
            (6_010_000, 6_010_000, 1_000)
        );

        let mut ticker = MbTicker::default();
        assert_eq!(q.ticker(false, w.btc_eur, &mut ticker), NULL);
        assert_eq!(q.ticker(true, w.btc_eur, null_mut()), NULL);
        panics("ticker", || q.ticker(true, w.btc_eur, &mut ticker));
        assert_eq!(q.ticker(true, w.btc_eur, &mut ticker), OK);
        assert_eq!(
            (ticker.last, ticker.trades, ticker.bid),
            (6_010_000, 1, 5_990_000)
        );

        let mut positions = [zeroed::<MbPosition>(); 2];
        assert_eq!(
            q.positions(false, w.taker, positions.as_mut_ptr(), 2, &mut len),
            NULL
        );
        assert_eq!(
            q.positions(true, w.taker, positions.as_mut_ptr(), 2, null_mut()),
            NULL
        );
        assert_eq!(
            q.positions(true, w.taker, positions.as_mut_ptr(), 0, &mut len),
            SMALL
        );
        panics("positions", || {
            q.positions(true, w.taker, positions.as_mut_ptr(), 2, &mut len)
        });
        assert_eq!(
            q.positions(true, w.taker, positions.as_mut_ptr(), 2, &mut len),
            OK
        );
        assert_eq!(
            (
                len,
                positions[0].instrument,
                positions[0].size,
                positions[0].entry_price
            ),
            (1, w.perp, 1_000, 600_000)
        );
    }
}

#[test]
fn diagnostics_exports() {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        assert_eq!(mb_debug_panic(), MbStatus::Panic);
        let mut message = [0 as c_char; 8];
        let mut len = 0usize;
        assert_eq!(
            mb_last_error(message.as_mut_ptr(), message.len(), &mut len),
            SMALL
        );
        assert!(len > 8, "the message length is reported");
        assert_eq!(
            mb_last_error(null_mut(), 0, &mut len),
            SMALL,
            "NULL, 0 asks the length"
        );
        assert_eq!(mb_last_error(null_mut(), 64, &mut len), NULL);
        let mut whole = vec![0 as c_char; len + 1];
        assert_eq!(
            mb_last_error(whole.as_mut_ptr(), whole.len(), null_mut()),
            OK
        );
        assert!(
            CStr::from_ptr(whole.as_ptr())
                .to_string_lossy()
                .contains("panic")
        );
        // Like errno: a successful call leaves the last failure's message in place.
        let mut config = null_mut();
        assert_eq!(mb_config_new_demo(&mut config), OK);
        let mut after = vec![0 as c_char; 256];
        assert_eq!(mb_last_error(after.as_mut_ptr(), after.len(), &mut len), OK);
        assert!(
            CStr::from_ptr(after.as_ptr())
                .to_string_lossy()
                .contains("panic")
        );
        // A refusal names its reason; one without a message of its own, its status.
        let (nobody, main) = (c"nobody".as_ptr(), c"main".as_ptr());
        let refused = mb_config_add_deposit(config, nobody, main, null(), null(), null());
        assert_eq!(refused, MbStatus::UnknownHolder);
        assert_eq!(mb_last_error(after.as_mut_ptr(), after.len(), &mut len), OK);
        assert_eq!(
            CStr::from_ptr(after.as_ptr()).to_str(),
            Ok("no holder nobody")
        );
        mb_config_free(config);
        assert_eq!(mb_session_submit(null_mut(), null(), null_mut()), NULL);
        assert_eq!(mb_last_error(after.as_mut_ptr(), after.len(), &mut len), OK);
        assert_eq!(
            CStr::from_ptr(after.as_ptr()).to_str(),
            Ok("session is NULL")
        );
        let name = |code: i32| {
            CStr::from_ptr(mb_status_str(code))
                .to_str()
                .map(str::to_owned)
        };
        assert_eq!(name(MbStatus::Panic as i32).as_deref(), Ok("PANIC"));
        assert_eq!(name(2002).as_deref(), Ok("INSUFFICIENT_BALANCE"));
        assert_eq!(name(12345).as_deref(), Ok("UNKNOWN"));
    }
}
