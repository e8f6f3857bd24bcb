//! Price-level queues under fills, cancels and moves against a plain model (a FIFO per
//! price): the head's `prev` is left stale when the head goes (see `Order::prev`), so after
//! every step the queues must still read as the model's, the integrity check must pass,
//! an image must name no predecessor for a head, the ladder's note of each level's last
//! order must name it, and a restored engine must go on exactly as the original does.

use std::collections::{BTreeMap, VecDeque};

use proptest::prelude::*;

use super::Engine;
use crate::command::Command;
use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, InstrumentId, OrderRef, Timestamp};
use crate::order::{NIL, NewOrder, Side, TimeInForce};

const T0: i64 = 1_767_225_600_000_000_000;
const PRICES: [i64; 3] = [6_000_000, 6_000_100, 6_000_200];

#[derive(Debug, Clone)]
enum Step {
    /// A sell resting at `PRICES[price]`.
    Rest { price: usize, lots: i64 },
    /// Cancel the `k`-th live order (modulo how many live).
    Cancel { k: usize },
    /// Move the `k`-th live order to `PRICES[price]` (to the back of that level).
    Move { k: usize, price: usize },
    /// A buy taking up to `lots` from the best levels (immediate or cancel).
    Take { lots: i64 },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..PRICES.len(), 1..4i64).prop_map(|(price, lots)| Step::Rest { price, lots }),
        1 => any::<usize>().prop_map(|k| Step::Cancel { k }),
        2 => (any::<usize>(), 0..PRICES.len()).prop_map(|(k, price)| Step::Move { k, price }),
        2 => (1..8i64).prop_map(|lots| Step::Take { lots }),
    ]
}

/// Resting sells by price, each level oldest first: (order, remaining lots).
type Model = BTreeMap<i64, VecDeque<(OrderRef, i64)>>;

fn engine() -> (Engine, InstrumentId) {
    let mut config = crate::demo::config();
    config.enforce_balances = false;
    let mut engine = Engine::new(config).expect("demo");
    let mut events = Vec::new();
    for _ in 0..2 {
        engine
            .apply(&Command::CreateHolder, Timestamp(T0), &mut events)
            .expect("holder");
    }
    let inst = engine.instrument_by_code("BTC_EUR").expect("demo market");
    (engine, inst)
}

fn nth_live(model: &Model, k: usize) -> Option<(i64, usize)> {
    let live: Vec<(i64, usize)> = (model.iter())
        .flat_map(|(&p, q)| (0..q.len()).map(move |i| (p, i)))
        .collect();
    (!live.is_empty()).then(|| live[k % live.len()])
}

/// The command of `step`, and the model after it.
fn command(step: &Step, model: &mut Model, inst: InstrumentId, placed: OrderRef) -> Command {
    let lot = 1000;
    let sell = |price: i64, lots: i64| {
        NewOrder::limit(
            AccountId(0),
            inst,
            Side::Sell,
            Price(price),
            Qty(lots * lot),
        )
    };
    match *step {
        Step::Rest { price, lots } => {
            model
                .entry(PRICES[price])
                .or_default()
                .push_back((placed, lots));
            Command::PlaceOrder(sell(PRICES[price], lots))
        }
        Step::Cancel { k } | Step::Move { k, .. } => {
            let Some((p, i)) = nth_live(model, k) else {
                return Command::CreateHolder;
            };
            let queue = model.get_mut(&p).expect("listed");
            let (order, lots) = queue.remove(i).expect("listed");
            if queue.is_empty() {
                model.remove(&p);
            }
            match *step {
                Step::Move { price, .. } => {
                    if PRICES[price] == p {
                        // A move to where it is keeps its place.
                        model.entry(p).or_default().insert(i, (order, lots));
                    } else {
                        model
                            .entry(PRICES[price])
                            .or_default()
                            .push_back((order, lots));
                    }
                    Command::AmendOrder {
                        account: AccountId(0),
                        order,
                        amount: None,
                        price: Some(Price(PRICES[price])),
                    }
                }
                _ => Command::CancelOrder {
                    account: AccountId(0),
                    order,
                },
            }
        }
        Step::Take { lots } => {
            let mut left = lots;
            while left > 0 {
                let Some(mut level) = model.first_entry() else {
                    break;
                };
                let (_, have) = level.get_mut().front_mut().expect("non-empty level");
                let filled = left.min(*have);
                (*have, left) = (*have - filled, left - filled);
                if *have == 0 {
                    level.get_mut().pop_front();
                    if level.get().is_empty() {
                        level.remove();
                    }
                }
            }
            let buy = NewOrder::limit(
                AccountId(1),
                inst,
                Side::Buy,
                Price(PRICES[PRICES.len() - 1]),
                Qty(lots * lot),
            );
            Command::PlaceOrder(buy.with_tif(TimeInForce::ImmediateOrCancelled))
        }
    }
}

