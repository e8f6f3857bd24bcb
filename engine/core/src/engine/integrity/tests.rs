//! Integrity checks against engines and images damaged on purpose: each damage alone is
//! refused.

use super::*;
use crate::command::Command;
use crate::ids::{CurrencyId, InstrumentId, Timestamp, Uuid};
use crate::order::{NewOrder, OrderType, Side, TimeInForce};

const T0: i64 = 1_767_225_600_000_000_000;

/// The demo engine with resting spot orders (one with a client id, one expiring), a
/// waiting stop, an open futures position pair and a resting futures order.
fn busy() -> Engine {
    let mut engine = Engine::new(crate::demo::config()).expect("demo");
    let mut events = Vec::new();
    let mut run = |engine: &mut Engine, command: Command| {
        engine
            .apply(&command, Timestamp(T0), &mut events)
            .expect("accepted");
    };
    run(&mut engine, Command::CreateHolder);
    run(&mut engine, Command::CreateHolder);
    for account in [AccountId(0), AccountId(1)] {
        for code in ["BTC", "EUR", "USD"] {
            let currency = engine.currency_by_code(code).expect("demo currency");
            run(
                &mut engine,
                Command::Deposit {
                    account,
                    currency,
                    amount: 1_000_000_000_000,
                },
            );
        }
    }
    let price = |engine: &Engine, i: u16, text: &str| {
        engine.instruments()[usize::from(i)]
            .parse_price(text)
            .expect("price")
    };
    let qty = |engine: &Engine, i: u16, text: &str| {
        engine.instruments()[usize::from(i)]
            .parse_qty(text)
            .expect("qty")
    };
    let limit = |engine: &Engine, account: u32, i: u16, side: Side, p: &str| {
        NewOrder::limit(
            AccountId(account),
            InstrumentId(i),
            side,
            price(engine, i, p),
            qty(engine, i, "0.01"),
        )
    };
    let mut with_client = limit(&engine, 0, 0, Side::Buy, "59000");
    with_client.client_id = Some(Uuid(7));
    run(&mut engine, Command::PlaceOrder(with_client));
    let mut expiring = limit(&engine, 0, 0, Side::Buy, "58000");
    expiring.time_in_force = TimeInForce::GoodTillTime;
    expiring.expire_at = Some(Timestamp(T0 + 3_600_000_000_000));
    run(&mut engine, Command::PlaceOrder(expiring));
    let order = limit(&engine, 1, 0, Side::Sell, "61000");
    run(&mut engine, Command::PlaceOrder(order));
    let mut stop = limit(&engine, 1, 0, Side::Sell, "50000");
    stop.order_type = OrderType::Stop;
    stop.trigger_price = Some(price(&engine, 0, "51000"));
    run(&mut engine, Command::PlaceOrder(stop));
    let order = limit(&engine, 0, 5, Side::Buy, "60000");
    run(&mut engine, Command::PlaceOrder(order));
    let order = limit(&engine, 1, 5, Side::Sell, "60000");
    run(&mut engine, Command::PlaceOrder(order));
    let order = limit(&engine, 1, 5, Side::Sell, "62000");
    run(&mut engine, Command::PlaceOrder(order));
    engine
}

fn reference() -> Engine {
    Engine::new(crate::demo::config()).expect("demo")
}

fn slot_where(engine: &Engine, what: impl Fn(&crate::order::Order) -> bool) -> usize {
    engine
        .orders
        .iter()
        .find(|(_, o)| what(o))
        .map(|(slot, _)| slot)
        .expect("the busy engine has such an order")
}

#[test]
fn a_reachable_state_passes_and_round_trips() {
    let engine = busy();
    assert_eq!(engine.check_restored(&reference()), Ok(()));
    assert!(engine.futures.markets.iter().any(|m| m.open_interest > 0));
    let image = engine.image().expect("image");
    let bytes = postcard::to_stdvec(&image).expect("encode");
    let decoded: crate::image::EngineImage = postcard::from_bytes(&bytes).expect("decode");
    assert_eq!(decoded, image);
    let back = Engine::restore(&reference(), decoded).expect("restores");
    assert_eq!(back.state_hash(), engine.state_hash());
    assert_eq!(back.image().expect("image"), image);
}

/// A change to an engine's image.
type Damage = fn(&mut crate::image::EngineImage);

