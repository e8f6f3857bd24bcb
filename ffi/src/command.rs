//! `mb_command`: one flat, copyable struct for every engine command (the fast path: no
//! pointer inside, so it can be built on the stack and queued as is) and its single
//! translation into an engine `Command` with every field checked. The `mb_cmd_*`
//! constructors are in [`crate::constructors`].

use std::ffi::c_char;

use matchbook::{
    AccountId, BracketExits, CancelScope, Command, CurrencyId, HolderId, InstrumentId, NewOrder,
    OrderType, Price, Qty, Timestamp, Trail, TriggerRef,
};

use crate::boundary::{fail, list, text};
use crate::status::MbStatus;
use crate::types::{
    MbAccountKind, MbInstrumentState, MbOrderRef, MbOrderType, MbSide, MbStp, MbTimeInForce,
    MbTrailKind, MbTriggerRef, MbUuid,
};

/// Longest subaccount name, in bytes.
pub const MB_MAX_NAME: usize = 64;

/// What an `mb_command` asks for; the fields each kind reads are listed with it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbCommandKind {
    /// Creates a holder with its main account (no fields). Result: `holder`, `account`.
    CreateHolder = 0,
    /// Creates a subaccount (`holder`, `name`, `flag` = `mb_account_kind`). Result:
    /// `account`.
    CreateSubaccount = 1,
    /// Closes a subaccount (`account`).
    CloseSubaccount = 2,
    /// Credits an account (`account`, `currency`, `amount` in balance units). Admin.
    Deposit = 3,
    /// Debits an account (`account`, `currency`, `amount`). Admin.
    Withdraw = 4,
    /// Sets or clears de-risk (`account`, `flag` 1 on / 0 off). Admin.
    SetDerisk = 5,
    /// Sets a BLP account's minimum balance (`account`, `currency`, `amount`). Admin.
    SetBlpThreshold = 6,
    /// Moves funds between two accounts of `holder` (`account` = source,
    /// `other_account` = destination, `currency`, `amount`).
    Transfer = 7,
    /// Sets an account's default self-trade prevention (`account`, `stp`).
    SetStpMode = 8,
    /// Changes an instrument's state (`instrument`, `flag` = `mb_instrument_state`). Admin.
    SetInstrumentState = 9,
    /// Places an order (`account`, `instrument`, `side`, `order_type`, `time_in_force`,
    /// `price` in ticks (0 = none), `trigger_price`, `amount` in lots, `expire_at_ns`,
    /// `client_id` (zero = none), `stp`, `flag` 1 = reduce-only). Result: `order`.
    PlaceOrder = 10,
    /// Amends an open order (`account`, `order`, `amount` 0 = unchanged, `price` 0 =
    /// unchanged).
    AmendOrder = 11,
    /// Cancels an order (`account`, `order`).
    CancelOrder = 12,
    /// Cancels the newest open order with `client_id` (`account`, `client_id`).
    CancelByClientId = 13,
    /// Cancels many open orders of `account`: `flag` 0 all of them, 1 those in
    /// `instrument`, 2 the `list_len` handles at `order_list`, 3 the newest open order for
    /// each of the `list_len` client ids at `client_id_list`.
    CancelAll = 14,
    /// Sets a futures instrument's index price (`instrument`, `price`). Admin.
    SetIndexPrice = 15,
    /// Closes an account's futures positions against the book (`account`). Admin.
    Liquidate = 16,
    /// Moves time only: expiries, funding, dead-man switches (no fields).
    AdvanceTime = 17,
    /// Arms the dead-man switch of `account`: unless set again first, its open orders are
    /// cancelled once `amount` nanoseconds have passed; `amount` 0 turns it off.
    SetCancelAllAfter = 18,
    /// Places a one-cancels-the-other pair: the order fields are the first leg; the second
    /// leg shares `account`, `instrument`, `side` and `time_in_force` and takes
    /// `oco_order_type`, `oco_price`, `oco_trigger_price` and `oco_amount` (0 = `amount`).
    /// Result: `order` (first leg), `linked` (second leg).
    PlaceOco = 19,
    /// Places a bracket: the order fields are its entry; once the entry is done, a
    /// take-profit limit at `take_profit` and a stop-loss triggered at `stop_loss`
    /// (stop-limit at `stop_limit`, 0 = stop-market) are placed for what it filled.
    /// Result: `order` (the entry).
    PlaceBracket = 20,
}

