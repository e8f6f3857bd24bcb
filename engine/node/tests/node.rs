//! A node opened, used, stopped and reopened on its data directory: every acknowledged
//! command is there again, holders are provisioned once, a dead-man switch fires with no
//! other traffic, and a directory of another definition or one in use is refused.

use std::time::{Duration, Instant};

use matchbook::runtime::RuntimeHandle;
use matchbook::{AccountId, CancelReason, Command, Event, NewOrder, Price, Qty, Side};
use matchbook_config::Exchange;
use matchbook_node::{Node, NodeBuilder, NodeError};

const DEFINITION: &str = r#"
[[holders]]
name = "alice"
accounts = [{ name = "main", deposits = { EUR = "100000", BTC = "10" } }]

[[holders]]
name = "bob"
accounts = [{ name = "main", deposits = { EUR = "100000" } }, { name = "hedge" }]
"#;

fn definition() -> Exchange {
    Exchange::from_toml(DEFINITION).expect("the test's definition")
}

fn open(dir: &std::path::Path) -> Node {
    NodeBuilder::new(definition(), dir)
        .open()
        .expect("the node opens")
}

/// Places a resting buy of alice's on BTC_EUR at `price` (euros), returning its number.
fn rest_buy(handle: &RuntimeHandle, account: AccountId, price: i64) -> u64 {
    let (instrument, tick, lot) = handle
        .engine_blocking(|e| {
            let id = e.instrument_by_code("BTC_EUR").expect("BTC_EUR");
            let i = e.instrument(id).expect("BTC_EUR");
            (
                id,
                i.parse_price("1").expect("1 EUR"),
                i.parse_qty("0.01").expect("a lot"),
            )
        })
        .expect("a read");
    let order = NewOrder::limit(
        account,
        instrument,
        Side::Buy,
        Price(tick.0 * price),
        Qty(lot.0),
    );
    let outcome = handle
        .apply_blocking(Command::PlaceOrder(order))
        .expect("the runtime answers");
    outcome
        .result
        .expect("the order is accepted")
        .order
        .expect("an order")
        .id
}

fn open_orders(handle: &RuntimeHandle, account: AccountId) -> Vec<u64> {
    handle
        .engine_blocking(move |e| {
            (e.open_orders(account).iter())
                .map(|o| o.handle().id)
                .collect()
        })
        .expect("a read")
}

fn state_hash(handle: &RuntimeHandle) -> u64 {
    handle.engine_blocking(|e| e.state_hash()).expect("a read")
}

#[test]
fn reopening_finds_every_acknowledged_command_and_provisions_once() {
    let dir = tempfile::tempdir().expect("a directory");
    let node = open(dir.path());
    assert!(node.provisioned());
    let directory = node.directory().clone();
    let alice = directory["alice"].accounts["main"];
    assert!(directory["bob"].accounts.contains_key("hedge"));
    let placed: Vec<u64> = (0..50)
        .map(|i| rest_buy(&node.handle(), alice, 20_000 + i))
        .collect();
    let before = state_hash(&node.handle());
    node.stop().expect("a clean stop");

    let node = open(dir.path());
    assert!(
        !node.provisioned(),
        "the holders came back from the journal"
    );
    assert_eq!(node.directory(), &directory);
    assert_eq!(state_hash(&node.handle()), before);
    let mut open = open_orders(&node.handle(), alice);
    open.sort_unstable();
    assert_eq!(open, placed);
}

#[test]
fn a_dead_man_switch_fires_with_no_other_traffic() {
    let dir = tempfile::tempdir().expect("a directory");
    let node = open(dir.path());
    let alice = node.directory()["alice"].accounts["main"];
    let handle = node.handle();
    let order = rest_buy(&handle, alice, 20_000);
    let feed = handle.subscribe(1_024).expect("a feed");
    let armed = Command::SetCancelAllAfter {
        account: alice,
        timeout: Duration::from_millis(200).as_nanos() as u64,
    };
    handle
        .apply_blocking(armed)
        .expect("armed")
        .result
        .expect("armed");
    let give_up = Instant::now() + Duration::from_secs(20);
    let cancelled = loop {
        let left = give_up.saturating_duration_since(Instant::now());
        let Ok(batch) = feed.receiver().recv_timeout(left) else {
            break None;
        };
        let found = batch.events.iter().find_map(|r| match r.event {
            Event::OrderCancelled {
                order: o, reason, ..
            } if o.id == order => Some(reason),
            _ => None,
        });
        if found.is_some() {
            break found;
        }
    };
    assert_eq!(cancelled, Some(CancelReason::CancelAllAfter));
    assert!(open_orders(&handle, alice).is_empty());
    drop(feed);
    node.stop().expect("a clean stop");
    // The cancel was journalled: a reopened node has no such order.
    let node = open(dir.path());
    assert!(open_orders(&node.handle(), alice).is_empty());
}

#[test]
fn a_directory_of_another_definition_is_refused() {
    let dir = tempfile::tempdir().expect("a directory");
    open(dir.path()).stop().expect("a clean stop");
    let mut other = definition();
    other.max_open_orders = Some(7);
    let refused = NodeBuilder::new(other, dir.path()).open();
    assert!(matches!(refused, Err(NodeError::Store(_))), "{refused:?}");
}

#[test]
fn a_directory_in_use_is_refused_until_its_node_stops() {
    let dir = tempfile::tempdir().expect("a directory");
    let node = open(dir.path());
    let second = NodeBuilder::new(definition(), dir.path()).open();
    assert!(matches!(second, Err(NodeError::Store(_))), "{second:?}");
    drop(node);
    open(dir.path())
        .stop()
        .expect("open once the first stopped");
}
