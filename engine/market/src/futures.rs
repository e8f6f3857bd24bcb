//! Futures history from the event stream: funding payments per account (spec 2.14), the
//! settled funding rates of each instrument, closed positions (positions history) and the
//! trades of each position. Under history limits ([`crate::HistoryLimits`]) a position's
//! trades go with the trades history keeps, and closed positions past the trade limit go
//! earliest closed first, with their trades and owner.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use matchbook_core::fixed::Price;
use matchbook_core::hashing::IdBuildHasher;
use matchbook_core::{AccountId, InstrumentId, Timestamp, TradeId};

/// One funding payment (spec 2.14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FundingPayment {
    /// Account.
    pub account: AccountId,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Position number.
    pub position_id: u64,
    /// Rate in 1e-8 per period.
    pub rate: i64,
    /// Mark price used.
    pub mark: Price,
    /// Received (negative when paid), USD balance units.
    pub payment: i64,
    /// USD cash after it.
    pub cash_balance: i64,
    /// When.
    pub time: Timestamp,
    /// Event sequence number (orders the payments).
    pub sequence: u64,
}

/// A settled funding rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SettledRate {
    /// Rate in 1e-8 per period.
    pub rate: i64,
    /// Mark price at settlement.
    pub mark: Price,
    /// When.
    pub time: Timestamp,
}

/// A position from opening to now (open) or to its close (history).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PositionRecord {
    /// Position number.
    pub position_id: u64,
    /// Account.
    pub account: AccountId,
    /// Instrument.
    pub instrument: InstrumentId,
    /// True when it was long.
    pub long: bool,
    /// Largest absolute size it reached, in lots.
    pub max_size: i64,
    /// Entry price when it was last increased.
    pub entry_price: Price,
    /// Realised over its life (closing PnL, funding, fees), USD units.
    pub realised: i64,
    /// Opened.
    pub opened: Timestamp,
    /// Closed (equal to `opened` while open).
    pub closed: Timestamp,
}

/// Where a closed position sits in its account's history, which is kept in this order:
/// its close time, then its number. Positions-history pages resume below one.
pub type ClosedKey = (Timestamp, u64);

impl PositionRecord {
    /// Its place in the history of closed positions.
    pub fn closed_key(&self) -> ClosedKey {
        (self.closed, self.position_id)
    }
}

/// Funding payments, settled rates, closed positions and position trades.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct FuturesHistory {
    payments: BTreeMap<AccountId, Vec<FundingPayment>>,
    rates: BTreeMap<InstrumentId, Vec<SettledRate>>,
    #[serde(with = "matchbook_core::persist::sorted_map")]
    open: HashMap<(AccountId, InstrumentId), PositionRecord, IdBuildHasher>,
    /// Each account's closed positions in key order ([`ClosedKey`]: close time, then
    /// number), encoded as a sequence (as a `Vec` was) and put in that order on decoding.
    #[serde(deserialize_with = "closed_in_key_order")]
    closed: BTreeMap<AccountId, VecDeque<PositionRecord>>,
    #[serde(with = "matchbook_core::persist::sorted_map")]
    trades: HashMap<u64, Vec<TradeId>, IdBuildHasher>,
    /// Owner of every position number seen, for lookups by number alone.
    #[serde(with = "matchbook_core::persist::sorted_map")]
    owners: HashMap<u64, AccountId, IdBuildHasher>,
    /// Every closed position by (close time, number, account): the order limits forget
    /// them in, the same on a node that ran the events and one restored from a snapshot.
    /// Built from `closed` when first needed (`indexed`).
    #[serde(skip)]
    closed_order: BTreeSet<(Timestamp, u64, AccountId)>,
    #[serde(skip)]
    indexed: bool,
    /// Trades before this number are no longer kept: a position's list drops them.
    #[serde(skip)]
    oldest_trade: u64,
}

