//! What every export does at the boundary: catch panics (a Rust panic must never unwind
//! into C), keep the calling thread's last error message, check pointers, read C strings
//! and fill caller buffers.
//!
//! A panic leaves the handle the call was using half-updated, so the handle is poisoned:
//! every later call on it answers `MB_STATUS_PANIC` until it is freed. Each handle carries
//! a [`Poison`] flag that its accessor enters; the guard poisons the one entered when the
//! call panics. The panic's message is kept for `mb_last_error`, never printed: a panic
//! hook (installed once, chained to the host's) stays silent for panics inside a guard.
//!
//! A handle meant for one thread at a time (an engine, a session) is a [`OneUser`]: a call
//! that enters it while a call on another thread is inside it is refused with
//! `MB_STATUS_IN_USE`, where the two would otherwise race on the engine's memory; the
//! guard lets go of the handle when the call returns, whatever it returns.

use std::cell::{Cell, RefCell};
use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::status::MbStatus;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
    #[cfg(feature = "debug-panic")]
    static PANIC_NEXT: Cell<bool> = const { Cell::new(false) };
    #[cfg(feature = "debug-panic")]
    static PANIC_NEXT_USE: Cell<bool> = const { Cell::new(false) };
    /// Set when `fail` recorded a message during the current call.
    static FRESH: Cell<bool> = const { Cell::new(false) };
    /// The poison flag of the handle the current call entered (null: none yet).
    static IN_USE: Cell<*const Poison> = const { Cell::new(std::ptr::null()) };
    /// The busy flag of the one-user handle the current call holds (null: none).
    static HELD: Cell<*const AtomicBool> = const { Cell::new(std::ptr::null()) };
    /// Whether this thread is inside a guard (its panics are not printed).
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    /// The message of the last panic caught on this thread.
    static PANIC_MESSAGE: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Makes the calling thread's next guarded call panic inside its guard, before it uses
/// any handle (test hook).
#[cfg(feature = "debug-panic")]
pub(crate) fn panic_next_call() {
    PANIC_NEXT.with(|p| p.set(true));
}

/// Makes the calling thread's next use of a handle panic right after entering it, as a
/// panic inside the library would (test hook).
#[cfg(feature = "debug-panic")]
pub(crate) fn panic_next_use() {
    PANIC_NEXT_USE.with(|p| p.set(true));
}

/// A handle's poison flag: set when a call using the handle panicked.
#[derive(Debug, Default)]
pub(crate) struct Poison(AtomicBool);

impl Poison {
    /// Refuses a poisoned handle; otherwise marks it as the handle this call uses.
    pub(crate) fn enter(&self, what: &str) -> Result<(), MbStatus> {
        if self.0.load(Ordering::Acquire) {
            return Err(fail(
                MbStatus::Panic,
                format!("{what} is unusable: an earlier call panicked while using it; free it"),
            ));
        }
        IN_USE.with(|h| h.set(std::ptr::from_ref(self)));
        #[cfg(feature = "debug-panic")]
        if PANIC_NEXT_USE.with(|p| p.replace(false)) {
            panic!("forced by mb_debug_panic_next_use");
        }
        Ok(())
    }
}

/// A handle used by one thread at a time (an engine, a session): its poison flag and
/// whether a call is inside it now.
#[derive(Debug)]
pub(crate) struct OneUser {
    poison: Poison,
    busy: AtomicBool,
    /// Calls from a second thread are refused (the default); off, they are the caller's
    /// to prevent (`mb_config_set_thread_checks(config, 0)`).
    checked: bool,
}

impl Default for OneUser {
    fn default() -> Self {
        Self::new(true)
    }
}

impl OneUser {
    /// A fresh handle's flags; `checked` false leaves calls from two threads unrefused.
    pub(crate) fn new(checked: bool) -> Self {
        Self {
            poison: Poison::default(),
            busy: AtomicBool::new(false),
            checked,
        }
    }

    /// Whether calls from a second thread are refused.
    pub(crate) fn checked(&self) -> bool {
        self.checked
    }

