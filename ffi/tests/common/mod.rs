//! What the C ABI tests share: the exchange they define and when it starts.

/// 2026-01-01, when every test exchange starts.
pub const START: i64 = 1_767_225_600_000_000_000;

/// Demo markets and two funded holders: `maker` (BTC, EUR, USD) and `taker` (EUR, USD).
pub const DEFINITION: &std::ffi::CStr = c"[[holders]]
name = \"maker\"
[[holders.accounts]]
name = \"main\"
deposits = { BTC = \"10\", EUR = \"1000000\", USD = \"1000000\" }
[[holders]]
name = \"taker\"
[[holders.accounts]]
name = \"main\"
deposits = { EUR = \"1000000\", USD = \"1000000\" }
";

/// A runtime of `config` on a manual clock starting at [`START`], market data on the engine
/// thread, `queue_capacity` commands in flight (0: the default); `config` is freed.
///
/// # Safety
/// `config` is a live configuration handle, not used again.
#[allow(dead_code, reason = "not every test binary starts a runtime")]
pub unsafe fn runtime(
    config: *mut matchbook_ffi::MbConfig,
    queue_capacity: usize,
) -> *mut matchbook_ffi::MbRuntime {
    use matchbook_ffi::runtime::{MbRuntimeOptions, mb_runtime_new};
    let options = MbRuntimeOptions {
        queue_capacity,
        manual_clock: 1,
        start_time_ns: START,
        market_data_thread: 0,
    };
    let mut runtime = std::ptr::null_mut();
    // SAFETY: a live configuration (the caller's promise) and valid out-pointers.
    unsafe {
        let status = mb_runtime_new(config, &options, &mut runtime);
        assert_eq!(status, matchbook_ffi::MbStatus::Ok, "the runtime starts");
        matchbook_ffi::config::mb_config_free(config);
    }
    runtime
}

/// The definition's maker and taker main accounts and the BTC_EUR market, as `refdata`
/// names them.
///
/// # Safety
/// `refdata` is a live reference-data handle.
#[allow(dead_code, reason = "not every test binary looks them up")]
pub unsafe fn demo_ids(refdata: *const matchbook_ffi::MbRefData) -> (u32, u32, u16) {
    use matchbook_ffi::refdata::{mb_refdata_account, mb_refdata_instrument};
    let (mut holder, mut maker, mut taker, mut btc_eur) = (0, 0, 0, 0);
    // SAFETY: a live handle (the caller's contract); the codes are NUL-terminated.
    unsafe {
        for (name, id) in [(c"maker", &mut maker), (c"taker", &mut taker)] {
            mb_refdata_account(refdata, name.as_ptr(), c"main".as_ptr(), &mut holder, id);
        }
        mb_refdata_instrument(refdata, c"BTC_EUR".as_ptr(), &mut btc_eur);
    }
    (maker, taker, btc_eur)
}
