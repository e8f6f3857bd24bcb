//! The engine's rejection reasons. Each variant has a stable numeric code grouped by
//! subsystem (1xxx input, 2xxx funds and risk, 3xxx matching, 4xxx accounts); the C status
//! enum, the Python exceptions and the REST error strings are each one mapping from this enum.

use crate::ids::{AccountId, CurrencyId};

/// Why the engine refused a command. A refused command changes no state.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error, serde::Serialize, serde::Deserialize,
)]
pub enum EngineError {
    /// Amount is zero or negative.
    #[error("amount must be positive")]
    InvalidAmount,
    /// Price is zero or negative.
    #[error("price must be positive")]
    InvalidPrice,
    /// A limit or stop order without a price.
    #[error("price is required")]
    MissingPrice,
    /// A stop order without a trigger price, or a trigger on another order type.
    #[error("trigger price is required for stop orders only")]
    InvalidTriggerPrice,
    /// Price outside the instrument's min_price..=max_price.
    #[error("price outside the instrument's range")]
    PriceOutOfRange,
    /// Amount x price below the instrument's minimum order value.
    #[error("order value below the instrument's min_size")]
    MinSizeNotSatisfied,
    /// Good-till-time without a future expiry, or an expiry on another time in force.
    #[error("invalid expiry time")]
    InvalidExpiry,
    /// Time in force not allowed for this order type.
    #[error("time in force not allowed for this order type")]
    InvalidTimeInForce,
    /// No such instrument.
    #[error("unknown instrument")]
    UnknownInstrument,
    /// An amend that changes nothing was asked for.
    #[error("amend needs a new amount or price")]
    EmptyAmend,
    /// Fill-or-kill that the book cannot fill completely.
    #[error("not enough liquidity to fill the order completely")]
    InsufficientLiquidity,
    /// Post-only order (or amend) that would take liquidity.
    #[error("post-only order would take liquidity")]
    PostOnlyWouldTake,
    /// Instrument suspended or closed.
    #[error("instrument does not accept new orders")]
    InstrumentNotTrading,
    /// Instrument in POST_ONLY state and the order is not post-only.
    #[error("instrument accepts post-only orders only")]
    OnlyPostOnlyAllowed,
    /// No such open order for this account.
    #[error("order not found")]
    OrderNotFound,
    /// The holder already has the maximum number of open orders.
    #[error("maximum number of open orders reached")]
    MaxOpenOrdersExceeded,
    /// Amend to an amount at or below what has already filled.
    #[error("new amount must exceed the filled amount")]
    AmendBelowFilled,
    /// No such account.
    #[error("unknown account")]
    UnknownAccount,
    /// No such holder.
    #[error("unknown account holder")]
    UnknownHolder,
    /// No such currency.
    #[error("unknown currency")]
    UnknownCurrency,
    /// A subaccount name that is empty, too long or not printable.
    #[error("invalid account name")]
    InvalidAccountName,
    /// Not enough available balance for an order's reservation or a withdrawal.
    #[error("insufficient funds")]
    InsufficientFunds,
    /// A transfer larger than the source's available balance.
    #[error("account {account:?} has {available} of currency {currency:?}, {requested} requested")]
    InsufficientBalance {
        /// Source account.
        account: AccountId,
        /// Currency.
        currency: CurrencyId,
        /// Its available balance (balance units).
        available: i64,
        /// Amount asked for (balance units).
        requested: i64,
    },
    /// A transfer that would take a BLP account below its minimum balance.
    #[error("transfer would take the account below its minimum balance")]
    BelowBlpThreshold,
    /// The source account is in de-risk.
    #[error("account is in de-risk state")]
    AccountInDerisk,
    /// Source and destination are the same account.
    #[error("source and destination account ids cannot be the same")]
    SameAccount,
    /// An account the caller does not own.
    #[error("permission denied")]
    PermissionDenied,
    /// A transfer touching the instant-trade account.
    #[error("transfers to or from the instant-trade account are not allowed")]
    InstantTradeAccount,
    /// A closed account: no orders, deposits or incoming transfers.
    #[error("account is closed")]
    AccountClosed,
    /// The main account cannot be closed.
    #[error("the main account cannot be closed")]
    CannotCloseMain,
    /// The holder already has an account with this name.
    #[error("account name already in use")]
    AccountNameTaken,
    /// A BLP threshold on an account that is not a BLP account.
    #[error("not a BLP account")]
    NotBlpAccount,
    /// A reduce-only order that would open or increase a position (or one on a spot
    /// market, or one that could rest).
    #[error("reduce-only order would increase the position")]
    ReduceOnlyWouldIncrease,
    /// A futures command on an instrument that is not a future.
    #[error("not a futures instrument")]
    NotFutures,
    /// A command time past [`crate::limits::TIME_HORIZON`].
    #[error("time is past the engine's horizon (2100-01-01T00:00:00Z)")]
    TimeOutOfRange,
    /// An order amount above [`crate::limits::MAX_ORDER_LOTS`].
    #[error("amount above the largest order the engine accepts")]
    AmountTooLarge,
    /// A deposit or transfer that would take a balance past
    /// [`crate::limits::MAX_BALANCE`].
    #[error("the balance would pass the largest one an account may hold")]
    BalanceLimitExceeded,
    /// A trailing order without a valid trail (a positive price distance in range, or
    /// 1..=9,999 basis points), a trailing stop-limit without a valid limit offset, or
    /// either on another order type.
    #[error("invalid trail or limit offset for this order type")]
    InvalidTrail,
    /// A trailing order in a market with no reference price yet (no trade, or no mark).
    #[error("no reference price to trail yet")]
    NoReferencePrice,
    /// A mark-price trigger on a spot market or on an order that has no trigger.
    #[error("trigger reference not available for this order or instrument")]
    InvalidTriggerReference,
    /// An iceberg display amount that is not positive, not below the order's amount, or on
    /// an order that cannot rest (only resting limit orders hide part of their amount).
    #[error("display amount must be positive, below the amount, on a resting limit order")]
    InvalidDisplay,
    /// A one-cancels-the-other pair whose legs differ in account, instrument or side, or
    /// include a market or immediate order; a bracket whose exits are on the wrong side of
    /// each other.
    #[error("invalid one-cancels-the-other pair or bracket")]
    InvalidContingent,
}

