//! The engine to and from its saved image ([`crate::image`]): what is written is the state
//! the engine cannot recompute; on restore the configuration comes from a reference engine,
//! the lookup indexes are rebuilt from the orders, and the result passes the same integrity
//! check as any restored engine before it is handed out.

mod records;

use std::collections::BTreeMap;

use super::account_chain::Link;
use super::integrity::IntegrityError;
use super::{Engine, PublishedTop};
use crate::book::Book;
use crate::fees::VolumeWindow;
use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, OrderRef};
use crate::image::{EngineImage, FuturesImage, OrderTermsImage};
use crate::order::{LiveState, NIL, OrderStore, TriggerRef};
use records::*;

fn refuse<T>(what: impl Into<String>) -> Result<T, IntegrityError> {
    Err(IntegrityError(what.into()))
}

impl Engine {
    /// The engine's state as a saved image (see [`crate::image`]). Fails only on a state
    /// no engine can reach (a slot number beyond `u32`).
    pub fn image(&self) -> Result<EngineImage, IntegrityError> {
        let books = self
            .books
            .iter()
            .zip(&self.tops)
            .map(|(book, top)| book.image(top.top))
            .collect::<Result<_, _>>()
            .map_err(IntegrityError)?;
        let f = &self.futures;
        Ok(EngineImage {
            seq: self.seq,
            now: self.now,
            next_order: self.next_order,
            next_trade: self.next_trade,
            next_transfer: self.next_transfer,
            instrument_states: self.instruments.iter().map(|i| i.state).collect(),
            books,
            orders: self
                .orders
                .to_image(|o| order_image(o, self.account_chains.link_of(o.slot), self.prev_of(o)))
                .map_err(IntegrityError)?,
            accounts: (self.accounts.core.iter().zip(&self.accounts.accounts))
                .map(|(core, record)| account_image(core, record, self.currencies.len()))
                .collect(),
            holders: self.accounts.holders.iter().map(holder_image).collect(),
            volumes: (self.volumes.iter())
                .map(|windows| windows.iter().map(VolumeWindow::image).collect())
                .collect(),
            fees_collected: self.fees_collected.clone(),
            futures: FuturesImage {
                markets: f.markets.iter().map(market_image).collect(),
                positions: f.positions.iter().map(position_image).collect(),
                accounts: f.accounts.iter().map(futures_account_image).collect(),
                next_position: f.next_position,
                next_due: f.next_due,
                scheduled: f.scheduled,
            },
            cancel_all_after: self.dead_man.entries().collect(),
            order_terms: self.order_terms_image(),
        })
    }

    /// What an order's image says is ahead of it: `NIL` for its level's head (see
    /// `Order::prev`), so an image does not depend on which orders left the head before.
    fn prev_of(&self, o: &crate::order::Order) -> u32 {
        let heads = o.state == LiveState::Resting
            && (self.books.get(usize::from(o.instrument.0)))
                .and_then(|book| book.levels.get(o.level as usize))
                .is_some_and(|level| level.head == o.slot);
        if heads { NIL } else { o.prev }
    }

    /// Rebuilds an engine from `image` on the configuration of `reference` (a fresh engine
    /// built from the configuration it is to run with), and checks it as
    /// [`Engine::check_restored`] does: an image that decodes but describes no state this
    /// engine could have reached is refused.
    pub fn restore(reference: &Engine, image: EngineImage) -> Result<Engine, IntegrityError> {
        let mut e = reference.clone();
        let instruments = e.instruments.len();
        if image.instrument_states.len() != instruments || image.books.len() != instruments {
            return refuse("books do not match the instruments");
        }
        if image.fees_collected.len() != e.currencies.len() {
            return refuse("fee accounts do not match the currencies");
        }
        e.seq = image.seq;
        e.now = image.now;
        e.next_order = image.next_order;
        e.next_trade = image.next_trade;
        e.next_transfer = image.next_transfer;
        e.fees_collected = image.fees_collected;
        for (instrument, state) in e.instruments.iter_mut().zip(image.instrument_states) {
            instrument.state = state;
        }
        for (i, book) in image.books.into_iter().enumerate() {
            e.tops[i] = PublishedTop {
                top: book.published_top,
                dirty: false,
            };
            e.books[i] = Book::from_image(book).map_err(IntegrityError)?;
        }
        let chain_links: Vec<(u32, AccountId, Link)> = (image.orders.occupied.iter())
            .map(|(slot, o)| (*slot, o.account, chain_link(o)))
            .collect();
        e.orders =
            OrderStore::from_image(image.orders, order_from_image).map_err(IntegrityError)?;
        for (slot, order) in e.orders.iter_mut() {
            order.slot = slot as u32;
        }
        e.restore_accounts(image.accounts, image.holders, image.volumes)?;
        e.restore_futures(image.futures)?;
        for (account, deadline) in image.cancel_all_after {
            if e.accounts.account(account).is_err() {
                return refuse("a dead-man switch of an unknown account");
            }
            e.dead_man.set(account, Some(deadline));
        }
        e.restore_order_terms(image.order_terms)?;
        e.rebuild_order_indexes(chain_links)?;
        e.check_restored(reference)?;
        Ok(e)
    }

