//! Trade history: every trade once, in execution order, indexed per account and per
//! instrument; pages newest first with a cursor that resumes exactly where the previous page
//! ended even while new trades arrive (it names the last trade returned, and newer trades
//! all have larger numbers).

use super::chunked::ChunkedDeque;
use super::query::{MAX_WINDOW, QueryError};
use crate::event::Trade;
use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, InstrumentId, OrderRef, Timestamp, TradeId};
use crate::order::Side;

/// A trade as history keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TradeRecord {
    /// The trade event.
    pub trade: Trade,
    /// Its time.
    pub time: Timestamp,
    /// Its event sequence number.
    pub sequence: u64,
    /// Futures: the (position number, open amount after the fill) of the taker's and the
    /// maker's side, in that order.
    pub positions: [Option<(u64, i64)>; 2],
}

/// One side of a trade, as an account sees it (spec 2.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TradeSide {
    /// The account.
    pub account: AccountId,
    /// Its order.
    pub order: OrderRef,
    /// BUY or SELL for this account.
    pub side: Side,
    /// True for the resting order's side.
    pub maker: bool,
    /// Fee charged (balance units of the currency received).
    pub fee: i64,
}

impl TradeRecord {
    /// The side `account` took in this trade (the taker's when an account traded with itself).
    pub fn side_of(&self, account: AccountId) -> Option<TradeSide> {
        let t = &self.trade;
        if t.taker_account == account {
            Some(TradeSide {
                account,
                order: t.taker,
                side: t.taker_side,
                maker: false,
                fee: t.taker_fee,
            })
        } else if t.maker_account == account {
            Some(TradeSide {
                account,
                order: t.maker,
                side: t.taker_side.opposite(),
                maker: true,
                fee: t.maker_fee,
            })
        } else {
            None
        }
    }
    /// Price.
    pub fn price(&self) -> Price {
        self.trade.price
    }
    /// Amount.
    pub fn amount(&self) -> Qty {
        self.trade.amount
    }
}

/// A page of trades, newest first, and the cursor for the next (older) page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TradePage<'a> {
    /// Trades.
    pub trades: Vec<&'a TradeRecord>,
    /// Number of the last trade returned when more may follow.
    pub cursor: Option<u64>,
}

/// Filters of a trade-history query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TradeFilter<'q> {
    /// Window start (inclusive).
    pub from: Timestamp,
    /// Window end (inclusive).
    pub to: Timestamp,
    /// Only these instruments (`None`: all).
    pub instruments: Option<&'q [InstrumentId]>,
    /// Page size (0..=100).
    pub max_page_size: usize,
    /// Resume after this trade number (from a previous page).
    pub cursor: Option<u64>,
}

/// Every trade retained, plus per-account and per-instrument indexes of trade numbers.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct TradeStore {
    /// Trade number of `records[0]`.
    first: u64,
    records: ChunkedDeque<TradeRecord>,
    /// Trade numbers by account number (account numbers are dense).
    by_account: Vec<Vec<u64>>,
    /// Trade numbers by instrument number.
    by_instrument: Vec<Vec<u64>>,
}

/// The list at `index` of `lists`, grown to hold it.
fn list_at(lists: &mut Vec<Vec<u64>>, index: usize) -> &mut Vec<u64> {
    if lists.len() <= index {
        lists.resize_with(index + 1, Vec::new);
    }
    &mut lists[index]
}

impl TradeStore {
    /// Appends a trade (numbers arrive in order).
    pub fn push(&mut self, record: TradeRecord) {
        let id = record.trade.id.0;
        if self.records.is_empty() {
            self.first = id;
        }
        let t = &record.trade;
        list_at(&mut self.by_account, t.taker_account.0 as usize).push(id);
        if t.maker_account != t.taker_account {
            list_at(&mut self.by_account, t.maker_account.0 as usize).push(id);
        }
        list_at(&mut self.by_instrument, usize::from(t.instrument.0)).push(id);
        self.records.push_back(record);
    }

    /// Drops trades older than `horizon`. Cheap when there is nothing to drop; the indexes
    /// are pruned only when trades were dropped.
    pub fn forget_before(&mut self, horizon: Timestamp) {
        if self.records.front().is_none_or(|r| r.time >= horizon) {
            return;
        }
        while self.records.front().is_some_and(|r| r.time < horizon) {
            self.records.pop_front();
            self.first += 1;
        }
        let first = self.first;
        for list in self.by_account.iter_mut().chain(&mut self.by_instrument) {
            let stale = list.partition_point(|&id| id < first);
            list.drain(..stale);
        }
    }

