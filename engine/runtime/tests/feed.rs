//! The market stage's feed against the books it describes: a subscriber that starts from
//! the snapshot `subscribe_feed` hands it and applies every book update after it holds the
//! replica's L2 books exactly, each book's updates numbered one after another with no gap,
//! the tops it announces those of its own copy; while orders are placed, traded, amended
//! and cancelled from two threads, and a second subscriber joins halfway.

#![warn(clippy::too_many_lines)]

use std::collections::BTreeMap;
use std::sync::Arc;

use matchbook_config::demo;
use matchbook_core::{
    AccountId, CancelScope, Command, CurrencyId, Engine, Event, InstrumentId, NewOrder,
    OrderStatus, Price, Qty, Side, Timestamp, TopLevel,
};
use matchbook_market::MarketData;
use matchbook_market::orders::OrderRecord;
use matchbook_runtime::{
    BalanceMove, FeedBatch, ManualClock, ReadView, Runtime, RuntimeHandle, Subscription,
};

const T0: Timestamp = Timestamp(1_767_225_600_000_000_000);
const BOOKS: u16 = 2;

fn start() -> Runtime {
    let mut config = demo::config();
    config.max_open_orders = 100_000;
    let engine = Engine::new(config).expect("demo config");
    let market = MarketData::new(engine.instruments().len(), Default::default());
    Runtime::start(engine, market, Arc::new(ManualClock::at(T0)), 4_096).expect("threads")
}

fn funded(handle: &RuntimeHandle) -> AccountId {
    let created = handle
        .apply_blocking(Command::CreateHolder)
        .expect("running");
    let account = created
        .result
        .ok()
        .and_then(|a| a.account)
        .expect("account");
    for currency in 0..4 {
        let deposit = Command::Deposit {
            account,
            currency: CurrencyId(currency),
            amount: 1_000_000_000_000_000,
        };
        handle.apply_blocking(deposit).expect("running");
    }
    account
}

/// The books as a subscriber builds them: level amounts, and each book's sequence; and
/// the live orders and balances of the accounts it follows.
#[derive(Debug, Default, PartialEq, Eq)]
struct Mirror {
    levels: BTreeMap<(u16, Side, i64), i64>,
    sequences: Vec<u64>,
    accounts: Vec<AccountId>,
    orders: BTreeMap<u64, OrderRecord>,
    balances: BTreeMap<(AccountId, CurrencyId), (i64, i64)>,
    /// The event sequence number the next account update may not be below (a trade's two
    /// updates share one).
    last_update: u64,
}

impl Mirror {
    /// Every book, and the live orders and balances of `accounts`, as of `view`.
    fn of(view: &ReadView<'_>, accounts: &[AccountId]) -> Self {
        let mut mirror = Self {
            accounts: accounts.to_vec(),
            last_update: view.event_seq + 1,
            ..Self::default()
        };
        for &account in accounts {
            for order in view.engine.open_orders(account) {
                let id = order.handle().id;
                let record = view.market.orders().get(account, id).expect("recorded");
                mirror.orders.insert(id, record.clone());
            }
            let balances = view.engine.account(account).expect("account");
            for (i, b) in balances.dense_balances().iter().enumerate() {
                let currency = CurrencyId(i as u16);
                mirror
                    .balances
                    .insert((account, currency), (b.available, b.locked));
            }
        }
        for i in 0..BOOKS {
            let book = view
                .engine
                .book_levels(InstrumentId(i), usize::MAX)
                .expect("book");
            for (side, levels) in [(Side::Buy, &book.bids), (Side::Sell, &book.asks)] {
                for l in levels {
                    mirror.levels.insert((i, side, l.price.0), l.amount.0);
                }
            }
            mirror.sequences.push(book.sequence);
        }
        mirror
    }

    fn top(&self, i: u16) -> (TopLevel, TopLevel) {
        let side = |side| {
            self.levels
                .iter()
                .filter(move |((b, s, _), _)| *b == i && *s == side)
        };
        let level = |((_, _, p), a): (&(u16, Side, i64), &i64)| (Price(*p), Qty(*a));
        (
            side(Side::Buy).next_back().map(level),
            side(Side::Sell).next().map(level),
        )
    }

    /// Applies a batch; the last command it covers.
    fn apply(&mut self, batch: &FeedBatch) -> u64 {
        for (_, update) in &batch.books {
            let i = update.instrument.0;
            if i >= BOOKS {
                continue;
            }
            let before = self.top(i);
            let sequence = &mut self.sequences[usize::from(i)];
            assert_eq!(
                update.sequence,
                *sequence + 1,
                "book {i}: no gap, no repeat"
            );
            *sequence = update.sequence;
            for level in &update.levels {
                let key = (i, level.side, level.price.0);
                if level.amount.0 == 0 {
                    self.levels.remove(&key);
                } else {
                    self.levels.insert(key, level.amount.0);
                }
            }
            let after = self.top(i);
            match update.top {
                Some(top) => assert_eq!(top, after, "the top announced is the book's"),
                None => assert_eq!(before, after, "a top that moved is announced"),
            }
        }
        self.apply_accounts(batch);
        batch.published.last_seq().unwrap_or(0)
    }

