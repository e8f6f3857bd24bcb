//! The single-threaded engine's exports at the boundary.

use super::queries::{EngineQueries, check_queries};
use super::*;

#[test]
fn single_threaded_engine_exports() {
    let w = World::new();
    let e = w.engine;
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        check_submit_exports(&w, e);
        check_place_limit_exports(&w, e);
        check_cancel_exports(&w, e);
        check_poll_exports(e);
    }
    check_queries(&w, &EngineQueries(e));
}

/// A post-only bid of the maker's at 50,000.00 through the fast path.
unsafe fn place_bid(w: &World, order: *mut MbOrderRef) -> MbStatus {
    // SAFETY: a live engine; `order` NULL or writable.
    unsafe {
        mb_engine_place_limit(
            w.engine,
            START + 10,
            w.maker,
            w.btc_eur,
            0,
            5_000_000,
            100,
            3,
            order,
        )
    }
}

/// `mb_engine_submit`'s boundary (NULLs, an unknown order, a bad kind, a panic, listed
/// cancels' lists) and `mb_engine_state_hash`'s.
unsafe fn check_submit_exports(w: &World, e: *mut MbEngine) {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        let cancel = mb_cmd_cancel(w.maker, MbOrderRef { id: 999, slot: 999 });
        let mut result = MbResult::default();
        assert_eq!(mb_engine_submit(null_mut(), 0, &cancel, &mut result), NULL);
        assert_eq!(mb_engine_submit(e, 0, null(), &mut result), NULL);
        assert_eq!(
            mb_engine_submit(e, START + 10, &cancel, null_mut()),
            MbStatus::OrderNotFound
        );
        let mut bad = cancel;
        bad.kind = 99;
        assert_eq!(
            mb_engine_submit(e, START + 10, &bad, null_mut()),
            MbStatus::InvalidArgument
        );
        panics("mb_engine_submit", || {
            mb_engine_submit(e, START + 10, &cancel, null_mut())
        });

        // Listed cancels read their list at submit: NULL with entries is refused, an
        // empty list needs no pointer.
        assert_eq!(
            mb_engine_submit(
                e,
                START + 10,
                &mb_cmd_cancel_orders(w.maker, null(), 2),
                null_mut()
            ),
            NULL
        );
        assert_eq!(
            mb_engine_submit(
                e,
                START + 10,
                &mb_cmd_cancel_client_ids(w.maker, null(), 1),
                null_mut()
            ),
            NULL
        );
        assert_eq!(
            mb_engine_submit(
                e,
                START + 10,
                &mb_cmd_cancel_orders(w.maker, null(), 0),
                null_mut()
            ),
            OK
        );
        let mut hash = 0u64;
        assert_eq!(mb_engine_state_hash(null(), &mut hash), NULL);
        assert_eq!(mb_engine_state_hash(e, null_mut()), NULL);
        panics("mb_engine_state_hash", || {
            mb_engine_state_hash(e, &mut hash)
        });
    }
}

/// The fast path's place: NULLs, a bad side or time in force, a panic; the handle is
/// optional (an order placed without one is found and cancelled).
unsafe fn check_place_limit_exports(w: &World, e: *mut MbEngine) {
    // SAFETY: as above.
    unsafe {
        let mut order = MbOrderRef::default();
        let place = |order| place_bid(w, order);
        assert_eq!(
            mb_engine_place_limit(
                null_mut(),
                START + 10,
                w.maker,
                w.btc_eur,
                0,
                5_000_000,
                100,
                3,
                &mut order
            ),
            NULL
        );
        assert_eq!(
            mb_engine_place_limit(
                e,
                START + 10,
                w.maker,
                w.btc_eur,
                9,
                5_000_000,
                100,
                3,
                &mut order
            ),
            MbStatus::InvalidArgument
        );
        assert_eq!(
            mb_engine_place_limit(
                e,
                START + 10,
                w.maker,
                w.btc_eur,
                0,
                5_000_000,
                100,
                9,
                &mut order
            ),
            MbStatus::InvalidArgument
        );
        panics("mb_engine_place_limit", || place(&mut order));
        assert_eq!(place(null_mut()), OK, "the handle is optional");
        let mut open = [zeroed::<MbOrder>(); 8];
        let mut n = 0usize;
        assert_eq!(
            mb_engine_open_orders(e, w.maker, open.as_mut_ptr(), 8, &mut n),
            OK
        );
        let unnamed = open[..n]
            .iter()
            .find(|o| o.price == 5_000_000)
            .expect("placed");
        assert_eq!(mb_engine_cancel(e, START + 10, w.maker, unnamed.order), OK);
    }
}

/// The fast path's cancel: NULL, a panic, another account's, then once only.
unsafe fn check_cancel_exports(w: &World, e: *mut MbEngine) {
    // SAFETY: as above.
    unsafe {
        let mut order = MbOrderRef::default();
        let place = |order| place_bid(w, order);
        assert_eq!(place(&mut order), OK);
        assert_ne!(order, MbOrderRef::default());
        assert_eq!(
            mb_engine_cancel(null_mut(), START + 10, w.maker, order),
            NULL
        );
        panics("mb_engine_cancel", || {
            mb_engine_cancel(e, START + 10, w.maker, order)
        });
        assert_eq!(
            mb_engine_cancel(e, START + 10, w.taker, order),
            MbStatus::OrderNotFound
        );
        assert_eq!(mb_engine_cancel(e, START + 10, w.maker, order), OK);
        assert_eq!(
            mb_engine_cancel(e, START + 10, w.maker, order),
            MbStatus::OrderNotFound
        );
    }
}

/// `mb_engine_poll_events`: NULLs, a buffer too small (with the count needed), a panic,
/// the events, nothing pending; `mb_engine_clear_events`.
unsafe fn check_poll_exports(e: *mut MbEngine) {
    // SAFETY: as above.
    unsafe {
        let mut events = [zeroed::<MbEvent>(); 64];
        let mut len = 0usize;
        assert_eq!(
            mb_engine_poll_events(null_mut(), events.as_mut_ptr(), 64, &mut len),
            NULL
        );
        assert_eq!(
            mb_engine_poll_events(e, events.as_mut_ptr(), 64, null_mut()),
            NULL
        );
        assert_eq!(mb_engine_poll_events(e, null_mut(), 64, &mut len), NULL);
        assert_eq!(
            mb_engine_poll_events(e, events.as_mut_ptr(), 1, &mut len),
            SMALL
        );
        let pending = len;
        assert!(pending > 1 && pending <= events.len(), "{pending} events");
        panics("mb_engine_poll_events", || {
            mb_engine_poll_events(e, events.as_mut_ptr(), 64, &mut len)
        });
        assert_eq!(
            mb_engine_poll_events(e, events.as_mut_ptr(), pending, &mut len),
            OK
        );
        assert_eq!(len, pending);
        assert_eq!(
            mb_engine_poll_events(e, null_mut(), 0, &mut len),
            OK,
            "nothing pending: no buffer needed"
        );
        assert_eq!(mb_engine_clear_events(null_mut()), NULL);
        panics("mb_engine_clear_events", || mb_engine_clear_events(e));
    }
}
