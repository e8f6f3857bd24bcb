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
pub fn normalize(mut event: Event) -> Event {
    match &mut event {
        Event::OrderAccepted(a) => a.order = strip(a.order),
        Event::Trade(t) => {
            t.maker = strip(t.maker);
            t.taker = strip(t.taker);
        }
        Event::OrdersLinked {
            first,
            second,
            parent,
            ..
        } => {
            *first = strip(*first);
            *second = strip(*second);
            *parent = parent.map(strip);
        }
        Event::OrderBooked { order, .. }
        | Event::OrderAmended { order, .. }
        | Event::OrderCancelled { order, .. }
        | Event::StopTriggered { order, .. }
        | Event::BracketPlaced { order, .. }
        | Event::TriggerMoved { order, .. }
        | Event::OrderTerms { order, .. } => *order = strip(*order),
        _ => {}
    }
    event
}
