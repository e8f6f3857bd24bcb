//! Event normalisation for comparisons with the reference engine, which names orders by
//! number only: every slab slot inside an event is set to zero.

use matchbook::{Event, OrderRef};

fn strip(order: OrderRef) -> OrderRef {
    OrderRef {
        id: order.id,
        slot: 0,
    }
}

/// The event with every order handle's slot zeroed.
pub fn normalize(event: Event) -> Event {
    match event {
        Event::OrderAccepted(mut a) => {
            a.order = strip(a.order);
            Event::OrderAccepted(a)
        }
        Event::Trade(mut t) => {
            t.maker = strip(t.maker);
            t.taker = strip(t.taker);
            Event::Trade(t)
        }
        Event::OrderBooked {
            order,
            instrument,
            side,
            price,
            remaining,
        } => Event::OrderBooked {
            order: strip(order),
            instrument,
            side,
            price,
            remaining,
        },
        Event::OrderAmended {
            order,
            account,
            instrument,
            price,
            amount,
            remaining,
            kept_priority,
        } => Event::OrderAmended {
            order: strip(order),
            account,
            instrument,
            price,
            amount,
            remaining,
            kept_priority,
        },
        Event::OrderCancelled {
            order,
            account,
            instrument,
            remaining,
            reason,
        } => Event::OrderCancelled {
            order: strip(order),
            account,
            instrument,
            remaining,
            reason,
        },
        Event::StopTriggered {
            order,
            instrument,
            trigger_price,
            price,
        } => Event::StopTriggered {
            order: strip(order),
            instrument,
            trigger_price,
            price,
        },
        Event::OrdersLinked {
            first,
            second,
            instrument,
            parent,
        } => Event::OrdersLinked {
            first: strip(first),
            second: strip(second),
            instrument,
            parent: parent.map(strip),
        },
        Event::BracketPlaced {
            order,
            instrument,
            exits,
        } => Event::BracketPlaced {
            order: strip(order),
            instrument,
            exits,
        },
        Event::TriggerMoved {
            order,
            instrument,
            trigger_price,
        } => Event::TriggerMoved {
            order: strip(order),
            instrument,
            trigger_price,
        },
        Event::OrderTerms {
            order,
            instrument,
            reference,
            trail,
            limit_offset,
            display,
        } => Event::OrderTerms {
            order: strip(order),
            instrument,
            reference,
            trail,
            limit_offset,
            display,
        },
        other => other,
    }
}
