//! State hashing: a digest of everything that determines future behaviour, in a canonical
//! order (instruments by index, levels best first, queues in FIFO order, stops and expiries
//! in key order), so equal digests mean equal states across runs, replays and snapshots.

use super::Engine;
use crate::hashing::StateHasher;
use crate::order::{NIL, Order, Side};

impl Engine {
    /// Digest of the whole state, including the event sequence number and the clock.
    pub fn state_hash(&self) -> u64 {
        let mut h = StateHasher::default();
        h.u64(self.seq);
        h.i64(self.now.0);
        h.u64(self.content_hash());
        h.finish()
    }

    /// Digest of the state without the event sequence number and the clock: unchanged by a
    /// refused command, which only emits its `Rejected` event.
    pub fn content_hash(&self) -> u64 {
        let mut h = StateHasher::default();
        h.u64(self.next_order);
        h.u64(self.next_trade);
        h.u64(u64::from(self.max_open_orders));
        h.u64(self.next_transfer);
        h.bytes(&[
            u8::from(self.enforce_balances),
            u8::from(self.publish_top_of_book),
        ]);
        self.hash_accounts(&mut h);
        self.hash_books(&mut h);
        for (&(at, id), &slot) in &self.expiries {
            h.i64(at.0);
            h.u64(id);
            h.u64(u64::from(slot));
        }
        let mut index: Vec<_> = self.client_index.iter().collect();
        index.sort();
        for (&(account, client), &slot) in index {
            h.u64(u64::from(account.0));
            h.i128(client.0 as i128);
            h.u64(u64::from(slot));
        }
        self.hash_futures(&mut h);
        self.hash_order_terms(&mut h);
        h.finish()
    }

    /// Accounts (holder, modes, name, balances, thresholds), holders' counts and fee
    /// windows, the fees collected.
    fn hash_accounts(&self, h: &mut StateHasher) {
        for (core, a) in self.accounts.core.iter().zip(&self.accounts.accounts) {
            h.u64(u64::from(core.holder.0));
            h.bytes(&[
                core.stp as u8,
                core.state as u8,
                a.kind as u8,
                u8::from(a.derisk),
            ]);
            h.bytes(a.name.as_bytes());
            h.u64(a.name.len() as u64);
            h.i64(a.created.0);
            for b in a.balances.dense(self.currencies.len()) {
                h.i64(b.available);
                h.i64(b.locked);
                h.i64(b.updated.0);
            }
            for &t in &a.blp_threshold {
                h.i64(t);
            }
        }
        for (holder, windows) in self.accounts.holders.iter().zip(self.volumes.iter()) {
            h.u64(holder.accounts.len() as u64);
            h.u64(u64::from(holder.open_orders));
            for w in windows {
                w.digest(h);
            }
        }
        for &fee in &self.fees_collected {
            h.i64(fee);
        }
    }

    /// Each instrument's published top, state and book: levels best first, each queue in
    /// FIFO order, then its last-price triggers.
    fn hash_books(&self, h: &mut StateHasher) {
        for (inst, (book, published)) in self
            .instruments
            .iter()
            .zip(self.books.iter().zip(&self.tops))
        {
            h.opt_i64(published.top.0.map(|p| p.0));
            h.opt_i64(published.top.1.map(|p| p.0));
            h.bytes(inst.code().as_bytes());
            h.bytes(&[inst.state as u8]);
            h.opt_i64(book.last_price.map(|p| p.0));
            h.u64(book.sequence);
            for side in [Side::Buy, Side::Sell] {
                h.u64(book.depth(side) as u64);
                for level in book.levels_of(side) {
                    h.i64(level.price.0);
                    h.i64(level.total.0);
                    h.u64(u64::from(level.count));
                    let mut slot = level.head;
                    while slot != NIL {
                        let o = &self.orders[slot as usize];
                        hash_order(h, o);
                        slot = o.next;
                    }
                }
            }
            for (_, (trigger, id), slot) in book.on_last.held() {
                h.i64(trigger);
                h.u64(id);
                hash_order(h, &self.orders[slot as usize]);
            }
        }
    }

