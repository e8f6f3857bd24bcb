//! Order history kept from events, checked against a plain model of each order.
use super::*;
use matchbook_core::{InstrumentId, OrderRef};
use matchbook_core::{OrderType, Side, StpMode, TimeInForce};
use proptest::prelude::*;

fn accepted(id: u64, account: u32) -> AcceptedOrder {
    AcceptedOrder {
        order: OrderRef { id, slot: 0 },
        account: AccountId(account),
        instrument: InstrumentId(0),
        side: Side::Buy,
        order_type: OrderType::Limit,
        time_in_force: TimeInForce::GoodTillCancelled,
        stp: StpMode::None,
        price: Some(Price(100)),
        trigger_price: None,
        amount: Qty(5),
        client_id: Some(Uuid(7)),
        expire_at: None,
    }
}

#[test]
fn retention_passes_over_open_orders_and_keeps_them_until_they_end() {
    let mut store = OrderStore::default();
    for id in 1..=4 {
        store.accept(accepted(id, 1), Timestamp(id as i64), id);
    }
    store.cancel(1, CancelReason::Requested, Timestamp(10), 10);
    store.cancel(3, CancelReason::Requested, Timestamp(11), 11);
    store.forget_before(Timestamp(20));
    assert!(
        store.get(AccountId(1), 1).is_none(),
        "ended before the horizon"
    );
    assert!(store.get(AccountId(1), 2).is_some(), "open: kept");
    assert!(
        store.get(AccountId(1), 3).is_none(),
        "behind an open order, ended before the horizon: forgotten all the same"
    );
    assert_eq!(store.len(), 2);
    // Order 2 ends after retention passed its number: kept as late, then forgotten.
    store.cancel(2, CancelReason::Requested, Timestamp(30), 30);
    assert_eq!(
        store.get(AccountId(1), 2).map(|r| r.status),
        Some(OrderStatus::Cancelled)
    );
    store.forget_before(Timestamp(30));
    assert!(
        store.get(AccountId(1), 2).is_some(),
        "ended at the horizon: kept"
    );
    store.forget_before(Timestamp(31));
    assert!(store.get(AccountId(1), 2).is_none());
    assert!(store.get(AccountId(1), 4).is_some());
    // Lookups by client id skip forgotten numbers and find the open order.
    let found = store
        .by_client_id(AccountId(1), Uuid(7), None, Timestamp(40))
        .map(|r| r.accepted.order.id);
    assert_eq!(found, Ok(4));
    // The account's listing passes over forgotten numbers to the order kept open.
    store.accept(accepted(5, 1), Timestamp(41), 41);
    store.accept(accepted(6, 2), Timestamp(41), 41);
    store.cancel(5, CancelReason::Requested, Timestamp(41), 41);
    store.forget_before(Timestamp(42));
    let listed: Vec<u64> = store
        .newest_first(AccountId(1), None)
        .map(|r| r.accepted.order.id)
        .collect();
    assert_eq!(listed, vec![4]);
}

/// Under a count limit an order open when its number was cut stays until it ends, then
/// goes at once (retention alone would keep it for its window); one the cut did not reach
/// ends into the record as usual.
#[test]
fn a_count_cut_keeps_open_orders_until_they_end() {
    let mut store = OrderStore::default();
    for id in 1..=5 {
        store.accept(accepted(id, 1), Timestamp(id as i64), id);
    }
    store.cancel(2, CancelReason::Requested, Timestamp(6), 6);
    assert!(store.keep_at_most(2));
    assert_eq!(store.run_len(), 2);
    assert!(
        store.get(AccountId(1), 2).is_none(),
        "ended before the cut: gone"
    );
    for id in [1, 3, 4, 5] {
        assert!(
            store.get(AccountId(1), id).is_some(),
            "open, or within the newest two"
        );
    }
    store.cancel(1, CancelReason::Requested, Timestamp(7), 7);
    assert!(
        store.get(AccountId(1), 1).is_none(),
        "cut, then ended: gone at once"
    );
    store.cancel(4, CancelReason::Requested, Timestamp(8), 8);
    assert_eq!(
        store.get(AccountId(1), 4).map(|r| r.status),
        Some(OrderStatus::Cancelled),
        "within the newest: kept ended"
    );
    assert_eq!(store.len(), 3);
}

#[derive(Debug, Clone)]
enum Op {
    /// An order of `account` with client id `client` (0: none).
    Accept {
        account: u32,
        client: u128,
    },
    /// The store saved and loaded again (its client-id index is then built anew).
    Restore,
    End {
        pick: usize,
    },
    Forget {
        back: i64,
    },
    Limit {
        most: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u32..3, 0u128..4).prop_map(|(account, client)| Op::Accept { account, client }),
        1 => Just(Op::Restore),
        3 => any::<usize>().prop_map(|pick| Op::End { pick }),
        1 => (0i64..40).prop_map(|back| Op::Forget { back }),
        1 => (1usize..12).prop_map(|most| Op::Limit { most }),
    ]
}