    /// Applies the account updates of a batch: each order's record replaces the one held
    /// (an ended one leaves), each balance moved is set; after the batch the balances are
    /// those its raw events leave.
    fn apply_accounts(&mut self, batch: &FeedBatch) {
        let mut expected = self.balances.clone();
        for record in &batch.published.events {
            if let Event::BalanceChanged {
                account,
                currency,
                available,
                locked,
            } = record.event
                && self.accounts.contains(&account)
            {
                expected.insert((account, currency), (available, locked));
            }
        }
        for (_, update) in &batch.accounts {
            assert!(update.seq >= self.last_update, "updates in event order");
            self.last_update = update.seq;
            if !self.accounts.contains(&update.account) {
                continue;
            }
            if let Some(record) = &update.order {
                assert_eq!(record.accepted.account, update.account);
                let id = record.accepted.order.id;
                if record.status == OrderStatus::Open {
                    self.orders.insert(id, record.clone());
                } else {
                    self.orders.remove(&id);
                }
            }
            let m = &update.moves;
            for moved in [m.locked, m.unlocked, m.spent, m.credited, m.deducted]
                .into_iter()
                .flatten()
            {
                let BalanceMove {
                    currency,
                    available,
                    locked,
                } = moved;
                (self.balances).insert((update.account, currency), (available, locked));
            }
        }
        assert_eq!(self.balances, expected, "the balances the events leave");
    }
}

/// Follows `feed` from `mirror` until it has applied command `through`.
fn follow(feed: &Subscription<FeedBatch>, mirror: &mut Mirror, through: u64) {
    let mut seen = feed.start_seq;
    while seen < through {
        let batch = feed.recv().expect("the feed goes on");
        seen = seen.max(mirror.apply(&batch));
    }
}

/// A deterministic flow of one trader: limit orders on both sides of two books, some
/// crossing, amends, cancels and mass cancels.
fn trade(handle: &RuntimeHandle, account: AccountId, seed: u64, commands: usize) -> u64 {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        state >> 33
    };
    let mut placed = Vec::new();
    let mut last = 0;
    for _ in 0..commands {
        let roll = next() % 100;
        let instrument = InstrumentId((next() % u64::from(BOOKS)) as u16);
        let command = if roll < 60 || placed.is_empty() {
            let side = if next() % 2 == 0 {
                Side::Buy
            } else {
                Side::Sell
            };
            let price = 6_000_000 + (next() % 40) as i64 * 100 - 2_000;
            let amount = 1_000 * (1 + (next() % 5) as i64);
            let order = NewOrder::limit(account, instrument, side, Price(price), Qty(amount));
            Command::PlaceOrder(order)
        } else if roll < 75 {
            let order = placed[(next() as usize) % placed.len()];
            let amount = Some(Qty(1_000 * (1 + (next() % 3) as i64)));
            let price = (next() % 2 == 0).then(|| Price(6_000_000 + (next() % 40) as i64 * 100));
            Command::AmendOrder {
                account,
                order,
                amount,
                price,
            }
        } else if roll < 97 {
            let order = placed.swap_remove((next() as usize) % placed.len());
            Command::CancelOrder { account, order }
        } else {
            let scope = CancelScope::Instrument(instrument);
            Command::CancelAll { account, scope }
        };
        let outcome = handle.apply_blocking(command).expect("running");
        if let Ok(applied) = outcome.result
            && let Some(order) = applied.order
            && roll < 60
        {
            placed.push(order);
        }
        last = outcome.seq;
    }
    last
}

#[test]
fn a_subscriber_from_its_snapshot_holds_the_books_through_every_update() {
    let runtime = start();
    let handle = runtime.handle();
    let (a, b) = (funded(&handle), funded(&handle));
    trade(&handle, a, 1, 200);
    let mirror = move |view: &ReadView<'_>| Mirror::of(view, &[a, b]);
    let (early, mut first) = handle.subscribe_feed(1 << 16, mirror).expect("subscribed");
    let traders = [(a, 2), (b, 3)].map(|(account, seed)| {
        let handle = handle.clone();
        std::thread::spawn(move || trade(&handle, account, seed, 1_500))
    });
    // Halfway in, a second subscriber starts from its own snapshot.
    follow(&early, &mut first, early.start_seq + 300);
    let (late, mut second) = handle.subscribe_feed(1 << 16, mirror).expect("subscribed");
    let last = traders
        .map(|t| t.join().expect("trader"))
        .into_iter()
        .max()
        .unwrap_or(0);
    follow(&early, &mut first, last);
    follow(&late, &mut second, last);
    let mut now = handle.read_blocking(mirror).expect("read");
    // What the subscribers saw last, not what the mirrors hold.
    now.last_update = first.last_update;
    assert_eq!(first, now, "the early subscriber's books and accounts");
    now.last_update = second.last_update;
    assert_eq!(second, now, "the late subscriber's books and accounts");
    assert!(now.orders.len() > 10, "{} live orders", now.orders.len());
    assert!(
        now.sequences.iter().all(|&s| s > 100),
        "{:?}",
        now.sequences
    );
    drop(runtime);
}

#[test]
fn the_replica_notes_levels_only_while_someone_subscribes() {
    let runtime = start();
    let handle = runtime.handle();
    let watching = |h: &RuntimeHandle| h.engine_blocking(Engine::watches_levels).expect("read");
    assert!(!watching(&handle));
    let (feed, ()) = handle.subscribe_feed(16, |_| ()).expect("subscribed");
    assert!(watching(&handle));
    drop(feed);
    // The stage learns of the drop at its next publication.
    handle
        .apply_blocking(Command::CreateHolder)
        .expect("running");
    assert!(!watching(&handle));
}