impl MbCommandKind {
    fn from_raw(raw: u32) -> Option<Self> {
        use MbCommandKind as K;
        // Most frequent first: order entry and cancels.
        Some(match raw {
            10 => K::PlaceOrder,
            12 => K::CancelOrder,
            11 => K::AmendOrder,
            13 => K::CancelByClientId,
            14 => K::CancelAll,
            0 => K::CreateHolder,
            1 => K::CreateSubaccount,
            2 => K::CloseSubaccount,
            3 => K::Deposit,
            4 => K::Withdraw,
            5 => K::SetDerisk,
            6 => K::SetBlpThreshold,
            7 => K::Transfer,
            8 => K::SetStpMode,
            9 => K::SetInstrumentState,
            15 => K::SetIndexPrice,
            16 => K::Liquidate,
            17 => K::AdvanceTime,
            18 => K::SetCancelAllAfter,
            19 => K::PlaceOco,
            20 => K::PlaceBracket,
            _ => return None,
        })
    }
}

/// One command. Zero-initialise it and set the fields its kind reads (see
/// `mb_command_kind`), or use an `mb_cmd_*` constructor. Enumerations are carried as
/// plain integers and checked when the command is applied. The only pointer, `name`, is
/// read during the submit call and not kept (as the lists of a listed cancel).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbCommand {
    /// An `mb_command_kind`.
    pub kind: u32,
    /// Acting account (a transfer's source).
    pub account: u32,
    /// A transfer's destination.
    pub other_account: u32,
    /// Holder (subaccount creation, transfers).
    pub holder: u32,
    /// Instrument index.
    pub instrument: u16,
    /// Currency index.
    pub currency: u16,
    /// An `mb_side`.
    pub side: u32,
    /// An `mb_order_type`.
    pub order_type: u32,
    /// An `mb_time_in_force`.
    pub time_in_force: u32,
    /// An `mb_stp`.
    pub stp: u32,
    /// Kind-specific flag (see `mb_command_kind`).
    pub flag: u32,
    /// Price in ticks (0 = none).
    pub price: i64,
    /// Stop trigger in ticks (0 = none).
    pub trigger_price: i64,
    /// Lots for orders, balance units for funds.
    pub amount: i64,
    /// Expiry of a good-till-time order.
    pub expire_at_ns: i64,
    /// An existing order.
    pub order: MbOrderRef,
    /// Client order id (all zero = none).
    pub client_id: MbUuid,
    /// Subaccount name (NUL-terminated UTF-8, 1-64 bytes), read during the submit call.
    pub name: *const c_char,
    /// Orders of a listed cancel, read during the submit call.
    pub order_list: *const MbOrderRef,
    /// Client ids of a listed cancel, read during the submit call.
    pub client_id_list: *const MbUuid,
    /// Entries at `order_list` or `client_id_list`.
    pub list_len: usize,
    /// An `mb_trigger_ref`: what a trigger order watches.
    pub trigger_ref: u32,
    /// An `mb_trail_kind`: how `trail` is measured (trailing orders only).
    pub trail_kind: u32,
    /// A trailing order's distance from the best reference price seen.
    pub trail: i64,
    /// A trailing stop-limit's limit offset past its trigger, in ticks (0 allowed there;
    /// must be 0 on every other order).
    pub limit_offset: i64,
    /// An iceberg limit order's displayed amount in lots (0: not an iceberg).
    pub display: i64,
    /// A one-cancels-the-other pair's second leg: its `mb_order_type`.
    pub oco_order_type: u32,
    /// Its limit price in ticks (0 = none).
    pub oco_price: i64,
    /// Its trigger in ticks (0 = none).
    pub oco_trigger_price: i64,
    /// Its amount in lots (0 = the first leg's).
    pub oco_amount: i64,
    /// A bracket's take-profit limit price in ticks.
    pub take_profit: i64,
    /// A bracket's stop-loss trigger in ticks.
    pub stop_loss: i64,
    /// A bracket's stop-loss limit in ticks (0 = it enters as a market order).
    pub stop_limit: i64,
}