proptest! {
    /// Against a plain list of every order: an open order, and one that ended at or
    /// after the latest horizon with a number a count limit has not cut below, is always
    /// found (by number and in its account's page, with its status); anything missing
    /// ended before the horizon or below a cut; pages hold exactly the retained orders of
    /// the account, also when read in small pages by cursor.
    #[test]
    fn retention_never_loses_an_order_it_must_keep(
        ops in prop::collection::vec(op(), 1..200),
        page_size in 1usize..5,
    ) {
        let mut store = OrderStore::default();
        // Per order number: account and the time it ended.
        let mut model: Vec<(u32, Option<i64>)> = Vec::new();
        let mut clients: Vec<u128> = Vec::new();
        let mut horizon = i64::MIN;
        // Numbers up to this one left the run under a count limit.
        let mut cut = 0u64;
        for (step, op) in ops.into_iter().enumerate() {
            let now = step as i64;
            match op {
                Op::Accept { account, client } => {
                    model.push((account, None));
                    clients.push(client);
                    let id = model.len() as u64;
                    let order = AcceptedOrder {
                        client_id: (client > 0).then_some(Uuid(client)),
                        ..accepted(id, account)
                    };
                    store.accept(order, Timestamp(now), now as u64);
                }
                Op::Restore => {
                    let bytes = postcard::to_stdvec(&store).expect("encodes");
                    store = postcard::from_bytes(&bytes).expect("decodes");
                }
                Op::End { pick } => {
                    let open: Vec<usize> = (0..model.len()).filter(|&i| model[i].1.is_none()).collect();
                    if open.is_empty() {
                        continue;
                    }
                    let i = open[pick % open.len()];
                    model[i].1 = Some(now);
                    let id = i as u64 + 1;
                    store.cancel(id, CancelReason::Requested, Timestamp(now), now as u64);
                }
                Op::Forget { back } => {
                    horizon = horizon.max(now - back);
                    store.forget_before(Timestamp(horizon));
                }
                Op::Limit { most } => {
                    store.keep_at_most(most);
                    prop_assert!(store.run_len() <= most);
                    cut = cut.max(model.len().saturating_sub(most) as u64);
                }
            }
            for (i, &(account, ended)) in model.iter().enumerate() {
                let id = i as u64 + 1;
                let must_keep = ended.is_none_or(|t| t >= horizon && id > cut);
                let found = store.get(AccountId(account), id);
                if must_keep {
                    prop_assert!(found.is_some(), "order {} lost", id);
                }
                if let Some(r) = found {
                    prop_assert_eq!(r.status == OrderStatus::Open, ended.is_none());
                }
            }
            for account in 0..3u32 {
                let filter = OrderFilter {
                    from: Timestamp(i64::MIN),
                    to: Timestamp(i64::MAX),
                    instrument: None,
                    with_cancelled_and_rejected: true,
                    with_just_filled_inactive: true,
                    max_page_size: usize::MAX,
                    cursor: None,
                };
                let page: Vec<u64> = store
                    .page(AccountId(account), &filter)
                    .expect("page")
                    .orders
                    .iter()
                    .map(|r| r.accepted.order.id)
                    .collect();
                let retained: Vec<u64> = (1..=model.len() as u64)
                    .rev()
                    .filter(|&id| model[id as usize - 1].0 == account)
                    .filter(|&id| store.get(AccountId(account), id).is_some())
                    .collect();
                prop_assert_eq!(&page, &retained);
                // The same pages in small pieces, each resuming at the previous cursor.
                let mut pieces = Vec::new();
                let mut cursor = None;
                loop {
                    let filter = OrderFilter { max_page_size: page_size, cursor, ..filter };
                    let piece = store.page(AccountId(account), &filter).expect("page");
                    pieces.extend(piece.orders.iter().map(|r| r.accepted.order.id));
                    match piece.cursor {
                        Some(c) => cursor = Some(c),
                        None => break,
                    }
                }
                prop_assert_eq!(pieces, retained);
                // The open-orders listing from the open numbers (as the engine holds them)
                // finds what a walk without the inactive kinds does, in pieces too.
                let open: Vec<u64> = (1..=model.len() as u64)
                    .rev()
                    .filter(|&id| model[id as usize - 1] == (account, None))
                    .collect();
                let open_only = OrderFilter {
                    with_cancelled_and_rejected: false,
                    with_just_filled_inactive: false,
                    ..filter
                };
                let walked: Vec<u64> = (store.page(AccountId(account), &open_only).expect("page").orders)
                    .iter()
                    .map(|r| r.accepted.order.id)
                    .collect();
                prop_assert_eq!(&walked, &open);
                let (mut listed, mut cursor) = (Vec::new(), None);
                loop {
                    let filter = OrderFilter { max_page_size: page_size, cursor, ..open_only };
                    let piece = store.listed(AccountId(account), &open, &filter);
                    listed.extend(piece.orders.iter().map(|r| r.accepted.order.id));
                    match piece.cursor {
                        Some(c) => cursor = Some(c),
                        None => break,
                    }
                }
                prop_assert_eq!(listed, open);
                // By client id: the newest retained order carrying it.
                for client in 1..4u128 {
                    let newest = (1..=model.len() as u64).rev().find(|&id| {
                        model[id as usize - 1].0 == account
                            && clients[id as usize - 1] == client
                            && store.get(AccountId(account), id).is_some()
                    });
                    let found = store.by_client_id(AccountId(account), Uuid(client), None, Timestamp(now));
                    prop_assert_eq!(found.ok().map(|r| r.accepted.order.id), newest);
                }
            }
        }
    }
}

