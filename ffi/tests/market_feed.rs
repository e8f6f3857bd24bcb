//! The C market feed against the books it describes: a session that subscribes halfway
//! through a random flow and applies every message (each book's snapshot, then its
//! changed levels) holds the books `mb_session_book_levels` shows, each book's updates
//! numbered one after another, each announced top its own copy's, trades included.

#![warn(clippy::too_many_lines)]
// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

mod common;

use std::collections::BTreeMap;
use std::ptr::null_mut;

use matchbook_ffi::constructors::{mb_cmd_cancel, mb_cmd_place_limit};
use matchbook_ffi::market_feed::{
    MbMarketUpdate, MbMarketUpdateKind, mb_session_poll_market, mb_session_subscribe_market,
};
use matchbook_ffi::query::MbLevel;
use matchbook_ffi::runtime::{
    MbSession, mb_runtime_free, mb_runtime_refdata, mb_session_book_levels, mb_session_free,
    mb_session_new,
};
use matchbook_ffi::status::MbStatus;
use matchbook_ffi::types::{MbSide, MbTimeInForce};

/// The books as the feed built them: (instrument, side, price) -> (amount, orders), and
/// each book's sequence.
#[derive(Default)]
struct Mirror {
    levels: BTreeMap<(u16, u8, i64), (i64, u32)>,
    sequences: BTreeMap<u16, u64>,
    trades: usize,
    /// A price waited for, and whether a level at it has been applied since.
    marker: (i64, bool),
}

impl Mirror {
    fn best(&self, instrument: u16, side: u8) -> (i64, i64) {
        let mut side_levels = (self.levels.iter())
            .filter(|((i, s, _), _)| *i == instrument && *s == side)
            .map(|((_, _, p), (a, _))| (*p, *a));
        let best = if side == 0 {
            side_levels.next_back()
        } else {
            side_levels.next()
        };
        best.unwrap_or((0, 0))
    }

    fn apply(&mut self, m: &MbMarketUpdate) {
        let book = m.instrument;
        match m.kind {
            MbMarketUpdateKind::Snapshot => {
                self.levels.retain(|(i, _, _), _| *i != book);
                self.sequences.insert(book, m.book_sequence);
            }
            MbMarketUpdateKind::Level => {
                let last = self.sequences.get(&book).copied().unwrap_or(0);
                assert!(
                    m.book_sequence == last || m.book_sequence == last + 1,
                    "book {book}: sequence {} after {last}",
                    m.book_sequence
                );
                self.sequences.insert(book, m.book_sequence);
                let key = (book, m.side, m.price);
                if m.amount == 0 {
                    self.levels.remove(&key);
                } else {
                    self.levels.insert(key, (m.amount, m.orders));
                }
                if m.price == self.marker.0 {
                    self.marker.1 = true;
                }
            }
            MbMarketUpdateKind::Top => {
                assert_eq!(
                    (m.price, m.amount),
                    self.best(book, m.side),
                    "announced top"
                );
            }
            MbMarketUpdateKind::Trade => self.trades += 1,
        }
    }
}

/// Polls `feed` into `mirror` until a level at `price` has been seen.
fn follow_until(feed: *mut MbSession, mirror: &mut Mirror, price: i64) {
    // SAFETY: a zeroed update is a valid value (integers and a kind 0); live session.
    let mut buf = vec![unsafe { std::mem::zeroed::<MbMarketUpdate>() }; 64];
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(30);
    mirror.marker = (price, false);
    while !mirror.marker.1 {
        assert!(std::time::Instant::now() < give_up, "the feed stalled");
        let mut len = 0;
        // SAFETY: `buf` has 64 writable elements.
        let status = unsafe { mb_session_poll_market(feed, buf.as_mut_ptr(), buf.len(), &mut len) };
        assert_eq!(status, MbStatus::Ok);
        // All of a poll is applied, also past the marker: the messages come in order.
        for m in &buf[..len] {
            mirror.apply(m);
        }
        if len == 0 {
            std::thread::yield_now();
        }
    }
}

