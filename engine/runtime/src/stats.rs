//! What the stages publish about themselves: how far each has got (in command sequence
//! numbers), how many commands are in flight, refusals, dropped subscribers, and the
//! matching thread's busy time per command as a histogram. Every counter has one writer (the
//! stage it describes) and is read with relaxed loads by anyone: no lock, no wait.

use std::sync::atomic::{AtomicU64, Ordering};

/// Sub-buckets per power of two: a bucket is 1/32 of an octave wide (about 2.2 %).
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets covering every u64.
const BUCKETS: usize = ((64 - SUB_BITS + 1) as usize) * SUB as usize;

/// A log-linear histogram of nanosecond durations, written by one thread, read by any.
pub struct Histogram {
    counts: Box<[AtomicU64]>,
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("samples", &self.samples())
            .finish()
    }
}

fn bucket_of(nanos: u64) -> usize {
    if nanos < SUB {
        return nanos as usize;
    }
    let octave = 63 - nanos.leading_zeros();
    let shift = octave - SUB_BITS;
    let mantissa = (nanos >> shift) & (SUB - 1);
    ((u64::from(shift) + 1) * SUB + mantissa) as usize
}

fn lower_bound(bucket: usize) -> u64 {
    let bucket = bucket as u64;
    if bucket < SUB {
        return bucket;
    }
    let shift = bucket / SUB - 1;
    (SUB + bucket % SUB) << shift
}

impl Histogram {
    /// Counts `weight` samples of `nanos` each.
    pub fn record(&self, nanos: u64, weight: u64) {
        // One writer: a load and a store are enough, and cheaper than a locked add.
        let cell = &self.counts[bucket_of(nanos)];
        cell.store(
            cell.load(Ordering::Relaxed).wrapping_add(weight),
            Ordering::Relaxed,
        );
    }

    /// The durations bucket `bucket` of [`Histogram::counts`] holds, in nanoseconds: from
    /// the first (inclusive) to the second (exclusive; `u64::MAX` for the last bucket).
    pub fn bucket_bounds(bucket: usize) -> (u64, u64) {
        let upper = if bucket + 1 >= BUCKETS {
            u64::MAX
        } else {
            lower_bound(bucket + 1)
        };
        (lower_bound(bucket), upper)
    }

    /// Samples recorded.
    pub fn samples(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// A copy of the counts, to compare two moments.
    pub fn counts(&self) -> Vec<u64> {
        self.counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect()
    }

    /// The lower bound of the bucket holding quantile `q` (0..=1) of `counts` (a copy
    /// taken by [`Histogram::counts`], or a difference of two); `None` when empty.
    pub fn quantile_of(counts: &[u64], q: f64) -> Option<u64> {
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return None;
        }
        let rank = ((total as f64 * q.clamp(0.0, 1.0)).ceil() as u64).max(1);
        let mut seen = 0;
        counts.iter().enumerate().find_map(|(bucket, &n)| {
            seen += n;
            (seen >= rank).then(|| lower_bound(bucket))
        })
    }
}

