//! The lookup queries against a model of what was done: order history walked page by page
//! visits every order of the account once, newest first, with the status each ended with;
//! one record and its trades by number; accounts, instrument descriptions and the fee
//! account; and the refusals (unknown order, page of 0, unknown instrument, NULL).

#![warn(clippy::too_many_lines)]
// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

mod common;

use std::ptr::{null, null_mut};

use common::START;
use matchbook_ffi::config::{mb_config_set_history_limits, mb_config_set_keep_events};
use matchbook_ffi::directory::{
    MbAccountInfo, MbInstrumentInfo, mb_engine_accounts, mb_engine_fees_collected,
    mb_engine_instrument_info,
};
use matchbook_ffi::engine::{
    MbEngine, mb_engine_cancel, mb_engine_free, mb_engine_place_limit, mb_engine_refdata,
};
use matchbook_ffi::event::{MbEvent, mb_engine_poll_events};
use matchbook_ffi::history::{
    MbOrderRecord, MbOrderStatus, MbTrade, mb_engine_order_history, mb_engine_order_record,
    mb_engine_order_trades,
};
use matchbook_ffi::status::MbStatus;
use matchbook_ffi::types::{MbOrderRef, MbSide, MbTimeInForce};

/// A C result struct before the library writes it: every field an integer (or an array
/// of them), so all zero bits is a valid value.
fn zeroed<T: Copy>() -> T {
    // SAFETY: only called with the ABI's plain structs of integers.
    unsafe { std::mem::zeroed() }
}

struct World {
    engine: *mut MbEngine,
    maker: u32,
    taker: u32,
    btc_eur: u16,
}

fn world() -> World {
    world_with(|_| {})
}

/// A world whose definition `adjust` changed before the engine is made of it.
fn world_with(adjust: impl FnOnce(*mut matchbook_ffi::config::MbConfig)) -> World {
    let engine = common::engine_with(adjust);
    // SAFETY: a live engine.
    let (maker, taker, btc_eur) = unsafe { common::demo_ids(mb_engine_refdata(engine)) };
    World {
        engine,
        maker,
        taker,
        btc_eur,
    }
}

fn place(
    w: &World,
    t: i64,
    account: u32,
    side: MbSide,
    price: i64,
    lots: i64,
    tif: MbTimeInForce,
) -> (MbStatus, MbOrderRef) {
    let mut order = MbOrderRef { id: 0, slot: 0 };
    // SAFETY: live engine, writable out.
    let s = unsafe {
        mb_engine_place_limit(
            w.engine,
            t,
            account,
            w.btc_eur,
            side as u32,
            price,
            lots,
            tif as u32,
            &mut order,
        )
    };
    (s, order)
}

#[test]
fn history_pages_visit_every_order_once_with_its_ending() {
    let w = world();
    let mut model = place_and_end_taker_orders(&w);
    model.reverse();
    let (seen, pages) = history_pages(&w);
    let want: Vec<_> = model.iter().map(|(id, s)| (*id, *s as u32)).collect();
    assert_eq!(seen, want, "newest first, each once, with its ending");
    assert_eq!(pages, 3, "12 orders in pages of 5");
    check_records_and_trades(&w, &model);
    // SAFETY: live engine, freed once.
    unsafe { mb_engine_free(w.engine) };
}

/// Five asks of the maker, then twelve taker orders ending each way (filled by an
/// immediate-or-cancel order, open, refused fill-or-kill, cancelled): the model of each
/// (order number, expected status), in placing order.
fn place_and_end_taker_orders(w: &World) -> Vec<(u64, MbOrderStatus)> {
    let gtc = MbTimeInForce::GoodTillCancelled;
    let mut model = Vec::new();
    for i in 0..5 {
        place(
            w,
            START,
            w.maker,
            MbSide::Sell,
            6_010_000 + i * 100,
            1_000,
            gtc,
        );
    }
    for i in 0..12i64 {
        let t = START + i;
        let (s, order) = match i % 4 {
            0 => place(
                w,
                t,
                w.taker,
                MbSide::Buy,
                6_030_000,
                500,
                MbTimeInForce::ImmediateOrCancelled,
            ),
            1 => place(w, t, w.taker, MbSide::Buy, 5_000_000 + i, 1_000, gtc),
            2 => place(
                w,
                t,
                w.taker,
                MbSide::Buy,
                6_500_000,
                1_000_000,
                MbTimeInForce::FillOrKill,
            ),
            _ => place(w, t, w.taker, MbSide::Buy, 4_000_000 + i, 1_000, gtc),
        };
        let status = match i % 4 {
            0 => MbOrderStatus::FilledFully,
            1 => MbOrderStatus::Open,
            2 => MbOrderStatus::FilledRejected,
            _ => {
                // SAFETY: live engine.
                assert_eq!(
                    unsafe { mb_engine_cancel(w.engine, t, w.taker, order) },
                    MbStatus::Ok
                );
                MbOrderStatus::Cancelled
            }
        };
        assert!(
            matches!(s, MbStatus::Ok | MbStatus::InsufficientLiquidity),
            "{s:?}"
        );
        model.push((order.id, status));
    }
    model
}

