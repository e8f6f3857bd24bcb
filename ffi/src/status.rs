//! `mb_status`: one C enum for every outcome, with the engine's stable error codes (1xxx
//! input, 2xxx funds and risk, 3xxx matching, 4xxx accounts) and the ABI's own (9xxx),
//! mapped once from `EngineError`.

use matchbook::EngineError;

/// Outcome of every call.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbStatus {
    /// Success.
    Ok = 0,
    /// Amount is zero or negative.
    InvalidAmount = 1001,
    /// Price is zero or negative.
    InvalidPrice = 1002,
    /// A limit or stop order without a price.
    MissingPrice = 1003,
    /// Stop trigger missing or misplaced.
    InvalidTriggerPrice = 1004,
    /// Price outside the instrument's range.
    PriceOutOfRange = 1005,
    /// Order value below the instrument's min_size.
    MinSizeNotSatisfied = 1006,
    /// Invalid expiry time.
    InvalidExpiry = 1007,
    /// Time in force not allowed for this order type.
    InvalidTimeInForce = 1008,
    /// No such instrument.
    UnknownInstrument = 1009,
    /// An amend that changes nothing.
    EmptyAmend = 1010,
    /// No such currency.
    UnknownCurrency = 1011,
    /// Invalid account name.
    InvalidAccountName = 1012,
    /// Not a futures instrument.
    NotFutures = 1013,
    /// A time past the engine's horizon (2100-01-01).
    TimeOutOfRange = 1014,
    /// An order amount above the engine's largest.
    AmountTooLarge = 1015,
    /// A trailing order without a valid trail or limit offset, or either on another type.
    InvalidTrail = 1016,
    /// A mark-price trigger on a spot market or on an order without a trigger.
    InvalidTriggerReference = 1017,
    /// An iceberg display that is not positive, not below the amount, or on an order that
    /// cannot rest.
    InvalidDisplay = 1018,
    /// An OCO pair whose legs differ in account, instrument or side or include a market or
    /// immediate order; a bracket whose exits are on the wrong side of each other.
    InvalidContingent = 1019,
    /// Not enough available balance or margin.
    InsufficientFunds = 2001,
    /// A transfer larger than the source balance.
    InsufficientBalance = 2002,
    /// A transfer below a BLP account's minimum.
    BelowBlpThreshold = 2003,
    /// The account is in de-risk.
    AccountInDerisk = 2004,
    /// A reduce-only order that would increase the position.
    ReduceOnlyWouldIncrease = 2005,
    /// A deposit or transfer past the balance cap of one account in one currency.
    BalanceLimitExceeded = 2006,
    /// Fill-or-kill that cannot fill completely.
    InsufficientLiquidity = 3001,
    /// Post-only order that would take.
    PostOnlyWouldTake = 3002,
    /// Instrument not trading.
    InstrumentNotTrading = 3003,
    /// Instrument accepts post-only orders only.
    OnlyPostOnlyAllowed = 3004,
    /// No such open order.
    OrderNotFound = 3005,
    /// Open-order limit reached.
    MaxOpenOrdersExceeded = 3006,
    /// Amend below the filled amount.
    AmendBelowFilled = 3007,
    /// A trailing order in a market with no reference price yet.
    NoReferencePrice = 3008,
    /// No such account.
    UnknownAccount = 4001,
    /// No such holder.
    UnknownHolder = 4002,
    /// Source and destination are the same.
    SameAccount = 4003,
    /// Not the caller's account.
    PermissionDenied = 4004,
    /// Transfers to or from the instant-trade account.
    InstantTradeAccount = 4005,
    /// The account is closed.
    AccountClosed = 4006,
    /// The main account cannot be closed.
    CannotCloseMain = 4007,
    /// Account name in use.
    AccountNameTaken = 4008,
    /// Not a BLP account.
    NotBlpAccount = 4009,
    /// A required pointer was NULL.
    NullArgument = 9001,
    /// The caller's buffer is too small; `*len_out` says how much is needed.
    BufferTooSmall = 9002,
    /// A string argument is not UTF-8, not a known code, or not a valid decimal.
    InvalidArgument = 9003,
    /// The library panicked; the handle the call used is poisoned (every later call on it
    /// answers this status): free it.
    Panic = 9004,
    /// The thread-safe handle's queue is full; try again.
    Busy = 9005,
    /// The thread-safe handle's engine stopped (freed, or its thread failed).
    Stopped = 9006,
    /// A candle or ticker query on an engine created without market data.
    MarketDataOff = 9007,
    /// A configuration that cannot build an engine (syntax, values, reference data).
    InvalidConfig = 9008,
    /// The data directory of a durable engine: a journal or snapshot write failed, the
    /// journal is damaged, or the directory was written under another configuration. A
    /// command that failed this way was not applied.
    Storage = 9009,
    /// An event poll on a handle whose events are dropped (`mb_config_set_keep_events(config,
    /// 0)`, or a session opened with `keep_events` 0).
    EventsOff = 9010,
    /// An `mb_engine` or `mb_session` called from a second thread while a call on another
    /// is still inside it: refused, nothing done (each is used by one thread at a time).
    InUse = 9011,
}

