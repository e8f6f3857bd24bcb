//! The C account feed against the accounts it describes: a session that subscribes
//! halfway through a random flow of places, amends, cancels and fills, and applies every
//! message (the snapshot's live orders and balances, then each update's order record and
//! the balances it moved), holds each account's open orders exactly as
//! `mb_session_order_record` shows them and its balances as `mb_session_balances` does.

#![warn(clippy::too_many_lines)]
// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

mod common;

use std::collections::BTreeMap;
use std::ptr::null_mut;

use matchbook_ffi::account_feed::{
    MbAccountUpdate, MbAccountUpdateKind, mb_session_poll_accounts, mb_session_subscribe_accounts,
};
use matchbook_ffi::constructors::{mb_cmd_amend, mb_cmd_cancel, mb_cmd_place_limit};
use matchbook_ffi::history::{MbOrderRecord, MbOrderStatus, mb_session_order_record};
use matchbook_ffi::query::MbBalance;
use matchbook_ffi::runtime::{
    MbSession, mb_runtime_free, mb_runtime_refdata, mb_session_free, mb_session_new,
};
use matchbook_ffi::session_queries::{mb_session_balances, mb_session_open_orders};
use matchbook_ffi::status::MbStatus;
use matchbook_ffi::types::{MbSide, MbTimeInForce};

/// The accounts as the feed built them.
#[derive(Default)]
struct Mirror {
    orders: BTreeMap<(u32, u64), MbOrderRecord>,
    balances: BTreeMap<(u32, u16), (i64, i64)>,
    settled: usize,
    /// A price waited for, and whether an order created at it has been seen.
    marker: (i64, bool),
}

impl Mirror {
    fn apply(&mut self, m: &MbAccountUpdate) {
        let kind = m.kind;
        if kind == MbAccountUpdateKind::Balance as u32 {
            let b = m.balance;
            self.balances
                .insert((m.account, b.currency), (b.available, b.locked));
            return;
        }
        assert_eq!(m.order.account, m.account, "an order of the account");
        let key = (m.account, m.order.order.id);
        if m.order.status == MbOrderStatus::Open as u32 {
            self.orders.insert(key, m.order);
        } else {
            assert_ne!(kind, MbAccountUpdateKind::OpenOrder as u32);
            self.orders.remove(&key);
        }
        if kind == MbAccountUpdateKind::TradeSettled as u32 {
            self.settled += 1;
            assert!(m.trade.trade > 0 && m.trade.amount > 0, "a trade");
        }
        if kind == MbAccountUpdateKind::OrderCreated as u32 && m.order.price == self.marker.0 {
            self.marker.1 = true;
        }
        for (bit, moved) in m.moves.iter().enumerate() {
            if m.moved & (1 << bit) != 0 {
                let key = (m.account, moved.currency);
                self.balances.insert(key, (moved.available, moved.locked));
            }
        }
    }
}

/// Polls `feed` into `mirror` until an order created at `price` has been seen.
fn follow_until(feed: *mut MbSession, mirror: &mut Mirror, price: i64) {
    // SAFETY: a zeroed update is a valid value (integers only); live session.
    let mut buf = vec![unsafe { std::mem::zeroed::<MbAccountUpdate>() }; 64];
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(30);
    mirror.marker = (price, false);
    while !mirror.marker.1 {
        assert!(std::time::Instant::now() < give_up, "the feed stalled");
        let mut len = 0;
        // SAFETY: `buf` has 64 writable elements.
        let status =
            unsafe { mb_session_poll_accounts(feed, buf.as_mut_ptr(), buf.len(), &mut len) };
        assert_eq!(status, MbStatus::Ok);
        for m in &buf[..len] {
            mirror.apply(m);
        }
        if len == 0 {
            std::thread::yield_now();
        }
    }
}

/// An account's open orders as history records them, and its balances.
fn shown(session: *mut MbSession, account: u32) -> (Vec<MbOrderRecord>, Vec<(u16, i64, i64)>) {
    // SAFETY: zeroed query structs are valid values; buffers of the lengths passed.
    unsafe {
        let mut open = vec![std::mem::zeroed(); 4096];
        let mut len = 0;
        let status = mb_session_open_orders(session, account, open.as_mut_ptr(), 4096, &mut len);
        assert_eq!(status, MbStatus::Ok);
        let mut records: Vec<MbOrderRecord> = (open[..len].iter())
            .map(|o: &matchbook_ffi::query::MbOrder| {
                let mut record = std::mem::zeroed();
                let found = mb_session_order_record(session, account, o.order.id, &mut record);
                assert_eq!(found, MbStatus::Ok);
                record
            })
            .collect();
        records.sort_by_key(|r| r.order.id);
        let mut balances = vec![std::mem::zeroed::<MbBalance>(); 64];
        let status = mb_session_balances(session, account, balances.as_mut_ptr(), 64, &mut len);
        assert_eq!(status, MbStatus::Ok);
        let balances = (balances[..len].iter())
            .map(|b| (b.currency, b.available, b.locked))
            .collect();
        (records, balances)
    }
}

