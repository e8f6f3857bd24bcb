//! The configuration exports at the boundary.

use super::*;

#[test]
fn configuration_exports() {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let mut config = null_mut();
        assert_eq!(mb_config_new_demo(null_mut()), NULL);
        panics("mb_config_new_demo", || mb_config_new_demo(&mut config));
        assert_eq!(mb_config_new_demo(&mut config), OK);

        check_parse_exports(&mut config);

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

        let tier = check_fee_tier_exports(config);

        check_holder_exports(config);

        let (h, a, cur, amt) = (
            c"a".as_ptr(),
            c"main".as_ptr(),
            c"EUR".as_ptr(),
            c"5".as_ptr(),
        );
        check_deposit_exports(config, (h, a, cur, amt));

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
        let mut engine = build_and_check(config, h, a);

        assert_eq!(mb_engine_new_demo(null_mut()), NULL);
        panics("mb_engine_new_demo", || mb_engine_new_demo(&mut engine));
        mb_config_free(config);
        mb_config_free(null_mut());
        mb_engine_free(null_mut());
        assert!(mb_engine_refdata(null()).is_null());
    }
}

/// `mb_config_add_deposit`'s boundary: each NULL, an unknown holder, a panic.
unsafe fn check_deposit_exports(
    config: *mut MbConfig,
    (h, a, cur, amt): (*const c_char, *const c_char, *const c_char, *const c_char),
) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
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
    }
}

/// The engine `config` builds (its constructor's boundary checked): the added market is
/// there, and holder `h`'s account `a` holds its 5 EUR deposit. Returns the engine freed.
unsafe fn build_and_check(
    config: *mut MbConfig,
    h: *const c_char,
    a: *const c_char,
) -> *mut MbEngine {
    // SAFETY: as above.
    unsafe {
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
        null_mut()
    }
}

/// `mb_config_add_fee_tier`'s boundary: each NULL, a panic. Returns the tier's arguments.
unsafe fn check_fee_tier_exports(config: *mut MbConfig) -> [*const c_char; 5] {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
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
        tier
    }
}

/// `mb_config_add_holder`'s boundary: each NULL, a panic, a holder added, a second of
/// the same name refused.
unsafe fn check_holder_exports(config: *mut MbConfig) {
    // SAFETY: as above.
    unsafe {
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
    }
}

/// `mb_config_parse`'s boundary: each NULL, a bad flag, a bad definition creating
/// nothing, a panic.
unsafe fn check_parse_exports(config: &mut *mut MbConfig) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        assert_eq!(mb_config_parse(null(), 0, config), NULL);
        assert_eq!(mb_config_parse(DEFINITION.as_ptr(), 0, null_mut()), NULL);
        assert_eq!(
            mb_config_parse(DEFINITION.as_ptr(), 2, config),
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
    }
}