    fn restore_accounts(
        &mut self,
        accounts: Vec<crate::image::AccountImage>,
        holders: Vec<crate::image::HolderImage>,
        volumes: Vec<Vec<crate::image::VolumeImage>>,
    ) -> Result<(), IntegrityError> {
        let currencies = self.currencies.len();
        if accounts.iter().any(|a| a.balances.len() != currencies) {
            return refuse("an account's balances do not match the currencies");
        }
        (self.accounts.core, self.accounts.accounts) =
            accounts.into_iter().map(account_from_image).unzip();
        self.accounts.holders = holders.into_iter().map(holder_from_image).collect();
        let groups = &self.fee_groups;
        let mut per_holder = Vec::with_capacity(volumes.len());
        for windows in volumes {
            if windows.len() != groups.len() {
                return refuse("traded volumes do not match the fee groups");
            }
            let rebuilt: Vec<VolumeWindow> = (windows.into_iter().zip(groups))
                .map(|(window, group)| VolumeWindow::from_image(window, group))
                .collect::<Result<_, _>>()
                .map_err(IntegrityError)?;
            per_holder.push(rebuilt);
        }
        self.volumes = crate::fees::HolderVolumes::from_holders(groups.len(), per_holder)
            .map_err(|e| IntegrityError(e.into()))?;
        Ok(())
    }

    fn restore_futures(&mut self, image: FuturesImage) -> Result<(), IntegrityError> {
        let f = &mut self.futures;
        if image.markets.len() != f.markets.len() {
            return refuse("futures markets do not match the configuration");
        }
        for (market, saved) in f.markets.iter_mut().zip(image.markets) {
            restore_market(market, saved).map_err(IntegrityError)?;
        }
        f.positions = image
            .positions
            .into_iter()
            .map(position_from_image)
            .collect();
        f.accounts = (image.accounts.into_iter())
            .map(futures_account_from_image)
            .collect();
        f.next_position = image.next_position;
        f.next_due = image.next_due;
        f.scheduled = image.scheduled;
        Ok(())
    }

    /// The indexes over live orders, from the orders: each account's and each client id's
    /// newest order (the one with no newer link), the expiry queue and the stop queues.
    /// Whether the chains behind them hold together is the integrity check's job.
    fn rebuild_order_indexes(
        &mut self,
        chain_links: Vec<(u32, AccountId, Link)>,
    ) -> Result<(), IntegrityError> {
        (self.account_chains)
            .restore(self.accounts.core.len(), chain_links.into_iter())
            .map_err(|e| IntegrityError(e.into()))?;
        self.client_index.clear();
        self.expiries = BTreeMap::new();
        self.held_at.clear();
        for (slot, o) in self.orders.iter() {
            let slot = slot as u32;
            if let (Some(client_id), NIL) = (o.client_id(), o.client_newer)
                && self
                    .client_index
                    .insert((o.account, client_id), slot)
                    .is_some()
            {
                return refuse("a client id has two newest orders");
            }
            if let Some(at) = o.expire_at() {
                self.expiries.insert((at, o.id), slot);
            }
            if o.order_type.is_trigger() && o.state == LiveState::PendingTrigger {
                let Some(book) = self.books.get_mut(usize::from(o.instrument.0)) else {
                    return refuse("an order on an unknown instrument");
                };
                let rising = o.order_type.fires_rising(o.side);
                let held = book.held_mut(o.trigger_ref);
                if !held.hold(&mut self.held_at, rising, o.trigger_price, o.id, slot) {
                    return refuse("an order is held twice");
                }
                if let Some(terms) = self.trails.get(o.handle())
                    && !held.track(&mut self.held_at, rising, terms.extreme, o.id, slot)
                {
                    return refuse("two trailing orders share a number");
                }
            }
        }
        Ok(())
    }
}

