//! Status names, the thread-local last error, and the forced-panic test hook.

use std::ffi::c_char;

#[cfg(feature = "debug-panic")]
use crate::boundary::guard;
use crate::status::MbStatus;

/// The version of the ABI this header describes. It changes whenever a struct's layout, a
/// function's signature or an enumerator's value changes, so a program built against one
/// header can refuse a library of another: `mb_abi_version() == MB_ABI_VERSION`.
pub const MB_ABI_VERSION: u32 = 2;

/// The ABI version of the linked library (compare with `MB_ABI_VERSION` of the header the
/// program was compiled with); any thread.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_abi_version() -> u32 {
    MB_ABI_VERSION
}

/// The name of a status code: its `mb_status` enumerator without the `MB_STATUS_` prefix
/// (`"PRICE_OUT_OF_RANGE"`, `"BUFFER_TOO_SMALL"`), distinct for every code, or
/// `"UNKNOWN"`; static storage, any thread.
///
/// Threads: any thread, concurrently.
/// Ownership: static storage; never free it.
#[unsafe(no_mangle)]
pub extern "C" fn mb_status_str(status: i32) -> *const c_char {
    MbStatus::from_code(status).map_or(c"UNKNOWN".as_ptr(), |s| s.name().as_ptr())
}

/// The wire code REST and Python report for a status (`"INVALID_PRICE"` for both
/// `MB_STATUS_INVALID_PRICE` and `MB_STATUS_PRICE_OUT_OF_RANGE`; the ABI's own statuses
/// give their name), or `"UNKNOWN"`; static storage, any thread.
///
/// Threads: any thread, concurrently.
/// Ownership: static storage; never free it.
#[unsafe(no_mangle)]
pub extern "C" fn mb_status_wire_code(status: i32) -> *const c_char {
    MbStatus::from_code(status).map_or(c"UNKNOWN".as_ptr(), |s| s.wire_code().as_ptr())
}

/// Copies the message of the calling thread's last failed call (NUL-terminated) into
/// `buf`. Like `errno`, successful calls leave it as it was.
///
/// # Safety
/// `buf` NULL or `capacity` writable bytes; `len_out` NULL or writable.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_last_error(
    buf: *mut c_char,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    // SAFETY: forwarded contract.
    unsafe { crate::boundary::copy_last_error(buf, capacity, len_out) }
}

/// Test hook: panics inside the boundary, to prove a panic becomes `MB_STATUS_PANIC`
/// (built only with the `debug-panic` feature, which release builds leave off).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[cfg(feature = "debug-panic")]
#[unsafe(no_mangle)]
pub extern "C" fn mb_debug_panic() -> MbStatus {
    guard(|| panic!("forced by mb_debug_panic"))
}

/// Test hook: the calling thread's next call of any export with a status panics inside
/// the export's boundary, to prove each one turns a panic into `MB_STATUS_PANIC`
/// (`debug-panic` feature only).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[cfg(feature = "debug-panic")]
#[unsafe(no_mangle)]
pub extern "C" fn mb_debug_panic_next_call() {
    crate::boundary::panic_next_call();
}

/// Test hook: the calling thread's next use of a handle panics just after the call
/// entered it, to prove the handle is poisoned (`debug-panic` feature only).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[cfg(feature = "debug-panic")]
#[unsafe(no_mangle)]
pub extern "C" fn mb_debug_panic_next_use() {
    crate::boundary::panic_next_use();
}