/// The taker's order history, paged five at a time from the newest: (order number,
/// status) of each record, and the number of pages.
fn history_pages(w: &World) -> (Vec<(u64, u32)>, usize) {
    let mut seen = Vec::new();
    let mut before = 0u64;
    let mut pages = 0;
    loop {
        let mut page = [zeroed::<MbOrderRecord>(); 5];
        let (mut len, mut next) = (0usize, 0u64);
        // SAFETY: live engine, buffers of the sizes given.
        let s = unsafe {
            mb_engine_order_history(
                w.engine,
                w.taker,
                before,
                page.as_mut_ptr(),
                5,
                &mut len,
                &mut next,
            )
        };
        assert_eq!(s, MbStatus::Ok);
        pages += 1;
        seen.extend(page[..len].iter().map(|r| (r.order.id, r.status)));
        if next == 0 {
            break;
        }
        before = next;
    }
    (seen, pages)
}

/// The oldest immediate-or-cancel order took 500 lots of the best ask, 60,100.00: its
/// record and trade; the fill-or-kill's refusal; another account's lookups and bad pages.
fn check_records_and_trades(w: &World, model: &[(u64, MbOrderStatus)]) {
    let (filled_id, _) = model
        .iter()
        .rev()
        .find(|(_, s)| *s == MbOrderStatus::FilledFully)
        .copied()
        .unwrap_or((0, MbOrderStatus::Open));
    let mut record = zeroed::<MbOrderRecord>();
    let mut trades = [zeroed::<MbTrade>(); 4];
    let mut len = 0;
    let fok = model
        .iter()
        .find(|(_, s)| *s == MbOrderStatus::FilledRejected)
        .map_or(0, |m| m.0);
    // SAFETY: live engine, writable outs.
    unsafe {
        assert_eq!(
            mb_engine_order_record(w.engine, w.taker, filled_id, &mut record),
            MbStatus::Ok
        );
        assert_eq!((record.filled, record.average_price), (500, 6_010_000));
        assert_eq!(
            mb_engine_order_trades(
                w.engine,
                w.taker,
                filled_id,
                trades.as_mut_ptr(),
                4,
                &mut len
            ),
            MbStatus::Ok
        );
        assert_eq!(len, 1);
        assert_eq!(
            (trades[0].taker_order.id, trades[0].amount),
            (filled_id, 500)
        );
        assert_eq!(
            mb_engine_order_record(w.engine, w.taker, fok, &mut record),
            MbStatus::Ok
        );
        assert_eq!(record.reason, MbStatus::InsufficientLiquidity as i32);
        assert_eq!(
            mb_engine_order_record(w.engine, w.maker, filled_id, &mut record),
            MbStatus::OrderNotFound,
            "another account's"
        );
        assert_eq!(
            mb_engine_order_trades(w.engine, w.taker, 999_999, trades.as_mut_ptr(), 4, &mut len),
            MbStatus::OrderNotFound
        );
        let mut next = 0;
        assert_eq!(
            mb_engine_order_history(
                w.engine,
                w.taker,
                0,
                trades.as_mut_ptr().cast(),
                0,
                &mut len,
                &mut next
            ),
            MbStatus::InvalidArgument,
            "a page of 0"
        );
        assert_eq!(
            mb_engine_order_history(w.engine, w.taker, 0, null_mut(), 5, &mut len, null_mut()),
            MbStatus::NullArgument
        );
    }
}

#[test]
fn accounts_instruments_and_the_fee_account() {
    let w = world();
    place(
        &w,
        START,
        w.maker,
        MbSide::Sell,
        6_010_000,
        1_000,
        MbTimeInForce::GoodTillCancelled,
    );
    place(
        &w,
        START,
        w.taker,
        MbSide::Buy,
        6_010_000,
        1_000,
        MbTimeInForce::GoodTillCancelled,
    );
    let mut accounts = [zeroed::<MbAccountInfo>(); 4];
    let mut info = zeroed::<MbInstrumentInfo>();
    let mut fees = [0i64; 32];
    let mut len = 0;
    // SAFETY: live engine, buffers of the sizes given.
    unsafe {
        assert_eq!(
            mb_engine_accounts(w.engine, accounts.as_mut_ptr(), 4, &mut len),
            MbStatus::Ok
        );
        assert_eq!(len, 2);
        assert_eq!((accounts[1].account, accounts[1].holder), (w.taker, 1));
        assert_eq!(
            std::ffi::CStr::from_ptr(accounts[0].name.as_ptr()).to_str(),
            Ok("main")
        );
        assert_eq!(
            mb_engine_accounts(w.engine, accounts.as_mut_ptr(), 1, &mut len),
            MbStatus::BufferTooSmall
        );
        assert_eq!(
            mb_engine_instrument_info(w.engine, w.btc_eur, &mut info),
            MbStatus::Ok
        );
        assert_eq!(
            std::ffi::CStr::from_ptr(info.code.as_ptr()).to_str(),
            Ok("BTC_EUR")
        );
        assert_eq!((info.market_precision, info.is_future), (2, 0));
        assert_eq!(
            mb_engine_instrument_info(w.engine, 999, &mut info),
            MbStatus::UnknownInstrument
        );
        assert_eq!(
            mb_engine_instrument_info(null(), 0, &mut info),
            MbStatus::NullArgument
        );
        assert_eq!(
            mb_engine_fees_collected(w.engine, fees.as_mut_ptr(), 32, &mut len),
            MbStatus::Ok
        );
        assert!(
            fees[..len].iter().filter(|&&f| f > 0).count() == 2,
            "both sides paid: {:?}",
            &fees[..len]
        );
        mb_engine_free(w.engine);
    }
}