impl FuturesHistory {
    /// Records a position change that followed `trade` (when it came from a fill).
    #[allow(
        clippy::too_many_arguments,
        reason = "the fields of one PositionChanged event"
    )]
    pub fn on_position(
        &mut self,
        account: AccountId,
        instrument: InstrumentId,
        position_id: u64,
        size: i64,
        entry_price: Price,
        realised: i64,
        time: Timestamp,
        trade: Option<TradeId>,
    ) {
        let key = (account, instrument);
        if let Some(current) = self.open.get(&key).copied()
            && current.position_id != position_id
        {
            // Flipped: the old one closed at this change.
            self.open.remove(&key);
            self.note_closed(PositionRecord {
                closed: time,
                ..current
            });
        }
        if position_id == 0 {
            return;
        }
        self.owners.entry(position_id).or_insert(account);
        let record = self.open.entry(key).or_insert(PositionRecord {
            position_id,
            account,
            instrument,
            long: size > 0,
            max_size: 0,
            entry_price,
            realised: 0,
            opened: time,
            closed: time,
        });
        record.realised += realised;
        record.max_size = record.max_size.max(size.abs());
        if size != 0 {
            record.entry_price = entry_price;
        }
        let done = (size == 0).then_some(PositionRecord {
            closed: time,
            ..*record
        });
        if let Some(trade) = trade {
            let (list, oldest) = (
                self.trades.entry(position_id).or_default(),
                self.oldest_trade,
            );
            let gone = list.iter().take_while(|t| t.0 < oldest).count();
            list.drain(..gone);
            list.push(trade);
        }
        if let Some(done) = done {
            self.open.remove(&key);
            self.note_closed(done);
        }
    }

    fn note_closed(&mut self, record: PositionRecord) {
        if self.indexed {
            (self.closed_order).insert((record.closed, record.position_id, record.account));
        }
        let list = self.closed.entry(record.account).or_default();
        // One command can close several positions of an account at one time (a
        // liquidation, an expiry), in any order of their numbers.
        let at = (list.iter())
            .rposition(|p| p.closed_key() <= record.closed_key())
            .map_or(0, |i| i + 1);
        list.insert(at, record);
    }

    /// Forgets what history no longer keeps: trades before `oldest_trade` from the lists
    /// of positions (as they next grow), and the earliest closed positions past
    /// `most_closed`, with their trades and owner.
    pub fn forget(&mut self, oldest_trade: u64, most_closed: usize) {
        self.oldest_trade = self.oldest_trade.max(oldest_trade);
        if !self.indexed {
            self.closed_order = (self.closed.values().flatten())
                .map(|p| (p.closed, p.position_id, p.account))
                .collect();
            self.indexed = true;
        }
        while self.closed_order.len() > most_closed {
            let Some((time, id, account)) = self.closed_order.pop_first() else {
                break;
            };
            if let Some(list) = self.closed.get_mut(&account) {
                let at = (list.iter().take_while(|p| p.closed <= time))
                    .position(|p| p.position_id == id);
                if let Some(at) = at {
                    list.remove(at);
                }
                if list.is_empty() {
                    self.closed.remove(&account);
                }
            }
            // A position number is never used again once its position closed.
            self.trades.remove(&id);
            self.owners.remove(&id);
        }
    }

    /// Records a funding payment (its realised part is in the position change too).
    pub fn on_payment(&mut self, payment: FundingPayment) {
        if let Some(record) = self.open.get_mut(&(payment.account, payment.instrument)) {
            record.realised += payment.payment;
        }
        self.payments
            .entry(payment.account)
            .or_default()
            .push(payment);
    }

    /// Forgets funding payments made before `horizon` (each account's list is in time
    /// order), as trades and orders are forgotten past the retention window: a payment is
    /// made to every open position at every settlement, so they grow with positions times
    /// settlements for as long as the exchange runs.
    pub fn forget_payments_before(&mut self, horizon: Timestamp) {
        self.payments.retain(|_, list| {
            let gone = list.partition_point(|p| p.time < horizon);
            list.drain(..gone);
            !list.is_empty()
        });
    }

    /// Records a settled rate.
    pub fn on_settled(&mut self, instrument: InstrumentId, rate: SettledRate) {
        self.rates.entry(instrument).or_default().push(rate);
    }

    /// An account's funding payments in `[from, to]`, newest first, optionally one
    /// instrument or one position, at most `limit`, below sequence `before` (a cursor).
    pub fn payments(
        &self,
        account: AccountId,
        from: Timestamp,
        to: Timestamp,
        filter: PaymentFilter,
        limit: usize,
    ) -> (Vec<FundingPayment>, Option<u64>) {
        let list = self.payments.get(&account).map_or(&[][..], |v| v);
        let mut out = Vec::new();
        let mut cursor = None;
        for p in list.iter().rev() {
            if filter.before.is_some_and(|b| p.sequence >= b) || p.time > to {
                continue;
            }
            if p.time < from {
                break;
            }
            if filter.instrument.is_some_and(|i| i != p.instrument)
                || filter.position.is_some_and(|id| id != p.position_id)
            {
                continue;
            }
            if out.len() == limit {
                cursor = out.last().map(|p: &FundingPayment| p.sequence);
                break;
            }
            out.push(*p);
        }
        (out, cursor)
    }

    /// Settled rates of an instrument in `[from, to]`, newest first, at most `limit`.
    pub fn rates(
        &self,
        instrument: InstrumentId,
        from: Timestamp,
        to: Timestamp,
        limit: usize,
    ) -> Vec<SettledRate> {
        self.rates.get(&instrument).map_or_else(Vec::new, |v| {
            v.iter()
                .rev()
                .filter(|r| r.time >= from && r.time <= to)
                .take(limit)
                .copied()
                .collect()
        })
    }

    /// Closed positions of an account closed in `[from, to]`, newest first, at most
    /// `limit`, below `before` (a cursor: the key of the last one a page returned). Times
    /// only grow along an account's list, so the walk starts at the window's end (or the
    /// cursor's time) and stops at its start.
    pub fn closed_positions(
        &self,
        account: AccountId,
        from: Timestamp,
        to: Timestamp,
        instrument: Option<InstrumentId>,
        limit: usize,
        before: Option<ClosedKey>,
    ) -> (Vec<PositionRecord>, Option<ClosedKey>) {
        let Some(list) = self.closed.get(&account) else {
            return (Vec::new(), None);
        };
        let below = before.unwrap_or((Timestamp(i64::MAX), u64::MAX));
        let last = to.min(below.0);
        let end = list.partition_point(|p| p.closed <= last);
        let mut out = Vec::new();
        let mut cursor = None;
        for p in list.range(..end).rev() {
            if p.closed < from {
                break;
            }
            if p.closed_key() >= below || instrument.is_some_and(|i| i != p.instrument) {
                continue;
            }
            if out.len() == limit {
                cursor = out.last().map(PositionRecord::closed_key);
                break;
            }
            out.push(*p);
        }
        (out, cursor)
    }

    /// The owner of a position number (open or closed), if known.
    pub fn position_owner(&self, position_id: u64) -> Option<AccountId> {
        self.owners.get(&position_id).copied()
    }

    /// Trades of a position, oldest first.
    pub fn position_trades(&self, position_id: u64) -> &[TradeId] {
        self.trades.get(&position_id).map_or(&[], |v| v)
    }
}

