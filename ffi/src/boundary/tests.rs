//! One-user handles at the boundary: a call from a second thread while a call is inside
//! the handle is refused with `MB_STATUS_IN_USE` and changes nothing, and the handle is
//! free again once the first call returns, however it returned.

use std::sync::mpsc;

use super::*;
use crate::config::{mb_config_free, mb_config_new_demo, mb_config_set_thread_checks};
use crate::engine::{
    MbEngine, engine_mut, mb_engine_free, mb_engine_new, mb_engine_new_demo, mb_engine_state_hash,
};

/// An engine pointer handed to another thread, as a C caller may.
#[derive(Clone, Copy)]
struct Handle(*mut MbEngine);

// SAFETY: the tests pass the pointer between threads the way the C contract allows (one
// thread inside a call at a time, which is what they check).
unsafe impl Send for Handle {}

fn demo_engine() -> Handle {
    let mut engine = std::ptr::null_mut();
    // SAFETY: a writable out-parameter.
    assert_eq!(unsafe { mb_engine_new_demo(&mut engine) }, MbStatus::Ok);
    Handle(engine)
}

fn state_hash(engine: Handle) -> (MbStatus, u64) {
    let mut hash = 0;
    // SAFETY: a live engine and a writable slot.
    let status = unsafe { mb_engine_state_hash(engine.0, &mut hash) };
    (status, hash)
}

/// Runs a call on another thread that enters `engine` and stays inside it until told to
/// return; answers once it is inside, with the way to let it return.
fn hold(engine: Handle) -> (mpsc::Sender<()>, std::thread::JoinHandle<MbStatus>) {
    let (inside, entered) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let engine = engine;
        guard(|| {
            engine_mut(engine.0)?;
            inside.send(()).map_err(|_| MbStatus::Stopped)?;
            released.recv().map_err(|_| MbStatus::Stopped)
        })
    });
    entered.recv().expect("the holding call entered the engine");
    (release, holder)
}

#[test]
fn a_second_thread_s_call_is_refused_while_a_call_is_inside_the_engine() {
    let engine = demo_engine();
    let (status, before) = state_hash(engine);
    assert_eq!(status, MbStatus::Ok);
    let (release, holder) = hold(engine);
    assert_eq!(state_hash(engine).0, MbStatus::InUse);
    let mut message = [0 as std::ffi::c_char; 256];
    let mut len = 0;
    // SAFETY: a writable buffer of its stated size.
    unsafe { crate::diagnostics::mb_last_error(message.as_mut_ptr(), message.len(), &mut len) };
    // SAFETY: the library wrote a NUL-terminated string of `len` bytes.
    let text = unsafe { std::ffi::CStr::from_ptr(message.as_ptr()) }.to_string_lossy();
    assert!(text.contains("another thread"), "{text}");
    release.send(()).expect("the holder waits");
    assert_eq!(holder.join().expect("no panic"), MbStatus::Ok);
    assert_eq!(
        state_hash(engine),
        (MbStatus::Ok, before),
        "free again, unchanged"
    );
    // SAFETY: created above, freed once.
    unsafe { mb_engine_free(engine.0) };
}

#[test]
fn a_call_that_failed_or_entered_twice_lets_go_of_the_engine() {
    let engine = demo_engine();
    let failed = guard(|| {
        engine_mut(engine.0)?;
        Err(fail(MbStatus::InvalidArgument, "refused after entering"))
    });
    assert_eq!(failed, MbStatus::InvalidArgument);
    let twice = guard(|| {
        engine_mut(engine.0)?;
        // A nested export entering the same engine is the same call, not another user.
        assert_eq!(state_hash(engine).0, MbStatus::Ok);
        engine_mut(engine.0).map(|_| ())
    });
    assert_eq!(twice, MbStatus::Ok);
    let other_thread = std::thread::spawn(move || state_hash(engine).0);
    assert_eq!(other_thread.join().expect("no panic"), MbStatus::Ok);
    // SAFETY: created above, freed once.
    unsafe { mb_engine_free(engine.0) };
}

#[test]
fn an_engine_whose_definition_turns_the_checks_off_leaves_two_threads_to_the_caller() {
    let mut config = std::ptr::null_mut();
    let mut engine = std::ptr::null_mut();
    // SAFETY: writable out-parameters and a live definition, freed once.
    unsafe {
        assert_eq!(mb_config_new_demo(&mut config), MbStatus::Ok);
        assert_eq!(mb_config_set_thread_checks(config, 0), MbStatus::Ok);
        assert_eq!(mb_engine_new(config, &mut engine), MbStatus::Ok);
        mb_config_free(config);
    }
    let engine = Handle(engine);
    let (release, holder) = hold(engine);
    // The holding call reads nothing while it waits, so this read races with nothing.
    assert_eq!(state_hash(engine).0, MbStatus::Ok, "not refused");
    release.send(()).expect("the holder waits");
    assert_eq!(holder.join().expect("no panic"), MbStatus::Ok);
    // SAFETY: created above, freed once.
    unsafe { mb_engine_free(engine.0) };
}