impl From<matchbook::runtime::RuntimeError> for MbStatus {
    fn from(e: matchbook::runtime::RuntimeError) -> Self {
        use matchbook::runtime::RuntimeError as R;
        match e {
            // Try again later, as when the queue is full.
            R::Busy | R::LogUnavailable | R::NotLeader => Self::Busy,
            R::Stopped | R::Failed => Self::Stopped,
        }
    }
}

impl From<EngineError> for MbStatus {
    fn from(e: EngineError) -> Self {
        use EngineError as E;
        match e {
            E::InvalidAmount => Self::InvalidAmount,
            E::InvalidPrice => Self::InvalidPrice,
            E::MissingPrice => Self::MissingPrice,
            E::InvalidTriggerPrice => Self::InvalidTriggerPrice,
            E::PriceOutOfRange => Self::PriceOutOfRange,
            E::MinSizeNotSatisfied => Self::MinSizeNotSatisfied,
            E::InvalidExpiry => Self::InvalidExpiry,
            E::InvalidTimeInForce => Self::InvalidTimeInForce,
            E::UnknownInstrument => Self::UnknownInstrument,
            E::EmptyAmend => Self::EmptyAmend,
            E::UnknownCurrency => Self::UnknownCurrency,
            E::InvalidAccountName => Self::InvalidAccountName,
            E::NotFutures => Self::NotFutures,
            E::TimeOutOfRange => Self::TimeOutOfRange,
            E::AmountTooLarge => Self::AmountTooLarge,
            E::BalanceLimitExceeded => Self::BalanceLimitExceeded,
            E::InvalidTrail => Self::InvalidTrail,
            E::NoReferencePrice => Self::NoReferencePrice,
            E::InvalidTriggerReference => Self::InvalidTriggerReference,
            E::InvalidDisplay => Self::InvalidDisplay,
            E::InvalidContingent => Self::InvalidContingent,
            E::InsufficientFunds => Self::InsufficientFunds,
            E::InsufficientBalance { .. } => Self::InsufficientBalance,
            E::BelowBlpThreshold => Self::BelowBlpThreshold,
            E::AccountInDerisk => Self::AccountInDerisk,
            E::ReduceOnlyWouldIncrease => Self::ReduceOnlyWouldIncrease,
            E::InsufficientLiquidity => Self::InsufficientLiquidity,
            E::PostOnlyWouldTake => Self::PostOnlyWouldTake,
            E::InstrumentNotTrading => Self::InstrumentNotTrading,
            E::OnlyPostOnlyAllowed => Self::OnlyPostOnlyAllowed,
            E::OrderNotFound => Self::OrderNotFound,
            E::MaxOpenOrdersExceeded => Self::MaxOpenOrdersExceeded,
            E::AmendBelowFilled => Self::AmendBelowFilled,
            E::UnknownAccount => Self::UnknownAccount,
            E::UnknownHolder => Self::UnknownHolder,
            E::SameAccount => Self::SameAccount,
            E::PermissionDenied => Self::PermissionDenied,
            E::InstantTradeAccount => Self::InstantTradeAccount,
            E::AccountClosed => Self::AccountClosed,
            E::CannotCloseMain => Self::CannotCloseMain,
            E::AccountNameTaken => Self::AccountNameTaken,
            E::NotBlpAccount => Self::NotBlpAccount,
        }
    }
}

