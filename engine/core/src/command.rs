//! Commands: everything that can change engine state. A command plus the time it carries is
//! the unit of the journal and of replay.

use crate::account::AccountKind;
use crate::fixed::{Price, Qty};
use crate::ids::{AccountId, CurrencyId, HolderId, InstrumentId, OrderRef, Uuid};
use crate::order::{BracketExits, NewOrder, StpMode};
use crate::refdata::InstrumentState;

/// Which open orders a cancel-all command covers. Unknown or foreign ids in a list are
/// skipped, so the command cancels exactly the listed orders that are open and owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelScope {
    /// Every open order of the account.
    All,
    /// Every open order of the account in one instrument.
    Instrument(InstrumentId),
    /// The listed orders.
    Orders(Vec<OrderRef>),
    /// The most recent open order for each listed client id.
    ClientIds(Vec<Uuid>),
}

/// A state-changing request.
#[derive(Debug, Clone, PartialEq, Eq)]
// A tag byte of its own: left to the compiler, the variant was encoded in the spare
// values of a 128-bit field, and every `Engine::apply` spent some 10 instructions
// decoding it before the dispatch (the host as many building it).
#[repr(u8)]
pub enum Command {
    /// Creates a holder with its main account.
    CreateHolder,
    /// Creates a subaccount under an existing holder.
    CreateSubaccount {
        /// Owner.
        holder: HolderId,
        /// Name, unique within the holder (1-64 printable characters).
        name: String,
        /// Kind.
        kind: AccountKind,
    },
    /// Closes a subaccount: cancels its open orders; it stays listed.
    CloseSubaccount {
        /// Account.
        account: AccountId,
    },
    /// Credits an account (admin). Amounts are in balance units of the currency.
    Deposit {
        /// Account.
        account: AccountId,
        /// Currency.
        currency: CurrencyId,
        /// Positive amount.
        amount: i64,
    },
    /// Debits an account's available balance (admin).
    Withdraw {
        /// Account.
        account: AccountId,
        /// Currency.
        currency: CurrencyId,
        /// Positive amount.
        amount: i64,
    },
    /// Sets or clears an account's de-risk state (admin).
    SetDerisk {
        /// Account.
        account: AccountId,
        /// In de-risk or not.
        on: bool,
    },
    /// Sets the minimum balance a BLP account keeps in one currency (admin).
    SetBlpThreshold {
        /// A BLP account.
        account: AccountId,
        /// Currency.
        currency: CurrencyId,
        /// Minimum balance after any transfer out.
        amount: i64,
    },
    /// Moves one currency between two accounts of the same holder.
    Transfer {
        /// The caller's holder; both accounts must belong to it.
        holder: HolderId,
        /// Account debited.
        source: AccountId,
        /// Account credited.
        destination: AccountId,
        /// Currency.
        currency: CurrencyId,
        /// Positive amount in balance units.
        amount: i64,
    },
    /// Sets an account's default self-trade prevention mode.
    SetStpMode {
        /// Account.
        account: AccountId,
        /// New default.
        mode: StpMode,
    },
    /// Changes which order entry an instrument accepts.
    SetInstrumentState {
        /// Market.
        instrument: InstrumentId,
        /// New state.
        state: InstrumentState,
    },
    /// Order entry.
    PlaceOrder(NewOrder),
    /// Two orders of one account, instrument and side, each cancelling the other: the
    /// first fill or trigger of one leg, or its end for any other reason, cancels the other.
    /// Neither may be a market order or take liquidity when placed.
    PlaceOco {
        /// First leg (its number is the command's order).
        first: NewOrder,
        /// Second leg (boxed: commands travel through queues, and an OCO is rare enough to
        /// pay for the indirection rather than make every command two orders wide).
        second: Box<NewOrder>,
    },
    /// An entry order whose exits are placed, as a one-cancels-the-other pair sized to what
    /// it filled, once it is done: filled, or ended by the market (an IOC or market
    /// remainder, an expiry) after filling part. Cancelled by its owner, it places none.
    PlaceBracket {
        /// The entry.
        entry: NewOrder,
        /// Its exits.
        exits: BracketExits,
    },
    /// Changes an open order's total amount and/or price atomically.
    AmendOrder {
        /// Owner (must match).
        account: AccountId,
        /// The order.
        order: OrderRef,
        /// New total amount (must exceed the filled amount).
        amount: Option<Qty>,
        /// New limit price.
        price: Option<Price>,
    },
    /// Cancels one order by its id.
    CancelOrder {
        /// Owner (must match).
        account: AccountId,
        /// The order.
        order: OrderRef,
    },
    /// Cancels the account's most recent open order carrying `client_id`.
    CancelByClientId {
        /// Owner.
        account: AccountId,
        /// Caller's tracking id.
        client_id: Uuid,
    },
    /// Cancels many orders of one account.
    CancelAll {
        /// Owner.
        account: AccountId,
        /// Which orders.
        scope: CancelScope,
    },
    /// Sets a futures instrument's index price (admin): the mark price is clamped around
    /// it and funding premiums are measured against it.
    SetIndexPrice {
        /// A futures instrument.
        instrument: InstrumentId,
        /// Index price.
        price: Price,
    },
    /// Closes an account's futures positions against the book (admin or risk): its open
    /// futures orders are cancelled and each position is reduced by a market order.
    Liquidate {
        /// Account.
        account: AccountId,
    },
    /// Moves time forward only: expires due good-till-time orders and runs due funding and
    /// futures expiries.
    AdvanceTime,
    /// Arms (or re-arms) an account's dead-man switch: unless another arrives first, every
    /// open order of the account is cancelled once `timeout` nanoseconds have passed;
    /// `timeout` 0 disarms it.
    SetCancelAllAfter {
        /// Account.
        account: AccountId,
        /// Nanoseconds from now (0: off).
        timeout: u64,
    },
}

impl Command {
    /// The account a command acts for (a transfer's source), if any: what a `Rejected`
    /// event names.
    pub fn account(&self) -> Option<AccountId> {
        match self {
            Command::PlaceOrder(o)
            | Command::PlaceOco { first: o, .. }
            | Command::PlaceBracket { entry: o, .. } => Some(o.account),
            Command::SetStpMode { account, .. }
            | Command::CloseSubaccount { account }
            | Command::Deposit { account, .. }
            | Command::Withdraw { account, .. }
            | Command::SetDerisk { account, .. }
            | Command::SetBlpThreshold { account, .. }
            | Command::Transfer {
                source: account, ..
            }
            | Command::AmendOrder { account, .. }
            | Command::CancelOrder { account, .. }
            | Command::CancelByClientId { account, .. }
            | Command::CancelAll { account, .. }
            | Command::Liquidate { account }
            | Command::SetCancelAllAfter { account, .. } => Some(*account),
            Command::CreateHolder
            | Command::CreateSubaccount { .. }
            | Command::SetInstrumentState { .. }
            | Command::SetIndexPrice { .. }
            | Command::AdvanceTime => None,
        }
    }

    /// The caller's tracking id a command carries, if any.
    pub fn client_id(&self) -> Option<Uuid> {
        match self {
            Command::PlaceOrder(o)
            | Command::PlaceOco { first: o, .. }
            | Command::PlaceBracket { entry: o, .. } => o.client_id,
            Command::CancelByClientId { client_id, .. } => Some(*client_id),
            _ => None,
        }
    }
}
