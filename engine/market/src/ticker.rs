//! The rolling 24-hour statistics of one instrument, exact at any query time: the trades of
//! the last 24 hours in time order, each with the running volume sums before it (window sums
//! by subtraction), and monotonic deques for the high and low (after dropping entries older
//! than the window, the front is the extreme). A query at the latest time is a binary search;
//! each trade costs amortised O(1).

use std::collections::VecDeque;

use matchbook_core::Timestamp;

/// Length of the ticker window.
pub const WINDOW: i64 = 24 * 3_600 * 1_000_000_000;

/// Rolling statistics over the trades in `(now - 24h, now]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RollingStats {
    /// First trade price in the window (0 without trades).
    pub open: i64,
    /// Highest price (0 without trades).
    pub high: i64,
    /// Lowest price (0 without trades).
    pub low: i64,
    /// Last trade price in the window (0 without trades).
    pub last: i64,
    /// Base volume in lots.
    pub base_volume: i64,
    /// Quote volume at notional scale.
    pub quote_volume: i128,
    /// Trades in the window.
    pub trades: usize,
}

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Fill {
    number: u64,
    time: Timestamp,
    price: i64,
    amount: i64,
    notional: i128,
    base_before: i64,
    quote_before: i128,
}

/// Trades of the last 24 hours of one instrument.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RollingWindow {
    fills: VecDeque<Fill>,
    highs: VecDeque<(u64, i64)>,
    lows: VecDeque<(u64, i64)>,
    next_number: u64,
    base_sum: i64,
    quote_sum: i128,
    /// Time of the oldest fill, cached so a trade that expires nothing reads no old fill
    /// (`None`: not known, read it; so it need not be stored).
    #[serde(skip)]
    oldest_time: Option<Timestamp>,
}

impl RollingWindow {
    /// Adds a trade (times never decrease) and forgets trades no window ending at or after
    /// `time` can contain.
    pub fn on_trade(&mut self, time: Timestamp, price: i64, amount: i64, notional: i128) {
        let oldest_time = self
            .oldest_time
            .or_else(|| self.fills.front().map(|f| f.time));
        if oldest_time.is_some_and(|t| t.0 <= time.0 - WINDOW) {
            while self
                .fills
                .front()
                .is_some_and(|f| f.time.0 <= time.0 - WINDOW)
            {
                self.fills.pop_front();
            }
            self.oldest_time = None;
        }
        let number = self.next_number;
        self.next_number += 1;
        self.fills.push_back(Fill {
            number,
            time,
            price,
            amount,
            notional,
            base_before: self.base_sum,
            quote_before: self.quote_sum,
        });
        self.base_sum += amount;
        self.quote_sum += notional;
        while self.highs.back().is_some_and(|&(_, p)| p <= price) {
            self.highs.pop_back();
        }
        self.highs.push_back((number, price));
        while self.lows.back().is_some_and(|&(_, p)| p >= price) {
            self.lows.pop_back();
        }
        self.lows.push_back((number, price));
        // Fills are numbered consecutively, so the oldest number needs no read.
        let oldest = self.next_number - self.fills.len() as u64;
        if self.oldest_time.is_none() {
            self.oldest_time = self.fills.front().map(|f| f.time);
        }
        while self.highs.front().is_some_and(|&(n, _)| n < oldest) {
            self.highs.pop_front();
        }
        while self.lows.front().is_some_and(|&(n, _)| n < oldest) {
            self.lows.pop_front();
        }
    }

    /// Fills in the window.
    pub fn len(&self) -> usize {
        self.fills.len()
    }

    /// True when the window holds no fill.
    pub fn is_empty(&self) -> bool {
        self.fills.is_empty()
    }

    /// Forgets the oldest fills until at most `most` remain: under a history limit the
    /// statistics cover the newest `most` trades of the 24 hours (a flood of trades
    /// cannot grow the window without bound).
    pub fn keep_at_most(&mut self, most: usize) {
        if self.fills.len() <= most {
            return;
        }
        let gone = self.fills.len() - most;
        self.fills.drain(..gone);
        self.oldest_time = None;
        let oldest = self.next_number - self.fills.len() as u64;
        for queue in [&mut self.highs, &mut self.lows] {
            while queue.front().is_some_and(|&(n, _)| n < oldest) {
                queue.pop_front();
            }
        }
    }

    /// Checks a decoded window: fills numbered consecutively up to `next_number` in time
    /// order, running sums that chain from fill to fill, and high/low queues naming
    /// retained fills in order.
    pub(crate) fn check(&self) -> Result<(), String> {
        let bad = || Err("a 24-hour window is inconsistent".to_owned());
        let first = self.next_number.checked_sub(self.fills.len() as u64);
        let Some(first) = first else { return bad() };
        let (mut base, mut quote) = match self.fills.front() {
            Some(f) => (f.base_before, f.quote_before),
            None => (self.base_sum, self.quote_sum),
        };
        let mut time = i64::MIN;
        for (i, f) in self.fills.iter().enumerate() {
            if f.number != first + i as u64
                || f.time.0 < time
                || f.time.0 > super::LATEST_TIME.0
                || f.amount < 0
                || f.notional < 0
                || f.base_before != base
                || f.quote_before != quote
            {
                return bad();
            }
            time = f.time.0;
            let (Some(b), Some(q)) = (base.checked_add(f.amount), quote.checked_add(f.notional))
            else {
                return bad();
            };
            (base, quote) = (b, q);
        }
        if base != self.base_sum || quote != self.quote_sum || base < 0 || quote < 0 {
            return bad();
        }
        for queue in [&self.highs, &self.lows] {
            let mut last = None;
            for &(n, _) in queue {
                if n < first || n >= self.next_number || last.is_some_and(|l| l >= n) {
                    return bad();
                }
                last = Some(n);
            }
        }
        Ok(())
    }

