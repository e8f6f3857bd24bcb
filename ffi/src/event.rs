//! `mb_event`: a flat, fixed-size C struct for every engine event, polled into a caller's
//! array (`mb_engine_poll_events`, `mb_engine_clear_events`). Fields a kind does not use
//! are zero.

use matchbook::{Event, EventRecord};

use crate::boundary::{fail, guard};
use crate::engine::{MbEngine, engine_mut};
use crate::status::MbStatus;

/// What an `mb_event` reports.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbEventKind {
    /// Any event this version of the ABI does not describe field by field.
    Other = 0,
    /// An order was accepted (`order`, `account`, `instrument`, `side`, `price`, `amount`).
    OrderAccepted = 1,
    /// A trade (`order` = taker, `maker_order`, `account` = taker, `maker_account`,
    /// `price`, `amount`, `side` = taker side, `fee` = taker fee, `maker_fee`).
    Trade = 2,
    /// An order rests (`order`, `instrument`, `side`, `price`, `amount` = remaining).
    OrderBooked = 3,
    /// An order ended without filling (`order`, `account`, `amount` = remaining).
    OrderCancelled = 4,
    /// A balance changed (`account`, `currency`, `amount` = available, `price` = locked).
    BalanceChanged = 5,
    /// A command was refused (`account`, `status`).
    Rejected = 6,
    /// The touch changed (`instrument`, `price` = bid, `amount` = ask; 0 = none).
    TopOfBook = 7,
    /// A futures position changed (`account`, `instrument`, `amount` = signed size,
    /// `price` = entry price, `fee` = realised).
    PositionChanged = 8,
    /// A held trigger order fired (`order`, `instrument`, `price` = the trigger it fired
    /// at, `amount` = the limit it enters with, 0 for a market-type order); an order
    /// refused at that moment ends next with `MB_EVENT_KIND_ORDER_CANCELLED`.
    Triggered = 9,
    /// A trailing order's trigger moved (`order`, `instrument`, `price` = new trigger).
    TriggerMoved = 10,
    /// Two orders were linked one-cancels-the-other (`order` = first leg,
    /// `order_slot` its slot, `maker_order` / `maker_slot` = second leg, `trade` = the
    /// bracket entry whose exits they are, 0 for a plain pair).
    OrdersLinked = 11,
}

/// One event.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbEvent {
    /// Global sequence number.
    pub seq: u64,
    /// Engine time, nanoseconds since the epoch.
    pub time_ns: i64,
    /// Kind.
    pub kind: MbEventKind,
    /// Side (0 buy, 1 sell) where one applies.
    pub side: u8,
    /// Instrument index.
    pub instrument: u16,
    /// Currency index.
    pub currency: u16,
    /// Account.
    pub account: u32,
    /// Other account (the maker of a trade).
    pub maker_account: u32,
    /// Status code of a refusal (`mb_status`).
    pub status: i32,
    /// Order number.
    pub order: u64,
    /// Its slab slot (with `order`, an `mb_order_ref`).
    pub order_slot: u32,
    /// Maker's slot.
    pub maker_slot: u32,
    /// Maker's order number.
    pub maker_order: u64,
    /// Price in ticks (see the kind).
    pub price: i64,
    /// Amount in lots (see the kind).
    pub amount: i64,
    /// Fee (see the kind).
    pub fee: i64,
    /// Maker fee of a trade.
    pub maker_fee: i64,
    /// Trade number of a trade.
    pub trade: u64,
}

impl MbEvent {
    fn blank(record: &EventRecord, kind: MbEventKind) -> Self {
        Self {
            seq: record.seq,
            time_ns: record.time.0,
            kind,
            side: 0,
            instrument: 0,
            currency: 0,
            account: 0,
            maker_account: 0,
            status: 0,
            order: 0,
            order_slot: 0,
            maker_slot: 0,
            maker_order: 0,
            price: 0,
            amount: 0,
            fee: 0,
            maker_fee: 0,
            trade: 0,
        }
    }
}

impl From<&EventRecord> for MbEvent {
    fn from(record: &EventRecord) -> Self {
        let side = |s: matchbook::Side| u8::from(s == matchbook::Side::Sell);
        match record.event {
            Event::OrderAccepted(a) => Self {
                order: a.order.id,
                order_slot: a.order.slot,
                account: a.account.0,
                instrument: a.instrument.0,
                side: side(a.side),
                price: a.price.map_or(0, |p| p.0),
                amount: a.amount.0,
                ..Self::blank(record, MbEventKind::OrderAccepted)
            },
            Event::Trade(t) => Self {
                order: t.taker.id,
                order_slot: t.taker.slot,
                maker_order: t.maker.id,
                maker_slot: t.maker.slot,
                account: t.taker_account.0,
                maker_account: t.maker_account.0,
                instrument: t.instrument.0,
                side: side(t.taker_side),
                price: t.price.0,
                amount: t.amount.0,
                fee: t.taker_fee,
                maker_fee: t.maker_fee,
                trade: t.id.0,
                ..Self::blank(record, MbEventKind::Trade)
            },
            Event::OrderBooked {
                order,
                instrument,
                side: s,
                price,
                remaining,
            } => Self {
                order: order.id,
                order_slot: order.slot,
                instrument: instrument.0,
                side: side(s),
                price: price.0,
                amount: remaining.0,
                ..Self::blank(record, MbEventKind::OrderBooked)
            },
            Event::OrderCancelled {
                order,
                account,
                instrument,
                remaining,
                ..
            } => Self {
                order: order.id,
                order_slot: order.slot,
                account: account.0,
                instrument: instrument.0,
                amount: remaining.0,
                ..Self::blank(record, MbEventKind::OrderCancelled)
            },
            Event::BalanceChanged {
                account,
                currency,
                available,
                locked,
            } => Self {
                account: account.0,
                currency: currency.0,
                amount: available,
                price: locked,
                ..Self::blank(record, MbEventKind::BalanceChanged)
            },
            _ => Self::of_other(record),
        }
    }
}