/// The asks in queue order as the engine lists them, and as the model has them.
fn assert_queues(engine: &Engine, inst: InstrumentId, model: &Model) {
    let listed: Vec<(i64, OrderRef, i64)> = (engine.book_orders(inst, 10).expect("book").asks)
        .iter()
        .map(|o| (o.price.0, o.order, o.amount.0 / 1000))
        .collect();
    let expected: Vec<(i64, OrderRef, i64)> = (model.iter())
        .flat_map(|(&p, q)| q.iter().map(move |&(order, lots)| (p, order, lots)))
        .collect();
    assert_eq!(listed, expected);
}

/// The ladder's note of each level's last order (a hint the queueing reads to fetch that
/// record early) names the level's real last order: kept through appends, unlinks of the
/// last order and restores.
fn assert_tail_hints(engine: &Engine, inst: InstrumentId) {
    let book = &engine.books[usize::from(inst.0)];
    for (_, level) in book.levels.iter() {
        assert_eq!(book.tail_hint(Side::Sell, level.price), level.tail);
    }
}

/// No order heading its level names a predecessor in the image.
fn assert_image_heads(engine: &Engine) {
    let image = engine.image().expect("image");
    let heads: Vec<u32> = (image.books.iter())
        .flat_map(|b| b.levels.occupied.iter().map(|(_, level)| level.head))
        .collect();
    for (slot, order) in &image.orders.occupied {
        if heads.contains(slot) {
            assert_eq!(
                order.prev, NIL,
                "the head in slot {slot} names a predecessor"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn queues_follow_a_fifo_model_through_fills_moves_and_restores(
        steps in proptest::collection::vec(step(), 1..80),
        restore_at in 0usize..80,
    ) {
        let (mut engine, inst) = engine();
        let reference = engine.clone();
        let mut model = Model::new();
        let mut restored: Option<Engine> = None;
        let mut events = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let placed = OrderRef { id: engine.next_order, slot: engine.orders.vacant_key() as u32 };
            let command = command(step, &mut model, inst, placed);
            let now = Timestamp(T0 + i as i64);
            let applied = engine.apply(&command, now, &mut events).expect("accepted");
            if let Step::Rest { .. } = step {
                prop_assert_eq!(applied.order, Some(placed));
            }
            if let Some(copy) = restored.as_mut() {
                copy.apply(&command, now, &mut events).expect("accepted");
                prop_assert_eq!(copy.state_hash(), engine.state_hash());
                prop_assert_eq!(copy.image().expect("image"), engine.image().expect("image"));
                assert_tail_hints(copy, inst);
            }
            assert_tail_hints(&engine, inst);
            assert_queues(&engine, inst, &model);
            prop_assert_eq!(engine.check_restored(&reference), Ok(()));
            assert_image_heads(&engine);
            if i == restore_at {
                let image = engine.image().expect("image");
                restored = Some(Engine::restore(&reference, image).expect("restores"));
            }
        }
    }
}
