//! What a trading system looks up rather than guesses: every account with its holder, name
//! and kind, an instrument's full description, and the exchange's fee account. Read from
//! the engine for both handles; the `mb_engine_*` / `mb_session_*` exports are at the end.

use std::ffi::c_char;

use matchbook::{AccountKind, AccountState, Engine, HolderId};

use crate::boundary::{fail, fill, guard, out};
use crate::command::MB_MAX_NAME;
use crate::engine::MbEngine;
use crate::query_exports::QueryHandle;
use crate::runtime::MbSession;
use crate::status::MbStatus;
use crate::types::{MbAccountKind, MbInstrumentState};

/// Longest code or decimal text of an `mb_instrument_info` field, with its NUL.
pub const MB_MAX_CODE: usize = 32;

/// One account.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbAccountInfo {
    /// Account id.
    pub account: u32,
    /// Its holder.
    pub holder: u32,
    /// `main` or the subaccount's name (NUL-terminated).
    pub name: [c_char; MB_MAX_NAME],
    /// An `mb_account_kind`.
    pub kind: u32,
    /// Nonzero once closed (closed accounts stay listed).
    pub closed: u8,
    /// Nonzero while in de-risk.
    pub derisk: u8,
}

/// An instrument as configured and as it stands.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbInstrumentInfo {
    /// Code such as `BTC_EUR` (NUL-terminated).
    pub code: [c_char; MB_MAX_CODE],
    /// `SPOT`, `PERP`, `DATED_FUTURE` or `EQUITY_FUTURE` (NUL-terminated).
    pub kind: [c_char; MB_MAX_CODE],
    /// Base currency index.
    pub base: u16,
    /// Quote currency index.
    pub quote: u16,
    /// Decimals of amounts (a lot is 10^-amount_precision).
    pub amount_precision: u8,
    /// Decimals of prices (a tick is 10^-market_precision).
    pub market_precision: u8,
    /// An `mb_instrument_state`.
    pub state: u32,
    /// Minimum order value, price x amount at ticks x lots scale.
    pub min_size: i64,
    /// Lowest price in ticks.
    pub min_price: i64,
    /// Highest price in ticks.
    pub max_price: i64,
    /// Nonzero for a future (the fields below are then set).
    pub is_future: u8,
    /// Initial margin, percent of notional (decimal text, e.g. `10`).
    pub initial_margin_percentage: [c_char; MB_MAX_CODE],
    /// Maintenance margin, percent of notional (decimal text).
    pub maintenance_margin_percentage: [c_char; MB_MAX_CODE],
    /// Minutes per funding period (0: no funding, a dated future).
    pub funding_period_minutes: u32,
    /// Expiry `YYYY-MM-DD` of a dated future (empty otherwise).
    pub contract_expiry_date: [c_char; MB_MAX_CODE],
}

/// `text` as a NUL-terminated C array (cut to fit; codes and decimals are far shorter).
fn c_text<const N: usize>(text: &str) -> [c_char; N] {
    let mut out = [0 as c_char; N];
    for (slot, byte) in out.iter_mut().zip(text.bytes().take(N - 1)) {
        *slot = byte as c_char;
    }
    out
}

fn kind_of(kind: AccountKind) -> MbAccountKind {
    match kind {
        AccountKind::Regular => MbAccountKind::Regular,
        AccountKind::InstantTrade => MbAccountKind::InstantTrade,
        AccountKind::Blp => MbAccountKind::Blp,
    }
}

fn state_of(state: matchbook::InstrumentState) -> MbInstrumentState {
    match state {
        matchbook::InstrumentState::Active => MbInstrumentState::Active,
        matchbook::InstrumentState::PostOnly => MbInstrumentState::PostOnly,
        matchbook::InstrumentState::Suspended => MbInstrumentState::Suspended,
        matchbook::InstrumentState::Closed => MbInstrumentState::Closed,
    }
}

fn accounts(e: &Engine) -> Vec<MbAccountInfo> {
    let holders = (0..e.holder_count()).filter_map(|h| u32::try_from(h).ok());
    holders
        .filter_map(|h| e.holder_accounts(HolderId(h)).ok())
        .flatten()
        .map(|a| MbAccountInfo {
            account: a.id.0,
            holder: a.holder.0,
            name: c_text(a.name),
            kind: kind_of(a.kind) as u32,
            closed: u8::from(a.state == AccountState::Closed),
            derisk: u8::from(a.derisk),
        })
        .collect()
}

