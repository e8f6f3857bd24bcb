//! `mb_cmd_*`: one constructor of an `mb_command` per command kind, so C callers fill in
//! only the fields their command reads (the rest stay as `MbCommand::blank` leaves them).

use std::ffi::c_char;

use crate::command::{MbCommand, MbCommandKind};
use crate::types::{MbOrderRef, MbOrderType, MbTimeInForce, MbUuid};

/// A command that creates a holder with its main account.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_create_holder() -> MbCommand {
    MbCommand::blank(MbCommandKind::CreateHolder)
}

/// A subaccount creation (`kind` an `mb_account_kind`); `name` must stay valid until the
/// command is submitted.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_create_subaccount(
    holder: u32,
    name: *const c_char,
    kind: u32,
) -> MbCommand {
    MbCommand {
        holder,
        name,
        flag: kind,
        ..MbCommand::blank(MbCommandKind::CreateSubaccount)
    }
}

/// A deposit of `amount` balance units (admin).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_deposit(account: u32, currency: u16, amount: i64) -> MbCommand {
    MbCommand {
        account,
        currency,
        amount,
        ..MbCommand::blank(MbCommandKind::Deposit)
    }
}

/// A withdrawal of `amount` balance units (admin).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_withdraw(account: u32, currency: u16, amount: i64) -> MbCommand {
    MbCommand {
        account,
        currency,
        amount,
        ..MbCommand::blank(MbCommandKind::Withdraw)
    }
}

/// A transfer between two accounts of `holder`.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_transfer(
    holder: u32,
    source: u32,
    destination: u32,
    currency: u16,
    amount: i64,
) -> MbCommand {
    MbCommand {
        holder,
        account: source,
        other_account: destination,
        currency,
        amount,
        ..MbCommand::blank(MbCommandKind::Transfer)
    }
}

/// A limit order: price in ticks, amount in lots, `tif` an `mb_time_in_force`.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_place_limit(
    account: u32,
    instrument: u16,
    side: u32,
    price_ticks: i64,
    amount_lots: i64,
    tif: u32,
) -> MbCommand {
    MbCommand {
        account,
        instrument,
        side,
        order_type: MbOrderType::Limit as u32,
        time_in_force: tif,
        price: price_ticks,
        amount: amount_lots,
        ..MbCommand::blank(MbCommandKind::PlaceOrder)
    }
}

/// A market order (`protection_ticks` 0 = no protection price).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_place_market(
    account: u32,
    instrument: u16,
    side: u32,
    amount_lots: i64,
    protection_ticks: i64,
) -> MbCommand {
    MbCommand {
        account,
        instrument,
        side,
        order_type: MbOrderType::Market as u32,
        time_in_force: MbTimeInForce::ImmediateOrCancelled as u32,
        price: protection_ticks,
        amount: amount_lots,
        ..MbCommand::blank(MbCommandKind::PlaceOrder)
    }
}

/// A held trigger order: `order_type` an `mb_order_type` among `STOP` (stop-limit),
/// `STOP_MARKET`, `TAKE_PROFIT` (limit) and `TAKE_PROFIT_MARKET`; `price_ticks` the limit
/// (0 for the market types); it watches the last trade price (set `trigger_ref` to
/// `MB_TRIGGER_REF_MARK_PRICE` for a future's mark).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_place_trigger(
    account: u32,
    instrument: u16,
    side: u32,
    order_type: u32,
    trigger_ticks: i64,
    price_ticks: i64,
    amount_lots: i64,
    tif: u32,
) -> MbCommand {
    MbCommand {
        account,
        instrument,
        side,
        order_type,
        time_in_force: tif,
        trigger_price: trigger_ticks,
        price: price_ticks,
        amount: amount_lots,
        ..MbCommand::blank(MbCommandKind::PlaceOrder)
    }
}

/// A trailing stop: `trail_kind` an `mb_trail_kind` (`TICKS` or `BPS`) and its `trail`;
/// a negative `limit_offset_ticks` makes a trailing stop entering as a market order, zero
/// or more a trailing stop-limit that far past its trigger.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_place_trailing(
    account: u32,
    instrument: u16,
    side: u32,
    trail_kind: u32,
    trail: i64,
    limit_offset_ticks: i64,
    amount_lots: i64,
) -> MbCommand {
    let (order_type, limit_offset) = if limit_offset_ticks < 0 {
        (MbOrderType::TrailingStop, 0)
    } else {
        (MbOrderType::TrailingStopLimit, limit_offset_ticks)
    };
    MbCommand {
        account,
        instrument,
        side,
        order_type: order_type as u32,
        trail_kind,
        trail,
        limit_offset,
        amount: amount_lots,
        ..MbCommand::blank(MbCommandKind::PlaceOrder)
    }
}

/// A one-cancels-the-other exit pair on one side: a limit at `limit_ticks` and a stop
/// triggered at `stop_trigger_ticks` (a stop-limit at `stop_limit_ticks`, 0 = a
/// stop-market), each for `amount_lots`. The first fill or trigger of one cancels the other.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_place_oco(
    account: u32,
    instrument: u16,
    side: u32,
    amount_lots: i64,
    limit_ticks: i64,
    stop_trigger_ticks: i64,
    stop_limit_ticks: i64,
) -> MbCommand {
    let stop_type = if stop_limit_ticks == 0 {
        MbOrderType::StopMarket
    } else {
        MbOrderType::Stop
    };
    MbCommand {
        account,
        instrument,
        side,
        order_type: MbOrderType::Limit as u32,
        price: limit_ticks,
        amount: amount_lots,
        oco_order_type: stop_type as u32,
        oco_price: stop_limit_ticks,
        oco_trigger_price: stop_trigger_ticks,
        ..MbCommand::blank(MbCommandKind::PlaceOco)
    }
}