impl EngineError {
    /// Stable numeric code.
    pub const fn code(self) -> u16 {
        match self {
            Self::InvalidAmount => 1001,
            Self::InvalidPrice => 1002,
            Self::MissingPrice => 1003,
            Self::InvalidTriggerPrice => 1004,
            Self::PriceOutOfRange => 1005,
            Self::MinSizeNotSatisfied => 1006,
            Self::InvalidExpiry => 1007,
            Self::InvalidTimeInForce => 1008,
            Self::UnknownInstrument => 1009,
            Self::EmptyAmend => 1010,
            Self::InsufficientLiquidity => 3001,
            Self::PostOnlyWouldTake => 3002,
            Self::InstrumentNotTrading => 3003,
            Self::OnlyPostOnlyAllowed => 3004,
            Self::OrderNotFound => 3005,
            Self::MaxOpenOrdersExceeded => 3006,
            Self::AmendBelowFilled => 3007,
            Self::UnknownCurrency => 1011,
            Self::InvalidAccountName => 1012,
            Self::InsufficientFunds => 2001,
            Self::InsufficientBalance { .. } => 2002,
            Self::BelowBlpThreshold => 2003,
            Self::AccountInDerisk => 2004,
            Self::UnknownAccount => 4001,
            Self::UnknownHolder => 4002,
            Self::SameAccount => 4003,
            Self::PermissionDenied => 4004,
            Self::InstantTradeAccount => 4005,
            Self::AccountClosed => 4006,
            Self::CannotCloseMain => 4007,
            Self::AccountNameTaken => 4008,
            Self::NotBlpAccount => 4009,
            Self::ReduceOnlyWouldIncrease => 2005,
            Self::NotFutures => 1013,
            Self::TimeOutOfRange => 1014,
            Self::AmountTooLarge => 1015,
            Self::BalanceLimitExceeded => 2006,
            Self::InvalidTrail => 1016,
            Self::NoReferencePrice => 3008,
            Self::InvalidTriggerReference => 1017,
            Self::InvalidDisplay => 1018,
            Self::InvalidContingent => 1019,
        }
    }

