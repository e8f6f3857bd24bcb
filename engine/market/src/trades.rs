//! Trade history: every trade once, in execution order, in a chunked deque indexed by trade
//! number; each record links to the previous trade of its taker's account, its maker's
//! account and its instrument, so an account's or instrument's trades are a walk back from
//! its newest, with no per-account list to append to or prune. Pages are newest first with a
//! cursor that resumes exactly where the previous page ended even while new trades arrive
//! (it names the last trade returned, and newer trades all have larger numbers).

use super::chunked::ChunkedDeque;
use super::query::{MAX_RECORDS_READ, QueryError};
use matchbook_core::Side;
use matchbook_core::Trade;
use matchbook_core::fixed::{Price, Qty};
use matchbook_core::{AccountId, InstrumentId, OrderRef, Timestamp, TradeId};

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
    /// Links to earlier trades, set when the store takes the record.
    previous: Links,
}

/// The numbers of the previous trade of the taker's account, of the maker's account and of
/// the instrument.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Links {
    taker_account: Option<u64>,
    maker_account: Option<u64>,
    instrument: Option<u64>,
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
    /// A trade as it happened, before any position is attached.
    pub fn new(trade: Trade, time: Timestamp, sequence: u64) -> Self {
        Self {
            trade,
            time,
            sequence,
            positions: [None; 2],
            previous: Links::default(),
        }
    }

    /// The previous trade of `account`, which took a side in this one (the taker's link when
    /// an account traded with itself: both sides share it).
    fn previous_of(&self, account: AccountId) -> Option<u64> {
        if self.trade.taker_account == account {
            self.previous.taker_account
        } else {
            self.previous.maker_account
        }
    }

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

/// Every trade retained, plus the newest trade number of each account and instrument.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct TradeStore {
    /// Trade number of `records[0]`.
    first: u64,
    records: ChunkedDeque<TradeRecord>,
    /// Time of `records[0]`, cached so the check for expired trades reads no record
    /// (`None`: not known, read it; so it need not be stored).
    #[serde(skip)]
    first_time: Option<Timestamp>,
    /// Newest trade number by account number (account numbers are dense).
    newest_of_account: Vec<Option<u64>>,
    /// Newest trade number by instrument number.
    newest_of_instrument: Vec<Option<u64>>,
}

/// Replaces the entry at `index` of `newest` (grown to hold it) with `id`; the entry before.
fn replace_newest(newest: &mut Vec<Option<u64>>, index: usize, id: u64) -> Option<u64> {
    if newest.len() <= index {
        newest.resize(index + 1, None);
    }
    newest[index].replace(id)
}

/// Which chain a walk follows.
#[derive(Debug, Clone, Copy)]
enum Chain {
    Account(AccountId),
    Instrument(InstrumentId),
}

impl TradeStore {
    /// A copy for a snapshot: the records shared with this store (see
    /// [`ChunkedDeque::share`]), the rest copied.
    pub fn share(&mut self) -> Self {
        Self {
            first: self.first,
            records: self.records.share(),
            first_time: self.first_time,
            newest_of_account: self.newest_of_account.clone(),
            newest_of_instrument: self.newest_of_instrument.clone(),
        }
    }

    /// Appends a trade (numbers arrive in order) and links it to its chains.
    pub fn push(&mut self, mut record: TradeRecord) {
        let id = record.trade.id.0;
        if self.records.is_empty() {
            self.first = id;
            self.first_time = Some(record.time);
        }
        let t = &record.trade;
        let taker = replace_newest(&mut self.newest_of_account, t.taker_account.0 as usize, id);
        let maker = if t.maker_account == t.taker_account {
            taker
        } else {
            replace_newest(&mut self.newest_of_account, t.maker_account.0 as usize, id)
        };
        let instrument = replace_newest(
            &mut self.newest_of_instrument,
            usize::from(t.instrument.0),
            id,
        );
        record.previous = Links {
            taker_account: taker,
            maker_account: maker,
            instrument,
        };
        self.records.push_back(record);
    }

    /// Drops trades older than `horizon`; reads no record when there is nothing to drop.
    pub fn forget_before(&mut self, horizon: Timestamp) {
        let first_time = self
            .first_time
            .or_else(|| self.records.front().map(|r| r.time));
        self.first_time = first_time;
        if first_time.is_none_or(|t| t >= horizon) {
            return;
        }
        while self.records.front().is_some_and(|r| r.time < horizon) {
            self.records.pop_front();
            self.first += 1;
        }
        self.first_time = self.records.front().map(|r| r.time);
    }

    /// Number of the oldest trade kept (the next one's when none is).
    pub fn first_retained(&self) -> u64 {
        self.first
    }

