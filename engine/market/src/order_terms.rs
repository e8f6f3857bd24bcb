//! Terms of orders beyond their accepted record: the mark-price reference, a trailing
//! order's trail and limit offset, an iceberg's display, the other leg of a
//! one-cancels-the-other pair, a bracket's exits (or, for an exit, its entry). Kept as long
//! as their order's history record.

use std::collections::BTreeMap;

use matchbook_core::{BracketExits, Event, OrderRef, Price, Qty, Trail, TriggerRef};

use super::orders::OrderStore;

/// Terms of one order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OrderTerms {
    /// The price it watches.
    pub reference: TriggerRef,
    /// A trailing order's trail.
    pub trail: Option<Trail>,
    /// A trailing stop-limit's limit offset.
    pub limit_offset: Option<Price>,
    /// An iceberg's displayed amount.
    pub display: Option<Qty>,
    /// The other leg of its one-cancels-the-other pair.
    pub peer: Option<OrderRef>,
    /// The bracket entry whose exit it is.
    pub parent: Option<OrderRef>,
    /// A bracket entry's exits.
    pub exits: Option<BracketExits>,
}

/// Terms by order number, for the orders that have any.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OrderTermsStore {
    terms: BTreeMap<u64, OrderTerms>,
}

impl OrderTermsStore {
    /// Records an accepted order's terms.
    pub fn insert(&mut self, order: u64, terms: OrderTerms) {
        self.terms.insert(order, terms);
    }

    /// Takes in the events that carry terms (`OrderTerms`, `OrdersLinked`,
    /// `BracketPlaced`); ignores the rest.
    pub fn on_event(&mut self, event: &Event) {
        match *event {
            Event::OrderTerms {
                order,
                reference,
                trail,
                limit_offset,
                display,
                ..
            } => {
                let terms = self.terms.entry(order.id).or_default();
                (terms.reference, terms.trail) = (reference, trail);
                (terms.limit_offset, terms.display) = (limit_offset, display);
            }
            Event::OrdersLinked {
                first,
                second,
                parent,
                ..
            } => {
                for (own, peer) in [(first, second), (second, first)] {
                    let terms = self.terms.entry(own.id).or_default();
                    (terms.peer, terms.parent) = (Some(peer), parent);
                }
            }
            Event::BracketPlaced { order, exits, .. } => {
                self.terms.entry(order.id).or_default().exits = Some(exits);
            }
            _ => {}
        }
    }

    /// An order's terms, if it has any.
    pub fn get(&self, order: u64) -> Option<&OrderTerms> {
        self.terms.get(&order)
    }

    /// Forgets the terms of orders whose record `orders` no longer holds.
    pub fn forget_gone(&mut self, orders: &OrderStore) {
        let gone: Vec<u64> = (self.terms.range(..orders.first_retained()))
            .map(|(&id, _)| id)
            .filter(|&id| !orders.holds(id))
            .collect();
        for id in gone {
            self.terms.remove(&id);
        }
    }

    /// Number of orders with terms.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// True when no order has terms.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}