    /// Statistics of the 24 hours ending at `now`.
    pub fn stats(&self, now: Timestamp) -> RollingStats {
        let begin = self.fills.partition_point(|f| f.time.0 <= now.0 - WINDOW);
        let end = self.fills.partition_point(|f| f.time <= now);
        if begin >= end {
            return RollingStats::default();
        }
        let (first, last) = (self.fills[begin], self.fills[end - 1]);
        let (high, low) = if end == self.fills.len() {
            let front = |d: &VecDeque<(u64, i64)>| {
                let i = d.partition_point(|&(n, _)| n < first.number);
                d.get(i).map_or(first.price, |&(_, p)| p)
            };
            (front(&self.highs), front(&self.lows))
        } else {
            // A query before the latest trade: scan the window directly.
            let prices = || self.fills.range(begin..end).map(|f| f.price);
            (prices().max().unwrap_or(0), prices().min().unwrap_or(0))
        };
        RollingStats {
            open: first.price,
            high,
            low,
            last: last.price,
            base_volume: last.base_before + last.amount - first.base_before,
            quote_volume: last.quote_before + last.notional - first.quote_before,
            trades: end - begin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A window built by trades passes the load check; a broken running sum, a skipped
    /// number or a high naming a forgotten fill does not.
    #[test]
    fn the_load_check_accepts_built_windows_and_refuses_tampered_ones() {
        let mut w = RollingWindow::default();
        for i in 0..30i64 {
            w.on_trade(Timestamp(i * 3_600_000_000_000), 100 + i % 7, 2, 200);
        }
        assert_eq!(w.check(), Ok(()));
        let mut sum = w.clone();
        sum.base_sum += 1;
        assert!(sum.check().is_err());
        let mut numbers = w.clone();
        numbers.fills[3].number += 1;
        assert!(numbers.check().is_err());
        let mut high = w;
        high.highs.push_front((0, 1_000));
        assert!(high.check().is_err());
    }

    proptest! {
        /// Against a brute-force scan of every trade, at the latest time and at earlier ones,
        /// including the exact 24-hour edge.
        #[test]
        fn matches_brute_force(steps in prop::collection::vec((0i64..4 * 3_600_000_000_000, 1i64..1_000, 1i64..50), 1..200),
                               probe in 0usize..200, edge in any::<bool>()) {
            let mut w = RollingWindow::default();
            let mut all = Vec::new();
            let mut t = 0i64;
            for (dt, price, amount) in steps {
                t += dt;
                w.on_trade(Timestamp(t), price, amount, i128::from(price * amount));
                all.push((t, price, amount));
            }
            let probe_time = all[probe % all.len()].0 + if edge { WINDOW } else { 0 };
            for now in [probe_time, t, t + WINDOW - 1, t + WINDOW] {
                let inside: Vec<_> = all.iter().filter(|(ft, _, _)| *ft > now - WINDOW && *ft <= now).collect();
                let got = w.stats(Timestamp(now));
                if inside.is_empty() {
                    prop_assert_eq!(got, RollingStats::default());
                    continue;
                }
                // Trades at or before `t - 24h` may be forgotten already; a window that needs
                // one of them is not answerable (the ticker only asks at the latest time).
                if inside.iter().any(|x| x.0 <= t - WINDOW) {
                    continue;
                }
                prop_assert_eq!(got.open, inside[0].1);
                prop_assert_eq!(got.last, inside[inside.len() - 1].1);
                prop_assert_eq!(got.high, inside.iter().map(|x| x.1).max().unwrap_or(0));
                prop_assert_eq!(got.low, inside.iter().map(|x| x.1).min().unwrap_or(0));
                prop_assert_eq!(got.base_volume, inside.iter().map(|x| x.2).sum::<i64>());
                prop_assert_eq!(got.trades, inside.len());
            }
        }
    }

    /// A window cut to its newest fills answers as a window fed only those, and still
    /// passes the load check.
    #[test]
    fn a_window_cut_to_its_newest_fills_answers_for_them() {
        let trades: Vec<(i64, i64)> = (0..40i64)
            .map(|i| (i * 1_000, 100 + (i * 37) % 23))
            .collect();
        let (mut cut, mut newest) = (RollingWindow::default(), RollingWindow::default());
        for (i, &(t, p)) in trades.iter().enumerate() {
            cut.on_trade(Timestamp(t), p, 2, i128::from(2 * p));
            cut.keep_at_most(7);
            if i >= trades.len() - 7 {
                newest.on_trade(Timestamp(t), p, 2, i128::from(2 * p));
            }
        }
        assert_eq!(cut.len(), 7);
        assert_eq!(cut.check(), Ok(()));
        let now = Timestamp(40_000);
        let (got, want) = (cut.stats(now), newest.stats(now));
        assert_eq!(got, want);
        assert_eq!((got.trades, got.base_volume), (7, 14));
    }
}
