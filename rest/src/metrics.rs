//! The HTTP answer counters of both listeners (by status and time taken), and the bounds
//! of every histogram `GET /admin/metrics` exposes (`http::exposition` writes them). Counting
//! an answer is two relaxed atomic adds; a scrape reads the counters and asks no stage
//! anything.

use std::sync::atomic::{AtomicU64, Ordering};

/// The listener a request came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// The public listener (REST, streams).
    Public,
    /// The admin listener.
    Admin,
}

impl Listener {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Admin => "admin",
        }
    }
}

/// Upper bounds of the request-time buckets, in microseconds.
pub(crate) const TIME_BOUNDS_MICROS: [u64; 12] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 1_000_000,
];

/// Status codes counted one by one: 100 to 599.
pub(crate) const STATUS_CODES: std::ops::RangeInclusive<u16> = 100..=599;

/// Upper bounds of the matching-time buckets, in nanoseconds.
pub(crate) const MATCHING_BOUNDS_NANOS: [u64; 10] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 100_000, 1_000_000,
];

/// Upper bounds of the log-commit buckets, in nanoseconds.
pub(crate) const COMMIT_BOUNDS_NANOS: [u64; 12] = [
    10_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    100_000_000,
    1_000_000_000,
];

/// HTTP answers of one listener: how many of each status, and how long they took.
#[derive(Debug)]
pub struct HttpMetrics {
    pub(crate) answers: Box<[AtomicU64]>,
    /// Answers by time bucket (the last one past every bound), not cumulative.
    pub(crate) times: [AtomicU64; TIME_BOUNDS_MICROS.len() + 1],
    pub(crate) total_micros: AtomicU64,
}

impl Default for HttpMetrics {
    fn default() -> Self {
        Self {
            answers: STATUS_CODES.map(|_| AtomicU64::new(0)).collect(),
            times: std::array::from_fn(|_| AtomicU64::new(0)),
            total_micros: AtomicU64::new(0),
        }
    }
}

impl HttpMetrics {
    /// Counts one answer of `status`, given after `micros`.
    pub fn record(&self, status: u16, micros: u64) {
        let slot = usize::from(status.saturating_sub(*STATUS_CODES.start()));
        if let Some(counter) = self.answers.get(slot) {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        let bucket = TIME_BOUNDS_MICROS.partition_point(|&bound| bound < micros);
        self.times[bucket].fetch_add(1, Ordering::Relaxed);
        self.total_micros.fetch_add(micros, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_counts_by_status_and_under_the_first_bound_it_fits() {
        let metrics = HttpMetrics::default();
        metrics.record(200, 100);
        metrics.record(200, 101);
        metrics.record(503, 5_000_000);
        metrics.record(42, 1);
        let answers = |code: u16| metrics.answers[usize::from(code - 100)].load(Ordering::Relaxed);
        assert_eq!((answers(200), answers(503)), (2, 1));
        let times: Vec<u64> = metrics
            .times
            .iter()
            .map(|t| t.load(Ordering::Relaxed))
            .collect();
        assert_eq!(times[0], 2, "1 and 100 us are at most 100 us");
        assert_eq!(times[1], 1, "101 us is over 100 and at most 250");
        assert_eq!(
            times[TIME_BOUNDS_MICROS.len()],
            1,
            "5 s is past every bound"
        );
    }
}
