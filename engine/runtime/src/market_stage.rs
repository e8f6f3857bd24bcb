//! The market stage (thread `matchbook-market`): keeps everything built from the
//! published batches and serves every read, so no read ever runs on the matching thread.
//! It holds a replica of the engine, brought to the matching engine's exact state by applying
//! the same commands at the same times (the engine is deterministic; each command's events
//! are compared with matching's and a difference is counted as a divergence), and market
//! data (history, candles, tickers, funding) fed with the published events. Book views,
//! balances, open orders, orders by id and positions are answered from this state, tagged
//! with the sequence numbers it reflects; a read that must see a later command waits, parked,
//! until the stage has applied it. Snapshots are copied here too, from the replica, so the
//! matching thread never stalls for one; a copy due while another still waits for the
//! writer is owed until that one is taken (the newer would only replace it), so the stage
//! copies at most once per write however often copies fall due.
//!
//! It may block on nothing but its two queues and the reads it runs. Published batches are
//! always taken before reads; if reads keep it busy it falls behind, which is counted, and
//! ingress refuses commands (back-pressure at ingress only) until it catches up.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TryRecvError};
use matchbook_core::{Engine, EventRecord, EventSink};
use matchbook_market::MarketData;
use matchbook_store::snapshot::{Captured, SnapshotSink};

use crate::acks::outcome_of;
use crate::feed::Feeds;
use crate::handle::{MarketReply, ReadRequest, ReadView};
use crate::matching::MarketWork;
use crate::output::Published;
use crate::stats::{RuntimeStats, raise};

/// How often an owed snapshot copy looks for room while nothing else arrives.
const OWED_COPY_POLL: Duration = Duration::from_millis(5);

/// A read waiting for a later command, ordered by the command it waits for, then arrival.
struct Parked {
    min_seq: u64,
    arrival: u64,
    request: ReadRequest,
}

impl PartialEq for Parked {
    fn eq(&self, other: &Self) -> bool {
        (self.min_seq, self.arrival) == (other.min_seq, other.arrival)
    }
}

impl Eq for Parked {}

impl PartialOrd for Parked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Parked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.min_seq, self.arrival).cmp(&(other.min_seq, other.arrival))
    }
}

pub(crate) struct MarketStage<'a> {
    replica: Engine,
    market: MarketData,
    /// Sequence number of the last command applied.
    seq: u64,
    parked: BinaryHeap<Reverse<Parked>>,
    arrivals: u64,
    sink: Option<SnapshotSink>,
    /// A snapshot copy fell due while the writer had one waiting: taken once it has room,
    /// answering the snapshot requests counted here.
    owed: Option<u64>,
    /// The feed's subscribers and what it is about to publish.
    feeds: Feeds,
    stats: &'a RuntimeStats,
}

impl<'a> MarketStage<'a> {
    pub(crate) fn new(
        replica: Engine,
        market: MarketData,
        sink: Option<SnapshotSink>,
        stats: &'a RuntimeStats,
    ) -> Self {
        publish_deadline(stats, &replica);
        Self {
            replica,
            market,
            seq: 0,
            parked: BinaryHeap::new(),
            arrivals: 0,
            sink,
            owed: None,
            feeds: Feeds::default(),
            stats,
        }
    }

    /// The stage of a state whose last command was `seq` (its snapshots and reads are
    /// numbered from there until the next command).
    pub(crate) fn resuming_after(mut self, seq: u64) -> Self {
        self.seq = seq;
        self
    }

    /// Runs until matching stops; returns market data. Reads still parked then wait for
    /// commands that will never come: they are dropped, and their callers see the stop.
    pub(crate) fn run(
        mut self,
        batches: &Receiver<MarketWork>,
        reads: &Receiver<ReadRequest>,
    ) -> MarketData {
        let mut reads = reads.clone();
        loop {
            // Published batches first: reads never hold history back.
            loop {
                let work = match batches.try_recv() {
                    Ok(work) => work,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return self.finish(),
                };
                if !self.take(work) {
                    return self.finish();
                }
            }
            let owed = if self.owed.is_some() {
                crossbeam_channel::after(OWED_COPY_POLL)
            } else {
                crossbeam_channel::never()
            };
            crossbeam_channel::select! {
                recv(batches) -> work => {
                    if !work.is_ok_and(|work| self.take(work)) {
                        return self.finish();
                    }
                },
                recv(reads) -> read => match read {
                    Ok(read) => self.serve(read),
                    // Every handle is gone: only batches can come now.
                    Err(_) => reads = crossbeam_channel::never(),
                },
                recv(owed) -> _ => self.settle_owed(false),
            }
        }
    }

