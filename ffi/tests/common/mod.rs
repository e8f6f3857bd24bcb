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

/// The shared definition parsed, starting at [`START`] (the caller frees it or hands it
/// to a runtime).
#[allow(dead_code, reason = "not every test binary builds one")]
pub fn config() -> *mut matchbook_ffi::MbConfig {
    use matchbook_ffi::MbStatus;
    use matchbook_ffi::config::{mb_config_parse, mb_config_set_start_time};
    let mut config = std::ptr::null_mut();
    // SAFETY: a NUL-terminated definition and a writable out pointer.
    unsafe {
        let parsed = mb_config_parse(DEFINITION.as_ptr(), 0, &mut config);
        assert_eq!(parsed, MbStatus::Ok);
        assert_eq!(mb_config_set_start_time(config, START), MbStatus::Ok);
    }
    config
}

/// An engine of the shared definition at [`START`], `adjust` applied to its configuration
/// first (which is then freed).
#[allow(dead_code, reason = "not every test binary builds one")]
pub fn engine_with(
    adjust: impl FnOnce(*mut matchbook_ffi::MbConfig),
) -> *mut matchbook_ffi::MbEngine {
    use matchbook_ffi::config::mb_config_free;
    use matchbook_ffi::engine::mb_engine_new;
    let config = config();
    adjust(config);
    let mut engine = std::ptr::null_mut();
    // SAFETY: a live configuration, freed once the engine is built.
    unsafe {
        assert_eq!(
            mb_engine_new(config, &mut engine),
            matchbook_ffi::MbStatus::Ok
        );
        mb_config_free(config);
    }
    engine
}

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

/// Submits `command` on `session`: the order it placed when the engine took it, else
/// none (a refusal is part of the flows that use it).
#[allow(dead_code, reason = "not every test binary submits through a session")]
pub fn submit_order(
    session: *mut matchbook_ffi::runtime::MbSession,
    command: &matchbook_ffi::command::MbCommand,
) -> Option<matchbook_ffi::MbOrderRef> {
    use matchbook_ffi::MbStatus;
    use matchbook_ffi::runtime::mb_session_submit;
    // SAFETY: a zeroed result is a valid value; live session and command per the caller.
    unsafe {
        let mut result = std::mem::zeroed::<matchbook_ffi::command::MbResult>();
        (mb_session_submit(session, command, &mut result) == MbStatus::Ok).then_some(result.order)
    }
}
