//! What the order history's client-id index costs and saves, on N orders (default
//! 3,000,000) of 1,000 accounts, each placed and cancelled: memory and time per accepted
//! order with and without client ids, the index's build after a restore (a copy starts
//! without it), and 3,000 lookups by client id of orders spread over the history.
//! Usage: `cargo run --release -p matchbook-bench --example history_index [N]`.

#![warn(clippy::too_many_lines)]

use std::time::{Duration, Instant};

use matchbook::market::orders::OrderStore;
use matchbook::{
    AcceptedOrder, AccountId, CancelReason, InstrumentId, OrderRef, OrderType, Price, Qty, Side,
    StpMode, TimeInForce, Timestamp, Uuid,
};

fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmRSS:"));
    line.and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn order(id: u64, client_ids: bool) -> AcceptedOrder {
    AcceptedOrder {
        order: OrderRef { id, slot: 0 },
        account: AccountId((id % 1000) as u32),
        instrument: InstrumentId(0),
        side: Side::Buy,
        order_type: OrderType::Limit,
        time_in_force: TimeInForce::GoodTillCancelled,
        stp: StpMode::None,
        price: Some(Price(100)),
        trigger_price: None,
        amount: Qty(5),
        client_id: client_ids.then_some(Uuid(u128::from(id) * 7919)),
        expire_at: None,
    }
}

fn lookups(store: &OrderStore, n: u64) -> (usize, Duration) {
    let started = Instant::now();
    let found = (1..=n)
        .step_by((n as usize / 3000).max(1))
        .filter(|&id| {
            let (account, client) = (AccountId((id % 1000) as u32), Uuid(u128::from(id) * 7919));
            store
                .by_client_id(account, client, None, Timestamp(2))
                .is_ok()
        })
        .count();
    (found, started.elapsed())
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3_000_000);
    for client_ids in [false, true] {
        let before = resident_kib();
        let started = Instant::now();
        let mut store = OrderStore::default();
        for id in 1..=n {
            store.accept(order(id, client_ids), Timestamp(1), id);
            store.cancel(id, CancelReason::Requested, Timestamp(1), id);
        }
        let per_order = started.elapsed().as_nanos() as f64 / n as f64;
        let bytes = (resident_kib() - before) as f64 * 1024.0 / n as f64;
        let (found, took) = lookups(&store, n);
        println!(
            "client ids {client_ids:5}: {bytes:.0} bytes and {per_order:.0} ns an order \
             (accept and cancel); lookups: {found} found in {took:.2?}"
        );
        if client_ids {
            let mut restored = store.clone();
            let (found, took) = lookups(&restored, n);
            println!("  a copy, not indexed: {found} found in {took:.2?}");
            let started = Instant::now();
            restored.index_client_ids();
            println!("  index built in {:.2?}", started.elapsed());
        }
    }
}