/// Every engine error, for the name table (field values do not matter for names).
const ENGINE_ERRORS: [EngineError; 42] = {
    use EngineError as E;
    [
        E::InvalidAmount,
        E::InvalidPrice,
        E::MissingPrice,
        E::InvalidTriggerPrice,
        E::PriceOutOfRange,
        E::MinSizeNotSatisfied,
        E::InvalidExpiry,
        E::InvalidTimeInForce,
        E::UnknownInstrument,
        E::EmptyAmend,
        E::UnknownCurrency,
        E::InvalidAccountName,
        E::NotFutures,
        E::TimeOutOfRange,
        E::AmountTooLarge,
        E::BalanceLimitExceeded,
        E::InvalidTrail,
        E::NoReferencePrice,
        E::InvalidTriggerReference,
        E::InvalidDisplay,
        E::InvalidContingent,
        E::InsufficientFunds,
        E::InsufficientBalance {
            account: matchbook::AccountId(0),
            currency: matchbook::CurrencyId(0),
            available: 0,
            requested: 0,
        },
        E::BelowBlpThreshold,
        E::AccountInDerisk,
        E::ReduceOnlyWouldIncrease,
        E::InsufficientLiquidity,
        E::PostOnlyWouldTake,
        E::InstrumentNotTrading,
        E::OnlyPostOnlyAllowed,
        E::OrderNotFound,
        E::MaxOpenOrdersExceeded,
        E::AmendBelowFilled,
        E::UnknownAccount,
        E::UnknownHolder,
        E::SameAccount,
        E::PermissionDenied,
        E::InstantTradeAccount,
        E::AccountClosed,
        E::CannotCloseMain,
        E::AccountNameTaken,
        E::NotBlpAccount,
    ]
};

impl std::fmt::Display for MbStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name().to_string_lossy())
    }
}

/// The ABI's own statuses (the rest are the engine's).
const OWN: [MbStatus; 12] = [
    MbStatus::Ok,
    MbStatus::NullArgument,
    MbStatus::BufferTooSmall,
    MbStatus::InvalidArgument,
    MbStatus::Panic,
    MbStatus::Busy,
    MbStatus::Stopped,
    MbStatus::MarketDataOff,
    MbStatus::InvalidConfig,
    MbStatus::Storage,
    MbStatus::EventsOff,
    MbStatus::InUse,
];

impl MbStatus {
    /// The status with numeric code `code`, if any.
    pub fn from_code(code: i32) -> Option<Self> {
        Self::all().find(|s| *s as i32 == code)
    }

    /// Every status, the ABI's own first.
    fn all() -> impl Iterator<Item = MbStatus> {
        OWN.into_iter()
            .chain(ENGINE_ERRORS.into_iter().map(MbStatus::from))
    }

    /// The status's name as a NUL-terminated C string: its enumerator in the header less
    /// the `MB_STATUS_` prefix (`PRICE_OUT_OF_RANGE`), distinct for every status.
    pub fn name(self) -> &'static std::ffi::CStr {
        static NAMES: std::sync::OnceLock<Vec<(MbStatus, std::ffi::CString)>> =
            std::sync::OnceLock::new();
        let names = NAMES.get_or_init(|| {
            Self::all()
                .filter_map(|s| {
                    let name = screaming_snake(&format!("{s:?}"));
                    std::ffi::CString::new(name).ok().map(|name| (s, name))
                })
                .collect()
        });
        names
            .iter()
            .find(|(status, _)| *status == self)
            .map_or(c"UNKNOWN", |(_, name)| name.as_c_str())
    }

    /// The code the engine's other adapters (REST, Python) report for this status, which
    /// several statuses may share (`INVALID_PRICE` for 1002 and 1005); the ABI's own
    /// statuses report their name.
    pub fn wire_code(self) -> &'static std::ffi::CStr {
        static CODES: std::sync::OnceLock<Vec<(MbStatus, std::ffi::CString)>> =
            std::sync::OnceLock::new();
        let codes = CODES.get_or_init(|| {
            ENGINE_ERRORS
                .iter()
                .filter_map(|&e| {
                    std::ffi::CString::new(e.as_str())
                        .ok()
                        .map(|code| (MbStatus::from(e), code))
                })
                .collect()
        });
        codes
            .iter()
            .find(|(status, _)| *status == self)
            .map_or_else(|| self.name(), |(_, code)| code.as_c_str())
    }
}

/// `PriceOutOfRange` as `PRICE_OUT_OF_RANGE` (cbindgen's spelling of the enumerators).
fn screaming_snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 8);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}
