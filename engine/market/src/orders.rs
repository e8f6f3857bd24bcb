//! Order history: one record per accepted order, kept current from the event stream (fills,
//! fees, amends, cancels, triggers), with the queries of spec 4.2: open orders, inactive ones
//! by kind and time window, by id within 24 hours of last activity, by client id within 30
//! days; pages newest first with a cursor.

use std::collections::{HashMap, VecDeque};

use smallvec::SmallVec;

mod filter;
mod retention;

pub use filter::{OrderFilter, OrderPage};

use super::chunked::ChunkedDeque;
use super::client_ids::ClientIdIndex;
use super::query::{DAY, MAX_RECORDS_READ, MAX_RECORDS_READ_BY_CLIENT_ID, QueryError};
use super::trades::TradeRecord;
use matchbook_core::hashing::IdBuildHasher;
use matchbook_core::{AcceptedOrder, AccountId, CancelReason, Notional, OrderStatus};
use matchbook_core::{Price, Qty, Timestamp, TradeId, Uuid};

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
    pub trades: SmallVec<[TradeId; 2]>,
    /// The number of the same account's order before it, so an account's orders are listed
    /// by walking back from its newest without a per-account index to keep up to date.
    pub previous_of_account: Option<u64>,
}

impl OrderRecord {
    /// An order as just accepted.
    pub fn accepted(accepted: AcceptedOrder, time: Timestamp, sequence: u64) -> Self {
        Self {
            accepted,
            created: time,
            sequence,
            updated: time,
            last_sequence: sequence,
            filled: Qty(0),
            filled_notional: Notional(0),
            total_fee: 0,
            status: OrderStatus::Open,
            trades: SmallVec::new(),
            previous_of_account: None,
        }
    }

    /// Applies a fill of this order (its fee and its amount left after it); returns true
    /// when it ended the order.
    pub fn on_fill(&mut self, record: &TradeRecord, fee: i64, remaining: Qty) -> bool {
        let t = &record.trade;
        self.filled.0 += t.amount.0;
        self.filled_notional.0 += t.price.notional(t.amount).0;
        self.total_fee += fee;
        self.trades.push(t.id);
        self.updated = record.time;
        self.last_sequence = record.sequence;
        let ends = remaining.0 == 0 && self.status == OrderStatus::Open;
        if ends {
            self.status = OrderStatus::FilledFully;
        }
        ends
    }

    /// Ends the order without filling completely; returns true if it was open.
    pub fn on_cancel(&mut self, reason: CancelReason, time: Timestamp, sequence: u64) -> bool {
        let was_open = self.status == OrderStatus::Open;
        self.status = reason.status();
        self.updated = time;
        self.last_sequence = sequence;
        was_open
    }

    /// Applies an amend or a trigger (anything that only touches price, amount and time).
    pub fn on_touch(
        &mut self,
        price: Option<Option<Price>>,
        amount: Option<Qty>,
        time: Timestamp,
        sequence: u64,
    ) {
        if let Some(price) = price {
            self.accepted.price = price;
        }
        if let Some(amount) = amount {
            self.accepted.amount = amount;
        }
        self.updated = time;
        self.last_sequence = sequence;
    }

    /// Average fill price in ticks (rounded down), if anything filled.
    pub fn average_price(&self) -> Option<Price> {
        (self.filled.0 > 0)
            .then(|| Price((self.filled_notional.0 / i128::from(self.filled.0)) as i64))
    }

