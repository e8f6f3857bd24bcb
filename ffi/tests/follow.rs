//! A session following an account sees what other sessions' commands did to it: the fill
//! of its resting order by another session's taker, its balances moving, the booking of an
//! order placed for it elsewhere, and nothing about accounts it does not follow.

#![warn(clippy::too_many_lines)]
// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

mod common;

use std::ptr::{null, null_mut};

use common::DEFINITION;
use matchbook_ffi::command::MbCommand;
use matchbook_ffi::config::mb_config_parse;
use matchbook_ffi::constructors::mb_cmd_place_limit;
use matchbook_ffi::event::{MbEvent, MbEventKind};
use matchbook_ffi::follow::{mb_session_follow, mb_session_poll_followed};
use matchbook_ffi::runtime::{
    MbSession, mb_runtime_free, mb_runtime_refdata, mb_session_free, mb_session_new,
    mb_session_submit,
};
use matchbook_ffi::status::MbStatus;
use matchbook_ffi::types::{MbSide, MbTimeInForce};

fn submit(session: *mut MbSession, command: &MbCommand) -> matchbook_ffi::command::MbResult {
    // SAFETY: a zeroed result is a valid value (integers only); live session.
    let mut result = unsafe { std::mem::zeroed() };
    // SAFETY: live session, valid command.
    let status = unsafe { mb_session_submit(session, command, &mut result) };
    assert_eq!(status, MbStatus::Ok);
    result
}

fn poll(session: *mut MbSession) -> Vec<MbEvent> {
    let mut len = 0usize;
    // SAFETY: live session; asking the length with a NULL buffer, then reading it.
    unsafe {
        let asked = mb_session_poll_followed(session, null_mut(), 0, &mut len);
        assert!(
            matches!(asked, MbStatus::Ok | MbStatus::BufferTooSmall),
            "{asked:?}"
        );
        let mut events = vec![std::mem::zeroed::<MbEvent>(); len];
        assert_eq!(
            mb_session_poll_followed(session, events.as_mut_ptr(), len, &mut len),
            MbStatus::Ok
        );
        events.truncate(len);
        events
    }
}

#[test]
fn a_follower_sees_fills_of_its_resting_orders_caused_by_others() {
    // SAFETY: valid pointers throughout; everything is freed at the end.
    unsafe {
        let mut config = null_mut();
        assert_eq!(
            mb_config_parse(DEFINITION.as_ptr(), 0, &mut config),
            MbStatus::Ok
        );
        let runtime = common::runtime(config, 64);
        let (maker, taker, btc_eur) = common::demo_ids(mb_runtime_refdata(runtime));
        let (mut mine, mut theirs) = (null_mut(), null_mut());
        mb_session_new(runtime, 0, &mut mine);
        mb_session_new(runtime, 0, &mut theirs);
        let gtc = MbTimeInForce::GoodTillCancelled as u32;

        assert_eq!(
            mb_session_poll_followed(mine, null_mut(), 0, &mut 0),
            MbStatus::InvalidArgument,
            "follows nothing yet"
        );
        // A resting ask from before following, then another session's lift of half of it.
        let ask = submit(
            mine,
            &mb_cmd_place_limit(maker, btc_eur, MbSide::Sell as u32, 6_010_000, 2_000, gtc),
        );
        assert_eq!(mb_session_follow(mine, &maker, 1), MbStatus::Ok);
        submit(
            theirs,
            &mb_cmd_place_limit(taker, btc_eur, MbSide::Buy as u32, 6_010_000, 1_000, gtc),
        );
        // The taker's own resting bid concerns only the taker.
        submit(
            theirs,
            &mb_cmd_place_limit(taker, btc_eur, MbSide::Buy as u32, 5_000_000, 1_000, gtc),
        );
        // An order for the maker placed through the other session: accepted, booked.
        let placed = submit(
            theirs,
            &mb_cmd_place_limit(maker, btc_eur, MbSide::Sell as u32, 6_100_000, 1_000, gtc),
        );

        let events = poll(mine);
        assert_only_the_makers_events(&events, maker, ask.order.id, placed.order.id);
        assert!(poll(mine).is_empty(), "handed out once");

        assert_eq!(mb_session_follow(mine, null(), 0), MbStatus::Ok);
        assert_eq!(
            mb_session_poll_followed(mine, null_mut(), 0, &mut 0),
            MbStatus::InvalidArgument
        );
        assert_eq!(mb_session_follow(mine, null(), 2), MbStatus::NullArgument);
        mb_session_free(mine);
        mb_session_free(theirs);
        mb_runtime_free(runtime);
    }
}

/// What the follower of `maker` was handed: the fill of its resting ask `ask`, the
/// maker's balances only, and only the maker's order `placed` booked.
fn assert_only_the_makers_events(events: &[MbEvent], maker: u32, ask: u64, placed: u64) {
    let kinds: Vec<MbEventKind> = events.iter().map(|e| e.kind).collect();
    let fill = events
        .iter()
        .find(|e| e.kind == MbEventKind::Trade)
        .copied();
    assert!(
        fill.is_some_and(|t| t.maker_order == ask && t.maker_account == maker && t.amount == 1_000),
        "the fill of the resting ask: {kinds:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e.kind == MbEventKind::BalanceChanged && e.account == maker)
    );
    assert!(
        events
            .iter()
            .all(|e| e.kind != MbEventKind::BalanceChanged || e.account == maker),
        "no balance of the taker"
    );
    let booked: Vec<u64> = events
        .iter()
        .filter(|e| e.kind == MbEventKind::OrderBooked)
        .map(|e| e.order)
        .collect();
    assert_eq!(
        booked,
        vec![placed],
        "only the maker's order, not the taker's bid"
    );
}
