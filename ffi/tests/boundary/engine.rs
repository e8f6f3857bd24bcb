//! The single-threaded engine's exports at the boundary.

use super::queries::{EngineQueries, check_queries};
use super::*;

#[test]
fn single_threaded_engine_exports() {
    let w = World::new();
    let e = w.engine;
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

        // The fast paths: the same checks, and a placed order can be cancelled once.
        let mut order = MbOrderRef::default();
        let place = |order: *mut MbOrderRef| {
            mb_engine_place_limit(
                e,
                START + 10,
                w.maker,
                w.btc_eur,
                0,
                5_000_000,
                100,
                3,
                order,
            )
        };
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
    check_queries(&w, &EngineQueries(e));
}