impl MbCommand {
    pub(crate) fn blank(kind: MbCommandKind) -> Self {
        Self {
            kind: kind as u32,
            account: 0,
            other_account: 0,
            holder: 0,
            instrument: 0,
            currency: 0,
            side: 0,
            order_type: 0,
            time_in_force: 0,
            stp: 0,
            flag: 0,
            price: 0,
            trigger_price: 0,
            amount: 0,
            expire_at_ns: 0,
            order: MbOrderRef::default(),
            client_id: MbUuid::default(),
            name: std::ptr::null(),
            order_list: std::ptr::null(),
            client_id_list: std::ptr::null(),
            list_len: 0,
            trigger_ref: 0,
            trail_kind: 0,
            trail: 0,
            limit_offset: 0,
            display: 0,
            oco_order_type: 0,
            oco_price: 0,
            oco_trigger_price: 0,
            oco_amount: 0,
            take_profit: 0,
            stop_loss: 0,
            stop_limit: 0,
        }
    }
}

/// Ids a successful command produced (zero where none).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MbResult {
    /// The order placed.
    pub order: MbOrderRef,
    /// The account created.
    pub account: u32,
    /// The holder created.
    pub holder: u32,
    /// Engine time the command was applied at.
    pub time_ns: i64,
    /// The second leg of a one-cancels-the-other pair placed.
    pub linked: MbOrderRef,
}

/// The status an applied command reports: OK, or, for an order accepted and ended at once
/// because its time in force forbade what the book offered, that refusal (the result still
/// names the order, whose history record says `FILLED_REJECTED` or the reason).
pub(crate) fn status_of(applied: &matchbook::Applied) -> Result<(), MbStatus> {
    status_of_rejected(applied.rejected)
}

/// [`status_of`] from the one field it reads.
pub(crate) fn status_of_rejected(rejected: Option<matchbook::EngineError>) -> Result<(), MbStatus> {
    match rejected {
        Some(e) => Err(crate::boundary::fail(
            MbStatus::from(e),
            format!("{e} (the order was accepted and ended at once)"),
        )),
        None => Ok(()),
    }
}

impl MbResult {
    pub(crate) fn of(applied: matchbook::Applied, time: Timestamp) -> Self {
        Self {
            order: applied.order.map(MbOrderRef::from).unwrap_or_default(),
            account: applied.account.map_or(0, |a| a.0),
            holder: applied.holder.map_or(0, |h| h.0),
            time_ns: time.0,
            linked: applied.linked.map(MbOrderRef::from).unwrap_or_default(),
        }
    }
}

fn bad(what: &str, raw: u32) -> MbStatus {
    fail(
        MbStatus::InvalidArgument,
        format!("{what} {raw} is not valid"),
    )
}

fn price(ticks: i64) -> Option<Price> {
    (ticks != 0).then_some(Price(ticks))
}

fn name_of(c: &MbCommand) -> Result<String, MbStatus> {
    // SAFETY: the caller's contract for `mb_*_submit`: `name` is NULL or NUL-terminated
    // for the duration of the call.
    unsafe { text(c.name, "name") }.map(str::to_owned)
}