    /// The status as the public exchange and its clients name it: `OPEN`, `FILLED_FULLY`,
    /// `FILLED_CLOSED` (partly filled, then cancelled), `CANCELLED`, `FILLED_REJECTED`.
    pub fn status_name(&self) -> &'static str {
        match self.status {
            OrderStatus::Cancelled if self.filled.0 > 0 => "FILLED_CLOSED",
            status => status.as_str(),
        }
    }

    /// An ended order counts as filled when anything filled (fully, or partly before it was
    /// cancelled); otherwise as cancelled or rejected.
    fn inactive_kind(&self) -> Option<Inactive> {
        match self.status {
            OrderStatus::Open => None,
            _ if self.filled.0 > 0 => Some(Inactive::Filled),
            _ => Some(Inactive::CancelledOrRejected),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inactive {
    Filled,
    CancelledOrRejected,
}

/// Every accepted order plus per-account lists of numbers. Records sit in one chunked
/// deque indexed by order number less the first one (numbers are dense), open and ended
/// alike, so an amend, a fill or a cancel is an index and a write in place: nothing moves when
/// an order ends. Retention drops records from the front once they ended before the horizon;
/// an order at the front still open since before it is moved to `kept`, so one long-open order
/// does not hold back everything after it, and is forgotten from there once it has ended
/// before the horizon too (`kept_ended` lists those in the order they ended).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct OrderStore {
    first: u64,
    records: ChunkedDeque<Option<OrderRecord>>,
    /// Orders retention passed while they were open.
    #[serde(with = "matchbook_core::persist::sorted_map")]
    kept: HashMap<u64, OrderRecord, IdBuildHasher>,
    /// Ended orders of `kept` by the time each ended (times never decrease).
    kept_ended: VecDeque<(Timestamp, u64)>,
    /// No record at the front can be forgotten before this horizon (a lower bound on the
    /// front record's deciding time), so most calls read no record; `None`: not known.
    #[serde(skip)]
    front_horizon: Option<Timestamp>,
    /// Each account's newest order number; older ones chain through
    /// `OrderRecord::previous_of_account`.
    newest_of_account: Vec<Option<u64>>,
    /// Numbers up to this one left the records under a count limit
    /// ([`OrderStore::keep_at_most`]): one of them kept while open is forgotten as it
    /// ends (under a limit, ended orders outside the newest are not kept). A host's
    /// setting, so not saved: a restored store keeps such orders by time until it cuts.
    #[serde(skip)]
    count_cut: u64,
    /// Lookups by client id (derived from the records, so not saved).
    #[serde(skip)]
    client_ids: ClientIdIndex,
}

impl OrderStore {
    /// A copy for a snapshot: the records shared with this store (see
    /// [`ChunkedDeque::share`]), the rest copied but the client-id index, which is never
    /// saved (the copy builds its own if it is ever given an order).
    pub fn share(&mut self) -> Self {
        Self {
            first: self.first,
            records: self.records.share(),
            kept: self.kept.clone(),
            kept_ended: self.kept_ended.clone(),
            front_horizon: self.front_horizon,
            newest_of_account: self.newest_of_account.clone(),
            count_cut: self.count_cut,
            client_ids: ClientIdIndex::default(),
        }
    }

    /// Records a newly accepted order.
    pub fn accept(&mut self, accepted: AcceptedOrder, time: Timestamp, sequence: u64) {
        let id = accepted.order.id;
        if self.records.is_empty() {
            self.first = id;
        }
        let Some(index) = id.checked_sub(self.first) else {
            return;
        };
        // Numbers arrive in order; a gap (numbers the engine never accepted) is padded so
        // indexes stay numbers less `first`, and a number already seen is ignored.
        while (self.records.len() as u64) < index {
            self.records.push_back(None);
        }
        if self.records.len() as u64 != index {
            return;
        }
        let account = accepted.account.0 as usize;
        if self.newest_of_account.len() <= account {
            self.newest_of_account.resize(account + 1, None);
        }
        let previous_of_account = self.newest_of_account[account].replace(id);
        let record = OrderRecord {
            previous_of_account,
            ..OrderRecord::accepted(accepted, time, sequence)
        };
        if self.client_ids.is_built() {
            self.client_ids.note(&record);
        }
        self.records.push_back(Some(record));
        self.index_client_ids();
    }

    /// Builds the client-id index if it is not (a store just loaded, or a copy): a restore
    /// calls it before serving, else the next accepted order does.
    pub fn index_client_ids(&mut self) {
        if !self.client_ids.is_built() {
            let retained = self.records.iter().flatten().chain(self.kept.values());
            let most = self.records.len() + self.kept.len();
            self.client_ids.build(most, retained);
        }
    }

    fn record_mut(&mut self, id: u64) -> Option<&mut OrderRecord> {
        match id.checked_sub(self.first) {
            Some(index) => self.records.get_mut(usize::try_from(index).ok()?)?.as_mut(),
            None => self.kept.get_mut(&id),
        }
    }

    /// An order by number, whatever its account.
    pub fn record(&self, id: u64) -> Option<&OrderRecord> {
        match id.checked_sub(self.first) {
            Some(index) => self.records.get(usize::try_from(index).ok()?)?.as_ref(),
            None => self.kept.get(&id),
        }
    }

    /// Applies a trade to both its orders.
    pub fn fill(&mut self, record: &TradeRecord) {
        let t = &record.trade;
        for (id, fee, remaining) in [
            (t.maker.id, t.maker_fee, t.maker_remaining),
            (t.taker.id, t.taker_fee, t.taker_remaining),
        ] {
            if let Some(r) = self.record_mut(id)
                && r.on_fill(record, fee, remaining)
            {
                self.ended(id, record.time);
            }
        }
    }

    /// Marks an order ended without filling completely.
    pub fn cancel(&mut self, id: u64, reason: CancelReason, time: Timestamp, sequence: u64) {
        if let Some(r) = self.record_mut(id)
            && r.on_cancel(reason, time, sequence)
        {
            self.ended(id, time);
        }
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
            r.on_touch(price, amount, time, sequence);
        }
    }

    /// A held order fired: its trigger then, and the limit it entered with.
    pub fn trigger(
        &mut self,
        id: u64,
        trigger: Price,
        price: Option<Price>,
        time: Timestamp,
        sequence: u64,
    ) {
        if let Some(r) = self.record_mut(id) {
            r.accepted.trigger_price = Some(trigger);
            r.on_touch(Some(price), None, time, sequence);
        }
    }

    /// A trailing order's trigger moved.
    pub fn trigger_moved(&mut self, id: u64, trigger: Price, time: Timestamp, sequence: u64) {
        if let Some(r) = self.record_mut(id) {
            r.accepted.trigger_price = Some(trigger);
            r.on_touch(None, None, time, sequence);
        }
    }

    /// The lowest order number whose record may still be held.
    pub fn first_retained(&self) -> u64 {
        self.first
    }

    /// Whether the record of order `id` is held.
    pub fn holds(&self, id: u64) -> bool {
        self.record(id).is_some()
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

    /// The account's most recent order with `client_id`, within 30 days of its creation:
    /// the one the index names; else (not built yet after a restore, or a client id reused
    /// by a newer order history has forgotten) among the account's newest
    /// [`MAX_RECORDS_READ_BY_CLIENT_ID`] orders; past them, the open order `open` names
    /// (the engine's newest open order with the id, which it indexes).
    pub fn by_client_id(
        &self,
        account: AccountId,
        client_id: Uuid,
        open: Option<u64>,
        now: Timestamp,
    ) -> Result<&OrderRecord, QueryError> {
        let named = |r: &&OrderRecord| r.accepted.client_id == Some(client_id);
        let recent = |r: &&OrderRecord| now.0 - r.created.0 <= 30 * DAY;
        let indexed = (self.client_ids.newest(account, client_id))
            .and_then(|id| self.get(account, id))
            .filter(named);
        match indexed {
            Some(record) => Some(record).filter(recent),
            None => self
                .newest_first(account, None)
                .take(MAX_RECORDS_READ_BY_CLIENT_ID)
                .take_while(recent)
                .find(named),
        }
        .or_else(|| open.and_then(|id| self.get(account, id)))
        .ok_or(QueryError::NotFound)
    }

    /// An account's retained orders numbered below `below` (all without it), newest first:
    /// along the account's chain while it stays in `records`, then the account's orders in
    /// `kept` (the chain can pass through forgotten numbers there). A chain link that does
    /// not lead to a smaller number of the same account ends the walk, so a damaged store
    /// cannot loop or list another account's orders.
    fn newest_first(
        &self,
        account: AccountId,
        below: Option<u64>,
    ) -> impl Iterator<Item = &OrderRecord> + '_ {
        let newest = self
            .newest_of_account
            .get(account.0 as usize)
            .copied()
            .flatten();
        // Start at the cursor's own link when its record is still at hand, else at the
        // newest and skip down to the cursor.
        let start = match below {
            Some(b) => match self.record(b) {
                Some(r) if r.accepted.account == account => r.previous_of_account,
                _ => newest,
            },
            None => newest,
        };
        let below = below.unwrap_or(u64::MAX);
        let first = self.first;
        let mut next = start;
        let chain = std::iter::from_fn(move || {
            loop {
                let id = next.filter(|&id| id >= first)?;
                let record = self.record(id).filter(|r| r.accepted.account == account)?;
                next = record.previous_of_account.filter(|&p| p < id);
                if id < below {
                    return Some(record);
                }
            }
        });
        // The account's orders in `kept`, gathered only if the walk gets that far.
        let kept = std::iter::once_with(move || {
            let mut kept: Vec<&OrderRecord> = (self.kept.iter())
                .filter(|(id, r)| **id < below.min(first) && r.accepted.account == account)
                .map(|(_, r)| r)
                .collect();
            kept.sort_unstable_by_key(|r| std::cmp::Reverse(r.accepted.order.id));
            kept
        });
        chain.chain(kept.flatten())
    }

    /// A page of an account's orders, newest first: open ones always, inactive ones of the
    /// requested kinds whose last activity lies in the window. Reads at most
    /// [`MAX_RECORDS_READ`] records: a page can end short (even empty) with a cursor.
    pub fn page(
        &self,
        account: AccountId,
        filter: &OrderFilter,
    ) -> Result<OrderPage<'_>, QueryError> {
        let mut orders = Vec::new();
        let mut cursor = None;
        let mut last_read = None;
        for (read, r) in self.newest_first(account, filter.cursor).enumerate() {
            if read == MAX_RECORDS_READ {
                cursor = last_read;
                break;
            }
            last_read = Some(r.accepted.order.id);
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
                            // The public exchange: cancelled-and-rejected extends
                            // just-filled-inactive, so it lists filled orders too.
                            Inactive::Filled => {
                                filter.with_just_filled_inactive
                                    || filter.with_cancelled_and_rejected
                            }
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

    /// A page of the account's orders among `newest_first` (numbers, newest first: its open
    /// orders as the engine holds them), below the cursor and of the filter's instrument.
    /// What the open-orders listing reads instead of walking the account's history.
    pub fn listed<'a>(
        &'a self,
        account: AccountId,
        newest_first: &[u64],
        filter: &OrderFilter,
    ) -> OrderPage<'a> {
        let below = filter.cursor.unwrap_or(u64::MAX);
        let mut orders = Vec::new();
        let mut cursor = None;
        let records = (newest_first.iter())
            .filter(|&&id| id < below)
            .filter_map(|&id| self.get(account, id));
        for r in records {
            if filter
                .instrument
                .is_some_and(|i| i != r.accepted.instrument)
            {
                continue;
            }
            if orders.len() == filter.max_page_size {
                cursor = orders.last().map(|o: &&OrderRecord| o.accepted.order.id);
                break;
            }
            orders.push(r);
        }
        OrderPage { orders, cursor }
    }

    /// Orders retained (counts the records: for reports and tests, not the hot path).
    pub fn len(&self) -> usize {
        self.kept.len() + self.records.iter().flatten().count()
    }

    /// Whether none is retained.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests;
