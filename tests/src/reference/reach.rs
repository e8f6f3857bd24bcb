//! What a taker would get from the book as it stands, in the reference engine, written
//! from the rules: whether a fill-or-kill order fills whole, and what a market buy costs.

use super::*;

impl RefEngine {
    /// Cost of buying `amount` from the book now, under the buyer's STP mode.
    pub(super) fn market_buy_cost(
        &self,
        instrument: InstrumentId,
        amount: i64,
        account: AccountId,
        stp: StpMode,
    ) -> i128 {
        let unit = i128::from(self.instruments[instrument.0 as usize].quote_unit);
        let mut need = amount;
        let mut cost = 0i128;
        for (i, lots) in self.makers_met(instrument, Side::Buy, account, stp) {
            let o = &self.orders[i];
            if need == 0 {
                break;
            }
            let take = need.min(lots);
            cost += i128::from(o.price.unwrap_or(0)) * i128::from(take) * unit;
            need -= take;
        }
        cost
    }

    /// Whether `amount` can fill at once within `limit`, under the taker's STP mode.
    pub(super) fn can_fill(
        &self,
        instrument: InstrumentId,
        side: Side,
        limit: i64,
        amount: i64,
        account: AccountId,
        stp: StpMode,
    ) -> bool {
        let mut need = amount;
        for (i, lots) in self.makers_met(instrument, side, account, stp) {
            let o = &self.orders[i];
            if !crosses(side, limit, o.price.unwrap_or(0)) {
                return false;
            }
            need -= lots;
            if need <= 0 {
                return true;
            }
        }
        false
    }

    /// The makers a taker on `side` trades with and the lots each offers, in the order it
    /// meets them, as far as liquidity and self-trade prevention let it go: an own order
    /// under cancel-oldest is cancelled, not traded; under cancel-newest or cancel-both it
    /// ends the sweep; an OCO leg whose peer was met first is gone, cancelled by that peer's
    /// fill or cancel; and an iceberg offers its shown part in its place and the rest after
    /// every other order at its price.
    fn makers_met(
        &self,
        instrument: InstrumentId,
        side: Side,
        account: AccountId,
        stp: StpMode,
    ) -> Vec<(usize, i64)> {
        let mut gone: Vec<u64> = Vec::new();
        let mut met = Vec::new();
        let mut behind: Vec<(usize, i64)> = Vec::new();
        let mut price = None;
        for i in self.queue(instrument, side.opposite()) {
            let o = &self.orders[i];
            if price != Some(o.price) {
                met.append(&mut behind);
                price = Some(o.price);
            }
            if gone.contains(&o.id) {
                continue;
            }
            let own = stp != StpMode::None && o.account == account;
            if own && stp != StpMode::CancelOldest {
                return met;
            }
            if let Some(&(Some(peer), _)) = self.links.get(&o.id) {
                gone.push(peer);
            }
            if !own {
                met.push((i, o.visible()));
                if o.remaining() > o.visible() {
                    behind.push((i, o.remaining() - o.visible()));
                }
            }
        }
        met.append(&mut behind);
        met
    }
}
