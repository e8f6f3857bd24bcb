//! Futures history from the event stream: funding payments per account (spec 2.14), the
//! settled funding rates of each instrument, closed positions (positions history) and the
//! trades of each position.

use std::collections::{BTreeMap, HashMap};

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

/// Funding payments, settled rates, closed positions and position trades.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct FuturesHistory {
    payments: BTreeMap<AccountId, Vec<FundingPayment>>,
    rates: BTreeMap<InstrumentId, Vec<SettledRate>>,
    #[serde(with = "matchbook_core::persist::sorted_map")]
    open: HashMap<(AccountId, InstrumentId), PositionRecord, IdBuildHasher>,
    closed: BTreeMap<AccountId, Vec<PositionRecord>>,
    #[serde(with = "matchbook_core::persist::sorted_map")]
    trades: HashMap<u64, Vec<TradeId>, IdBuildHasher>,
    /// Owner of every position number seen, for lookups by number alone.
    #[serde(with = "matchbook_core::persist::sorted_map")]
    owners: HashMap<u64, AccountId, IdBuildHasher>,
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
            self.closed
                .entry(account)
                .or_default()
                .push(PositionRecord {
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
        if let Some(trade) = trade {
            self.trades.entry(position_id).or_default().push(trade);
        }
        if size == 0 {
            let done = PositionRecord {
                closed: time,
                ..*record
            };
            self.open.remove(&key);
            self.closed.entry(account).or_default().push(done);
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
    /// `limit`, below position number `before` (a cursor).
    pub fn closed_positions(
        &self,
        account: AccountId,
        from: Timestamp,
        to: Timestamp,
        instrument: Option<InstrumentId>,
        limit: usize,
        before: Option<u64>,
    ) -> (Vec<PositionRecord>, Option<u64>) {
        let list = self.closed.get(&account).map_or(&[][..], |v| v);
        let mut out = Vec::new();
        let mut cursor = None;
        for p in list.iter().rev() {
            if before.is_some_and(|b| p.position_id >= b)
                || p.closed > to
                || p.closed < from
                || instrument.is_some_and(|i| i != p.instrument)
            {
                continue;
            }
            if out.len() == limit {
                cursor = out.last().map(|p: &PositionRecord| p.position_id);
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
}
