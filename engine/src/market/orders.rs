//! Order history: one record per accepted order, kept current from the event stream (fills,
//! fees, amends, cancels, triggers), with the queries of spec 4.2: open orders, inactive ones
//! by kind and time window, by id within 24 hours of last activity, by client id within 30
//! days; pages newest first with a cursor.

use std::collections::{HashMap, VecDeque};

use super::query::{DAY, QueryError};
use super::trades::TradeRecord;
use crate::event::{AcceptedOrder, CancelReason, OrderStatus};
use crate::fixed::{Notional, Price, Qty};
use crate::hashing::IdBuildHasher;
use crate::ids::{AccountId, InstrumentId, Timestamp, TradeId, Uuid};

/// An order as history keeps it (spec 2.6).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OrderRecord {
    /// The order as accepted (amends update `price` and `amount` here).
    pub accepted: AcceptedOrder,
    /// Acceptance time.
    pub created: Timestamp,
    /// Sequence of the acceptance event.
    pub sequence: u64,
    /// Time of the last change.
    pub updated: Timestamp,
    /// Sequence of the last event that changed it.
    pub last_sequence: u64,
    /// Filled so far.
    pub filled: Qty,
    /// Sum of price x amount of the fills.
    pub filled_notional: Notional,
    /// Fees charged so far (balance units of the currency it receives).
    pub total_fee: i64,
    /// Status.
    pub status: OrderStatus,
    /// Its trades, oldest first.
    pub trades: Vec<TradeId>,
}

impl OrderRecord {
    /// Average fill price in ticks (rounded down), if anything filled.
    pub fn average_price(&self) -> Option<Price> {
        (self.filled.0 > 0)
            .then(|| Price((self.filled_notional.0 / i128::from(self.filled.0)) as i64))
    }
    fn inactive_kind(&self) -> Option<Inactive> {
        match self.status {
            OrderStatus::Open => None,
            OrderStatus::FilledFully => Some(Inactive::Filled),
            _ => Some(Inactive::CancelledOrRejected),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inactive {
    Filled,
    CancelledOrRejected,
}

/// Which orders an order-history query returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderFilter {
    /// Window on the last activity time (used for inactive orders).
    pub from: Timestamp,
    /// Window end.
    pub to: Timestamp,
    /// Only this instrument.
    pub instrument: Option<InstrumentId>,
    /// Include cancelled and rejected orders.
    pub with_cancelled_and_rejected: bool,
    /// Include fully filled orders.
    pub with_just_filled_inactive: bool,
    /// Page size.
    pub max_page_size: usize,
    /// Resume below this order number.
    pub cursor: Option<u64>,
}

/// A page of orders, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderPage<'a> {
    /// Orders.
    pub orders: Vec<&'a OrderRecord>,
    /// Number of the last order returned when more may follow.
    pub cursor: Option<u64>,
}

/// Every accepted order plus per-account lists of numbers. Open orders live in a small
/// hash map, because the stream amends and fills them all the time and the map stays in
/// cache; an order that ends moves once into the archive, a deque indexed by order number
/// less the first one (numbers are dense), whose slot stays empty while the order is open.
/// Retention drops archived orders from the front once they ended before the horizon, and
/// the empty slots of orders at the front open since before it, so one long-open order does
/// not hold back everything after it: when such an order ends, its record goes to `late`, kept
/// in the order orders ended and forgotten the same way.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct OrderStore {
    first: u64,
    #[serde(with = "crate::snapshot::sorted_map")]
    open: HashMap<u64, OrderRecord, IdBuildHasher>,
    archive: VecDeque<Option<OrderRecord>>,
    /// Orders that ended after retention had passed their number.
    #[serde(with = "crate::snapshot::sorted_map")]
    late: HashMap<u64, OrderRecord, IdBuildHasher>,
    /// `late` by the time each ended (times never decrease).
    late_by_time: VecDeque<(Timestamp, u64)>,
    by_account: Vec<AccountOrders>,
}

/// One account's order numbers, ascending.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct AccountOrders {
    ids: Vec<u64>,
    /// Numbers below the store's `first` that were still retained at the last pruning.
    kept_below_first: usize,
}

