//! What a taker would get from the book as it stands, walked before any fill: whether a
//! fill-or-kill order fills whole, and what a market buy reserves. The walk follows the
//! matching loop's rules so the answer holds once matching runs.

use smallvec::SmallVec;

use super::Engine;
use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, InstrumentId};
use crate::order::{NIL, Side, StpMode};

/// The taker a walk is for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Taker {
    pub(super) instrument: InstrumentId,
    pub(super) side: Side,
    pub(super) limit: Price,
    pub(super) amount: Qty,
    pub(super) account: AccountId,
    pub(super) stp: StpMode,
    /// Futures reduce-only: it never fills past flat.
    pub(super) reduce_only: bool,
}

/// How far a walk got: lots taken and their quote value in balance units.
struct Reach {
    taken: i64,
    cost: i128,
}

impl Engine {
    /// Whether the taker's whole amount can fill at once within its limit.
    pub(super) fn can_fill(&self, t: &Taker) -> bool {
        let futures = self.settlements[usize::from(t.instrument.0)].futures;
        if let Some(m) = futures
            && t.reduce_only
            && t.amount.0 > self.reduce_room(t.account, usize::from(m), t.side)
        {
            return false;
        }
        if t.stp == StpMode::None && self.links.is_empty() && futures.is_none() {
            // Nothing leaves the book mid-sweep and every order offers all it has left:
            // the levels' totals answer.
            let book = &self.books[usize::from(t.instrument.0)];
            return book.can_fill(t.side, t.limit, t.amount);
        }
        self.reach(t).taken == t.amount.0
    }

    /// Cost in quote units of buying `amount` at once from the book as it stands, under the
    /// buyer's self-trade prevention mode.
    pub(super) fn market_buy_cost(
        &self,
        instrument: InstrumentId,
        amount: Qty,
        account: AccountId,
        stp: StpMode,
    ) -> i128 {
        self.reach(&Taker {
            instrument,
            side: Side::Buy,
            limit: Price(i64::MAX),
            amount,
            account,
            stp,
            reduce_only: false,
        })
        .cost
    }

    /// Walks the side the taker meets, best first and FIFO inside a level, up to its
    /// amount within its limit. As in matching: under cancel-oldest own orders are skipped
    /// (cancelled, not traded), under cancel-newest or cancel-both the walk ends at the
    /// first own order; a maker whose OCO peer the walk already met is skipped, since that
    /// peer's fill or cancel takes it off the book first; a futures reduce-only maker
    /// offers no more than what is left of its account's position; and an iceberg offers
    /// its shown part where it stands, the rest only behind the level's other orders (out
    /// of reach when an own order ends the walk there).
    fn reach(&self, t: &Taker) -> Reach {
        let book = &self.books[usize::from(t.instrument.0)];
        let futures = self.settlements[usize::from(t.instrument.0)].futures;
        let linked = !self.links.is_empty();
        let mut cancelled_peers: SmallVec<[u32; 4]> = SmallVec::new();
        let mut rooms: SmallVec<[(AccountId, i64); 4]> = SmallVec::new();
        let mut got = Reach { taken: 0, cost: 0 };
        for level in book.levels_of(t.side.opposite()) {
            if !t.side.crosses(t.limit, level.price) {
                return got;
            }
            let mut hidden = 0i64;
            let mut slot = level.head;
            while slot != NIL {
                let maker = &self.orders[slot as usize];
                slot = maker.next;
                if linked && cancelled_peers.contains(&maker.slot) {
                    continue;
                }
                let own = t.stp != StpMode::None && maker.account == t.account;
                if own && t.stp != StpMode::CancelOldest {
                    return got;
                }
                if linked && let Some(peer) = self.links.get(maker.handle()).and_then(|l| l.peer) {
                    cancelled_peers.push(peer.slot);
                }
                if own {
                    continue;
                }
                let mut offer = maker.remaining().0;
                if let Some(m) = futures.filter(|_| maker.reduce_only) {
                    // Its account's room, shared by all its reduce-only orders on the way.
                    let i = match rooms.iter().position(|(a, _)| *a == maker.account) {
                        Some(i) => i,
                        None => {
                            let side = t.side.opposite();
                            let room = self.reduce_room(maker.account, usize::from(m), side);
                            rooms.push((maker.account, room));
                            rooms.len() - 1
                        }
                    };
                    offer = offer.min(rooms[i].1);
                    rooms[i].1 -= offer;
                }
                let shown = offer.min(maker.visible().0);
                hidden += offer - shown;
                if got.take(self, t, level.price, shown) {
                    return got;
                }
            }
            if got.take(self, t, level.price, hidden) {
                return got;
            }
        }
        got
    }
}

impl Reach {
    /// Takes up to `lots` at `price` towards the taker's amount; whether it has it all.
    fn take(&mut self, engine: &Engine, t: &Taker, price: Price, lots: i64) -> bool {
        let take = (t.amount.0 - self.taken).min(lots);
        self.taken += take;
        self.cost += engine.quote_value(t.instrument, price, Qty(take));
        self.taken == t.amount.0
    }
}
