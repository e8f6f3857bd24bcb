//! What a taker would get from the book as it stands, walked before any fill: whether a
//! fill-or-kill order fills whole, and what a market buy reserves. The walk follows the
//! matching loop's rules so the answer holds once matching runs.

use smallvec::SmallVec;

use super::Engine;
use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, InstrumentId};
use crate::order::{NIL, Side, StpMode};

/// How far a walk got: lots taken and their quote value in balance units.
struct Reach {
    taken: i64,
    cost: i128,
}

impl Engine {
    /// Whether `amount` can fill at once within `limit`, under the taker's STP mode.
    pub(super) fn can_fill(
        &self,
        instrument: InstrumentId,
        side: Side,
        limit: Price,
        amount: Qty,
        account: AccountId,
        stp: StpMode,
    ) -> bool {
        if stp == StpMode::None && self.links.is_empty() {
            // Nothing can leave the book mid-sweep: the levels' totals answer.
            return self.books[usize::from(instrument.0)].can_fill(side, limit, amount);
        }
        self.reach(instrument, side, limit, amount, account, stp)
            .taken
            == amount.0
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
        self.reach(instrument, Side::Buy, Price(i64::MAX), amount, account, stp)
            .cost
    }

    /// Walks the side a taker on `side` meets, best first and FIFO inside a level, up to
    /// `amount` within `limit`. As in matching: under cancel-oldest own orders are skipped
    /// (cancelled, not traded), under cancel-newest or cancel-both the walk ends at the
    /// first own order; and a maker whose OCO peer the walk already met is skipped, since
    /// that peer's fill (or self-trade cancel) takes it off the book before it is reached.
    fn reach(
        &self,
        instrument: InstrumentId,
        side: Side,
        limit: Price,
        amount: Qty,
        account: AccountId,
        stp: StpMode,
    ) -> Reach {
        let book = &self.books[usize::from(instrument.0)];
        let linked = !self.links.is_empty();
        let mut cancelled_peers: SmallVec<[u32; 4]> = SmallVec::new();
        let mut got = Reach { taken: 0, cost: 0 };
        for level in book.levels_of(side.opposite()) {
            if !side.crosses(limit, level.price) {
                return got;
            }
            let mut slot = level.head;
            while slot != NIL {
                let maker = &self.orders[slot as usize];
                slot = maker.next;
                if linked && cancelled_peers.contains(&maker.slot) {
                    continue;
                }
                let own = stp != StpMode::None && maker.account == account;
                if own && stp != StpMode::CancelOldest {
                    return got;
                }
                if linked && let Some(peer) = self.links.get(maker.handle()).and_then(|l| l.peer) {
                    cancelled_peers.push(peer.slot);
                }
                if own {
                    continue;
                }
                let take = (amount.0 - got.taken).min(maker.remaining().0);
                got.taken += take;
                got.cost += self.quote_value(instrument, level.price, Qty(take));
                if got.taken == amount.0 {
                    return got;
                }
            }
        }
        got
    }
}
