//! Record-by-record conversion between the engine's live structures and their images.

use super::super::account_chain::Link;
use super::super::accounts::{AccountCore, AccountRecord, HolderRecord};
use super::super::futures::{Funding, FuturesAccount, FuturesMarket, Position};
use crate::account::Balances;
use crate::image::{
    AccountImage, FundingImage, FuturesAccountImage, FuturesMarketImage, HolderImage, OrderImage,
    PositionImage,
};
use crate::order::{NIL, Order};

/// The order's image; `prev` is what the record would say ahead of it (`NIL` for its
/// level's head, whose record no longer keeps it: see `Order::prev`).
pub(super) fn order_image(o: &Order, chain: Link, prev: u32) -> OrderImage {
    OrderImage {
        id: o.id,
        account: o.account,
        instrument: o.instrument,
        side: o.side,
        order_type: o.order_type,
        time_in_force: o.time_in_force,
        stp: o.stp,
        state: o.state,
        reduce_only: o.reduce_only,
        price: o.price,
        amount: o.amount,
        filled: o.filled,
        filled_notional: o.filled_notional,
        trigger_price: o.trigger_price,
        reserved: o.reserved,
        created: o.created,
        updated: o.updated,
        sequence: o.sequence,
        expire_at: o.expire_at(),
        client_id: o.client_id(),
        level: o.level,
        prev,
        next: o.next,
        client_older: o.client_older,
        client_newer: o.client_newer,
        account_older: chain.older,
        account_newer: chain.newer,
    }
}

/// The order from its image; its slot is filled in once the store is built, and its
/// account chain links go to the engine's chains (`chain_link`).
pub(super) fn order_from_image(o: OrderImage) -> Order {
    let mut order = Order {
        prev: o.prev,
        next: o.next,
        level: o.level,
        account: o.account,
        id: o.id,
        slot: NIL,
        instrument: o.instrument,
        side: o.side,
        order_type: o.order_type,
        time_in_force: o.time_in_force,
        stp: o.stp,
        state: o.state,
        reduce_only: o.reduce_only,
        trigger_ref: crate::order::TriggerRef::LastPrice,
        iceberg: false,
        extras: 0,
        price: o.price,
        amount: o.amount,
        filled: o.filled,
        filled_notional: o.filled_notional,
        trigger_price: o.trigger_price,
        reserved: o.reserved,
        created: o.created,
        updated: o.updated,
        sequence: o.sequence,
        expire_at: Default::default(),
        shown: crate::fixed::Qty(0),
        client_id: Default::default(),
        client_older: o.client_older,
        client_newer: o.client_newer,
    };
    order.set_client_id(o.client_id);
    order.set_expire_at(o.expire_at);
    order
}

pub(super) fn account_image(
    core: &AccountCore,
    record: &AccountRecord,
    currencies: usize,
) -> AccountImage {
    AccountImage {
        holder: core.holder,
        stp: core.stp,
        state: core.state,
        name: record.name.clone(),
        created: record.created,
        kind: record.kind,
        derisk: record.derisk,
        balances: record.balances.to_dense(currencies),
        blp_threshold: record.blp_threshold.clone(),
    }
}

pub(super) fn account_from_image(a: AccountImage) -> (AccountCore, AccountRecord) {
    (
        AccountCore {
            holder: a.holder,
            stp: a.stp,
            state: a.state,
        },
        AccountRecord {
            name: a.name,
            created: a.created,
            kind: a.kind,
            derisk: a.derisk,
            balances: Balances::from_dense(&a.balances),
            blp_threshold: a.blp_threshold,
        },
    )
}

pub(super) fn holder_image(h: &HolderRecord) -> HolderImage {
    HolderImage {
        accounts: h.accounts.clone(),
        open_orders: h.open_orders,
    }
}

pub(super) fn holder_from_image(h: HolderImage) -> HolderRecord {
    HolderRecord {
        accounts: h.accounts,
        open_orders: h.open_orders,
    }
}

pub(super) fn market_image(m: &FuturesMarket) -> FuturesMarketImage {
    FuturesMarketImage {
        index: m.index,
        open_interest: m.open_interest,
        funding: m.funding.as_ref().map(|f| FundingImage {
            premium_sum: f.premium_sum,
            samples: f.samples,
            last_rate: f.last_rate,
            next_sample: f.next_sample,
            next_settlement: f.next_settlement,
        }),
    }
}

/// Applies a market's image to the market built from the configuration.
pub(super) fn restore_market(
    m: &mut FuturesMarket,
    image: FuturesMarketImage,
) -> Result<(), String> {
    m.index = image.index;
    m.open_interest = image.open_interest;
    match (&mut m.funding, image.funding) {
        (None, None) => Ok(()),
        (Some(funding), Some(f)) => {
            *funding = Funding {
                premium_sum: f.premium_sum,
                samples: f.samples,
                last_rate: f.last_rate,
                next_sample: f.next_sample,
                next_settlement: f.next_settlement,
                ..*funding
            };
            Ok(())
        }
        _ => Err("a futures market's funding disagrees with the configuration".into()),
    }
}

pub(super) fn position_image(p: &Position) -> PositionImage {
    PositionImage {
        id: p.id,
        size: p.size,
        entry_cost: p.entry_cost,
        realised: p.realised,
        opened: p.opened,
        last_settlement: p.last_settlement,
    }
}

pub(super) fn position_from_image(p: PositionImage) -> Position {
    Position {
        id: p.id,
        size: p.size,
        entry_cost: p.entry_cost,
        realised: p.realised,
        opened: p.opened,
        last_settlement: p.last_settlement,
    }
}

pub(super) fn futures_account_image(a: &FuturesAccount) -> FuturesAccountImage {
    FuturesAccountImage {
        order_margin: a.order_margin,
        margin_call: a.margin_call,
    }
}

pub(super) fn futures_account_from_image(a: FuturesAccountImage) -> FuturesAccount {
    FuturesAccount {
        order_margin: a.order_margin,
        margin_call: a.margin_call,
    }
}

/// An order image's links in its account's chain.
pub(super) fn chain_link(o: &OrderImage) -> Link {
    Link {
        older: o.account_older,
        newer: o.account_newer,
    }
}