    /// Refuses a poisoned handle, or one a call on another thread is inside; otherwise
    /// holds it until the current call returns. A call holds at most one such handle;
    /// entering it again in the same call is allowed.
    #[inline]
    pub(crate) fn enter(&self, what: &str) -> Result<(), MbStatus> {
        self.poison.enter(what)?;
        if !self.checked {
            return Ok(());
        }
        let busy = std::ptr::from_ref(&self.busy);
        if self.busy.swap(true, Ordering::Acquire) {
            // Busy: refused unless it is this call that holds it.
            return if HELD.with(Cell::get) == busy {
                Ok(())
            } else {
                Err(in_use(what))
            };
        }
        debug_assert!(
            HELD.with(Cell::get).is_null(),
            "a call holds two one-user handles"
        );
        HELD.with(|h| h.set(busy));
        Ok(())
    }
}

/// Enters the one-user handle behind `handle`, whose flags lie `flags_at` bytes into it
/// (`offset_of!`), before any reference to the handle is made: another thread may be
/// inside it, and only its flags (atomics) may be touched meanwhile.
#[inline]
pub(crate) fn enter_one_user<T>(
    handle: *const T,
    flags_at: usize,
    what: &str,
) -> Result<(), MbStatus> {
    if handle.is_null() {
        return Err(fail(MbStatus::NullArgument, format!("{what} is NULL")));
    }
    let flags = handle.wrapping_byte_add(flags_at).cast::<OneUser>();
    // SAFETY: `handle` is non-NULL and live per every export's contract, and `flags_at` is
    // the offset of its `OneUser` field: the reference is to the flags alone.
    unsafe { &*flags }.enter(what)
}

/// The refusal of a one-user handle another thread's call is inside.
#[cold]
fn in_use(what: &str) -> MbStatus {
    fail(
        MbStatus::InUse,
        format!("{what} is in a call on another thread: use it from one thread at a time"),
    )
}

/// Lets go of the one-user handle the call holds, if any (by the outermost guard: an export
/// called inside another's body is the same call).
#[inline]
fn release_held() {
    let held = HELD.with(|h| h.replace(std::ptr::null()));
    // SAFETY: set by `OneUser::enter` during this call, on a handle the caller keeps alive
    // for the call's duration.
    if let Some(busy) = unsafe { held.as_ref() } {
        busy.store(false, Ordering::Release);
    }
}

/// Installs, once per process, the hook that keeps guarded panics off stderr and records
/// their message; panics elsewhere go to the hook that was there before.
fn install_quiet_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) {
                let payload = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                PANIC_MESSAGE.with(|m| *m.borrow_mut() = format!("{payload}{at}"));
            } else {
                previous(info);
            }
        }));
    });
}

/// Records `message` as the calling thread's last error and returns `status`.
pub(crate) fn fail(status: MbStatus, message: impl Into<String>) -> MbStatus {
    let message = message.into();
    LAST_ERROR.with(|e| *e.borrow_mut() = message);
    FRESH.with(|f| f.set(true));
    status
}

/// Runs an export's body: a panic becomes `MB_STATUS_PANIC` (and poisons the handle the
/// body entered), an error its status (with its message kept for `mb_last_error`). Like
/// `errno`, the last error is only written by a failing call: a successful one touches no
/// message (a few thread-local flags), which keeps the boundary cheap on the hot path.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), MbStatus>) -> MbStatus {
    install_quiet_hook();
    IN_USE.with(|h| h.set(std::ptr::null()));
    let outer = GUARDED.with(|g| g.replace(true));
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        #[cfg(feature = "debug-panic")]
        if PANIC_NEXT.with(|p| p.replace(false)) {
            panic!("forced by mb_debug_panic_next_call");
        }
        body()
    }));
    GUARDED.with(|g| g.set(outer));
    let fresh = FRESH.with(|f| f.replace(false));
    let status = match outcome {
        Ok(Ok(())) => MbStatus::Ok,
        Ok(Err(status)) => {
            if !fresh {
                fail(status, status.name().to_string_lossy());
                FRESH.with(|f| f.set(false));
            }
            status
        }
        Err(_) => {
            let handle = IN_USE.with(|h| h.replace(std::ptr::null()));
            // SAFETY: the pointer was set by `Poison::enter` during this call, on a handle
            // the caller keeps alive for the call's duration.
            if let Some(poison) = unsafe { handle.as_ref() } {
                poison.0.store(true, Ordering::Release);
            }
            let message = PANIC_MESSAGE.with(|m| std::mem::take(&mut *m.borrow_mut()));
            fail(
                MbStatus::Panic,
                format!("panic inside matchbook: {message}"),
            );
            FRESH.with(|f| f.set(false));
            MbStatus::Panic
        }
    };
    // After the poison, if any: no other thread gets in between.
    if !outer {
        release_held();
    }
    status
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