/// Damages each of which a restore must refuse, by name.
fn image_damages() -> [(&'static str, Damage); 14] {
    [
        ("bids out of order", |i| {
            let bids = &mut i.books[0].bids;
            assert!(bids.len() > 1, "two bid levels");
            bids.swap(0, 1);
        }),
        ("a side naming a missing level", |i| {
            i.books[0].asks.push(999)
        }),
        ("a level on both sides", |i| {
            let bid = i.books[0].bids[0];
            i.books[0].asks.push(bid);
        }),
        ("two newest orders of an account", |i| {
            let o = i
                .orders
                .occupied
                .iter_mut()
                .find(|(_, o)| o.account_newer != NIL);
            o.expect("an older order").1.account_newer = NIL;
        }),
        ("a missing book", |i| {
            i.books.pop();
        }),
        ("an account's balances short of the currencies", |i| {
            i.accounts[0].balances.pop();
        }),
        ("a futures market's funding dropped", |i| {
            let m = i.futures.markets.iter_mut().find(|m| m.funding.is_some());
            m.expect("a perpetual").funding = None;
        }),
        ("a short volume window", |i| {
            i.volumes[0][0].buckets.pop();
        }),
        ("a stop order on an unknown instrument", |i| {
            let o = i
                .orders
                .occupied
                .iter_mut()
                .find(|(_, o)| o.state == LiveState::PendingTrigger);
            o.expect("a stop").1.instrument.0 = 999;
        }),
        ("overlapping order slots", |i| {
            let first = i.orders.occupied[0].0;
            i.orders.vacant_in_order.push(first);
        }),
        ("an order counted by no holder", |i| {
            i.holders[0].open_orders += 1
        }),
        // The next three loaded before 2026-11-27, then overflowed on the first command.
        ("a started funding clock at the far past", |i| {
            assert!(i.futures.scheduled, "the busy engine's clocks run");
            let f = i
                .futures
                .markets
                .iter_mut()
                .find_map(|m| m.funding.as_mut());
            f.expect("a perpetual").next_sample = Timestamp(i64::MIN + 1);
        }),
        ("funding samples past what their sum holds", |i| {
            let f = i
                .futures
                .markets
                .iter_mut()
                .find_map(|m| m.funding.as_mut());
            f.expect("a perpetual").samples = -1;
        }),
        ("an engine clock past the horizon", |i| {
            i.now = Timestamp(i64::MAX - 5);
        }),
    ]
}

/// Damage in an image is refused by the restore, whether it breaks the rebuild of an
/// index or only the integrity check after it.
#[test]
fn a_damaged_image_is_refused() {
    let damages = image_damages();
    let reference = reference();
    for (name, damage) in damages {
        let mut image = busy().image().expect("image");
        damage(&mut image);
        assert!(
            Engine::restore(&reference, image).is_err(),
            "{name} was not refused"
        );
    }
}

/// Each corruption alone is refused: the check reads every index it claims to.
#[test]
fn every_kind_of_inconsistency_is_refused() {
    type Corruption = fn(&mut Engine);
    let corruptions: [(&str, Corruption); 15] = [
        ("another configuration", |e| {
            e.instruments[0].max_price.0 += 1
        }),
        ("level count", |e| {
            let level = e.books[0].levels.iter_mut().next().expect("a level").1;
            level.count += 1;
        }),
        ("level total", |e| {
            let level = e.books[0].levels.iter_mut().next().expect("a level").1;
            level.total.0 -= 1;
        }),
        ("order linking to itself", |e| {
            let slot = slot_where(e, |o| o.state == LiveState::Resting);
            e.orders[slot].next = slot as u32;
        }),
        ("order on the wrong side", |e| {
            let slot = slot_where(e, |o| o.state == LiveState::Resting);
            e.orders[slot].side = e.orders[slot].side.opposite();
        }),
        ("ladder bits cleared", |e| {
            e.books[0].clear_bid_bits_for_test()
        }),
        ("stop trigger moved", |e| {
            let slot = slot_where(e, |o| o.state == LiveState::PendingTrigger);
            e.orders[slot].trigger_price.0 += 1;
        }),
        ("open-order count", |e| {
            e.accounts.holders[0].open_orders += 1
        }),
        ("lock without an order", |e| {
            e.accounts.accounts[0]
                .balances
                .get_mut(CurrencyId(0))
                .locked += 1;
        }),
        ("balance of an unlisted currency", |e| {
            let unlisted = CurrencyId(e.currencies.len() as u16);
            e.accounts.accounts[0].balances.get_mut(unlisted).available = 1;
        }),
        ("client index to another order", |e| {
            let other = slot_where(e, |o| o.client_id().is_none()) as u32;
            *e.client_index.values_mut().next().expect("indexed") = other;
        }),
        ("expiry forgotten", |e| e.expiries.clear()),
        ("order slot", |e| {
            let slot = slot_where(e, |_| true);
            e.orders[slot].slot += 1;
        }),
        ("unbalanced position", |e| {
            let p = e.futures.positions.iter_mut().find(|p| p.size > 0);
            p.expect("a long position").size += 1;
        }),
        ("account of a missing holder", |e| {
            e.accounts.core[1].holder.0 = 0
        }),
    ];
    let reference = reference();
    for (name, corrupt) in corruptions {
        let mut engine = busy();
        corrupt(&mut engine);
        assert!(
            engine.check_restored(&reference).is_err(),
            "{name} was not refused"
        );
    }
}