fn instrument(e: &Engine, index: u16) -> Option<MbInstrumentInfo> {
    let i = e.instruments().get(usize::from(index))?;
    let s = &i.spec;
    let futures = s.futures.as_ref();
    let percent = |f: fn(&matchbook::FuturesTerms) -> String| futures.map(f).unwrap_or_default();
    Some(MbInstrumentInfo {
        code: c_text(&s.code),
        kind: c_text(s.kind.as_str()),
        base: i.base.0,
        quote: i.quote.0,
        amount_precision: s.amount_precision,
        market_precision: s.market_precision,
        state: state_of(i.state) as u32,
        min_size: i64::try_from(i.min_size.0).unwrap_or(i64::MAX),
        min_price: i.min_price.0,
        max_price: i.max_price.0,
        is_future: u8::from(futures.is_some()),
        initial_margin_percentage: c_text(&percent(|f| f.initial_margin_percentage.to_string())),
        maintenance_margin_percentage: c_text(&percent(|f| {
            f.maintenance_margin_percentage.to_string()
        })),
        funding_period_minutes: futures.and_then(|f| f.funding_period).unwrap_or(0),
        contract_expiry_date: c_text(&percent(|f| {
            f.contract_expiry_date.clone().unwrap_or_default()
        })),
    })
}

fn list_accounts<H: QueryHandle>(
    handle: *const H,
    (buf, capacity, len_out): (*mut MbAccountInfo, usize, *mut usize),
) -> MbStatus {
    guard(|| {
        fill(
            &H::resolve(handle)?.engine(accounts)?,
            buf,
            capacity,
            len_out,
        )
    })
}

fn describe<H: QueryHandle>(
    handle: *const H,
    index: u16,
    info_out: *mut MbInstrumentInfo,
) -> MbStatus {
    guard(|| {
        let slot = out(info_out, "info_out")?;
        let found = H::resolve(handle)?.engine(move |e| instrument(e, index))?;
        *slot = found.ok_or_else(|| {
            fail(
                MbStatus::UnknownInstrument,
                format!("no instrument {index}"),
            )
        })?;
        Ok(())
    })
}

fn fees<H: QueryHandle>(
    handle: *const H,
    (buf, capacity, len_out): (*mut i64, usize, *mut usize),
) -> MbStatus {
    guard(|| {
        let collected = H::resolve(handle)?.engine(|e| e.fees_collected().to_vec())?;
        fill(&collected, buf, capacity, len_out)
    })
}

/// Every account of every holder, holder by holder, each main account first then its
/// subaccounts in creation order (closed ones included).
///
/// # Safety
/// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_accounts(
    engine: *const MbEngine,
    buf: *mut MbAccountInfo,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    list_accounts(engine, (buf, capacity, len_out))
}

/// As `mb_engine_accounts`, through the runtime's market stage.
///
/// # Safety
/// As `mb_engine_accounts`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_accounts(
    session: *const MbSession,
    buf: *mut MbAccountInfo,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    list_accounts(session, (buf, capacity, len_out))
}

/// The description of instrument `instrument` (an index; see `mb_refdata_instrument`).
///
/// # Safety
/// `engine` live; `info_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_instrument_info(
    engine: *const MbEngine,
    instrument: u16,
    info_out: *mut MbInstrumentInfo,
) -> MbStatus {
    describe(engine, instrument, info_out)
}

/// As `mb_engine_instrument_info`, through the runtime's market stage.
///
/// # Safety
/// As `mb_engine_instrument_info`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_instrument_info(
    session: *const MbSession,
    instrument: u16,
    info_out: *mut MbInstrumentInfo,
) -> MbStatus {
    describe(session, instrument, info_out)
}

/// The exchange's fee account: fees collected per currency (index = currency index), in
/// balance units.
///
/// # Safety
/// `engine` live; `buf` NULL or `capacity` writable elements; `len_out` writable.
///
/// Threads: the one thread using the engine at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_engine_fees_collected(
    engine: *const MbEngine,
    buf: *mut i64,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    fees(engine, (buf, capacity, len_out))
}

/// As `mb_engine_fees_collected`, through the runtime's market stage.
///
/// # Safety
/// As `mb_engine_fees_collected`, with a live session.
///
/// Threads: the one thread using the session at a time.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_session_fees_collected(
    session: *const MbSession,
    buf: *mut i64,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    fees(session, (buf, capacity, len_out))
}
