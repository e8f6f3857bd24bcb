//! The market stage's feed: after each batch, matching's [`Published`] batch together with
//! what each of its commands did to the books, computed from the stage's replica of the
//! engine (it notes the levels a command changes, [`Engine::watch_levels`]) rather than
//! from a copy of the books rebuilt from events. Every L2 update carries the book's own
//! sequence, so a snapshot read at the point a subscription starts followed by its updates
//! is the book REST shows, with no gap. The replica notes levels only while someone
//! subscribes. The same batch carries each account's order updates ([`crate::account_feed`]).

use std::sync::Arc;

use matchbook_core::{Engine, InstrumentId, LevelChange, TopLevel};
use matchbook_market::MarketData;

use crate::account_feed::{AccountUpdate, AccountUpdates};
use crate::output::{Published, Subscriber, offer};

/// One command's change of one book.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookUpdate {
    /// The market.
    pub instrument: InstrumentId,
    /// Its book sequence after the command.
    pub sequence: u64,
    /// Every level the command changed, with what it holds after the command (amount 0:
    /// gone), in the order first changed.
    pub levels: Vec<LevelChange>,
    /// The best bid and ask (with their amounts) after the command, when they differ from
    /// those before it.
    pub top: Option<(TopLevel, TopLevel)>,
}

/// A batch as the market stage publishes it.
#[derive(Debug)]
pub struct FeedBatch {
    /// Matching's batch: the commands and their events.
    pub published: Arc<Published>,
    /// The book updates, each with the index in `published.commands` of the command that
    /// made it, in command order.
    pub books: Vec<(usize, BookUpdate)>,
    /// The account updates, each with the index of its command, in event order (none
    /// when market data is off: the records are its).
    pub accounts: Vec<(usize, AccountUpdate)>,
}

impl FeedBatch {
    /// The book updates of command `index` of the batch.
    pub fn books_of(&self, index: usize) -> impl Iterator<Item = &BookUpdate> + '_ {
        of_command(&self.books, index)
    }

    /// The account updates of command `index` of the batch.
    pub fn accounts_of(&self, index: usize) -> impl Iterator<Item = &AccountUpdate> + '_ {
        of_command(&self.accounts, index)
    }
}

/// The items of command `index` in a list ordered by command.
fn of_command<T>(items: &[(usize, T)], index: usize) -> impl Iterator<Item = &T> + '_ {
    let start = items.partition_point(|(i, _)| *i < index);
    items[start..]
        .iter()
        .take_while(move |(i, _)| *i == index)
        .map(|(_, item)| item)
}

/// The market stage's end of the feed: its subscribers and the tops it last published.
#[derive(Default)]
pub(crate) struct Feeds {
    subscribers: Vec<Subscriber<FeedBatch>>,
    tops: Vec<(TopLevel, TopLevel)>,
    changes: Vec<LevelChange>,
    pending: Vec<(usize, BookUpdate)>,
    accounts: AccountUpdates,
}

impl Feeds {
    /// Adds a subscriber; the first has the replica note levels from now on.
    pub(crate) fn add(&mut self, subscriber: Subscriber<FeedBatch>, replica: &mut Engine) {
        if !replica.watches_levels() {
            replica.watch_levels(true);
            self.tops = (0..replica.instruments().len())
                .map(|i| top_of(replica, InstrumentId(i as u16)))
                .collect();
        }
        self.subscribers.push(subscriber);
    }

    /// Whether anyone subscribes (the replica notes levels).
    pub(crate) fn active(&self) -> bool {
        !self.subscribers.is_empty()
    }

    /// Collects what command `index` of the batch being applied did to the books.
    pub(crate) fn after_command(&mut self, index: usize, replica: &mut Engine) {
        self.changes.clear();
        replica.take_level_changes(&mut self.changes);
        // Books in the order first changed (one almost always; an operator's mass cancel
        // may change several).
        let mut done = 0;
        while let Some(first) = self.changes[done..].first() {
            let instrument = first.instrument;
            // A stable sort: this book's levels first, in the order they were changed.
            let rest = &mut self.changes[done..];
            rest.sort_by_key(|c| c.instrument != instrument);
            let count = rest
                .iter()
                .take_while(|c| c.instrument == instrument)
                .count();
            let levels = rest[..count].to_vec();
            done += count;
            let top = top_of(replica, instrument);
            let moved = match self.tops.get_mut(usize::from(instrument.0)) {
                Some(last) if *last != top => {
                    *last = top;
                    true
                }
                _ => false,
            };
            self.pending.push((
                index,
                BookUpdate {
                    instrument,
                    sequence: replica.book_sequence(instrument).unwrap_or(0),
                    levels,
                    top: moved.then_some(top),
                },
            ));
        }
    }

    /// Has `market` take in the batch's events, noting each account update as it goes.
    pub(crate) fn take_events(
        &mut self,
        published: &Published,
        market: &mut MarketData,
        replica: &Engine,
    ) {
        let accounts = &mut self.accounts;
        let mut command = 0;
        market.on_events_each(&published.events, |i, market| {
            while (published.commands.get(command)).is_some_and(|c| c.events.end <= i) {
                command += 1;
            }
            accounts.on_event(command, &published.events[i], market, replica);
        });
    }

    /// Publishes the batch with the updates collected; the last subscriber gone, the
    /// replica stops noting levels. Returns the subscribers dropped for lagging.
    pub(crate) fn publish(
        &mut self,
        published: &Arc<Published>,
        market: &MarketData,
        replica: &mut Engine,
    ) -> u64 {
        let batch = Arc::new(FeedBatch {
            published: published.clone(),
            books: std::mem::take(&mut self.pending),
            accounts: self.accounts.take(market),
        });
        let lagged = offer(&mut self.subscribers, &batch);
        if self.subscribers.is_empty() {
            replica.watch_levels(false);
        }
        lagged
    }
}

fn top_of(replica: &Engine, instrument: InstrumentId) -> (TopLevel, TopLevel) {
    replica.top_levels(instrument).unwrap_or((None, None))
}
