//! What every export does at the boundary: catch panics (a Rust panic must never unwind
//! into C), keep the calling thread's last error message, check pointers, read C strings
//! and fill caller buffers.

use std::cell::RefCell;
use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::status::MbStatus;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Records `message` as the calling thread's last error and returns `status`.
pub(crate) fn fail(status: MbStatus, message: impl Into<String>) -> MbStatus {
    let message = message.into();
    LAST_ERROR.with(|e| *e.borrow_mut() = message);
    status
}

/// Runs an export's body: a panic becomes `MB_STATUS_PANIC`, an error its status (with
/// its message kept for `mb_last_error`).
pub(crate) fn guard(body: impl FnOnce() -> Result<(), MbStatus>) -> MbStatus {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => MbStatus::Ok,
        Ok(Err(status)) => {
            let known = LAST_ERROR.with(|e| !e.borrow().is_empty());
            if !known {
                fail(status, status.name().to_string_lossy());
            }
            status
        }
        Err(_) => fail(MbStatus::Panic, "panic inside matchbook"),
    }
}

/// Clears the last error at the start of a call.
pub(crate) fn clear() {
    LAST_ERROR.with(|e| e.borrow_mut().clear());
}

/// A C string argument as `&str`.
///
/// # Safety
/// `text` must be NULL or point to a NUL-terminated string valid for the call.
pub(crate) unsafe fn text<'a>(text: *const c_char, what: &str) -> Result<&'a str, MbStatus> {
    if text.is_null() {
        return Err(fail(MbStatus::NullArgument, format!("{what} is NULL")));
    }
    // SAFETY: non-NULL and NUL-terminated per the caller's contract.
    unsafe { CStr::from_ptr(text) }
        .to_str()
        .map_err(|_| fail(MbStatus::InvalidArgument, format!("{what} is not UTF-8")))
}

/// Copies the last error message into `buf` (NUL-terminated) and its length (without the
/// NUL) into `*len_out`.
///
/// # Safety
/// `buf` must be NULL or point to `capacity` writable bytes; `len_out` NULL or writable.
pub(crate) unsafe fn copy_last_error(
    buf: *mut c_char,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    let message = LAST_ERROR.with(|e| e.borrow().clone());
    let bytes = message.as_bytes();
    if !len_out.is_null() {
        // SAFETY: checked non-NULL; writable per the contract.
        unsafe { *len_out = bytes.len() };
    }
    if buf.is_null() {
        return MbStatus::NullArgument;
    }
    if capacity < bytes.len() + 1 {
        return MbStatus::BufferTooSmall;
    }
    // SAFETY: `buf` holds at least `bytes.len() + 1` bytes per the check above.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), buf, bytes.len());
        *buf.add(bytes.len()) = 0;
    }
    MbStatus::Ok
}