/// The runtime's counters, shared by its stages and every handle.
#[derive(Debug, Default)]
pub struct RuntimeStats {
    /// Commands taken in at ingress.
    pub(crate) admitted: AtomicU64,
    /// Commands refused because too many were in flight.
    pub(crate) refused: AtomicU64,
    /// Commands the acknowledgement stage has finished.
    pub(crate) acked_count: AtomicU64,
    /// Commands the market stage has applied.
    pub(crate) market_count: AtomicU64,
    /// Sequence number of the last command made durable and sent to matching.
    pub(crate) sequenced: AtomicU64,
    /// Sequence number of the last command matched.
    pub(crate) matched: AtomicU64,
    /// Sequence number of the last command acknowledged (stored before its reply is sent,
    /// so a reader who saw the reply waits for at least this).
    pub(crate) acked: AtomicU64,
    /// Sequence number of the last command the market stage applied.
    pub(crate) market: AtomicU64,
    /// Reads answered by the market stage.
    pub(crate) reads: AtomicU64,
    /// The replica's next deadline (`Engine::next_deadline`) in nanoseconds after the last
    /// batch the market stage applied; `i64::MAX` for none.
    pub(crate) next_deadline: std::sync::atomic::AtomicI64,
    /// Subscribers dropped because they fell behind.
    pub(crate) dropped_subscribers: AtomicU64,
    /// Commands whose replica events differed from matching's (a determinism bug).
    pub(crate) divergences: AtomicU64,
    /// The matching thread's busy time per command, nanoseconds: from taking a batch to
    /// having published it, divided among its commands (each counted once).
    pub(crate) busy_time: Histogram,
    /// The longest the matching thread spent on one batch, nanoseconds.
    pub(crate) longest_batch: AtomicU64,
    /// How long each batch took to be stored by the command log (written, and synced as
    /// its policy says; retries included), nanoseconds; written by the sequencer alone.
    pub(crate) commit_time: Histogram,
    /// How far the clock stood behind the time the sequencer stamped the last command of
    /// its own with, nanoseconds: 0 while the clock moves on; after the clock steps back,
    /// commands keep the last time stamped (never backwards) until it catches up.
    pub(crate) clock_behind: AtomicU64,
    /// Snapshots copied by the market stage.
    pub(crate) snapshots: AtomicU64,
    /// The longest a snapshot copy held the market stage, nanoseconds.
    pub(crate) longest_snapshot_copy: AtomicU64,
    /// Snapshot requests numbered so far (each takes the next number before it is sent).
    pub(crate) snapshot_requests: AtomicU64,
    /// Snapshot requests numbered and then refused (a full or closed queue): the
    /// sequencer counts them as answered, since nobody waits for them.
    pub(crate) snapshot_requests_refused: AtomicU64,
    /// Set while the command log cannot store a batch (a replicated log without its
    /// quorum): ingress refuses commands with [`crate::RuntimeError::LogUnavailable`].
    pub(crate) log_unavailable: std::sync::atomic::AtomicBool,
    /// Set when a stop is asked for, so a sequencer retrying its log gives up.
    pub(crate) stopping: std::sync::atomic::AtomicBool,
    /// Set by the sequencer as it leaves (a stop, a log failure, a panic): ingress answers
    /// [`crate::RuntimeError::Stopped`] before admission control, so requests left in a
    /// queue nobody reads any more never make callers see `Busy` for ever.
    pub(crate) stopped: std::sync::atomic::AtomicBool,
    /// Set while the runtime follows a log another node writes: ingress refuses commands
    /// with [`crate::RuntimeError::NotLeader`].
    pub(crate) following: std::sync::atomic::AtomicBool,
    /// Set when the node is asked to step down, so a sequencer retrying its log gives up
    /// the batch (the new leader decides what the log holds).
    pub(crate) demote: std::sync::atomic::AtomicBool,
    /// Every how many commands the market stage records the state hash (0: never).
    pub(crate) checkpoint_every: AtomicU64,
    /// The last [`CHECKPOINTS_KEPT`] (sequence number, state hash) recorded, oldest first.
    pub(crate) checkpoints: std::sync::Mutex<std::collections::VecDeque<(u64, u64)>>,
    /// Why the command log stopped the runtime (set once, by the sequencer, as it leaves).
    pub(crate) log_failure: std::sync::OnceLock<String>,
}

/// How many checkpoints the runtime remembers.
pub const CHECKPOINTS_KEPT: usize = 32;

/// Raises a single-writer maximum.
pub(crate) fn raise(max: &AtomicU64, value: u64) {
    if value > max.load(Ordering::Relaxed) {
        max.store(value, Ordering::Relaxed);
    }
}

/// A plain copy of the counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatsSnapshot {
    /// Commands taken in at ingress.
    pub admitted: u64,
    /// Commands refused with [`crate::RuntimeError::Busy`] because too many were in flight.
    pub refused: u64,
    /// Sequence number of the last command made durable (or numbered, without a log).
    pub sequenced: u64,
    /// Sequence number of the last command matched.
    pub matched: u64,
    /// Sequence number of the last command acknowledged.
    pub acked: u64,
    /// Sequence number of the last command the market stage (history, replicas) applied.
    pub market: u64,
    /// Commands admitted and not yet finished by both the acknowledgement and market stages.
    pub in_flight: u64,
    /// Reads answered.
    pub reads: u64,
    /// Subscribers dropped because they fell behind.
    pub dropped_subscribers: u64,
    /// Commands whose replica events differed from matching's (always 0 unless there is a
    /// determinism bug).
    pub divergences: u64,
    /// The longest the matching thread spent on one batch, nanoseconds.
    pub longest_batch_nanos: u64,
    /// Snapshots copied (by the market stage, from its replica).
    pub snapshots: u64,
    /// The longest a snapshot copy held the market stage, nanoseconds (the matching thread
    /// never copies).
    pub longest_snapshot_copy_nanos: u64,
    /// How far the clock stood behind the time the last command was stamped with,
    /// nanoseconds (0 unless the clock stepped back: time then stands still until it
    /// catches up).
    pub clock_behind_nanos: u64,
    /// Whether the command log cannot store commands now (ingress refuses them).
    pub log_unavailable: bool,
    /// Whether the runtime follows a log another node writes.
    pub following: bool,
}