    /// Market data at the stop, after the copy still owed (the final state replaces any
    /// copy still waiting: it holds everything that one does).
    fn finish(mut self) -> MarketData {
        self.settle_owed(true);
        self.market
    }

    /// Takes the owed copy if the writer has room for it (or `now`).
    fn settle_owed(&mut self, now: bool) {
        let Some(requests) = self.owed else {
            return;
        };
        match &self.sink {
            Some(sink) if !now && !sink.has_room() => {}
            _ => {
                self.owed = None;
                self.snapshot(requests);
            }
        }
    }

    /// Takes one piece of work from matching; false at the stop.
    fn take(&mut self, work: MarketWork) -> bool {
        match work {
            MarketWork::Batch {
                published,
                replies,
                snapshot,
            } => {
                self.apply(&published, replies, snapshot);
                true
            }
            MarketWork::Stop => false,
        }
    }

    fn apply(
        &mut self,
        published: &Arc<Published>,
        replies: Vec<(usize, MarketReply)>,
        copy: Option<u64>,
    ) {
        let every = self.stats.checkpoint_every.load(Ordering::Relaxed);
        let feeding = self.feeds.active();
        for (index, command) in published.commands.iter().enumerate() {
            let mut check = Matching::new(published.events_of(index));
            let result = (self.replica).apply(&command.command, command.time, &mut check);
            if result != command.result || !check.matched() {
                self.stats.divergences.fetch_add(1, Ordering::Relaxed);
            }
            if feeding {
                self.feeds.after_command(index, &mut self.replica);
            }
            // At fixed command numbers, so every node of a group hashes the same states.
            if every > 0 && command.seq % every == 0 {
                (self.stats).record_checkpoint(command.seq, self.replica.state_hash());
            }
        }
        if feeding {
            (self.feeds).take_events(published, &mut self.market, &self.replica);
        } else {
            self.market.on_events(&published.events);
        }
        if let Some(seq) = published.last_seq() {
            self.seq = seq;
            self.stats.market.store(seq, Ordering::Release);
        }
        publish_deadline(self.stats, &self.replica);
        if feeding {
            let lagged = self
                .feeds
                .publish(published, &self.market, &mut self.replica);
            (self.stats.dropped_subscribers).fetch_add(lagged, Ordering::Relaxed);
        }
        let count = published.commands.len() as u64;
        self.stats.market_count.fetch_add(count, Ordering::AcqRel);
        for (index, reply) in replies {
            if let Some(outcome) = outcome_of(published, index) {
                reply(outcome, &self.market);
            }
        }
        // A later copy answers every request an earlier owed one did.
        self.owed = self.owed.max(copy);
        self.settle_owed(false);
        self.release_parked();
    }

    fn snapshot(&mut self, requests: u64) {
        let Some(sink) = &self.sink else {
            return;
        };
        let started = Instant::now();
        let captured = Captured {
            seq: self.seq,
            engine: self.replica.clone(),
            market: Some(self.market.share()),
            requests,
        };
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        raise(&self.stats.longest_snapshot_copy, nanos);
        self.stats.snapshots.fetch_add(1, Ordering::Relaxed);
        sink.hand_over(captured);
    }

    fn serve(&mut self, request: ReadRequest) {
        if request.min_seq <= self.seq {
            self.run_read(request);
            return;
        }
        self.arrivals += 1;
        self.parked.push(Reverse(Parked {
            min_seq: request.min_seq,
            arrival: self.arrivals,
            request,
        }));
    }

    fn release_parked(&mut self) {
        while self
            .parked
            .peek()
            .is_some_and(|Reverse(p)| p.min_seq <= self.seq)
        {
            if let Some(Reverse(parked)) = self.parked.pop() {
                self.run_read(parked.request);
            }
        }
    }

    fn run_read(&mut self, request: ReadRequest) {
        if let Some(subscriber) = request.feed {
            self.feeds.add(subscriber, &mut self.replica);
        }
        let view = ReadView {
            engine: &self.replica,
            market: &self.market,
            seq: self.seq,
            event_seq: self.replica.sequence(),
        };
        (request.read)(&view);
        self.stats.reads.fetch_add(1, Ordering::Relaxed);
    }
}