/// Checks a caller's list before a slice is made of it: NULL with a length is
/// `MB_STATUS_NULL_ARGUMENT`, and a length no buffer can have (its bytes past `isize::MAX`:
/// a negative count converted to `size_t`) is `MB_STATUS_INVALID_ARGUMENT`, where making
/// the slice would be undefined behaviour.
fn check_list<T>(ptr: *const T, len: usize, what: &str) -> Result<(), MbStatus> {
    if ptr.is_null() {
        return Err(fail(MbStatus::NullArgument, format!("{what} is NULL")));
    }
    if len > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(fail(
            MbStatus::InvalidArgument,
            format!("{what}: a length of {len} is more than any list holds"),
        ));
    }
    Ok(())
}

/// A caller's list `(ptr, len)` as a slice (empty when `len` is 0, whatever the pointer).
///
/// # Safety
/// `ptr` valid for reads of `len` elements when `len > 0`, for the call.
pub(crate) unsafe fn list<'a, T>(
    ptr: *const T,
    len: usize,
    what: &str,
) -> Result<&'a [T], MbStatus> {
    if len == 0 {
        return Ok(&[]);
    }
    check_list(ptr, len, what)?;
    // SAFETY: non-NULL, a possible length, and valid for `len` elements per the contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// A caller's writable list `(ptr, len)` as a slice (empty when `len` is 0).
///
/// # Safety
/// `ptr` valid for writes of `len` elements when `len > 0`, for the call, and aliased by
/// nothing else the call reads or writes.
pub(crate) unsafe fn list_mut<'a, T>(
    ptr: *mut T,
    len: usize,
    what: &str,
) -> Result<&'a mut [T], MbStatus> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_list(ptr.cast_const(), len, what)?;
    // SAFETY: non-NULL, a possible length, valid and unaliased per the contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// An out-parameter as a reference.
pub(crate) fn out<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T, MbStatus> {
    // SAFETY: a non-NULL out-parameter points to writable memory per every export's
    // contract.
    unsafe { ptr.as_mut() }.ok_or_else(|| fail(MbStatus::NullArgument, format!("{what} is NULL")))
}

/// A read-only pointer argument as a reference.
pub(crate) fn arg<'a, T>(ptr: *const T, what: &str) -> Result<&'a T, MbStatus> {
    // SAFETY: a non-NULL argument points to a valid value per every export's contract.
    unsafe { ptr.as_ref() }.ok_or_else(|| fail(MbStatus::NullArgument, format!("{what} is NULL")))
}

/// Copies `items` into the caller's buffer `(buf, capacity)` and their count into
/// `*len_out`; when they do not fit, nothing is copied, `*len_out` is the count needed and
/// the status is `MB_STATUS_BUFFER_TOO_SMALL`.
pub(crate) fn fill<T: Copy>(
    items: &[T],
    buf: *mut T,
    capacity: usize,
    len_out: *mut usize,
) -> Result<(), MbStatus> {
    let len = out(len_out, "len_out")?;
    *len = items.len();
    if items.is_empty() {
        return Ok(());
    }
    if capacity < items.len() {
        return Err(fail(
            MbStatus::BufferTooSmall,
            format!("{} items, room for {capacity}", items.len()),
        ));
    }
    if buf.is_null() {
        return Err(fail(MbStatus::NullArgument, "buffer is NULL"));
    }
    // SAFETY: `buf` has room for `capacity >= items.len()` elements per the contract, and
    // cannot overlap a Rust-owned slice.
    unsafe { std::ptr::copy_nonoverlapping(items.as_ptr(), buf, items.len()) };
    Ok(())
}

/// One list of a pair: the items and the caller's `(buffer, capacity, *len_out)`.
pub(crate) type Side<'a, T> = (&'a [T], *mut T, usize, *mut usize);