fn book_levels(session: *mut MbSession, instrument: u16) -> Vec<(u8, i64, i64, u32)> {
    // SAFETY: a zeroed level is a valid value (integers only).
    let empty = unsafe { std::mem::zeroed::<MbLevel>() };
    let (mut bids, mut asks) = (vec![empty; 4096], vec![empty; 4096]);
    let (mut nb, mut na) = (0, 0);
    // SAFETY: both buffers have 4,096 writable elements; live session.
    let status = unsafe {
        mb_session_book_levels(
            session,
            instrument,
            4096,
            bids.as_mut_ptr(),
            4096,
            &mut nb,
            asks.as_mut_ptr(),
            4096,
            &mut na,
        )
    };
    assert_eq!(status, MbStatus::Ok);
    let side = |s: u8, levels: &[MbLevel]| {
        levels
            .iter()
            .map(move |l| (s, l.price, l.amount, l.orders))
            .collect::<Vec<_>>()
    };
    let mut all = side(0, &bids[..nb]);
    all.reverse();
    all.extend(side(1, &asks[..na]));
    all
}

#[test]
fn a_market_feed_from_its_snapshot_holds_the_books_shown() {
    // SAFETY: valid pointers throughout; everything is freed at the end.
    unsafe {
        let runtime = common::runtime(common::config(), 0);
        let (maker, taker, btc_eur) = common::demo_ids(mb_runtime_refdata(runtime));
        let (mut trader, mut feed) = (null_mut(), null_mut());
        mb_session_new(runtime, 0, &mut trader);
        mb_session_new(runtime, 0, &mut feed);
        assert_eq!(
            mb_session_poll_market(feed, null_mut(), 0, &mut 0),
            MbStatus::InvalidArgument
        );
        let gtc = MbTimeInForce::GoodTillCancelled as u32;
        let mut state = 7u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            state >> 33
        };
        let mut resting = Vec::new();
        let mut mirror = Mirror::default();
        for round in 0..2_000 {
            if round == 700 {
                assert_eq!(mb_session_subscribe_market(feed), MbStatus::Ok);
            }
            let roll = next() % 10;
            if roll < 6 || resting.is_empty() {
                // The maker quotes both sides around 60,000.00; the taker buys, sometimes
                // through the asks.
                let (account, side) = match next() % 3 {
                    0 => (maker, MbSide::Sell),
                    1 => (maker, MbSide::Buy),
                    _ => (taker, MbSide::Buy),
                };
                let price = 5_990_000 + (next() % 20) as i64 * 1_000;
                let lots = 1_000 * (1 + (next() % 4) as i64);
                let place = mb_cmd_place_limit(account, btc_eur, side as u32, price, lots, gtc);
                if let Some(order) = common::submit_order(trader, &place) {
                    resting.push((account, order));
                }
            } else {
                let (account, order) = resting.swap_remove((next() as usize) % resting.len());
                common::submit_order(trader, &mb_cmd_cancel(account, order));
            }
            if round % 400 == 399 && round > 700 {
                // Drain as the flow goes, as a live consumer would.
                let marker = 5_000_000 + round as i64;
                let place =
                    mb_cmd_place_limit(maker, btc_eur, MbSide::Buy as u32, marker, 1_000, gtc);
                let order = common::submit_order(trader, &place).expect("the marker rests");
                follow_until(feed, &mut mirror, marker);
                common::submit_order(trader, &mb_cmd_cancel(maker, order));
            }
        }
        let marker = 4_000_000;
        let place = mb_cmd_place_limit(maker, btc_eur, MbSide::Buy as u32, marker, 1_000, gtc);
        common::submit_order(trader, &place).expect("the marker rests");
        follow_until(feed, &mut mirror, marker);
        let mirrored: Vec<(u8, i64, i64, u32)> = (mirror.levels.iter())
            .filter(|((i, _, _), _)| *i == btc_eur)
            .map(|((_, s, p), (a, n))| (*s, *p, *a, *n))
            .collect();
        assert_eq!(mirrored, book_levels(feed, btc_eur));
        assert!(mirror.trades > 10, "{} trades seen", mirror.trades);
        mb_session_free(trader);
        mb_session_free(feed);
        mb_runtime_free(runtime);
    }
}
