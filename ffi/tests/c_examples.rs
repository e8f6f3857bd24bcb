//! The C example, compiled against the static library as a C11 program with
//! `-Wall -Wextra -Werror`, run, its output checked; then run under valgrind (when
//! installed) with no errors and no definite leaks. Also the boundary rules from Rust:
//! NULL arguments, short buffers and a forced panic each return their status.

// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

use std::path::PathBuf;
use std::process::Command;

use matchbook_ffi::engine::*;
use matchbook_ffi::{MbEvent, MbStatus};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn static_library() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        // The test profile reuses what `cargo test` already compiled (same output dir).
        .args([
            "build",
            "--quiet",
            "--profile",
            "test",
            "-p",
            "matchbook-ffi",
        ])
        .current_dir(workspace())
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the static library builds");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from);
    target.join("debug").join("libmatchbook_ffi.a")
}

#[test]
fn the_c_market_maker_runs_and_reports_what_the_engine_did() {
    let lib = static_library();
    let out = std::env::temp_dir().join(format!("mb-market-maker-{}", std::process::id()));
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let compiled = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(dir.join("include"))
        .arg(dir.join("examples/c/market_maker.c"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out)
        .status()
        .expect("gcc runs");
    assert!(compiled.success(), "the C example compiles warning-free");
    let run = Command::new(&out).output().expect("runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for line in [
        "poll into 1 slot: BUFFER_TOO_SMALL",
        "trade 1: 4000 lots at 6010000 ticks, taker fee 6000, maker fee 240400000",
        "cancel twice: ORDER_NOT_FOUND",
        "taker BTC available 3994000 locked 0 scale 8",
        "maker EUR available 10240159600000 locked 0 scale 8",
        "unknown currency: INVALID_CURRENCY",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
    if Command::new("valgrind").arg("--version").output().is_ok() {
        let checked = Command::new("valgrind")
            .args([
                "--quiet",
                "--error-exitcode=3",
                "--leak-check=full",
                "--errors-for-leak-kinds=definite",
            ])
            .arg(&out)
            .output()
            .expect("valgrind runs");
        assert!(
            checked.status.success(),
            "valgrind: {}",
            String::from_utf8_lossy(&checked.stderr)
        );
    }
    let _ = std::fs::remove_file(out);
}

#[test]
fn null_arguments_short_buffers_and_panics_return_statuses() {
    let mut engine: *mut MbEngine = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the handle is freed at the end.
    unsafe {
        assert_eq!(
            mb_engine_new_demo(std::ptr::null_mut()),
            MbStatus::NullArgument
        );
        assert_eq!(mb_engine_new_demo(&mut engine), MbStatus::Ok);
        let mut account = 0u32;
        assert_eq!(
            mb_create_holder(std::ptr::null_mut(), 0, &mut account),
            MbStatus::NullArgument
        );
        assert_eq!(
            mb_create_holder(engine, 0, std::ptr::null_mut()),
            MbStatus::NullArgument
        );
        assert_eq!(mb_create_holder(engine, 0, &mut account), MbStatus::Ok);
        assert_eq!(
            mb_deposit(engine, 0, account, std::ptr::null(), c"1".as_ptr()),
            MbStatus::NullArgument
        );
        assert_eq!(
            mb_deposit(engine, 0, account, c"EUR".as_ptr(), c"1e5".as_ptr()),
            MbStatus::InvalidArgument
        );
        let mut order = MbOrderRef { id: 0, slot: 0 };
        assert_eq!(
            mb_place_limit(
                engine,
                0,
                account,
                c"BTC_EUR".as_ptr(),
                MbSide::Buy,
                6_000_000,
                1_000,
                MbTimeInForce::GoodTillCancelled,
                &mut order
            ),
            MbStatus::InsufficientFunds
        );
        let mut message = [0 as std::ffi::c_char; 8];
        let mut len = 0usize;
        assert_eq!(
            mb_last_error(message.as_mut_ptr(), message.len(), &mut len),
            MbStatus::BufferTooSmall
        );
        assert!(len > 8, "the message length is reported");
        let mut events = [std::mem::zeroed::<MbEvent>(); 1];
        let mut pending = 0usize;
        assert_eq!(
            mb_poll_events(engine, events.as_mut_ptr(), 1, &mut pending),
            MbStatus::BufferTooSmall
        );
        assert!(pending > 1);
        assert_eq!(
            mb_poll_events(engine, std::ptr::null_mut(), 0, &mut pending),
            MbStatus::NullArgument
        );
        let mut balance = (0i64, 0i64, 0u8);
        assert_eq!(
            mb_balance(
                engine,
                999,
                c"EUR".as_ptr(),
                &mut balance.0,
                &mut balance.1,
                &mut balance.2
            ),
            MbStatus::UnknownAccount
        );
        assert_eq!(mb_debug_panic(), MbStatus::Panic);
        let name = std::ffi::CStr::from_ptr(mb_status_str(MbStatus::Panic));
        assert_eq!(name.to_str(), Ok("PANIC"));
        let name = std::ffi::CStr::from_ptr(mb_status_str(MbStatus::InsufficientBalance));
        assert_eq!(name.to_str(), Ok("INSUFFICIENT_BALANCE"));
        mb_engine_free(engine);
        mb_engine_free(std::ptr::null_mut());
    }
}