impl OrderStore {
    /// Records a newly accepted order.
    pub fn accept(&mut self, accepted: AcceptedOrder, time: Timestamp, sequence: u64) {
        let id = accepted.order.id;
        let account = accepted.account.0 as usize;
        if self.by_account.len() <= account {
            self.by_account
                .resize_with(account + 1, AccountOrders::default);
        }
        // Numbers below `first` are forgotten unless open or late; drop the forgotten ones
        // from this account's list as it grows, once they outnumber the retained ones (so
        // an account's long-open orders are not re-examined on every order).
        let list = &mut self.by_account[account];
        let below = list.ids.partition_point(|&id| id < self.first);
        if below > 2 * list.kept_below_first {
            let (open, late) = (&self.open, &self.late);
            let mut kept = 0;
            for i in 0..below {
                let id = list.ids[i];
                if open.contains_key(&id) || late.contains_key(&id) {
                    list.ids[kept] = id;
                    kept += 1;
                }
            }
            list.ids.drain(kept..below);
            list.kept_below_first = kept;
        }
        list.ids.push(id);
        if self.archive.is_empty() {
            self.first = id;
        }
        self.archive.push_back(None);
        self.open.insert(
            id,
            OrderRecord {
                accepted,
                created: time,
                sequence,
                updated: time,
                last_sequence: sequence,
                filled: Qty(0),
                filled_notional: Notional(0),
                total_fee: 0,
                status: OrderStatus::Open,
                trades: Vec::new(),
            },
        );
    }

    fn record_mut(&mut self, id: u64) -> Option<&mut OrderRecord> {
        self.open.get_mut(&id)
    }

    fn record(&self, id: u64) -> Option<&OrderRecord> {
        if let Some(r) = self.open.get(&id) {
            return Some(r);
        }
        let archived = id
            .checked_sub(self.first)
            .and_then(|index| self.archive.get(usize::try_from(index).ok()?)?.as_ref());
        archived.or_else(|| self.late.get(&id))
    }

    /// Forgets orders that ended before `horizon`: archived ones from the front (passing
    /// over the empty slots of orders open since before the horizon) and late ones.
    pub fn forget_before(&mut self, horizon: Timestamp) {
        loop {
            match self.archive.front() {
                Some(Some(front)) if front.updated < horizon => {}
                // Open since before the horizon: its record stays in `open`, and goes to
                // `late` when it ends.
                Some(None)
                    if self
                        .open
                        .get(&self.first)
                        .is_none_or(|r| r.created < horizon) => {}
                _ => break,
            }
            self.archive.pop_front();
            self.first += 1;
        }
        while let Some(&(ended, id)) = self.late_by_time.front() {
            if ended >= horizon {
                break;
            }
            self.late_by_time.pop_front();
            self.late.remove(&id);
        }
    }

    /// Moves an order that ended into the archive (or, when retention has passed its
    /// number, into `late`).
    fn close(&mut self, id: u64) {
        let Some(record) = self.open.remove(&id) else {
            return;
        };
        match id
            .checked_sub(self.first)
            .and_then(|i| self.archive.get_mut(usize::try_from(i).ok()?))
        {
            Some(slot) => *slot = Some(record),
            None => {
                self.late_by_time.push_back((record.updated, id));
                self.late.insert(id, record);
            }
        }
    }

    /// Applies a trade to both its orders.
    pub fn fill(&mut self, record: &TradeRecord) {
        let t = &record.trade;
        for (id, fee, remaining) in [
            (t.maker.id, t.maker_fee, t.maker_remaining),
            (t.taker.id, t.taker_fee, t.taker_remaining),
        ] {
            if let Some(r) = self.record_mut(id) {
                r.filled.0 += t.amount.0;
                r.filled_notional.0 += t.price.notional(t.amount).0;
                r.total_fee += fee;
                r.trades.push(t.id);
                r.updated = record.time;
                r.last_sequence = record.sequence;
                if remaining.0 == 0 {
                    r.status = OrderStatus::FilledFully;
                }
            }
            if remaining.0 == 0 {
                self.close(id);
            }
        }
    }

    /// Marks an order ended without filling completely.
    pub fn cancel(&mut self, id: u64, reason: CancelReason, time: Timestamp, sequence: u64) {
        if let Some(r) = self.record_mut(id) {
            r.status = reason.status();
            r.updated = time;
            r.last_sequence = sequence;
        }
        self.close(id);
    }

    /// Applies an amend or a trigger (anything that only touches price, amount and time).
    pub fn touch(
        &mut self,
        id: u64,
        price: Option<Option<Price>>,
        amount: Option<Qty>,
        time: Timestamp,
        sequence: u64,
    ) {
        if let Some(r) = self.record_mut(id) {
            if let Some(price) = price {
                r.accepted.price = price;
            }
            if let Some(amount) = amount {
                r.accepted.amount = amount;
            }
            r.updated = time;
            r.last_sequence = sequence;
        }
    }

    /// An order by number, if it belongs to `account`.
    pub fn get(&self, account: AccountId, id: u64) -> Option<&OrderRecord> {
        self.record(id).filter(|r| r.accepted.account == account)
    }