impl MbEvent {
    /// An event neither of an order's entry, fill or end nor of a balance.
    fn of_other(record: &EventRecord) -> Self {
        match record.event {
            Event::Rejected { account, error, .. } => Self {
                account: account.map_or(0, |a| a.0),
                status: crate::status::MbStatus::from(error) as i32,
                ..Self::blank(record, MbEventKind::Rejected)
            },
            Event::TopOfBook {
                instrument,
                bid,
                ask,
            } => Self {
                instrument: instrument.0,
                price: bid.map_or(0, |p| p.0),
                amount: ask.map_or(0, |p| p.0),
                ..Self::blank(record, MbEventKind::TopOfBook)
            },
            Event::PositionChanged {
                account,
                instrument,
                size,
                entry_price,
                realised,
                ..
            } => Self {
                account: account.0,
                instrument: instrument.0,
                amount: size,
                price: entry_price.0,
                fee: realised,
                ..Self::blank(record, MbEventKind::PositionChanged)
            },
            Event::StopTriggered {
                order,
                instrument,
                trigger_price,
                price,
            } => Self {
                order: order.id,
                order_slot: order.slot,
                instrument: instrument.0,
                price: trigger_price.0,
                amount: price.map_or(0, |p| p.0),
                ..Self::blank(record, MbEventKind::Triggered)
            },
            Event::TriggerMoved {
                order,
                instrument,
                trigger_price,
            } => Self {
                order: order.id,
                order_slot: order.slot,
                instrument: instrument.0,
                price: trigger_price.0,
                ..Self::blank(record, MbEventKind::TriggerMoved)
            },
            Event::OrdersLinked {
                first,
                second,
                instrument,
                parent,
            } => Self {
                order: first.id,
                order_slot: first.slot,
                maker_order: second.id,
                maker_slot: second.slot,
                instrument: instrument.0,
                trade: parent.map_or(0, |p| p.id),
                ..Self::blank(record, MbEventKind::OrdersLinked)
            },
            _ => Self::blank(record, MbEventKind::Other),
        }
    }
}

/// Moves `pending` into the caller's array (all or nothing) and writes the count.
pub(crate) fn drain(
    pending: &mut Vec<EventRecord>,
    events: *mut MbEvent,
    capacity: usize,
    len_out: *mut usize,
) -> Result<(), crate::status::MbStatus> {
    use crate::boundary::{fail, out};
    use crate::status::MbStatus;
    let len = out(len_out, "len_out")?;
    *len = pending.len();
    if pending.is_empty() {
        return Ok(());
    }
    if capacity < pending.len() {
        return Err(fail(
            MbStatus::BufferTooSmall,
            format!("{} events pending, room for {capacity}", pending.len()),
        ));
    }
    if events.is_null() {
        return Err(fail(MbStatus::NullArgument, "events is NULL"));
    }
    for (i, record) in pending.iter().enumerate() {
        // SAFETY: `events` has room for `capacity >= pending.len()` elements.
        unsafe { events.add(i).write(MbEvent::from(record)) };
    }
    pending.clear();
    Ok(())
}

/// Moves the events produced since the last poll into `events` and writes their count. If
/// they do not fit, nothing is moved, `*len_out` is the count needed and the status is
/// `MB_STATUS_BUFFER_TOO_SMALL`. After a failed journal write, `MB_STATUS_STORAGE`, as
/// every read; for an engine whose definition drops events, `MB_STATUS_EVENTS_OFF`.
///
/// # Safety
/// `engine` live; `events` NULL or `capacity` writable elements; `len_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_poll_events(
    engine: *mut MbEngine,
    events: *mut MbEvent,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    guard(|| {
        let e = engine_mut(engine)?;
        e.readable()?;
        if !e.host.keeps_events() {
            return Err(fail(
                MbStatus::EventsOff,
                "engine created with events off (mb_config_set_keep_events(config, 0))",
            ));
        }
        drain(&mut e.host.events, events, capacity, len_out)
    })
}

/// Drops the events not yet polled (for callers that do not poll).
///
/// # Safety
/// `engine` live.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_clear_events(engine: *mut MbEngine) -> MbStatus {
    guard(|| {
        engine_mut(engine)?.host.events.clear();
        Ok(())
    })
}