    /// Checks a decoded store: records numbered consecutively from `first`, index lists in
    /// ascending order naming retained trades of their account or instrument.
    pub(crate) fn check(&self) -> Result<(), String> {
        let bad = || Err("the trade history is inconsistent".to_owned());
        for (i, r) in self.records.iter().enumerate() {
            if Some(r.trade.id.0) != self.first.checked_add(i as u64) {
                return bad();
            }
        }
        let belongs =
            |id: u64, test: &dyn Fn(&TradeRecord) -> bool| self.get(TradeId(id)).is_none_or(test);
        for (account, list) in self.by_account.iter().enumerate() {
            let account = AccountId(u32::try_from(account).map_err(|_| "too many accounts")?);
            if !list.is_sorted_by(|a, b| a < b)
                || !list.iter().all(|&id| {
                    belongs(id, &|r| {
                        r.trade.taker_account == account || r.trade.maker_account == account
                    })
                })
            {
                return bad();
            }
        }
        for (instrument, list) in self.by_instrument.iter().enumerate() {
            let instrument =
                InstrumentId(u16::try_from(instrument).map_err(|_| "too many instruments")?);
            if !list.is_sorted_by(|a, b| a < b)
                || !list
                    .iter()
                    .all(|&id| belongs(id, &|r| r.trade.instrument == instrument))
            {
                return bad();
            }
        }
        Ok(())
    }

    /// Notes the position a futures fill moved, on the side `account` took in `trade`.
    pub fn attach_position(
        &mut self,
        trade: Option<TradeId>,
        account: AccountId,
        position_id: u64,
        size: i64,
    ) {
        let Some(record) = trade.and_then(|t| {
            let index = t.0.checked_sub(self.first)?;
            self.records.get_mut(usize::try_from(index).ok()?)
        }) else {
            return;
        };
        let side = if record.trade.taker_account == account && record.positions[0].is_none() {
            0
        } else {
            1
        };
        record.positions[side] = Some((position_id, size));
    }

    /// A retained trade by number.
    pub fn get(&self, id: TradeId) -> Option<&TradeRecord> {
        let index = id.0.checked_sub(self.first)?;
        self.records.get(usize::try_from(index).ok()?)
    }

    /// Retained trades numbered after `after`, oldest first.
    pub fn since(&self, after: u64) -> impl Iterator<Item = &TradeRecord> + '_ {
        let skip = after.saturating_add(1).saturating_sub(self.first);
        self.records
            .iter_from(usize::try_from(skip).unwrap_or(usize::MAX))
    }

    /// Trades retained.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether none is retained.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// A page of an account's trades.
    pub fn account_page(
        &self,
        account: AccountId,
        filter: &TradeFilter<'_>,
    ) -> Result<TradePage<'_>, QueryError> {
        self.page(
            self.by_account
                .get(account.0 as usize)
                .map_or(&[][..], |v| v),
            filter,
        )
    }

    /// A page of an instrument's public tape.
    pub fn instrument_page(
        &self,
        instrument: InstrumentId,
        filter: &TradeFilter<'_>,
    ) -> Result<TradePage<'_>, QueryError> {
        self.page(
            self.by_instrument
                .get(usize::from(instrument.0))
                .map_or(&[][..], |v| v),
            filter,
        )
    }

    fn page<'a>(
        &'a self,
        ids: &[u64],
        filter: &TradeFilter<'_>,
    ) -> Result<TradePage<'a>, QueryError> {
        if filter.to.0 - filter.from.0 > MAX_WINDOW {
            return Err(QueryError::TimeRangeTooBig);
        }
        let end = match filter.cursor {
            Some(c) if c >= self.first.saturating_add(self.records.len() as u64) => {
                return Err(QueryError::InvalidCursor);
            }
            Some(c) => ids.partition_point(|&id| id < c),
            None => ids.len(),
        };
        let mut trades = Vec::with_capacity(filter.max_page_size.min(end));
        let mut cursor = None;
        for &id in ids[..end].iter().rev() {
            let Some(r) = self.get(TradeId(id)) else {
                break;
            };
            if r.time > filter.to {
                continue;
            }
            if r.time < filter.from {
                break;
            }
            if filter
                .instruments
                .is_some_and(|list| !list.contains(&r.trade.instrument))
            {
                continue;
            }
            if trades.len() == filter.max_page_size {
                cursor = trades.last().map(|t: &&TradeRecord| t.trade.id.0);
                break;
            }
            trades.push(r);
        }
        Ok(TradePage { trades, cursor })
    }
}
