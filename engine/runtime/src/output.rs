//! What the matching thread publishes: one [`Published`] batch per sequenced batch (the
//! commands in order, each with its result and its events), shared by reference between the
//! acknowledgement stage, the market stage and every subscriber, so it is built and
//! allocated once whatever the number of consumers.
//!
//! Subscribers get the batches through a bounded queue of their own. The matching thread
//! never waits for one: a subscriber whose queue is full is dropped at once, and learns why
//! ([`DropReason::Lagged`]) when it has read what was queued before.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use matchbook_core::{Applied, Command, EngineError, EventRecord, Timestamp};

/// One command as matching applied it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchedCommand {
    /// Its sequence number (the journal's, or the runtime's count without a journal).
    pub seq: u64,
    /// The time it was stamped with.
    pub time: Timestamp,
    /// The command.
    pub command: Command,
    /// The engine's answer.
    pub result: Result<Applied, EngineError>,
    /// Its events within [`Published::events`].
    pub events: Range<usize>,
}

/// A batch of commands as matching applied them, in sequence order.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// The commands.
    pub commands: Vec<MatchedCommand>,
    /// Every event of the batch, in order.
    pub events: Vec<EventRecord>,
    /// Where the event buffer goes when the batch is dropped (none: it is freed).
    returns: Option<Returns>,
}

impl PartialEq for Published {
    fn eq(&self, other: &Self) -> bool {
        self.commands == other.commands && self.events == other.events
    }
}

impl Eq for Published {}

/// Whoever drops a batch last (a stage, a subscriber, a caller's [`Outcome`]) hands its
/// event buffer back to matching, emptied here, off the matching thread.
///
/// [`Outcome`]: crate::Outcome
impl Drop for Published {
    fn drop(&mut self) {
        if let Some(returns) = &self.returns
            && self.events.capacity() > 0
        {
            let mut events = std::mem::take(&mut self.events);
            events.clear();
            let _ = returns.0.try_send(events);
        }
    }
}

impl Published {
    /// A batch whose event buffer is freed when it is dropped.
    pub fn new(commands: Vec<MatchedCommand>, events: Vec<EventRecord>) -> Self {
        Self {
            commands,
            events,
            returns: None,
        }
    }

    /// A batch whose event buffer goes back through `returns` when it is dropped.
    pub(crate) fn returning(
        commands: Vec<MatchedCommand>,
        events: Vec<EventRecord>,
        returns: Returns,
    ) -> Self {
        Self {
            commands,
            events,
            returns: Some(returns),
        }
    }

    /// The events of command `index` of the batch.
    pub fn events_of(&self, index: usize) -> &[EventRecord] {
        self.commands
            .get(index)
            .and_then(|c| self.events.get(c.events.clone()))
            .unwrap_or_default()
    }

    /// Sequence number of the batch's last command, if it has any.
    pub fn last_seq(&self) -> Option<u64> {
        self.commands.last().map(|c| c.seq)
    }
}

/// Where the event buffers of dropped batches go back, so that matching fills them again:
/// a new buffer is memory written for the first time on the matching thread (a page fault
/// every 25 to 40 commands, measured), a returned one is mapped already.
#[derive(Debug, Clone)]
pub(crate) struct Returns(Sender<Vec<EventRecord>>);

/// Buffers handed back and not taken yet: a few, so that a burst of large batches does
/// not stay allocated.
const RETURNED: usize = 16;

/// The way back: its sending end for the batches, its receiving end for matching.
pub(crate) fn returns() -> (Returns, Receiver<Vec<EventRecord>>) {
    let (back, spares) = crossbeam_channel::bounded(RETURNED);
    (Returns(back), spares)
}

/// The events of one command of a batch, read in place: the batch stays alive (and its
/// buffer away from matching) while this does, so hold it only as long as it is read.
#[derive(Clone)]
pub struct CommandEvents {
    batch: Arc<Published>,
    index: usize,
}

impl CommandEvents {
    /// The events of command `index` of `batch`.
    pub fn of(batch: Arc<Published>, index: usize) -> Self {
        Self { batch, index }
    }
}

impl std::ops::Deref for CommandEvents {
    type Target = [EventRecord];

    fn deref(&self) -> &[EventRecord] {
        self.batch.events_of(self.index)
    }
}