    /// The terms kept beside orders, each only when there are any (so states without them
    /// keep their digests): dead-man switches, mark-price triggers, OCO and bracket links,
    /// icebergs, trailing terms.
    fn hash_order_terms(&self, h: &mut StateHasher) {
        // Last, and only when armed, so states without a switch keep their digests.
        for (account, deadline) in self.dead_man.entries() {
            h.u64(u64::from(account.0));
            h.i64(deadline.0);
        }
        // Likewise mark-price triggers and trailing terms, only when there are any.
        for book in self.books.iter().filter(|b| b.on_mark.len() > 0) {
            for (_, (trigger, id), slot) in book.on_mark.held() {
                h.i64(trigger);
                h.u64(id);
                hash_order(h, &self.orders[slot as usize]);
            }
        }
        for (order, link) in self.links.by_number() {
            h.u64(order.id);
            h.u64(link.peer.map_or(0, |p| p.id));
            if let Some(e) = link.exits {
                h.i64(e.take_profit.0);
                h.i64(e.stop_loss.0);
                h.opt_i64(e.stop_limit.map(|p| p.0));
            }
        }
        for (order, display) in self.displays.by_number() {
            h.u64(order.id);
            h.i64(display.0);
        }
        for (_, o) in self.orders.iter().filter(|(_, o)| o.is_iceberg()) {
            h.u64(o.id);
            h.i64(o.shown.0);
        }
        for (order, t) in self.trails.by_number() {
            h.u64(order.id);
            let (kind, distance) = match t.trail {
                crate::order::Trail::Price(p) => (0, p.0),
                crate::order::Trail::Bps(bps) => (1, i64::from(bps)),
            };
            h.bytes(&[kind]);
            h.i64(distance);
            h.i64(t.limit_offset.0);
            h.i64(t.extreme.0);
        }
    }

    /// Futures markets (index, funding, open interest), every position and account state.
    fn hash_futures(&self, h: &mut StateHasher) {
        let f = &self.futures;
        h.u64(f.next_position);
        h.i64(f.next_due.0);
        h.bytes(&[u8::from(f.scheduled)]);
        for m in &f.markets {
            h.opt_i64(m.index.map(|p| p.0));
            h.i64(m.open_interest);
            if let Some(funding) = &m.funding {
                h.i128(funding.premium_sum);
                h.i64(funding.samples);
                h.i64(funding.last_rate);
                h.i64(funding.next_sample.0);
                h.i64(funding.next_settlement.0);
            }
        }
        // Trailing never-used records do not change behaviour: hash up to the last used one.
        let used = f
            .positions
            .iter()
            .rposition(|p| p.id != 0)
            .map_or(0, |i| i + 1);
        for p in &f.positions[..used] {
            h.u64(p.id);
            h.i64(p.size);
            h.i128(p.entry_cost);
            h.i64(p.realised);
            h.i64(p.opened.0);
            h.i64(p.last_settlement.0);
        }
        for a in &f.accounts {
            h.i64(a.order_margin);
            h.bytes(&[u8::from(a.margin_call)]);
        }
    }
}

fn hash_order(h: &mut StateHasher, o: &Order) {
    h.u64(o.id);
    h.u64(u64::from(o.slot));
    h.u64(u64::from(o.account.0));
    h.bytes(&[
        o.side as u8,
        o.order_type as u8,
        o.time_in_force as u8,
        o.stp as u8,
        o.state as u8,
    ]);
    h.i64(o.price.0);
    h.i64(o.trigger_price.0);
    h.i64(o.reserved);
    h.i64(o.amount.0);
    h.i64(o.filled.0);
    h.i128(o.filled_notional.0);
    h.i128(o.client_id().map_or(-1, |c| c.0 as i128));
    h.opt_i64(o.expire_at().map(|t| t.0));
    h.i64(o.created.0);
    h.i64(o.updated.0);
    h.u64(o.sequence);
}
