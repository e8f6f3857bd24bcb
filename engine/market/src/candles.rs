//! Candlesticks of one instrument at one granularity, built incrementally: each trade and
//! each change of the instrument's reference price updates the current period's entry in
//! O(1). Only periods in which something happened are stored; a period in which nothing
//! happened is produced at query time from the entry before it, so memory follows activity,
//! not elapsed time, and is capped by a retention count.
//!
//! Rules: a period with trades has open, high, low and close from its trades, volume in quote
//! currency (price x amount at notional scale) and total amount in base lots. A period
//! without trades has volume 0 and open = high = low = close = the reference price at the
//! end of the period: the book's bid/ask mid, or the last trade price while the book has no
//! mid. There are no candles before the first reference price.

use std::collections::VecDeque;

use super::period::Granularity;
use matchbook_core::Timestamp;

/// One candle as returned by queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Candle {
    /// Start of the period.
    pub start: Timestamp,
    /// End of the period (start of the next).
    pub end: Timestamp,
    /// Open, in ticks.
    pub open: i64,
    /// High.
    pub high: i64,
    /// Low.
    pub low: i64,
    /// Close.
    pub close: i64,
    /// Quote volume at notional scale (price x amount).
    pub volume: i128,
    /// Base volume in lots.
    pub total_amount: i64,
    /// Sequence number of the last event that contributed.
    pub last_sequence: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Entry {
    candle: Candle,
    traded: bool,
    /// Reference price when the period ended (or now, for the current period).
    closing_reference: i64,
}

/// Candles of one instrument at one granularity.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CandleSeries {
    granularity: Granularity,
    entries: VecDeque<Entry>,
    retention: usize,
}

impl CandleSeries {
    /// An empty series keeping at most `retention` stored periods.
    pub fn new(granularity: Granularity, retention: usize) -> Self {
        Self {
            granularity,
            entries: VecDeque::new(),
            retention: retention.max(1),
        }
    }

    /// Checks a decoded series: the expected granularity, at most `retention` entries, each
    /// starting on a period boundary after the one before, inside the representable time.
    pub(crate) fn check(&self, granularity: Granularity) -> Result<(), String> {
        if self.granularity != granularity
            || self.retention == 0
            || self.entries.len() > self.retention
        {
            return Err("a candle series is not the one expected".into());
        }
        let mut previous = None;
        for e in &self.entries {
            let start = e.candle.start;
            if !(0..=super::LATEST_TIME.0).contains(&start.0)
                || granularity.start_of(start) != start
                || previous.is_some_and(|p| p >= start)
                || e.candle.end != granularity.next(start)
            {
                return Err("candle periods out of order".into());
            }
            previous = Some(start);
        }
        Ok(())
    }

    /// The stored entry of the period containing `time`, if it is the newest: a comparison
    /// with its bounds, so calendar arithmetic runs only when a period begins.
    fn current(&mut self, time: Timestamp) -> Option<&mut Entry> {
        self.entries
            .back_mut()
            .filter(|e| e.candle.start <= time && time < e.candle.end)
    }

    fn push(&mut self, entry: Entry) {
        if self.entries.len() == self.retention {
            self.entries.pop_front();
        }
        self.entries.push_back(entry);
    }

    /// Adds a trade.
    pub fn on_trade(
        &mut self,
        time: Timestamp,
        sequence: u64,
        price: i64,
        amount: i64,
        notional: i128,
    ) {
        if let Some(e) = self.current(time) {
            let c = &mut e.candle;
            if e.traded {
                c.high = c.high.max(price);
                c.low = c.low.min(price);
                c.volume += notional;
                c.total_amount += amount;
            } else {
                (c.open, c.high, c.low, c.volume, c.total_amount) =
                    (price, price, price, notional, amount);
                e.traded = true;
            }
            c.close = price;
            c.last_sequence = sequence;
            e.closing_reference = price;
            return;
        }
        let start = self.granularity.start_of(time);
        let candle = Candle {
            volume: notional,
            total_amount: amount,
            ..self.flat(start, price, sequence)
        };
        self.push(Entry {
            candle,
            traded: true,
            closing_reference: price,
        });
    }