/// Publishes the replica's next deadline, so a host can move time without asking a stage.
fn publish_deadline(stats: &RuntimeStats, replica: &Engine) {
    let at = replica.next_deadline().map_or(i64::MAX, |t| t.0);
    stats.next_deadline.store(at, Ordering::Release);
}

/// The replica's events checked, one by one as it emits them, against those matching
/// published for the same command: nothing is stored.
struct Matching<'a> {
    expected: &'a [EventRecord],
    seen: usize,
    differed: bool,
}

impl<'a> Matching<'a> {
    fn new(expected: &'a [EventRecord]) -> Self {
        Self {
            expected,
            seen: 0,
            differed: false,
        }
    }

    /// Whether every event was as published, and none was missing.
    fn matched(&self) -> bool {
        !self.differed && self.seen == self.expected.len()
    }
}

impl EventSink for Matching<'_> {
    #[inline]
    fn push(&mut self, record: EventRecord) {
        self.differed |= self.expected.get(self.seen) != Some(&record);
        self.seen += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::MatchedCommand;
    use matchbook_core::{Command, Timestamp};

    /// Command `seq` (a new holder) as matching would publish it.
    fn published(matching: &mut Engine, seq: u64) -> Arc<Published> {
        let mut events = Vec::new();
        let (command, time) = (Command::CreateHolder, Timestamp(1));
        let result = matching.apply(&command, time, &mut events);
        let events_range = 0..events.len();
        let commands = vec![MatchedCommand {
            seq,
            time,
            command,
            result,
            events: events_range,
        }];
        Arc::new(Published::new(commands, events))
    }

    #[test]
    fn a_read_for_a_later_command_is_parked_until_it_is_applied() {
        let engine = Engine::new(matchbook_config::demo::config()).expect("demo");
        let mut matching = engine.clone();
        let market = MarketData::new(engine.instruments().len(), Default::default());
        let stats = RuntimeStats::default();
        let mut stage = MarketStage::new(engine, market, None, &stats);
        let (answer, answers) = crossbeam_channel::unbounded();
        let read = move |view: &ReadView<'_>| {
            let _ = answer.send((view.seq, view.engine.holder_count()));
        };
        stage.serve(ReadRequest {
            feed: None,
            min_seq: 1,
            read: Box::new(read),
        });
        assert!(
            answers.try_recv().is_err(),
            "parked: command 1 is not applied"
        );
        stage.apply(&published(&mut matching, 1), Vec::new(), None);
        assert_eq!(answers.try_recv().ok(), Some((1, 1)), "answered once it is");
        assert_eq!(stats.divergences.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_replica_that_differs_from_matching_is_counted() {
        let engine = Engine::new(matchbook_config::demo::config()).expect("demo");
        let mut matching = engine.clone();
        let _ = published(&mut matching, 1);
        let market = MarketData::new(engine.instruments().len(), Default::default());
        let stats = RuntimeStats::default();
        let mut stage = MarketStage::new(engine, market, None, &stats);
        // Matching's second holder, applied to a replica that has none yet.
        stage.apply(&published(&mut matching, 2), Vec::new(), None);
        assert_eq!(stats.divergences.load(Ordering::Relaxed), 1);
    }

    /// The replica's events are checked as it emits them: one that differs, one more or
    /// one fewer than matching published is a divergence.
    #[test]
    fn the_events_check_finds_a_different_a_missing_and_an_extra_event() {
        let mut engine = Engine::new(matchbook_config::demo::config()).expect("demo");
        let mut events = Vec::new();
        for _ in 0..2 {
            let _ = engine.apply(&Command::CreateHolder, Timestamp(1), &mut events);
        }
        let (first, second) = events.split_at(events.len() / 2);
        let check = |expected: &[EventRecord], emitted: &[EventRecord]| {
            let mut sink = Matching::new(expected);
            emitted.iter().for_each(|e| sink.push(*e));
            sink.matched()
        };
        assert!(check(first, first) && check(&[], &[]));
        assert!(!check(first, second), "a different event");
        assert!(!check(&events, first), "one missing");
        assert!(!check(first, &events), "one extra");
    }
}
