//! Columns of orders in one call: the loop runs in Rust with the GIL released, each order
//! answered by a status code (0 = accepted) and its handle, so a million orders cost one
//! Python call.

use matchbook::{
    AccountId, Command, InstrumentId, NewOrder, Price, Qty, Side, TimeInForce, Timestamp,
};

use crate::engine::Core;

/// One column set of limit orders; every column has the same length (checked by the
/// caller).
pub(crate) struct OrderColumns<'a> {
    pub time: &'a [i64],
    pub account: &'a [u32],
    pub instrument: &'a [u16],
    pub side: &'a [u8],
    pub price: &'a [i64],
    pub amount: &'a [i64],
    pub tif: &'a [u8],
}

/// What each order got: status code (0 accepted, else the engine's error code or 9003
/// for a bad side or time-in-force code), order number and slot (0 when refused).
#[derive(Default)]
pub(crate) struct Answers {
    pub status: Vec<u16>,
    pub order_id: Vec<u64>,
    pub slot: Vec<u32>,
}

const TIFS: [TimeInForce; 5] = [
    TimeInForce::GoodTillCancelled,
    TimeInForce::ImmediateOrCancelled,
    TimeInForce::FillOrKill,
    TimeInForce::PostOnly,
    TimeInForce::GoodTillTime,
];

/// Applies every order in column order.
pub(crate) fn place(core: &mut Core, c: &OrderColumns<'_>) -> Answers {
    let n = c.time.len();
    let mut answers = Answers {
        status: Vec::with_capacity(n),
        order_id: Vec::with_capacity(n),
        slot: Vec::with_capacity(n),
    };
    for i in 0..n {
        let side = match c.side[i] {
            0 => Some(Side::Buy),
            1 => Some(Side::Sell),
            _ => None,
        };
        let tif = TIFS.get(usize::from(c.tif[i])).copied();
        let (Some(side), Some(tif)) = (side, tif) else {
            answers.status.push(crate::errors::INVALID_ARGUMENT);
            answers.order_id.push(0);
            answers.slot.push(0);
            continue;
        };
        let order = NewOrder::limit(
            AccountId(c.account[i]),
            InstrumentId(c.instrument[i]),
            side,
            Price(c.price[i]),
            Qty(c.amount[i]),
        )
        .with_tif(tif);
        match core.apply(&Command::PlaceOrder(order), Timestamp(c.time[i])) {
            Ok(applied) => {
                let handle = applied.order.unwrap_or_default();
                answers.status.push(0);
                answers.order_id.push(handle.id);
                answers.slot.push(handle.slot);
            }
            Err(e) => {
                answers.status.push(e.code());
                answers.order_id.push(0);
                answers.slot.push(0);
            }
        }
    }
    answers
}