#[test]
fn lookups_respect_their_windows_and_owners() {
    let mut store = OrderStore::default();
    store.accept(accepted(1, 1), Timestamp(0), 1);
    store.cancel(1, CancelReason::Requested, Timestamp(5), 2);
    assert!(store.by_id(AccountId(1), 1, Timestamp(5 + DAY)).is_ok());
    assert_eq!(
        store.by_id(AccountId(1), 1, Timestamp(6 + DAY)).err(),
        Some(QueryError::NotFound)
    );
    assert_eq!(
        store.by_id(AccountId(2), 1, Timestamp(6)).err(),
        Some(QueryError::NotFound),
        "not the owner"
    );
    assert_eq!(
        store.get(AccountId(1), 1).map(|r| r.status),
        Some(OrderStatus::Cancelled)
    );
}

/// A page reads at most `MAX_RECORDS_READ` records: an open order under 25,000 newer
/// ended ones comes after pages that end early with cursors, and the open-orders listing
/// from the open numbers finds it at once.
#[test]
fn a_page_stops_reading_at_its_bound_and_the_open_listing_reads_only_open_orders() {
    let mut store = OrderStore::default();
    let newer = 25_000u64;
    store.accept(accepted(1, 1), Timestamp(1), 1);
    for id in 2..=newer + 1 {
        store.accept(accepted(id, 1), Timestamp(1), id);
        store.cancel(id, CancelReason::Requested, Timestamp(2), id);
    }
    let open_only = OrderFilter {
        with_cancelled_and_rejected: false,
        with_just_filled_inactive: false,
        ..OrderFilter::every(100, None)
    };
    let (mut pages, mut cursor, mut found) = (0, None, Vec::new());
    loop {
        let page = (store.page(
            AccountId(1),
            &OrderFilter {
                cursor,
                ..open_only
            },
        ))
        .expect("page");
        pages += 1;
        found.extend(page.orders.iter().map(|r| r.accepted.order.id));
        match page.cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(
        (found, pages),
        (vec![1], newer as usize / MAX_RECORDS_READ + 1)
    );
    let listed = store.listed(AccountId(1), &[1], &open_only);
    assert_eq!(listed.orders.len(), 1);
    assert_eq!(listed.cursor, None);
}

/// A lookup by client id finds the account's newest order with the id however many
/// orders came after it (it read only the newest `MAX_RECORDS_READ_BY_CLIENT_ID` before,
/// and answered not found past them unless the order was open); a store just loaded reads
/// that run until a restore or its next order builds the index.
#[test]
fn a_lookup_by_client_id_finds_an_order_past_any_run() {
    let mut store = OrderStore::default();
    let mut first = accepted(1, 1);
    first.client_id = Some(Uuid(9));
    store.accept(first, Timestamp(1), 1);
    store.cancel(1, CancelReason::Requested, Timestamp(1), 1);
    let newer = MAX_RECORDS_READ_BY_CLIENT_ID as u64 + 1;
    for id in 2..=newer {
        store.accept(accepted(id, 1), Timestamp(1), id);
    }
    let find = |store: &OrderStore, open| {
        (store.by_client_id(AccountId(1), Uuid(9), open, Timestamp(2))).map(|r| r.accepted.order.id)
    };
    assert_eq!(find(&store, None), Ok(1), "ended, past the newest run");
    let bytes = postcard::to_stdvec(&store).expect("encodes");
    let mut loaded: OrderStore = postcard::from_bytes(&bytes).expect("decodes");
    assert_eq!(
        find(&loaded, None),
        Err(QueryError::NotFound),
        "loaded: the run only"
    );
    assert_eq!(
        find(&loaded, Some(1)),
        Ok(1),
        "loaded: the open one the engine names"
    );
    let mut restored: OrderStore = postcard::from_bytes(&bytes).expect("decodes");
    restored.index_client_ids();
    assert_eq!(find(&restored, None), Ok(1), "indexed by a restore");
    loaded.accept(accepted(newer + 1, 1), Timestamp(1), newer + 1);
    assert_eq!(find(&loaded, None), Ok(1), "indexed by the next order");
    // The newest order with the id is the answer.
    let mut newest = accepted(newer + 2, 1);
    newest.client_id = Some(Uuid(9));
    store.accept(newest, Timestamp(1), newer + 2);
    assert_eq!(find(&store, None), Ok(newer + 2), "the newest");
    // A snapshot's copy answers the same, through the run, until it is indexed.
    assert_eq!(find(&store.share(), None), Ok(newer + 2));
}