    /// Drops the oldest trades until at most `most` remain.
    pub fn keep_at_most(&mut self, most: usize) {
        if self.records.len() <= most {
            return;
        }
        while self.records.len() > most {
            self.records.pop_front();
            self.first += 1;
        }
        self.first_time = self.records.front().map(|r| r.time);
    }

    /// Checks a decoded store: records numbered consecutively from `first`, and every chain
    /// link pointing back to a trade of the same account or
    /// instrument (walks also stop at a link that does not).
    pub(crate) fn check(&self) -> Result<(), String> {
        let bad = || Err("the trade history is inconsistent".to_owned());
        for (i, r) in self.records.iter().enumerate() {
            if Some(r.trade.id.0) != self.first.checked_add(i as u64) {
                return bad();
            }
        }
        let linked = |chain: Chain, id: u64, previous: Option<u64>| {
            previous.is_none_or(|p| {
                p < id
                    && self
                        .get(TradeId(p))
                        .is_none_or(|r| Self::on_chain(r, chain))
            })
        };
        for r in self.records.iter() {
            let (t, id) = (&r.trade, r.trade.id.0);
            if !linked(
                Chain::Account(t.taker_account),
                id,
                r.previous.taker_account,
            ) || !linked(
                Chain::Account(t.maker_account),
                id,
                r.previous.maker_account,
            ) || !linked(Chain::Instrument(t.instrument), id, r.previous.instrument)
            {
                return bad();
            }
        }
        let newest_ok = |newest: &[Option<u64>], chain: &dyn Fn(usize) -> Chain| {
            newest.iter().enumerate().all(|(i, n)| {
                n.is_none_or(|id| {
                    self.get(TradeId(id))
                        .is_none_or(|r| Self::on_chain(r, chain(i)))
                })
            })
        };
        let account = |i: usize| Chain::Account(AccountId(u32::try_from(i).unwrap_or(u32::MAX)));
        let instrument =
            |i: usize| Chain::Instrument(InstrumentId(u16::try_from(i).unwrap_or(u16::MAX)));
        if !newest_ok(&self.newest_of_account, &account)
            || !newest_ok(&self.newest_of_instrument, &instrument)
        {
            return bad();
        }
        Ok(())
    }

    fn on_chain(r: &TradeRecord, chain: Chain) -> bool {
        match chain {
            Chain::Account(a) => r.trade.taker_account == a || r.trade.maker_account == a,
            Chain::Instrument(i) => r.trade.instrument == i,
        }
    }

    /// The link back from `r` along `chain`.
    fn previous_on(r: &TradeRecord, chain: Chain) -> Option<u64> {
        match chain {
            Chain::Account(a) => r.previous_of(a),
            Chain::Instrument(_) => r.previous.instrument,
        }
    }

    /// Retained trades of `chain` numbered below `below` (all without it), newest first.
    /// Starts at the cursor's own link when the cursor's trade is retained and on the chain,
    /// else at the newest; a link that does not lead to a smaller number on the same chain
    /// ends the walk.
    fn walk(&self, chain: Chain, below: Option<u64>) -> impl Iterator<Item = &TradeRecord> + '_ {
        let newest = match chain {
            Chain::Account(a) => self.newest_of_account.get(a.0 as usize),
            Chain::Instrument(i) => self.newest_of_instrument.get(usize::from(i.0)),
        }
        .copied()
        .flatten();
        let start = match below.and_then(|b| self.get(TradeId(b))) {
            Some(r) if Self::on_chain(r, chain) => Self::previous_on(r, chain),
            _ => newest,
        };
        let below = below.unwrap_or(u64::MAX);
        let mut next = start;
        std::iter::from_fn(move || {
            loop {
                let id = next?;
                let r = self.get(TradeId(id)).filter(|r| Self::on_chain(r, chain))?;
                next = Self::previous_on(r, chain).filter(|&p| p < id);
                if id < below {
                    return Some(r);
                }
            }
        })
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