    /// A candle without volume at one price.
    fn flat(&self, start: Timestamp, price: i64, last_sequence: u64) -> Candle {
        Candle {
            start,
            end: self.granularity.next(start),
            open: price,
            high: price,
            low: price,
            close: price,
            volume: 0,
            total_amount: 0,
            last_sequence,
        }
    }

    /// Records the instrument's reference price after a command that touched it.
    pub fn on_reference(&mut self, time: Timestamp, sequence: u64, reference: i64) {
        if let Some(e) = self.current(time) {
            e.closing_reference = reference;
            if !e.traded {
                let c = &mut e.candle;
                (c.open, c.high, c.low, c.close, c.last_sequence) =
                    (reference, reference, reference, reference, sequence);
            }
            return;
        }
        let start = self.granularity.start_of(time);
        let candle = self.flat(start, reference, sequence);
        self.push(Entry {
            candle,
            traded: false,
            closing_reference: reference,
        });
    }

    /// Up to `limit` candles of the periods from the one containing `from` to the one
    /// containing `to`, newest first; periods before the first stored one are not produced.
    pub fn query(&self, from: Timestamp, to: Timestamp, limit: usize) -> Vec<Candle> {
        let mut out = Vec::new();
        if limit == 0 || self.entries.is_empty() || from > to {
            return out;
        }
        let first = self.granularity.start_of(from);
        let mut period = self.granularity.start_of(to);
        // Index of the newest stored entry at or before `period`.
        let mut idx = self.entries.partition_point(|e| e.candle.start <= period);
        while out.len() < limit && period >= first && idx > 0 {
            let e = &self.entries[idx - 1];
            if e.candle.start == period {
                out.push(e.candle);
                idx -= 1;
            } else {
                out.push(self.flat(period, e.closing_reference, e.candle.last_sequence));
            }
            period = self.granularity.previous(period);
        }
        out
    }

    /// Stored periods.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::period::GRANULARITIES;
    use proptest::prelude::*;

    /// A series built by trades passes the load check; entries out of order, a foreign
    /// granularity or more entries than the retention do not.
    #[test]
    fn the_load_check_accepts_built_series_and_refuses_tampered_ones() {
        let g = GRANULARITIES[0];
        let mut series = CandleSeries::new(g, 10);
        for i in 0..5i64 {
            let time = Timestamp(1_767_225_600_000_000_000 + i * 90_000_000_000);
            series.on_trade(time, i as u64 + 1, 100 + i, 1, 100);
        }
        assert_eq!(series.check(g), Ok(()));
        assert!(series.check(GRANULARITIES[1]).is_err());
        let mut swapped = series.clone();
        swapped.entries.swap(0, 1);
        assert!(swapped.check(g).is_err());
        let mut shifted = series.clone();
        shifted.entries[2].candle.start.0 += 1;
        assert!(shifted.check(g).is_err());
        let mut over = series;
        over.retention = 2;
        assert!(over.check(g).is_err());
    }

