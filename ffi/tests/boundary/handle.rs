//! The thread-safe handle's exports at the boundary.

use super::queries::{SessionQueries, check_queries};
use super::*;

#[test]
fn thread_safe_handle_exports() {
    let w = World::new();
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let (runtime, options) = start_runtime();
        let session = open_session(runtime);
        trade_through_the_session(&w, session, runtime, options.start_time_ns);

        let cancel = mb_cmd_cancel(w.maker, MbOrderRef { id: 999, slot: 999 });
        assert_eq!(mb_session_submit(null_mut(), &cancel, null_mut()), NULL);
        assert_eq!(mb_session_submit(session, null(), null_mut()), NULL);
        assert_eq!(
            mb_session_submit(session, &cancel, null_mut()),
            MbStatus::OrderNotFound
        );
        panics("mb_session_submit", || {
            mb_session_submit(session, &cancel, null_mut())
        });

        poll_session_events(session);

        let mut hash = 0u64;
        assert_eq!(mb_session_state_hash(null(), &mut hash), NULL);
        assert_eq!(mb_session_state_hash(session, null_mut()), NULL);
        panics("mb_session_state_hash", || {
            mb_session_state_hash(session, &mut hash)
        });
        check_queries(&w, &SessionQueries(session));

        // Freed runtime: the session answers STOPPED instead of hanging.
        mb_runtime_free(runtime);
        mb_runtime_free(null_mut());
        assert_eq!(
            mb_session_submit(session, &cancel, null_mut()),
            MbStatus::Stopped
        );
        let mut top = MbTop::default();
        assert_eq!(
            mb_session_book_top(session, w.btc_eur, &mut top),
            MbStatus::Stopped
        );
        mb_session_free(session);
        mb_session_free(null_mut());
    }
}

/// A runtime on the demo definition with a manual clock, its constructor's and clock's
/// boundary checked; with its options.
unsafe fn start_runtime() -> (*mut MbRuntime, MbRuntimeOptions) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let mut config = null_mut();
        assert_eq!(mb_config_parse(DEFINITION.as_ptr(), 0, &mut config), OK);
        let options = MbRuntimeOptions {
            queue_capacity: 16,
            manual_clock: 1,
            start_time_ns: 1_767_225_600_000_000_000,
            market_data_thread: 1,
        };
        let mut runtime = null_mut();
        assert_eq!(mb_runtime_new(null(), &options, &mut runtime), NULL);
        assert_eq!(mb_runtime_new(config, &options, null_mut()), NULL);
        panics("mb_runtime_new", || {
            mb_runtime_new(config, &options, &mut runtime)
        });
        assert_eq!(mb_runtime_new(config, &options, &mut runtime), OK);
        mb_config_free(config);
        assert_eq!(mb_runtime_refdata(runtime), mb_runtime_refdata(runtime));
        assert!(mb_runtime_refdata(null()).is_null());

        assert_eq!(mb_runtime_set_time(null(), 0), NULL);
        assert_eq!(
            mb_runtime_set_time(runtime, 0),
            MbStatus::InvalidArgument,
            "never backwards"
        );
        panics("mb_runtime_set_time", || {
            mb_runtime_set_time(runtime, options.start_time_ns + 1)
        });
        (runtime, options)
    }
}

/// A session on `runtime`, its constructor's boundary checked.
unsafe fn open_session(runtime: *mut MbRuntime) -> *mut MbSession {
    // SAFETY: as above.
    unsafe {
        let mut session = null_mut();
        assert_eq!(mb_session_new(null(), 1, &mut session), NULL);
        assert_eq!(mb_session_new(runtime, 1, null_mut()), NULL);
        panics("mb_session_new", || {
            mb_session_new(runtime, 1, &mut session)
        });
        assert_eq!(mb_session_new(runtime, 1, &mut session), OK);
        session
    }
}

/// The same trades as the single-threaded world, through the session; the clock moved
/// on from `start` between them.
unsafe fn trade_through_the_session(
    w: &World,
    session: *mut MbSession,
    runtime: *mut MbRuntime,
    start: i64,
) {
    // SAFETY: as above.
    unsafe {
        let place = |c: MbCommand| {
            let mut r = MbResult::default();
            assert_eq!(mb_session_submit(session, &c, &mut r), OK);
            r
        };
        let placed = {
            let mut bid = mb_cmd_place_limit(w.maker, w.btc_eur, 0, 5_990_000, 10_000, 0);
            bid.client_id = w.client_id;
            place(bid)
        };
        assert_eq!(placed.time_ns, start, "time from the manual clock");
        place(mb_cmd_place_limit(
            w.maker, w.btc_eur, 1, 6_010_000, 10_000, 0,
        ));
        assert_eq!(mb_runtime_set_time(runtime, start + 1), OK);
        place(mb_cmd_place_limit(
            w.taker, w.btc_eur, 0, 6_010_000, 1_000, 1,
        ));
        place(mb_cmd_set_index_price(w.perp, 600_000));
        place(mb_cmd_place_limit(w.maker, w.perp, 1, 600_000, 1_000, 0));
        place(mb_cmd_place_market(w.taker, w.perp, 0, 1_000, 0));
    }
}

/// Polling the session's events: NULLs, a buffer too small, a panic, then its events.
unsafe fn poll_session_events(session: *mut MbSession) {
    // SAFETY: as above.
    unsafe {
        let mut events = [zeroed::<MbEvent>(); 64];
        let mut len = 0usize;
        assert_eq!(
            mb_session_poll_events(null_mut(), events.as_mut_ptr(), 64, &mut len),
            NULL
        );
        assert_eq!(
            mb_session_poll_events(session, events.as_mut_ptr(), 64, null_mut()),
            NULL
        );
        assert_eq!(
            mb_session_poll_events(session, events.as_mut_ptr(), 1, &mut len),
            SMALL
        );
        panics("mb_session_poll_events", || {
            mb_session_poll_events(session, events.as_mut_ptr(), 64, &mut len)
        });
        assert_eq!(
            mb_session_poll_events(session, events.as_mut_ptr(), 64, &mut len),
            OK
        );
        assert!(len > 5, "the session's own events");
    }
}