    /// A page of an account's trades. Reads at most [`MAX_RECORDS_READ`] records: a page
    /// can end short (even empty) with a cursor.
    pub fn account_page(
        &self,
        account: AccountId,
        filter: &TradeFilter<'_>,
    ) -> Result<TradePage<'_>, QueryError> {
        self.page(Chain::Account(account), filter)
    }

    /// A page of an instrument's public tape (read as an account's is).
    pub fn instrument_page(
        &self,
        instrument: InstrumentId,
        filter: &TradeFilter<'_>,
    ) -> Result<TradePage<'_>, QueryError> {
        self.page(Chain::Instrument(instrument), filter)
    }

    fn page<'a>(
        &'a self,
        chain: Chain,
        filter: &TradeFilter<'_>,
    ) -> Result<TradePage<'a>, QueryError> {
        if !crate::query::within_window(filter.from, filter.to) {
            return Err(QueryError::TimeRangeTooBig);
        }
        if filter
            .cursor
            .is_some_and(|c| c >= self.first.saturating_add(self.records.len() as u64))
        {
            return Err(QueryError::InvalidCursor);
        }
        let mut trades = Vec::with_capacity(filter.max_page_size.min(100));
        let mut cursor = None;
        let mut last_read = None;
        for (read, r) in self.walk(chain, filter.cursor).enumerate() {
            if read == MAX_RECORDS_READ {
                cursor = last_read;
                break;
            }
            last_read = Some(r.trade.id.0);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::MAX_WINDOW;
    use proptest::prelude::*;

    fn trade(id: u64, instrument: u16, taker: u32, maker: u32) -> Trade {
        Trade {
            id: TradeId(id),
            instrument: InstrumentId(instrument),
            price: Price(100),
            amount: Qty(1),
            taker_side: Side::Buy,
            maker: OrderRef {
                id: 2 * id,
                slot: 0,
            },
            maker_account: AccountId(maker),
            maker_remaining: Qty(0),
            taker: OrderRef {
                id: 2 * id + 1,
                slot: 0,
            },
            taker_account: AccountId(taker),
            taker_remaining: Qty(0),
            maker_fee: 0,
            taker_fee: 0,
        }
    }

    /// Every page of `chain`, following cursors, concatenated.
    fn all_pages(store: &TradeStore, chain: Chain, size: usize) -> Vec<u64> {
        let mut out = Vec::new();
        let mut cursor = None;
        loop {
            let filter = TradeFilter {
                from: Timestamp(0),
                to: Timestamp(MAX_WINDOW),
                instruments: None,
                max_page_size: size,
                cursor,
            };
            let page = store.page(chain, &filter).expect("page");
            out.extend(page.trades.iter().map(|t| t.trade.id.0));
            match page.cursor {
                Some(c) => cursor = Some(c),
                None => return out,
            }
        }
    }

    /// A page reads at most `MAX_RECORDS_READ` trades: three trades of another instrument
    /// under 25,000 newer ones come on the third page, after two empty pages with cursors,
    /// and following the cursors lists them all once.
    #[test]
    fn a_page_stops_reading_at_its_bound() {
        let mut store = TradeStore::default();
        let newer = 25_000u64;
        for id in 1..=newer + 3 {
            let instrument = u16::from(id <= 3);
            store.push(TradeRecord::new(
                trade(id, instrument, 1, 2),
                Timestamp(1),
                id,
            ));
        }
        let only = [InstrumentId(1)];
        let page = |cursor| {
            let filter = TradeFilter {
                from: Timestamp(0),
                to: Timestamp(MAX_WINDOW),
                instruments: Some(&only),
                max_page_size: 100,
                cursor,
            };
            store.account_page(AccountId(1), &filter).expect("page")
        };
        let (mut pages, mut cursor, mut found) = (0, None, Vec::new());
        loop {
            let p = page(cursor);
            pages += 1;
            found.extend(p.trades.iter().map(|t| t.trade.id.0));
            match p.cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(found, [3, 2, 1]);
        assert_eq!(pages, newer as usize / MAX_RECORDS_READ + 1);
    }

    proptest! {
        /// Against the plain list of trades: after any mix of trades (self-trades included)
        /// and retention horizons, each account's and instrument's pages, followed by
        /// cursor, list exactly its retained trades, newest first, each once.
        #[test]
        fn chains_list_exactly_the_retained_trades(
            trades in prop::collection::vec((0u16..2, 0u32..3, 0u32..3, 1i64..5), 1..150),
            horizons in prop::collection::vec(0usize..150, 0..4),
            size in 1usize..7,
        ) {
            let mut store = TradeStore::default();
            let mut time = 0;
            let mut model = Vec::new();
            for (i, &(instrument, taker, maker, step)) in trades.iter().enumerate() {
                time += step;
                let id = i as u64 + 1;
                store.push(TradeRecord::new(trade(id, instrument, taker, maker), Timestamp(time), id));
                model.push((id, time, instrument, taker, maker));
                if horizons.contains(&i) {
                    store.forget_before(Timestamp(time - 6));
                }
            }
            prop_assert!(store.check().is_ok());
            let first_kept = store.first;
            let kept = |id: u64| id >= first_kept;
            for account in 0..3u32 {
                let want: Vec<u64> = model.iter().rev()
                    .filter(|t| kept(t.0) && (t.3 == account || t.4 == account))
                    .map(|t| t.0).collect();
                prop_assert_eq!(all_pages(&store, Chain::Account(AccountId(account)), size), want);
            }
            for instrument in 0..2u16 {
                let want: Vec<u64> = model.iter().rev()
                    .filter(|t| kept(t.0) && t.2 == instrument)
                    .map(|t| t.0).collect();
                prop_assert_eq!(all_pages(&store, Chain::Instrument(InstrumentId(instrument)), size), want);
            }
        }
    }
}