    /// An account's order by number, within 24 hours of its last activity.
    pub fn by_id(
        &self,
        account: AccountId,
        id: u64,
        now: Timestamp,
    ) -> Result<&OrderRecord, QueryError> {
        self.get(account, id)
            .filter(|r| r.status == OrderStatus::Open || now.0 - r.updated.0 <= DAY)
            .ok_or(QueryError::NotFound)
    }

    /// The account's most recent order with `client_id`, within 30 days of its creation.
    pub fn by_client_id(
        &self,
        account: AccountId,
        client_id: Uuid,
        now: Timestamp,
    ) -> Result<&OrderRecord, QueryError> {
        let ids = &self
            .by_account
            .get(account.0 as usize)
            .ok_or(QueryError::NotFound)?
            .ids;
        ids.iter()
            .rev()
            .filter_map(|&id| self.record(id))
            .take_while(|r| now.0 - r.created.0 <= 30 * DAY)
            .find(|r| r.accepted.client_id == Some(client_id))
            .ok_or(QueryError::NotFound)
    }

    /// A page of an account's orders, newest first: open ones always, inactive ones of the
    /// requested kinds whose last activity lies in the window.
    pub fn page(
        &self,
        account: AccountId,
        filter: &OrderFilter,
    ) -> Result<OrderPage<'_>, QueryError> {
        let ids = self
            .by_account
            .get(account.0 as usize)
            .map_or(&[][..], |v| &v.ids);
        let end = match filter.cursor {
            Some(c) => ids.partition_point(|&id| id < c),
            None => ids.len(),
        };
        let mut orders = Vec::new();
        let mut cursor = None;
        for id in ids[..end].iter().rev() {
            let Some(r) = self.record(*id) else {
                continue;
            };
            if filter
                .instrument
                .is_some_and(|i| i != r.accepted.instrument)
            {
                continue;
            }
            let wanted = match r.inactive_kind() {
                None => true,
                Some(kind) => {
                    let in_window = r.updated >= filter.from && r.updated <= filter.to;
                    in_window
                        && match kind {
                            Inactive::Filled => filter.with_just_filled_inactive,
                            Inactive::CancelledOrRejected => filter.with_cancelled_and_rejected,
                        }
                }
            };
            if !wanted {
                continue;
            }
            if orders.len() == filter.max_page_size {
                cursor = orders.last().map(|o: &&OrderRecord| o.accepted.order.id);
                break;
            }
            orders.push(r);
        }
        Ok(OrderPage { orders, cursor })
    }

    /// Orders retained (counts the archive: for reports and tests, not the hot path).
    pub fn len(&self) -> usize {
        self.open.len() + self.late.len() + self.archive.iter().flatten().count()
    }

    /// Whether none is retained.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::OrderRef;
    use crate::order::{OrderType, Side, StpMode, TimeInForce};
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
            .by_client_id(AccountId(1), Uuid(7), Timestamp(40))
            .map(|r| r.accepted.order.id);
        assert_eq!(found, Ok(4));
        store.accept(accepted(5, 1), Timestamp(41), 41);
        assert_eq!(
            store.by_account[1].ids,
            vec![4, 5],
            "the account's list dropped forgotten numbers and kept the open one"
        );
    }

    #[derive(Debug, Clone)]
    enum Op {
        Accept { account: u32 },
        End { pick: usize },
        Forget { back: i64 },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u32..3).prop_map(|account| Op::Accept { account }),
            3 => any::<usize>().prop_map(|pick| Op::End { pick }),
            1 => (0i64..40).prop_map(|back| Op::Forget { back }),
        ]
    }

    proptest! {
        /// Against a plain list of every order: an open order, and one that ended at or
        /// after the latest horizon, is always found (by number and in its account's page,
        /// with its status); anything missing ended before the horizon; pages hold exactly
        /// the retained orders of the account.
        #[test]
        fn retention_never_loses_an_order_it_must_keep(ops in prop::collection::vec(op(), 1..200)) {
            let mut store = OrderStore::default();
            // Per order number: account and the time it ended.
            let mut model: Vec<(u32, Option<i64>)> = Vec::new();
            let mut horizon = i64::MIN;
            for (step, op) in ops.into_iter().enumerate() {
                let now = step as i64;
                match op {
                    Op::Accept { account } => {
                        model.push((account, None));
                        let id = model.len() as u64;
                        store.accept(accepted(id, account), Timestamp(now), now as u64);
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
                }
                for (i, &(account, ended)) in model.iter().enumerate() {
                    let id = i as u64 + 1;
                    let must_keep = ended.is_none_or(|t| t >= horizon);
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
                    prop_assert_eq!(page, retained);
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
}