    #[derive(Debug, Clone, Copy)]
    enum Step {
        Trade { price: i64, amount: i64 },
        Reference(i64),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (1i64..500, 1i64..20).prop_map(|(price, amount)| Step::Trade { price, amount }),
            (1i64..500).prop_map(Step::Reference),
        ]
    }

    /// Candles recomputed from the raw event list, period by period.
    fn brute_force(
        g: Granularity,
        events: &[(Timestamp, u64, Step)],
        from: Timestamp,
        to: Timestamp,
        limit: usize,
    ) -> Vec<Candle> {
        let Some(&(first_time, _, _)) = events.first() else {
            return Vec::new();
        };
        let mut periods = Vec::new();
        let mut p = g.start_of(first_time);
        while p <= g.start_of(to) {
            periods.push(p);
            p = g.next(p);
        }
        let mut out = Vec::new();
        let mut reference = 0i64;
        let mut last_seq = 0u64;
        for &p in &periods {
            let inside: Vec<_> = events
                .iter()
                .filter(|(t, _, _)| g.start_of(*t) == p)
                .collect();
            let trades: Vec<(i64, i64, u64)> = inside
                .iter()
                .filter_map(|(_, s, step)| match step {
                    Step::Trade { price, amount } => Some((*price, *amount, *s)),
                    Step::Reference(_) => None,
                })
                .collect();
            let end = g.next(p);
            let candle = if let (Some(first), Some(last)) = (trades.first(), trades.last()) {
                last_seq = last.2;
                Candle {
                    start: p,
                    end,
                    open: first.0,
                    high: trades.iter().map(|t| t.0).max().unwrap_or(0),
                    low: trades.iter().map(|t| t.0).min().unwrap_or(0),
                    close: last.0,
                    volume: trades.iter().map(|t| i128::from(t.0 * t.1)).sum(),
                    total_amount: trades.iter().map(|t| t.1).sum(),
                    last_sequence: last_seq,
                }
            } else {
                if let Some((_, s, Step::Reference(r))) = inside.last() {
                    last_seq = *s;
                    reference = *r;
                }
                Candle {
                    start: p,
                    end,
                    open: reference,
                    high: reference,
                    low: reference,
                    close: reference,
                    volume: 0,
                    total_amount: 0,
                    last_sequence: last_seq,
                }
            };
            if let Some((_, _, step)) = inside.last() {
                reference = match step {
                    Step::Trade { price, .. } => *price,
                    Step::Reference(r) => *r,
                };
            }
            if p >= g.start_of(from) {
                out.push(candle);
            }
        }
        out.reverse();
        out.truncate(limit);
        out
    }

    proptest! {
        /// Incremental candles equal candles recomputed from the raw events, for every
        /// granularity, across empty periods and week and month boundaries.
        #[test]
        fn incremental_equals_brute_force(
            steps in prop::collection::vec((0i64..3, step()), 1..80),
            g in 0usize..9,
            scale in prop_oneof![Just(20_000_000_000i64), Just(700_000_000_000), Just(30_000_000_000_000), Just(400_000_000_000_000)],
            from_back in 0i64..40, to_ahead in 0i64..10, limit in 1usize..60,
        ) {
            let g = GRANULARITIES[g];
            // Start just before a Monday that is also the first of a month (2024-01-01).
            let mut t = 1_704_067_200_000_000_000 - 3 * scale;
            let mut series = CandleSeries::new(g, 100_000);
            let mut events = Vec::new();
            for (seq, (dt, step)) in steps.into_iter().enumerate() {
                t += dt * scale;
                let seq = seq as u64 + 1;
                match step {
                    Step::Trade { price, amount } => series.on_trade(Timestamp(t), seq, price, amount, i128::from(price * amount)),
                    Step::Reference(r) => series.on_reference(Timestamp(t), seq, r),
                }
                events.push((Timestamp(t), seq, step));
            }
            let to = Timestamp(t + to_ahead * scale);
            let from = Timestamp(t - from_back * scale);
            prop_assert_eq!(series.query(from, to, limit), brute_force(g, &events, from, to, limit));
        }
    }

    #[test]
    fn retention_caps_stored_periods() {
        let g = GRANULARITIES[0];
        let mut series = CandleSeries::new(g, 3);
        for minute in 0..10i64 {
            series.on_trade(
                Timestamp(minute * 60_000_000_000),
                minute as u64,
                100 + minute,
                1,
                100,
            );
        }
        assert_eq!(series.len(), 3);
        let all = series.query(Timestamp(0), Timestamp(9 * 60_000_000_000), 100);
        assert_eq!(
            all.iter().map(|c| c.close).collect::<Vec<_>>(),
            vec![109, 108, 107]
        );
    }
}