/// Decodes the closed lists and puts each in key order: a store written before the lists
/// were kept so could hold positions closed at one time in another order.
fn closed_in_key_order<'de, D: serde::Deserializer<'de>>(
    decoder: D,
) -> Result<BTreeMap<AccountId, VecDeque<PositionRecord>>, D::Error> {
    let mut closed: BTreeMap<AccountId, VecDeque<PositionRecord>> =
        serde::Deserialize::deserialize(decoder)?;
    for list in closed.values_mut() {
        list.make_contiguous()
            .sort_by_key(PositionRecord::closed_key);
    }
    Ok(closed)
}

/// Which payments a query returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PaymentFilter {
    /// Only this instrument.
    pub instrument: Option<InstrumentId>,
    /// Only this position.
    pub position: Option<u64>,
    /// Below this sequence number (a cursor).
    pub before: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_close_into_history_and_flips_split_them() {
        let mut h = FuturesHistory::default();
        let (a, i) = (AccountId(1), InstrumentId(5));
        h.on_position(a, i, 7, 10, Price(100), -1, Timestamp(1), Some(TradeId(1)));
        h.on_position(a, i, 7, 4, Price(100), 5, Timestamp(2), Some(TradeId(2)));
        // Flip: position 7 closes, position 8 opens short.
        h.on_position(a, i, 8, -3, Price(90), -2, Timestamp(3), Some(TradeId(3)));
        let (closed, _) = h.closed_positions(a, Timestamp(0), Timestamp(9), None, 10, None);
        assert_eq!(closed.len(), 1);
        assert_eq!(
            (
                closed[0].position_id,
                closed[0].max_size,
                closed[0].realised
            ),
            (7, 10, 4)
        );
        assert_eq!(h.position_trades(7), &[TradeId(1), TradeId(2)]);
        assert_eq!(h.position_trades(8), &[TradeId(3)]);
        h.on_position(a, i, 8, 0, Price(0), 1, Timestamp(4), Some(TradeId(4)));
        let (closed, _) = h.closed_positions(a, Timestamp(0), Timestamp(9), None, 10, None);
        assert_eq!(closed[0].position_id, 8, "newest first");
        assert!(!closed[0].long);
        assert_eq!(h.position_owner(8), Some(a));
    }

    /// Pages follow the close order, ties at one time by number, whatever order the
    /// positions opened or closed in; a store decoded with a tie out of order is put in
    /// order first.
    #[test]
    fn closed_positions_page_in_key_order() {
        let mut h = FuturesHistory::default();
        let a = AccountId(1);
        // Positions 5, 3 and 4 close at time 10 (in that order), position 2 at time 11.
        for (id, time) in [(5u64, 10i64), (3, 10), (4, 10), (2, 11)] {
            let i = InstrumentId(id as u16);
            h.on_position(a, i, id, 1, Price(100), 0, Timestamp(1), None);
            h.on_position(a, i, id, 0, Price(0), 0, Timestamp(time), None);
        }
        let pages = |h: &FuturesHistory| {
            let (mut seen, mut before) = (Vec::new(), None);
            loop {
                let (page, next) =
                    h.closed_positions(a, Timestamp(0), Timestamp(20), None, 1, before);
                seen.extend(page.iter().map(|p| p.position_id));
                match next {
                    Some(next) => before = Some(next),
                    None => return seen,
                }
            }
        };
        assert_eq!(pages(&h), [2, 5, 4, 3]);
        let (window, _) = h.closed_positions(a, Timestamp(0), Timestamp(10), None, 9, None);
        assert_eq!(
            window.iter().map(|p| p.position_id).collect::<Vec<_>>(),
            [5, 4, 3]
        );
        // As a store kept before the order held could be: the tie in closing order.
        let list = h.closed.get_mut(&a).expect("closed");
        list.make_contiguous()
            .sort_by_key(|p| (p.closed, p.position_id != 5));
        assert_eq!(list.front().map(|p| p.position_id), Some(5));
        let restored: FuturesHistory =
            postcard::from_bytes(&postcard::to_stdvec(&h).expect("encodes")).expect("decodes");
        assert_eq!(pages(&restored), [2, 5, 4, 3]);
    }

    /// Closed positions past the limit go earliest closed first with their trades and
    /// owner, the same on a copy restored from its encoding; a position's list drops the
    /// trades history no longer keeps as it grows.
    #[test]
    fn limits_forget_the_earliest_closed_positions_and_old_trades() {
        let mut h = FuturesHistory::default();
        let i = InstrumentId(5);
        // Positions 1..=4 of four accounts, each opened by trade 2n-1 and closed by 2n.
        for n in 1..=4u64 {
            let a = AccountId(n as u32);
            let (t, open) = (Timestamp(n as i64), Some(TradeId(2 * n - 1)));
            h.on_position(a, i, n, 1, Price(100), 0, t, open);
            h.on_position(a, i, n, 0, Price(0), 0, t, Some(TradeId(2 * n)));
        }
        let mut restored: FuturesHistory =
            postcard::from_bytes(&postcard::to_stdvec(&h).expect("encodes")).expect("decodes");
        for copy in [&mut h, &mut restored] {
            copy.forget(7, 2);
            let closed = |n: u32| {
                let a = AccountId(n);
                copy.closed_positions(a, Timestamp(0), Timestamp(9), None, 9, None)
                    .0
                    .len()
            };
            assert_eq!([closed(1), closed(2), closed(3), closed(4)], [0, 0, 1, 1]);
            assert_eq!(
                (copy.position_owner(2), copy.position_trades(2)),
                (None, &[][..])
            );
            assert_eq!(copy.position_owner(3), Some(AccountId(3)));
        }
        // An open position's list drops trades before the oldest kept as it grows.
        let a = AccountId(9);
        h.on_position(a, i, 9, 1, Price(100), 0, Timestamp(10), Some(TradeId(8)));
        h.on_position(a, i, 9, 2, Price(100), 0, Timestamp(10), Some(TradeId(10)));
        assert_eq!(h.position_trades(9), &[TradeId(8), TradeId(10)]);
        h.forget(10, 2);
        h.on_position(a, i, 9, 3, Price(100), 0, Timestamp(11), Some(TradeId(11)));
        assert_eq!(h.position_trades(9), &[TradeId(10), TradeId(11)]);
    }
}
