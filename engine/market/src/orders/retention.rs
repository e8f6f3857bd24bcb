//! What order history forgets, and when: orders that ended before the retention
//! horizon, the oldest past a count limit, and orders kept while open once they end.

use matchbook_core::{OrderStatus, Timestamp};

use super::{OrderRecord, OrderStore};

impl OrderStore {
    /// Drops `record` from history: it goes from the client-id index with it.
    fn drop_record(&mut self, record: OrderRecord) {
        self.client_ids.forget(&record);
    }

    /// Forgets orders that ended before `horizon`: from the front of the records (moving
    /// those open since before the horizon to `kept`) and from `kept`.
    pub fn forget_before(&mut self, horizon: Timestamp) {
        if self.front_horizon.is_none_or(|t| horizon > t) {
            self.forget_records_before(horizon);
        }
        while let Some(&(ended, id)) = self.kept_ended.front() {
            if ended >= horizon {
                break;
            }
            self.kept_ended.pop_front();
            if let Some(record) = self.kept.remove(&id) {
                self.drop_record(record);
            }
        }
    }

    /// Forgets the oldest records until at most `most` remain (moving open ones to
    /// `kept`, as retention does, where each stays until it ends: see `count_cut`); true
    /// if it forgot any.
    pub fn keep_at_most(&mut self, most: usize) -> bool {
        if self.records.len() <= most {
            return false;
        }
        while self.records.len() > most {
            if let Some(Some(record)) = self.records.pop_front() {
                self.keep_if_open(record);
            }
            self.count_cut = self.first;
            self.first += 1;
        }
        // Read again when next asked.
        self.front_horizon = None;
        true
    }

    /// Length of the retained run of order numbers (records at hand, and the gaps of
    /// numbers never accepted): what [`OrderStore::keep_at_most`] bounds, in one read.
    pub fn run_len(&self) -> usize {
        self.records.len()
    }

    fn forget_records_before(&mut self, horizon: Timestamp) {
        loop {
            match self.records.front() {
                Some(Some(front)) if front.status == OrderStatus::Open => {
                    if front.created >= horizon {
                        break;
                    }
                }
                Some(Some(front)) if front.updated >= horizon => break,
                Some(_) => {}
                None => break,
            }
            if let Some(Some(record)) = self.records.pop_front() {
                self.keep_if_open(record);
            }
            self.first += 1;
        }
        // An open front decides by its creation, an ended one by its end; either only grows.
        self.front_horizon = match self.records.front() {
            Some(Some(r)) if r.status == OrderStatus::Open => Some(r.created),
            Some(Some(r)) => Some(r.updated),
            _ => None,
        };
    }

    /// A record leaving the front of the run: kept while open, else dropped.
    fn keep_if_open(&mut self, record: OrderRecord) {
        if record.status == OrderStatus::Open {
            self.kept.insert(record.accepted.order.id, record);
        } else {
            self.drop_record(record);
        }
    }

    /// Notes that an order ended: one in `kept` is then forgotten by its end time, or at
    /// once if a count limit cut its number.
    pub(super) fn ended(&mut self, id: u64, time: Timestamp) {
        if id < self.first && self.kept.contains_key(&id) {
            if id <= self.count_cut {
                if let Some(record) = self.kept.remove(&id) {
                    self.drop_record(record);
                }
            } else {
                self.kept_ended.push_back((time, id));
            }
        }
    }
}