    /// Upper-case code string used on the wire (addendum's names where one fits).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidAmount => "INVALID_AMOUNT",
            Self::InvalidPrice => "INVALID_PRICE",
            Self::MissingPrice => "MISSING_PRICE",
            Self::InvalidTriggerPrice => "INVALID_TRIGGER_PRICE",
            Self::PriceOutOfRange => "INVALID_PRICE",
            Self::MinSizeNotSatisfied => "MIN_SIZE_NOT_SATISFIED",
            Self::InvalidExpiry => "INVALID_EXPIRY",
            Self::InvalidTimeInForce => "INVALID_TIME_IN_FORCE",
            Self::UnknownInstrument => "INVALID_INSTRUMENT_CODE",
            Self::EmptyAmend => "INVALID_AMEND",
            Self::InsufficientLiquidity => "INSUFFICIENT_LIQUIDITY",
            Self::PostOnlyWouldTake => "POST_ONLY_WOULD_TAKE",
            Self::InstrumentNotTrading => "INSTRUMENT_NOT_TRADING",
            Self::OnlyPostOnlyAllowed => "ONLY_POST_ONLY_ALLOWED",
            Self::OrderNotFound => "ORDER_NOT_FOUND",
            Self::MaxOpenOrdersExceeded => "MAX_OPEN_ORDERS_EXCEEDED",
            Self::AmendBelowFilled => "INVALID_AMOUNT",
            Self::UnknownAccount => "ACCOUNT_NOT_FOUND",
            Self::UnknownHolder => "HOLDER_NOT_FOUND",
            Self::UnknownCurrency => "INVALID_CURRENCY",
            Self::InvalidAccountName => "INVALID_ACCOUNT_NAME",
            Self::InsufficientFunds => "INSUFFICIENT_FUNDS",
            Self::InsufficientBalance { .. } => "INSUFFICIENT_BALANCE",
            Self::BelowBlpThreshold => "BLP_THRESHOLD_VIOLATED",
            Self::AccountInDerisk => "USER_MGMT_USER_IN_DERISK",
            Self::SameAccount => "SAME_ACCOUNT",
            Self::PermissionDenied => "MISSING_PERMISSION",
            Self::InstantTradeAccount => "INSTANT_TRADE_ACCOUNT",
            Self::AccountClosed => "ACCOUNT_CLOSED",
            Self::CannotCloseMain => "CANNOT_CLOSE_MAIN_ACCOUNT",
            Self::AccountNameTaken => "ACCOUNT_NAME_TAKEN",
            Self::NotBlpAccount => "NOT_BLP_ACCOUNT",
            Self::ReduceOnlyWouldIncrease => "REDUCE_ONLY_WOULD_INCREASE",
            Self::NotFutures => "INVALID_INSTRUMENT_CODE",
            Self::TimeOutOfRange => "TIME_OUT_OF_RANGE",
            Self::AmountTooLarge => "INVALID_AMOUNT",
            Self::BalanceLimitExceeded => "BALANCE_LIMIT_EXCEEDED",
            Self::InvalidTrail => "INVALID_TRAIL",
            Self::NoReferencePrice => "NO_REFERENCE_PRICE",
            Self::InvalidTriggerReference => "INVALID_TRIGGER_REFERENCE",
            Self::InvalidDisplay => "INVALID_DISPLAY",
            Self::InvalidContingent => "INVALID_CONTINGENT_ORDER",
        }
    }
}