impl Engine {
    /// Decodes an engine written by snapshot format 6, which saved the in-memory structures
    /// as they stood (this is why they still derive `Deserialize`, and only that; the
    /// store's committed format-6 file pins the decoder). The result must pass
    /// [`Engine::check_restored`] before use.
    pub fn decode_legacy(bytes: &[u8]) -> Result<Engine, IntegrityError> {
        let mut engine: Engine =
            postcard::from_bytes(bytes).map_err(|e| IntegrityError(e.to_string()))?;
        let slots = engine.orders.slots();
        for book in &mut engine.books {
            (book.on_last.reindex(&mut engine.held_at, slots)).map_err(IntegrityError)?;
            book.recompute_best();
        }
        // The chains are kept by account id: refuse an order of no account before they
        // are sized to it (a format-6 order naming account 500 million took 2 GB).
        let accounts = engine.accounts.core.len();
        if (engine.orders.iter()).any(|(_, o)| o.account.0 as usize >= accounts) {
            return Err(IntegrityError(
                "an order names an account that does not exist".into(),
            ));
        }
        engine.account_chains.rebuild(engine.orders.iter());
        if engine.volumes.holders() == 0 {
            // Nothing saved to count the groups by: the configuration says.
            engine.volumes = crate::fees::HolderVolumes::new(engine.fee_groups.len());
        }
        Ok(engine)
    }
}

impl Engine {
    /// The trigger terms of held orders that have more than their record holds.
    fn order_terms_image(&self) -> Vec<OrderTermsImage> {
        let mut terms: Vec<OrderTermsImage> = (self.orders.iter())
            .map(|(_, o)| {
                (
                    o,
                    self.trails.get(o.handle()),
                    self.displays.get(o.handle()),
                )
            })
            .filter(|(o, trail, display)| {
                o.trigger_ref != TriggerRef::LastPrice
                    || trail.is_some()
                    || display.is_some()
                    || self.links.contains(o.handle())
            })
            .map(|(o, trail, display)| OrderTermsImage {
                order: o.id,
                reference: o.trigger_ref,
                trail: trail.map(|t| t.trail),
                limit_offset: trail.map_or(Price(0), |t| t.limit_offset),
                extreme: trail.map_or(Price(0), |t| t.extreme),
                display: display.copied().unwrap_or(Qty(0)),
                shown: o.shown,
                peer: self
                    .links
                    .get(o.handle())
                    .and_then(|l| l.peer)
                    .map(|p| p.id),
                exits: self.links.get(o.handle()).and_then(|l| l.exits),
            })
            .collect();
        terms.sort_by_key(|t| t.order);
        terms
    }

    /// Puts the saved terms back on their orders (before the indexes are rebuilt), and
    /// what resting icebergs hide back in their levels.
    fn restore_order_terms(&mut self, saved: Vec<OrderTermsImage>) -> Result<(), IntegrityError> {
        let slots: BTreeMap<u64, u32> = (self.orders.iter())
            .map(|(slot, o)| (o.id, slot as u32))
            .collect();
        self.trails.clear();
        self.displays.clear();
        self.links.clear();
        for t in saved {
            let Some(&slot) = slots.get(&t.order) else {
                return refuse("order terms of an order that is not live");
            };
            let order = OrderRef { id: t.order, slot };
            if t.peer.is_some() || t.exits.is_some() {
                let peer = match t.peer {
                    Some(id) => match slots.get(&id) {
                        Some(&slot) => Some(self.orders[slot as usize].handle()),
                        None => return refuse("an order linked to one that is not live"),
                    },
                    None => None,
                };
                let link = super::contingent::Link {
                    peer,
                    exits: t.exits,
                };
                self.links.insert(order, link);
            }
            let o = &mut self.orders[slot as usize];
            let held = o.state == LiveState::PendingTrigger;
            if t.reference != TriggerRef::LastPrice && !held {
                return refuse("a mark-price reference on an order that is not held");
            }
            o.trigger_ref = t.reference;
            match (o.order_type.is_trailing() && held, t.trail) {
                (true, Some(trail)) => {
                    let terms = super::triggers::Trailing {
                        trail,
                        limit_offset: t.limit_offset,
                        extreme: t.extreme,
                    };
                    self.trails.insert(order, terms);
                }
                (false, None) => {}
                _ => return refuse("a trail on an order that does not trail"),
            }
            if t.display.0 > 0 {
                o.shown = t.shown;
                o.iceberg = t.shown.0 > 0;
                self.displays.insert(order, t.display);
            } else if t.shown.0 != 0 {
                return refuse("a shown part on an order that is not an iceberg");
            }
        }
        for (_, o) in self.orders.iter().filter(|(_, o)| o.is_iceberg()) {
            let hidden = o.remaining().0 - o.shown.0;
            let level = (self.books.get_mut(usize::from(o.instrument.0)))
                .and_then(|b| b.levels.get_mut(o.level as usize));
            match level {
                Some(level) if o.state == LiveState::Resting => level.hidden.0 += hidden,
                _ => return refuse("an iceberg that is not resting in a level"),
            }
        }
        Ok(())
    }
}