/// A bracket: an entry (a limit at `price_ticks`, or a market order when it is 0) whose
/// exits, placed once it is done for what it filled, are a take-profit limit at
/// `take_profit_ticks` and a stop-loss triggered at `stop_loss_ticks` (a stop-limit at
/// `stop_limit_ticks`, 0 = a stop-market), linked one-cancels-the-other.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
#[allow(
    clippy::too_many_arguments,
    reason = "a C constructor takes every field it sets"
)]
pub extern "C" fn mb_cmd_place_bracket(
    account: u32,
    instrument: u16,
    side: u32,
    price_ticks: i64,
    amount_lots: i64,
    tif: u32,
    take_profit_ticks: i64,
    stop_loss_ticks: i64,
    stop_limit_ticks: i64,
) -> MbCommand {
    let order_type = if price_ticks == 0 {
        MbOrderType::Market
    } else {
        MbOrderType::Limit
    };
    MbCommand {
        account,
        instrument,
        side,
        order_type: order_type as u32,
        time_in_force: tif,
        price: price_ticks,
        amount: amount_lots,
        take_profit: take_profit_ticks,
        stop_loss: stop_loss_ticks,
        stop_limit: stop_limit_ticks,
        ..MbCommand::blank(MbCommandKind::PlaceBracket)
    }
}

/// An amend (`amount_lots` / `price_ticks` 0 = unchanged).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_amend(
    account: u32,
    order: MbOrderRef,
    amount_lots: i64,
    price_ticks: i64,
) -> MbCommand {
    MbCommand {
        account,
        order,
        amount: amount_lots,
        price: price_ticks,
        ..MbCommand::blank(MbCommandKind::AmendOrder)
    }
}

/// A cancel of one order.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_cancel(account: u32, order: MbOrderRef) -> MbCommand {
    MbCommand {
        account,
        order,
        ..MbCommand::blank(MbCommandKind::CancelOrder)
    }
}

/// A cancel of the newest open order with `client_id`.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_cancel_by_client_id(account: u32, client_id: MbUuid) -> MbCommand {
    MbCommand {
        account,
        client_id,
        ..MbCommand::blank(MbCommandKind::CancelByClientId)
    }
}

/// A cancel of every open order of `account` (`only_instrument` nonzero: just those in
/// `instrument`).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_cancel_all(
    account: u32,
    only_instrument: u8,
    instrument: u16,
) -> MbCommand {
    MbCommand {
        account,
        instrument,
        flag: u32::from(only_instrument != 0),
        ..MbCommand::blank(MbCommandKind::CancelAll)
    }
}

/// A cancel of the `len` listed orders of `account` (the list is read at submit).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_cancel_orders(
    account: u32,
    orders: *const MbOrderRef,
    len: usize,
) -> MbCommand {
    MbCommand {
        account,
        flag: 2,
        order_list: orders,
        list_len: len,
        ..MbCommand::blank(MbCommandKind::CancelAll)
    }
}

/// A cancel of the newest open order of `account` for each of `len` client ids (the list
/// is read at submit).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_cancel_client_ids(
    account: u32,
    client_ids: *const MbUuid,
    len: usize,
) -> MbCommand {
    MbCommand {
        account,
        flag: 3,
        client_id_list: client_ids,
        list_len: len,
        ..MbCommand::blank(MbCommandKind::CancelAll)
    }
}

/// Sets a futures index price (admin).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_set_index_price(instrument: u16, price_ticks: i64) -> MbCommand {
    MbCommand {
        instrument,
        price: price_ticks,
        ..MbCommand::blank(MbCommandKind::SetIndexPrice)
    }
}

/// Moves time only (expiries, funding).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_advance_time() -> MbCommand {
    MbCommand::blank(MbCommandKind::AdvanceTime)
}

/// Arms an account's dead-man switch: its open orders are cancelled once `timeout_ns`
/// nanoseconds of engine time have passed, unless it is set again first; 0 turns it off.
/// A timeout beyond `i64::MAX` is refused when applied.
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_set_cancel_all_after(account: u32, timeout_ns: u64) -> MbCommand {
    MbCommand {
        account,
        amount: i64::try_from(timeout_ns).unwrap_or(-1),
        ..MbCommand::blank(MbCommandKind::SetCancelAllAfter)
    }
}

/// Closes an account's futures positions (admin).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_liquidate(account: u32) -> MbCommand {
    MbCommand {
        account,
        ..MbCommand::blank(MbCommandKind::Liquidate)
    }
}

/// Changes an instrument's state (`state` an `mb_instrument_state`; admin).
///
/// Threads: any thread, concurrently.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn mb_cmd_set_instrument_state(instrument: u16, state: u32) -> MbCommand {
    MbCommand {
        instrument,
        flag: state,
        ..MbCommand::blank(MbCommandKind::SetInstrumentState)
    }
}