impl RuntimeStats {
    /// Commands admitted and not yet finished by the slower of the two stages that must see
    /// every command.
    pub(crate) fn in_flight(&self) -> u64 {
        let done = self
            .acked_count
            .load(Ordering::Acquire)
            .min(self.market_count.load(Ordering::Acquire));
        self.admitted.load(Ordering::Acquire).saturating_sub(done)
    }

    /// Takes one command in unless `limit` are admitted and unanswered, or the market
    /// stage is `2 * limit` behind: a caller waiting for each answer is never refused,
    /// and the market stage has room to catch up on its own.
    pub(crate) fn admit(&self, limit: u64) -> bool {
        let admitted = self.admitted.load(Ordering::Acquire);
        let unanswered = admitted.saturating_sub(self.acked_count.load(Ordering::Acquire));
        let behind = admitted.saturating_sub(self.market_count.load(Ordering::Acquire));
        if unanswered >= limit || behind >= limit.saturating_mul(2) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        self.admitted.fetch_add(1, Ordering::AcqRel);
        true
    }

    /// Records the state hash after command `seq`, forgetting the oldest beyond
    /// [`CHECKPOINTS_KEPT`].
    pub(crate) fn record_checkpoint(&self, seq: u64, hash: u64) {
        let mut kept = self.checkpoints.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() == CHECKPOINTS_KEPT {
            kept.pop_front();
        }
        kept.push_back((seq, hash));
    }

    /// Gives back an admission whose command never entered the pipeline.
    pub(crate) fn unadmit(&self) {
        self.admitted.fetch_sub(1, Ordering::AcqRel);
    }

    /// Starts every stage's position at `seq`, the last command of the state the runtime
    /// starts from: until the next command, the pipeline stands there, not at 0.
    pub(crate) fn resume_after(&self, seq: u64) {
        for position in [&self.sequenced, &self.matched, &self.acked, &self.market] {
            position.store(seq, Ordering::Release);
        }
    }

    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        let load = |c: &AtomicU64| c.load(Ordering::Acquire);
        StatsSnapshot {
            admitted: load(&self.admitted),
            refused: load(&self.refused),
            sequenced: load(&self.sequenced),
            matched: load(&self.matched),
            acked: load(&self.acked),
            market: load(&self.market),
            in_flight: self.in_flight(),
            reads: load(&self.reads),
            dropped_subscribers: load(&self.dropped_subscribers),
            divergences: load(&self.divergences),
            longest_batch_nanos: load(&self.longest_batch),
            snapshots: load(&self.snapshots),
            longest_snapshot_copy_nanos: load(&self.longest_snapshot_copy),
            clock_behind_nanos: load(&self.clock_behind),
            log_unavailable: self.log_unavailable.load(Ordering::Acquire),
            following: self.following.load(Ordering::Acquire),
        }
    }

    /// The matching thread's busy time per command, nanoseconds.
    pub fn matching_time(&self) -> &Histogram {
        &self.busy_time
    }

    /// The command log's time to store each batch, nanoseconds (empty without a log).
    pub fn commit_time(&self) -> &Histogram {
        &self.commit_time
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A value falls in the bucket whose bounds hold it, and buckets are 1/32 octave.
        #[test]
        fn buckets_hold_their_values(nanos in any::<u64>()) {
            let bucket = bucket_of(nanos);
            prop_assert!(bucket < BUCKETS);
            prop_assert!(lower_bound(bucket) <= nanos);
            let (low, high) = Histogram::bucket_bounds(bucket);
            prop_assert!(low <= nanos && (nanos < high || high == u64::MAX));
            if bucket + 1 < BUCKETS {
                prop_assert!(nanos < lower_bound(bucket + 1));
                let width = lower_bound(bucket + 1) - lower_bound(bucket);
                prop_assert!(width <= lower_bound(bucket) / 32 + 1);
            }
        }
    }

    #[test]
    fn quantiles_follow_the_weights() {
        let h = Histogram::default();
        h.record(100, 50);
        h.record(1_000, 49);
        h.record(1_000_000, 1);
        let counts = h.counts();
        assert_eq!(Histogram::quantile_of(&counts, 0.5), Some(100));
        assert_eq!(
            Histogram::quantile_of(&counts, 0.99),
            Some(lower_bound(bucket_of(1_000)))
        );
        assert_eq!(
            Histogram::quantile_of(&counts, 1.0),
            Some(lower_bound(bucket_of(1_000_000)))
        );
        assert_eq!(Histogram::quantile_of(&[0; 4], 0.5), None);
    }
}