/// A definition's history limits: orders placed and cancelled past the limit leave the
/// newest records and the one still open; an older one is not found. NULL is refused.
#[test]
fn history_limits_keep_the_newest_orders_and_the_open_one() {
    // SAFETY: the definition is live while adjusted.
    let w = world_with(|config| unsafe {
        assert_eq!(mb_config_set_history_limits(config, 5, 0), MbStatus::Ok);
    });
    let gtc = MbTimeInForce::GoodTillCancelled;
    let (s, open) = place(&w, START, w.taker, MbSide::Buy, 5_000_000, 1_000, gtc);
    assert_eq!(s, MbStatus::Ok);
    let mut ended = Vec::new();
    for i in 1..=20 {
        let (s, order) = place(
            &w,
            START + i,
            w.taker,
            MbSide::Buy,
            5_000_000 + i,
            1_000,
            gtc,
        );
        assert_eq!(s, MbStatus::Ok);
        // SAFETY: live engine.
        let s = unsafe { mb_engine_cancel(w.engine, START + i, w.taker, order) };
        assert_eq!(s, MbStatus::Ok);
        ended.push(order.id);
    }
    let mut page = [zeroed::<MbOrderRecord>(); 50];
    let (mut len, mut next) = (0usize, 0u64);
    // SAFETY: live engine, a buffer of the size given.
    let s = unsafe {
        mb_engine_order_history(
            w.engine,
            w.taker,
            0,
            page.as_mut_ptr(),
            50,
            &mut len,
            &mut next,
        )
    };
    assert_eq!((s, next), (MbStatus::Ok, 0));
    let kept: Vec<u64> = page[..len].iter().map(|r| r.order.id).collect();
    assert!(kept.contains(&open.id), "the open order: {kept:?}");
    assert!(
        ended[16..].iter().all(|id| kept.contains(id)),
        "the newest: {kept:?}"
    );
    assert!(len <= 6, "{kept:?}");
    let mut record = zeroed::<MbOrderRecord>();
    // SAFETY: live engine, writable record; a NULL definition.
    unsafe {
        let old = mb_engine_order_record(w.engine, w.taker, ended[0], &mut record);
        assert_eq!(old, MbStatus::OrderNotFound);
        assert_eq!(
            mb_config_set_history_limits(null_mut(), 1, 1),
            MbStatus::NullArgument
        );
        mb_engine_free(w.engine);
    }
}

/// The poll's status and the events pending after 50 orders placed and cancelled, by
/// whether the definition keeps them (`mb_config_set_keep_events`).
fn pending_events(keep: u8) -> (MbStatus, usize) {
    // SAFETY: the definition is live while adjusted.
    let w = world_with(|config| unsafe {
        assert_eq!(mb_config_set_keep_events(config, keep), MbStatus::Ok);
    });
    let gtc = MbTimeInForce::GoodTillCancelled;
    for i in 1..=50 {
        let (s, order) = place(&w, START + i, w.taker, MbSide::Buy, 5_000_000, 1_000, gtc);
        assert_eq!(s, MbStatus::Ok);
        // SAFETY: live engine.
        let s = unsafe { mb_engine_cancel(w.engine, START + i, w.taker, order) };
        assert_eq!(s, MbStatus::Ok);
    }
    let mut len = 0usize;
    // SAFETY: live engine; no buffer, so the count pending comes back.
    let s = unsafe { mb_engine_poll_events(w.engine, null_mut::<MbEvent>(), 0, &mut len) };
    // SAFETY: live engine, freed once; a NULL definition.
    unsafe {
        mb_engine_free(w.engine);
        assert_eq!(
            mb_config_set_keep_events(null_mut(), 0),
            MbStatus::NullArgument
        );
    }
    (s, len)
}

/// An engine keeps every command's events until they are polled (about 1 KB for an order
/// placed and cancelled: a program that never polled grew without bound, 965 MB after a
/// million); a definition can turn that off, and then a poll says so
/// (`MB_STATUS_EVENTS_OFF`; it answered an empty success, as if nothing had happened).
#[test]
fn events_are_kept_for_polling_unless_turned_off() {
    let (kept, pending) = pending_events(1);
    assert_eq!(kept, MbStatus::BufferTooSmall);
    assert!(pending >= 100, "placed and cancelled: {pending}");
    assert_eq!(pending_events(0), (MbStatus::EventsOff, 0));
}