/// The engine command an `mb_command` stands for; every enumeration checked.
pub(crate) fn to_command(c: &MbCommand) -> Result<Command, MbStatus> {
    use MbCommandKind as K;
    let kind = MbCommandKind::from_raw(c.kind).ok_or_else(|| bad("kind", c.kind))?;
    let account = AccountId(c.account);
    let currency = CurrencyId(c.currency);
    let instrument = InstrumentId(c.instrument);
    Ok(match kind {
        K::CreateHolder => Command::CreateHolder,
        K::CreateSubaccount => subaccount(c)?,
        K::CloseSubaccount => Command::CloseSubaccount { account },
        K::Deposit => Command::Deposit {
            account,
            currency,
            amount: c.amount,
        },
        K::Withdraw => Command::Withdraw {
            account,
            currency,
            amount: c.amount,
        },
        K::SetDerisk => Command::SetDerisk {
            account,
            on: c.flag != 0,
        },
        K::SetBlpThreshold => Command::SetBlpThreshold {
            account,
            currency,
            amount: c.amount,
        },
        K::Transfer => Command::Transfer {
            holder: HolderId(c.holder),
            source: account,
            destination: AccountId(c.other_account),
            currency,
            amount: c.amount,
        },
        K::SetStpMode => Command::SetStpMode {
            account,
            mode: stp_mode(c.stp)?,
        },
        K::SetInstrumentState => Command::SetInstrumentState {
            instrument,
            state: instrument_state(c.flag)?,
        },
        K::PlaceOrder => Command::PlaceOrder(new_order(c, account, instrument)?),
        K::PlaceOco => oco(c, account, instrument)?,
        K::PlaceBracket => Command::PlaceBracket {
            entry: new_order(c, account, instrument)?,
            exits: exits(c),
        },
        K::AmendOrder => Command::AmendOrder {
            account,
            order: c.order.into(),
            amount: (c.amount != 0).then_some(Qty(c.amount)),
            price: price(c.price),
        },
        K::CancelOrder => Command::CancelOrder {
            account,
            order: c.order.into(),
        },
        K::CancelByClientId => Command::CancelByClientId {
            account,
            client_id: (c.client_id.to_engine())
                .ok_or_else(|| fail(MbStatus::InvalidArgument, "client_id is zero"))?,
        },
        K::CancelAll => Command::CancelAll {
            account,
            scope: cancel_scope(c, instrument)?,
        },
        K::SetIndexPrice => Command::SetIndexPrice {
            instrument,
            price: Price(c.price),
        },
        K::Liquidate => Command::Liquidate { account },
        K::AdvanceTime => Command::AdvanceTime,
        K::SetCancelAllAfter => Command::SetCancelAllAfter {
            account,
            timeout: (u64::try_from(c.amount))
                .map_err(|_| fail(MbStatus::InvalidArgument, "a negative timeout".to_owned()))?,
        },
    })
}

/// A self-trade prevention mode from its C code.
fn stp_mode(raw: u32) -> Result<matchbook::StpMode, MbStatus> {
    MbStp::from_raw(raw)
        .and_then(MbStp::to_engine)
        .ok_or_else(|| bad("stp", raw))
}

/// A market's state from its C code.
fn instrument_state(raw: u32) -> Result<matchbook::InstrumentState, MbStatus> {
    Ok(MbInstrumentState::from_raw(raw)
        .ok_or_else(|| bad("instrument state", raw))?
        .into())
}

/// A subaccount's creation: its holder, name and kind.
fn subaccount(c: &MbCommand) -> Result<Command, MbStatus> {
    Ok(Command::CreateSubaccount {
        holder: HolderId(c.holder),
        name: name_of(c)?,
        kind: MbAccountKind::from_raw(c.flag)
            .ok_or_else(|| bad("account kind", c.flag))?
            .into(),
    })
}

/// A one-cancels-the-other pair: the command's order, and a second leg of the `oco_*`
/// type, prices and amount (the first's amount when zero), sharing the rest.
fn oco(c: &MbCommand, account: AccountId, instrument: InstrumentId) -> Result<Command, MbStatus> {
    let first = new_order(c, account, instrument)?;
    let second = NewOrder {
        order_type: MbOrderType::from_raw(c.oco_order_type)
            .ok_or_else(|| bad("order type", c.oco_order_type))?
            .into(),
        price: price(c.oco_price),
        trigger_price: price(c.oco_trigger_price),
        amount: if c.oco_amount == 0 {
            first.amount
        } else {
            Qty(c.oco_amount)
        },
        client_id: None,
        trail: None,
        limit_offset: None,
        display: None,
        ..first
    };
    Ok(Command::PlaceOco {
        first,
        second: Box::new(second),
    })
}

