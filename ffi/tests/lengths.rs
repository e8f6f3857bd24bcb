//! A length no caller's list can have, as a C or C++ program passes after a count went
//! negative and was converted to `size_t` (`n - 1` with `n` zero): every export that reads
//! a caller's list answers `MB_STATUS_INVALID_ARGUMENT` and changes nothing. It read the
//! list as that long (undefined behaviour: an abort in a debug build, reads past the
//! caller's memory in a release one).

#![warn(clippy::too_many_lines)]
// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

mod common;

use std::ptr::null_mut;

use common::START;
use matchbook_ffi::batch::mb_engine_submit_batch;
use matchbook_ffi::command::{MbCommand, MbResult};
use matchbook_ffi::config::mb_config_free;
use matchbook_ffi::constructors::{mb_cmd_cancel_client_ids, mb_cmd_cancel_orders};
use matchbook_ffi::engine::{
    mb_engine_free, mb_engine_new, mb_engine_state_hash, mb_engine_submit,
};
use matchbook_ffi::follow::mb_session_follow;
use matchbook_ffi::runtime::{mb_runtime_free, mb_session_free, mb_session_new};
use matchbook_ffi::status::MbStatus;
use matchbook_ffi::types::{MbOrderRef, MbUuid};

/// `(size_t)-1`, and the first count whose bytes pass `isize::MAX` for 16-byte items.
const LENGTHS: [usize; 2] = [usize::MAX, isize::MAX as usize / 16 + 1];

#[test]
fn lists_of_impossible_length_are_refused_by_the_single_threaded_engine() {
    // SAFETY: live handles and buffers of one element each; the lengths are the point.
    unsafe {
        let config = common::config();
        let mut engine = null_mut();
        assert_eq!(mb_engine_new(config, &mut engine), MbStatus::Ok);
        mb_config_free(config);
        let mut before = 0;
        mb_engine_state_hash(engine, &mut before);
        let (order, client) = (std::mem::zeroed::<MbOrderRef>(), MbUuid { bytes: [1; 16] });
        for len in LENGTHS {
            let lists: [MbCommand; 2] = [
                mb_cmd_cancel_orders(0, &order, len),
                mb_cmd_cancel_client_ids(0, &client, len),
            ];
            for command in &lists {
                let mut result = std::mem::zeroed::<MbResult>();
                let status = mb_engine_submit(engine, START, command, &mut result);
                assert_eq!(status, MbStatus::InvalidArgument, "a list of {len}");
            }
            let (times, mut results, mut statuses) =
                ([START], [std::mem::zeroed::<MbResult>()], [MbStatus::Ok]);
            let mut submitted = 7;
            let status = mb_engine_submit_batch(
                engine,
                times.as_ptr(),
                lists.as_ptr(),
                len,
                results.as_mut_ptr(),
                statuses.as_mut_ptr(),
                &mut submitted,
            );
            assert_eq!(status, MbStatus::InvalidArgument, "a batch of {len}");
            assert_eq!(submitted, 0);
        }
        let mut after = 0;
        mb_engine_state_hash(engine, &mut after);
        assert_eq!(before, after, "nothing changed");
        mb_engine_free(engine);
    }
}

#[test]
fn a_follow_list_of_impossible_length_is_refused() {
    // SAFETY: live handles; one account in the list; the lengths are the point.
    unsafe {
        let runtime = common::runtime(common::config(), 64);
        let mut session = null_mut();
        assert_eq!(mb_session_new(runtime, 0, &mut session), MbStatus::Ok);
        let account = 0u32;
        for len in [usize::MAX, isize::MAX as usize / 4 + 1] {
            let status = mb_session_follow(session, &account, len);
            assert_eq!(status, MbStatus::InvalidArgument, "a list of {len}");
        }
        assert_eq!(mb_session_follow(session, &account, 1), MbStatus::Ok);
        mb_session_free(session);
        mb_runtime_free(runtime);
    }
}