impl std::fmt::Debug for CommandEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for CommandEvents {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for CommandEvents {}

/// Room for the events of `count` commands, at eight a command.
fn events_for(count: usize) -> usize {
    count * 8
}

/// An empty event buffer for `count` commands: one handed back if there is one large
/// enough (a smaller one is not grown: growing copies its whole allocation). A new one
/// gets the next power of two, so that batches of similar sizes share buffers, while
/// one-command batches (a quiet exchange) do not each reserve a full batch's room (4.7
/// MB: many such batches in flight would each be an address-space mapping of its own).
pub(crate) fn empty_events(spares: &Receiver<Vec<EventRecord>>, count: usize) -> Vec<EventRecord> {
    let wanted = events_for(count);
    match spares.try_recv() {
        Ok(events) if events.capacity() >= wanted => events,
        _ => Vec::with_capacity(wanted.next_power_of_two()),
    }
}

/// Why a subscription ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DropReason {
    /// Its queue was full when a batch was published: it read slower than commands came.
    #[error("subscriber fell more than {capacity} batches behind")]
    Lagged {
        /// The queue's capacity, in batches.
        capacity: usize,
    },
    /// The runtime stopped.
    #[error("runtime stopped")]
    Stopped,
}

/// A live feed of every batch published after it started: of matching's output
/// ([`Published`], [`crate::RuntimeHandle::subscribe`]) or of the market stage's
/// ([`crate::FeedBatch`], [`crate::RuntimeHandle::subscribe_feed`]).
pub struct Subscription<T = Published> {
    /// Sequence number of the last command applied before the first batch it receives.
    pub start_seq: u64,
    batches: Receiver<Arc<T>>,
    reason: Arc<OnceLock<DropReason>>,
}

impl<T> std::fmt::Debug for Subscription<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("start_seq", &self.start_seq)
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

impl<T> Subscription<T> {
    /// The next batch, waiting for it; after the last one, why the feed ended.
    pub fn recv(&self) -> Result<Arc<T>, DropReason> {
        self.batches.recv().map_err(|_| self.reason())
    }

    /// The next batch if one is queued; `Ok(None)` when none is yet.
    pub fn try_recv(&self) -> Result<Option<Arc<T>>, DropReason> {
        match self.batches.try_recv() {
            Ok(batch) => Ok(Some(batch)),
            Err(crossbeam_channel::TryRecvError::Empty) => Ok(None),
            Err(crossbeam_channel::TryRecvError::Disconnected) => Err(self.reason()),
        }
    }

    /// The queue itself, to wait on it together with other channels.
    pub fn receiver(&self) -> &Receiver<Arc<T>> {
        &self.batches
    }

    /// Why the feed ended (`Stopped` while it has not).
    pub fn reason(&self) -> DropReason {
        self.reason.get().copied().unwrap_or(DropReason::Stopped)
    }
}

/// The publishing stage's end of one subscription.
pub(crate) struct Subscriber<T = Published> {
    batches: Sender<Arc<T>>,
    reason: Arc<OnceLock<DropReason>>,
    capacity: usize,
}

/// A subscription of `capacity` batches starting after `start_seq`: both ends.
pub(crate) fn subscription<T>(capacity: usize, start_seq: u64) -> (Subscriber<T>, Subscription<T>) {
    let capacity = capacity.max(1);
    let (batches, receiver) = crossbeam_channel::bounded(capacity);
    let reason = Arc::new(OnceLock::new());
    let subscription = Subscription {
        start_seq,
        batches: receiver,
        reason: reason.clone(),
    };
    let subscriber = Subscriber {
        batches,
        reason,
        capacity,
    };
    (subscriber, subscription)
}

/// A subscription being set up: the matching thread keeps the sender half and hands the
/// receiver to the caller once it knows where the feed starts.
pub(crate) struct SubscribeRequest {
    pub(crate) capacity: usize,
    pub(crate) answer: Sender<Subscription>,
}

impl SubscribeRequest {
    /// Opens the feed starting after `start_seq`; `None` if the caller stopped waiting.
    pub(crate) fn open(self, start_seq: u64) -> Option<Subscriber> {
        let (subscriber, subscription) = subscription(self.capacity, start_seq);
        self.answer.send(subscription).ok()?;
        Some(subscriber)
    }
}