/// One random command of the flow: the maker quotes both sides around 60,000.00, the
/// taker buys through them, and resting orders are amended or cancelled.
fn flow_step(
    trader: *mut MbSession,
    (maker, taker, market): (u32, u32, u16),
    next: &mut impl FnMut() -> u64,
    resting: &mut Vec<(u32, matchbook_ffi::MbOrderRef)>,
) {
    let roll = next() % 10;
    if roll < 6 || resting.is_empty() {
        let (account, side) = match next() % 3 {
            0 => (maker, MbSide::Sell),
            1 => (maker, MbSide::Buy),
            _ => (taker, MbSide::Buy),
        };
        let price = 5_990_000 + (next() % 20) as i64 * 1_000;
        let lots = 1_000 * (1 + (next() % 4) as i64);
        let gtc = MbTimeInForce::GoodTillCancelled as u32;
        let place = mb_cmd_place_limit(account, market, side as u32, price, lots, gtc);
        if let Some(order) = common::submit_order(trader, &place) {
            resting.push((account, order));
        }
    } else if roll < 8 {
        let (account, order) = resting[(next() as usize) % resting.len()];
        let lots = 1_000 * (1 + (next() % 3) as i64);
        common::submit_order(trader, &mb_cmd_amend(account, order, lots, 0));
    } else {
        let (account, order) = resting.swap_remove((next() as usize) % resting.len());
        common::submit_order(trader, &mb_cmd_cancel(account, order));
    }
}

#[test]
fn an_account_feed_from_its_snapshot_holds_the_orders_and_balances_shown() {
    // SAFETY: valid pointers throughout; everything is freed at the end.
    unsafe {
        let runtime = common::runtime(common::config(), 0);
        let (maker, taker, btc_eur) = common::demo_ids(mb_runtime_refdata(runtime));
        let (mut trader, mut feed) = (null_mut(), null_mut());
        mb_session_new(runtime, 0, &mut trader);
        mb_session_new(runtime, 0, &mut feed);
        assert_eq!(
            mb_session_poll_accounts(feed, null_mut(), 0, &mut 0),
            MbStatus::InvalidArgument
        );
        let unknown = [maker, 999];
        assert_eq!(
            mb_session_subscribe_accounts(feed, unknown.as_ptr(), 2),
            MbStatus::UnknownAccount
        );
        let mut state = 11u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            state >> 33
        };
        let mut resting = Vec::new();
        let mut mirror = Mirror::default();
        let accounts = [maker, taker];
        let mut marker = 5_000_000;
        for round in 0..2_000 {
            if round == 700 {
                let status = mb_session_subscribe_accounts(feed, accounts.as_ptr(), 2);
                assert_eq!(status, MbStatus::Ok);
            }
            flow_step(trader, (maker, taker, btc_eur), &mut next, &mut resting);
            if round % 400 == 399 && round > 700 {
                // Drain as the flow goes, as a live consumer would.
                marker += 1_000;
                let gtc = MbTimeInForce::GoodTillCancelled as u32;
                let place = mb_cmd_place_limit(maker, btc_eur, 0, marker, 1_000, gtc);
                let order = common::submit_order(trader, &place).expect("the marker rests");
                follow_until(feed, &mut mirror, marker);
                common::submit_order(trader, &mb_cmd_cancel(maker, order));
            }
        }
        let gtc = MbTimeInForce::GoodTillCancelled as u32;
        let place = mb_cmd_place_limit(maker, btc_eur, 0, 4_000_000, 1_000, gtc);
        common::submit_order(trader, &place).expect("the marker rests");
        follow_until(feed, &mut mirror, 4_000_000);
        for account in accounts {
            let (records, balances) = shown(feed, account);
            let mirrored: Vec<MbOrderRecord> = (mirror.orders.iter())
                .filter(|((a, _), _)| *a == account)
                .map(|(_, r)| *r)
                .collect();
            assert_eq!(mirrored, records, "account {account}'s open orders");
            let mirrored: Vec<(u16, i64, i64)> = (mirror.balances.iter())
                .filter(|((a, _), _)| *a == account)
                .map(|((_, c), (available, locked))| (*c, *available, *locked))
                .collect();
            assert_eq!(mirrored, balances, "account {account}'s balances");
        }
        assert!(mirror.settled > 10, "{} fills seen", mirror.settled);
        assert!(
            mirror.orders.len() > 10,
            "{} open orders",
            mirror.orders.len()
        );
        mb_session_free(trader);
        mb_session_free(feed);
        mb_runtime_free(runtime);
    }
}
