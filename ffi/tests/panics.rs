//! A panic inside the library poisons the handle it was using (every later call on it
//! answers `MB_STATUS_PANIC`, other handles go on), its message goes to `mb_last_error`
//! with where it happened, and nothing is printed on the host's stderr.

#![warn(clippy::too_many_lines)]
// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

mod common;

use std::ptr::null_mut;

use matchbook_ffi::MbStatus;
use matchbook_ffi::config::*;
use matchbook_ffi::diagnostics::*;
use matchbook_ffi::engine::*;
use matchbook_ffi::runtime::*;

const OK: MbStatus = MbStatus::Ok;

fn last_error() -> String {
    let mut buf = [0 as std::ffi::c_char; 1024];
    let mut len = 0usize;
    // SAFETY: a writable buffer of its stated size.
    unsafe { mb_last_error(buf.as_mut_ptr(), buf.len(), &mut len) };
    let bytes: Vec<u8> = buf[..len.min(buf.len())].iter().map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn engine(config: *const MbConfig) -> *mut MbEngine {
    let mut engine = null_mut();
    // SAFETY: valid pointers.
    assert_eq!(unsafe { mb_engine_new(config, &mut engine) }, OK);
    engine
}

fn hash(engine: *const MbEngine) -> MbStatus {
    let mut hash = 0u64;
    // SAFETY: a live engine and a writable slot.
    unsafe { mb_engine_state_hash(engine, &mut hash) }
}

#[test]
fn a_panic_poisons_the_engine_it_was_using_and_only_that_one() {
    let config = common::config();
    let (poisoned, healthy) = (engine(config), engine(config));
    assert_eq!(hash(poisoned), OK);
    mb_debug_panic_next_use();
    assert_eq!(hash(poisoned), MbStatus::Panic);
    let message = last_error();
    assert!(
        message.contains("forced by mb_debug_panic_next_use"),
        "{message}"
    );
    assert!(
        message.contains("boundary.rs:"),
        "where it happened: {message}"
    );
    for _ in 0..3 {
        assert_eq!(hash(poisoned), MbStatus::Panic, "poisoned for good");
        assert!(last_error().contains("unusable"), "{}", last_error());
    }
    assert_eq!(hash(healthy), OK, "another engine goes on");
    // SAFETY: live handles, freed once (a poisoned one too).
    unsafe {
        mb_engine_free(poisoned);
        mb_engine_free(healthy);
        mb_config_free(config);
    }
}

#[test]
fn a_panic_poisons_a_session_but_not_its_runtime() {
    let config = common::config();
    let mut runtime = null_mut();
    let (mut session, mut other) = (null_mut(), null_mut());
    let mut hash = 0u64;
    // SAFETY: valid pointers; handles freed once, sessions before their runtime.
    unsafe {
        assert_eq!(mb_runtime_new(config, std::ptr::null(), &mut runtime), OK);
        assert_eq!(mb_session_new(runtime, 0, &mut session), OK);
        mb_debug_panic_next_use();
        assert_eq!(mb_session_state_hash(session, &mut hash), MbStatus::Panic);
        assert_eq!(mb_session_state_hash(session, &mut hash), MbStatus::Panic);
        assert_eq!(
            mb_session_new(runtime, 0, &mut other),
            OK,
            "the runtime goes on"
        );
        assert_eq!(mb_session_state_hash(other, &mut hash), OK);
        mb_session_free(session);
        mb_session_free(other);
        mb_runtime_free(runtime);
        mb_config_free(config);
    }
}

/// Run in a child process by the test below: forced panics with no hook of the test's own.
#[test]
fn panicking_child() {
    if std::env::var_os("MB_PANIC_CHILD").is_none() {
        return;
    }
    let config = common::config();
    let engine = engine(config);
    assert_eq!(mb_debug_panic(), MbStatus::Panic);
    mb_debug_panic_next_use();
    assert_eq!(hash(engine), MbStatus::Panic);
    // SAFETY: live handles, freed once.
    unsafe {
        mb_engine_free(engine);
        mb_config_free(config);
    }
}

#[test]
fn panics_inside_the_library_print_nothing_on_stderr() {
    let child = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "panicking_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("MB_PANIC_CHILD", "1")
        .output()
        .expect("child runs");
    let stdout = String::from_utf8_lossy(&child.stdout);
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert!(child.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the child ran its test: {stdout}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("forced by"),
        "a library panic reached stderr: {stderr}"
    );
}