/// A bracket's exits: take-profit and stop-loss triggers, the stop-loss's limit (none
/// when zero: a stop-market exit).
fn exits(c: &MbCommand) -> BracketExits {
    BracketExits {
        take_profit: Price(c.take_profit),
        stop_loss: Price(c.stop_loss),
        stop_limit: price(c.stop_limit),
    }
}

/// What a cancel-all covers, by `flag`: everything, one instrument, a list of orders or
/// of client ids.
fn cancel_scope(c: &MbCommand, instrument: InstrumentId) -> Result<CancelScope, MbStatus> {
    Ok(match c.flag {
        0 => CancelScope::All,
        1 => CancelScope::Instrument(instrument),
        // SAFETY: the caller's contract for `mb_*_submit`: a list pointer is valid
        // for `list_len` entries during the call.
        2 => CancelScope::Orders(
            unsafe { list(c.order_list, c.list_len, "order_list")? }
                .iter()
                .map(|&o| o.into())
                .collect(),
        ),
        // SAFETY: as above.
        3 => CancelScope::ClientIds(
            unsafe { list(c.client_id_list, c.list_len, "client_id_list")? }
                .iter()
                .map(|id| id.to_engine().ok_or_else(|| bad("client id", 0)))
                .collect::<Result<_, _>>()?,
        ),
        other => return Err(bad("cancel-all flag", other)),
    })
}

/// An order entry from its command's fields.
fn new_order(
    c: &MbCommand,
    account: AccountId,
    instrument: InstrumentId,
) -> Result<NewOrder, MbStatus> {
    let order_type: OrderType = MbOrderType::from_raw(c.order_type)
        .ok_or_else(|| bad("order type", c.order_type))?
        .into();
    let trail =
        match MbTrailKind::from_raw(c.trail_kind).ok_or_else(|| bad("trail kind", c.trail_kind))? {
            MbTrailKind::None => None,
            MbTrailKind::Ticks => Some(Trail::Price(Price(c.trail))),
            MbTrailKind::Bps => Some(Trail::Bps(u32::try_from(c.trail).unwrap_or(u32::MAX))),
        };
    let trigger_ref = match MbTriggerRef::from_raw(c.trigger_ref)
        .ok_or_else(|| bad("trigger reference", c.trigger_ref))?
    {
        MbTriggerRef::LastPrice => TriggerRef::LastPrice,
        MbTriggerRef::MarkPrice => TriggerRef::MarkPrice,
    };
    let limit_offset = (order_type == OrderType::TrailingStopLimit || c.limit_offset != 0)
        .then_some(Price(c.limit_offset));
    Ok(NewOrder {
        account,
        instrument,
        side: MbSide::from_raw(c.side)
            .ok_or_else(|| bad("side", c.side))?
            .into(),
        order_type,
        time_in_force: MbTimeInForce::from_raw(c.time_in_force)
            .ok_or_else(|| bad("time in force", c.time_in_force))?
            .into(),
        price: price(c.price),
        trigger_price: price(c.trigger_price),
        trigger_ref,
        trail,
        limit_offset,
        display: (c.display != 0).then_some(Qty(c.display)),
        amount: Qty(c.amount),
        expire_at: (c.expire_at_ns != 0).then_some(Timestamp(c.expire_at_ns)),
        client_id: c.client_id.to_engine(),
        stp: MbStp::from_raw(c.stp)
            .ok_or_else(|| bad("stp", c.stp))?
            .to_engine(),
        reduce_only: c.flag != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_code_reads_back_as_itself_and_no_other_code_does() {
        let mut known = 0;
        for raw in 0..64u32 {
            if let Some(kind) = MbCommandKind::from_raw(raw) {
                assert_eq!(kind as u32, raw);
                known += 1;
            }
        }
        assert_eq!(known, 21, "every kind is reachable");
    }
}
