//! Command constructors and reference data at the boundary.

use super::*;

#[test]
fn command_and_reference_data_exports() {
    let w = World::new();
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        check_subaccount_commands(&w);
        check_decimal_place(&w);
        check_refdata_lookups(&w);
        check_refdata_parsers(&w);
        check_refdata_format(&w);
    }
}

/// Subaccounts: the name is read at submit; NULL, too long or a bad kind refused.
unsafe fn check_subaccount_commands(w: &World) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
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
    }
}

/// `mb_cmd_place_decimal`: NULLs, more decimals than the market has, a panic, then a
/// command in the market's units.
unsafe fn check_decimal_place(w: &World) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let mut command = zeroed::<MbCommand>();
        let (code, price, amount) = (c"BTC_EUR".as_ptr(), c"60000.00".as_ptr(), c"0.5".as_ptr());
        // A buy limit order of the taker's, good till cancelled.
        let place = |refdata, code, price, amount, out| {
            mb_cmd_place_decimal(refdata, w.taker, code, 0, 0, 0, price, amount, out)
        };
        let r = w.refdata;
        assert_eq!(place(null(), code, price, amount, &mut command), NULL);
        assert_eq!(place(r, null(), price, amount, &mut command), NULL);
        assert_eq!(place(r, code, price, null(), &mut command), NULL);
        assert_eq!(place(r, code, price, amount, null_mut()), NULL);
        assert_eq!(
            place(r, code, c"60000.001".as_ptr(), amount, &mut command),
            MbStatus::InvalidArgument,
            "more decimals than the market has"
        );
        panics("mb_cmd_place_decimal", || {
            place(r, code, price, amount, &mut command)
        });
        assert_eq!(place(r, code, price, amount, &mut command), OK);
        assert_eq!(
            (command.price, command.amount, command.instrument),
            (6_000_000, 50_000, w.btc_eur)
        );
    }
}

/// Instrument, currency and account lookups: NULLs, unknown codes, panics.
unsafe fn check_refdata_lookups(w: &World) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let code = c"BTC_EUR".as_ptr();
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
    }
}

/// Price, amount and funds parsers: NULLs, bad text, unknown indexes, panics.
unsafe fn check_refdata_parsers(w: &World) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
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
    }
}

/// `mb_refdata_format`: NULLs, a buffer too small with the length needed, bad arguments.
unsafe fn check_refdata_format(w: &World) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
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