/// Offers `batch` to every subscriber; drops (and counts) those that are full or gone.
pub(crate) fn offer<T>(subscribers: &mut Vec<Subscriber<T>>, batch: &Arc<T>) -> u64 {
    let before = subscribers.len();
    let mut lagged = 0;
    subscribers.retain(|s| match s.batches.try_send(batch.clone()) {
        Ok(()) => true,
        Err(TrySendError::Full(_)) => {
            let _ = s.reason.set(DropReason::Lagged {
                capacity: s.capacity,
            });
            lagged += 1;
            false
        }
        Err(TrySendError::Disconnected(_)) => false,
    });
    debug_assert!(subscribers.len() + lagged as usize <= before);
    lagged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch_with(events: Vec<EventRecord>, returns: &Returns) -> Arc<Published> {
        Arc::new(Published::returning(Vec::new(), events, returns.clone()))
    }

    #[test]
    fn the_last_holder_hands_the_events_back_emptied_and_they_are_filled_again() {
        let (returns, spares) = returns();
        let mut events = Vec::with_capacity(events_for(10));
        let mut engine =
            matchbook_core::Engine::new(matchbook_config::demo::config()).expect("demo");
        let _ = engine.apply(&Command::CreateHolder, Timestamp(1), &mut events);
        assert!(!events.is_empty());
        let address = events.as_ptr();
        let batch = batch_with(events, &returns);
        let other_holder = batch.clone();
        drop(batch);
        assert!(spares.is_empty(), "a subscriber still holds it");
        drop(other_holder);
        let again = empty_events(&spares, 10);
        assert_eq!((again.as_ptr(), again.len()), (address, 0));
    }

    #[test]
    fn a_subscriber_done_last_with_a_batch_hands_its_events_back() {
        let (returns, spares) = returns();
        let (answer, subscription) = crossbeam_channel::bounded(1);
        let request = SubscribeRequest {
            capacity: 1,
            answer,
        };
        let subscriber = request.open(0).expect("opened");
        let subscription = subscription.recv().expect("answered");
        let events = Vec::with_capacity(events_for(10));
        let address = events.as_ptr();
        let batch = batch_with(events, &returns);
        assert_eq!(offer(&mut vec![subscriber], &batch), 0);
        drop(batch);
        assert!(spares.is_empty(), "the subscriber still holds it");
        drop(subscription.recv().expect("the batch"));
        let again = empty_events(&spares, 1);
        assert_eq!(again.as_ptr(), address);
    }

    /// A caller's outcome reads its command's events in the batch: the batch's buffer goes
    /// back only once the last outcome is dropped.
    #[test]
    fn a_command_s_events_are_read_in_place_and_outlive_the_stages() {
        let (returns, spares) = returns();
        let mut engine =
            matchbook_core::Engine::new(matchbook_config::demo::config()).expect("demo");
        let mut events = Vec::with_capacity(events_for(2));
        let mut commands = Vec::new();
        for seq in 1..=2 {
            let first = events.len();
            let result = engine.apply(&Command::CreateHolder, Timestamp(1), &mut events);
            commands.push(MatchedCommand {
                seq,
                time: Timestamp(1),
                command: Command::CreateHolder,
                result,
                events: first..events.len(),
            });
        }
        let second: Vec<EventRecord> = events[commands[1].events.clone()].to_vec();
        let batch = Arc::new(Published::returning(commands, events, returns.clone()));
        let read = CommandEvents::of(batch.clone(), 1);
        drop(batch);
        assert!(spares.is_empty(), "an outcome still reads the batch");
        assert_eq!(&read[..], &second[..]);
        assert!(CommandEvents::of(Arc::new(Published::default()), 5).is_empty());
        drop(read);
        assert_eq!(spares.len(), 1, "handed back by the last reader");
    }

    #[test]
    fn a_buffer_too_small_for_the_batch_is_not_grown_but_replaced() {
        let (returns, spares) = returns();
        drop(batch_with(Vec::with_capacity(16), &returns));
        let events = empty_events(&spares, crate::sequencer::MAX_BATCH);
        assert!(events.capacity() >= events_for(crate::sequencer::MAX_BATCH));
        assert!(spares.is_empty());
    }
}