/// Copies two lists (bids and asks) into the caller's two buffers, both or neither: both
/// counts are always written; when either list does not fit, nothing is copied and the
/// status is `MB_STATUS_BUFFER_TOO_SMALL`.
pub(crate) fn fill_pair<T: Copy>(first: Side<'_, T>, second: Side<'_, T>) -> Result<(), MbStatus> {
    let first_len = out(first.3, "bids_len")?;
    let second_len = out(second.3, "asks_len")?;
    *first_len = first.0.len();
    *second_len = second.0.len();
    for (items, buf, capacity, _) in [&first, &second] {
        if *capacity < items.len() {
            let (needed, room) = ((first.0.len(), second.0.len()), (first.2, second.2));
            return Err(fail(
                MbStatus::BufferTooSmall,
                format!("{needed:?} items, room for {room:?}"),
            ));
        }
        if !items.is_empty() && buf.is_null() {
            return Err(fail(MbStatus::NullArgument, "buffer is NULL"));
        }
    }
    for (items, buf, capacity, len_out) in [first, second] {
        fill(items, buf, capacity, len_out)?;
    }
    Ok(())
}

/// Copies `value` as a NUL-terminated string into `(buf, capacity)`. `*len_out` is the
/// size the string takes with its NUL, whether it was copied or the buffer was too small:
/// a buffer of `*len_out` bytes always fits (the one rule of every string call).
pub(crate) fn fill_text(
    value: &str,
    buf: *mut c_char,
    capacity: usize,
    len_out: *mut usize,
) -> Result<(), MbStatus> {
    let len = out(len_out, "len_out")?;
    *len = value.len() + 1;
    if capacity < value.len() + 1 {
        return Err(fail(
            MbStatus::BufferTooSmall,
            format!(
                "{} bytes with the NUL, room for {capacity}",
                value.len() + 1
            ),
        ));
    }
    if buf.is_null() {
        return Err(fail(MbStatus::NullArgument, "buffer is NULL"));
    }
    // SAFETY: room for `value.len() + 1` bytes per the check above.
    unsafe {
        std::ptr::copy_nonoverlapping(value.as_ptr().cast::<c_char>(), buf, value.len());
        *buf.add(value.len()) = 0;
    }
    Ok(())
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
    let mut ignored = 0usize;
    let len_out = if len_out.is_null() {
        &raw mut ignored
    } else {
        len_out
    };
    // Copying the message must not replace it: the status is returned, not recorded.
    match catch_unwind(AssertUnwindSafe(|| {
        fill_text(&message, buf, capacity, len_out)
    })) {
        Ok(Ok(())) => MbStatus::Ok,
        Ok(Err(status)) => {
            LAST_ERROR.with(|e| *e.borrow_mut() = message);
            FRESH.with(|f| f.set(false));
            status
        }
        Err(_) => MbStatus::Panic,
    }
}

/// Drops a boxed handle given back by C (NULL is ignored); a panic in a destructor is
/// swallowed, since a free has no status to report it with.
///
/// # Safety
/// `ptr` NULL or from `Box::into_raw` of a `T`, not freed before.
pub(crate) unsafe fn release<T>(ptr: *mut T) {
    if !ptr.is_null() {
        // SAFETY: per the contract, a live box released once.
        let boxed = unsafe { Box::from_raw(ptr) };
        let _ = catch_unwind(AssertUnwindSafe(move || drop(boxed)));
    }
}

#[cfg(test)]
mod tests;

/// Moves up to `capacity` of `pending`, oldest first, into the caller's `buffer` and
/// writes how many to `len_out` (a feed's poll).
pub(crate) fn hand_out<T>(
    pending: &mut std::collections::VecDeque<T>,
    buffer: *mut T,
    capacity: usize,
    len_out: &mut usize,
) -> Result<(), MbStatus> {
    let count = capacity.min(pending.len());
    if count > 0 && buffer.is_null() {
        return Err(fail(MbStatus::NullArgument, "the buffer is NULL"));
    }
    for (i, item) in pending.drain(..count).enumerate() {
        // SAFETY: a non-NULL buffer has room for `capacity >= count` elements per every
        // poll's contract.
        unsafe { buffer.add(i).write(item) };
    }
    *len_out = count;
    Ok(())
}
