//! `mb_refdata`: what both engine handles share and never changes after start (the core's
//! reference data, `matchbook::reference::ReferenceData`: instrument and currency codes and
//! scales; and the provisioned holders' accounts by name), so lookups and decimal-string
//! conversion take no trip to the engine thread.

use std::ffi::c_char;

use matchbook::fixed::{format_scaled, parse_scaled};
use matchbook::reference::{MarketRef, ReferenceData};
use matchbook::{CurrencyId, Engine, InstrumentId};
use matchbook_config::Directory;

use crate::boundary::{arg, fail, fill_text, guard, out, text};
use crate::command::MbCommand;
use crate::status::MbStatus;

/// Reference data of one engine; borrowed from its handle, valid while the handle lives.
#[derive(Debug, Clone)]
pub struct MbRefData {
    reference: ReferenceData,
    directory: Directory,
}

impl MbRefData {
    pub(crate) fn of(engine: &Engine, directory: Directory) -> Self {
        Self {
            reference: ReferenceData::of(engine),
            directory,
        }
    }

    pub(crate) fn set_directory(&mut self, directory: Directory) {
        self.directory = directory;
    }

    /// A currency by code, with its balance scale.
    pub(crate) fn currency(&self, code: &str) -> Option<(CurrencyId, u8)> {
        let id = self.reference.currency_id(code)?;
        Some((id, self.reference.scale(id)))
    }

    fn instrument_by_code(&self, code: &str) -> Result<&MarketRef, MbStatus> {
        (self.reference.market(code))
            .ok_or_else(|| fail(MbStatus::UnknownInstrument, format!("no instrument {code}")))
    }

    fn instrument(&self, id: u16) -> Result<&MarketRef, MbStatus> {
        (self.reference.market_of(InstrumentId(id)))
            .ok_or_else(|| fail(MbStatus::UnknownInstrument, format!("no instrument {id}")))
    }

    fn scale(&self, currency: u16) -> Result<u8, MbStatus> {
        (self.reference.currency_of(CurrencyId(currency)))
            .map(|c| c.scale)
            .ok_or_else(|| fail(MbStatus::UnknownCurrency, format!("no currency {currency}")))
    }
}

fn refdata<'a>(r: *const MbRefData) -> Result<&'a MbRefData, MbStatus> {
    arg(r, "refdata")
}

fn parse(textual: &str, scale: u8) -> Result<i64, MbStatus> {
    parse_scaled(textual, scale).map_err(|e| {
        fail(
            MbStatus::InvalidArgument,
            format!("{textual:?}: {}", e.with_bound(scale)),
        )
    })
}

/// The index of an instrument code.
///
/// # Safety
/// `refdata` from a live handle; `code` NUL-terminated; `id_out` writable.
///
/// Threads: any thread, concurrently (it never changes).
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_refdata_instrument(
    refdata: *const MbRefData,
    code: *const c_char,
    id_out: *mut u16,
) -> MbStatus {
    guard(|| {
        let r = self::refdata(refdata)?;
        let slot = out(id_out, "id_out")?;
        // SAFETY: NUL-terminated per the contract.
        let code = unsafe { text(code, "code")? };
        *slot = r.instrument_by_code(code)?.id.0;
        Ok(())
    })
}

/// The index and balance scale (decimals of balance units) of a currency code.
///
/// # Safety
/// `refdata` from a live handle; `code` NUL-terminated; outs writable.
///
/// Threads: any thread, concurrently (it never changes).
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_refdata_currency(
    refdata: *const MbRefData,
    code: *const c_char,
    id_out: *mut u16,
    scale_out: *mut u8,
) -> MbStatus {
    guard(|| {
        let r = self::refdata(refdata)?;
        let (id, scale) = (out(id_out, "id_out")?, out(scale_out, "scale_out")?);
        // SAFETY: NUL-terminated per the contract.
        let code = unsafe { text(code, "code")? };
        (*id, *scale) = r
            .currency(code)
            .map(|(c, s)| (c.0, s))
            .ok_or_else(|| fail(MbStatus::UnknownCurrency, format!("no currency {code}")))?;
        Ok(())
    })
}

/// The holder id and account id of a configured holder's account (`main` or a
/// subaccount name).
///
/// # Safety
/// `refdata` from a live handle; strings NUL-terminated; outs writable.
///
/// Threads: any thread, concurrently (it never changes).
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_refdata_account(
    refdata: *const MbRefData,
    holder: *const c_char,
    account: *const c_char,
    holder_out: *mut u32,
    account_out: *mut u32,
) -> MbStatus {
    guard(|| {
        let r = self::refdata(refdata)?;
        let (h_out, a_out) = (
            out(holder_out, "holder_out")?,
            out(account_out, "account_out")?,
        );
        // SAFETY: NUL-terminated per the contract.
        let (holder, account) = unsafe { (text(holder, "holder")?, text(account, "account")?) };
        let entry = r
            .directory
            .get(holder)
            .ok_or_else(|| fail(MbStatus::UnknownHolder, format!("no holder {holder}")))?;
        let id = entry.accounts.get(account).ok_or_else(|| {
            fail(
                MbStatus::UnknownAccount,
                format!("no account {account} of {holder}"),
            )
        })?;
        (*h_out, *a_out) = (entry.holder.0, id.0);
        Ok(())
    })
}

/// A decimal price (`"60000.5"`) in ticks of `instrument`.
///
/// # Safety
/// `refdata` from a live handle; `price` NUL-terminated; `ticks_out` writable.
///
/// Threads: any thread, concurrently (it never changes).
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_refdata_price(
    refdata: *const MbRefData,
    instrument: u16,
    price: *const c_char,
    ticks_out: *mut i64,
) -> MbStatus {
    guard(|| {
        let r = self::refdata(refdata)?;
        let slot = out(ticks_out, "ticks_out")?;
        // SAFETY: NUL-terminated per the contract.
        let price = unsafe { text(price, "price")? };
        *slot = parse(price, r.instrument(instrument)?.market_precision)?;
        Ok(())
    })
}

/// A decimal amount in lots of `instrument`.
///
/// # Safety
/// `refdata` from a live handle; `amount` NUL-terminated; `lots_out` writable.
///
/// Threads: any thread, concurrently (it never changes).
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_refdata_amount(
    refdata: *const MbRefData,
    instrument: u16,
    amount: *const c_char,
    lots_out: *mut i64,
) -> MbStatus {
    guard(|| {
        let r = self::refdata(refdata)?;
        let slot = out(lots_out, "lots_out")?;
        // SAFETY: NUL-terminated per the contract.
        let amount = unsafe { text(amount, "amount")? };
        *slot = parse(amount, r.instrument(instrument)?.amount_precision)?;
        Ok(())
    })
}

/// A decimal amount of `currency` in balance units.
///
/// # Safety
/// `refdata` from a live handle; `amount` NUL-terminated; `units_out` writable.
///
/// Threads: any thread, concurrently (it never changes).
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_refdata_funds(
    refdata: *const MbRefData,
    currency: u16,
    amount: *const c_char,
    units_out: *mut i64,
) -> MbStatus {
    guard(|| {
        let r = self::refdata(refdata)?;
        let slot = out(units_out, "units_out")?;
        // SAFETY: NUL-terminated per the contract.
        let amount = unsafe { text(amount, "amount")? };
        *slot = parse(amount, r.scale(currency)?)?;
        Ok(())
    })
}

/// What a fixed-point value is counted in, for `mb_refdata_format`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbUnit {
    /// Ticks of an instrument (`index` = instrument).
    Price = 0,
    /// Lots of an instrument (`index` = instrument).
    Amount = 1,
    /// Balance units of a currency (`index` = currency).
    Funds = 2,
}

/// Writes `value` (in `unit`, an `mb_unit`) as a decimal string into `buf`.
///
/// # Safety
/// `refdata` from a live handle; `buf` NULL or `capacity` writable bytes; `len_out`
/// writable.
///
/// Threads: any thread, concurrently (it never changes).
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_refdata_format(
    refdata: *const MbRefData,
    unit: u32,
    index: u16,
    value: i64,
    buf: *mut c_char,
    capacity: usize,
    len_out: *mut usize,
) -> MbStatus {
    guard(|| {
        let r = self::refdata(refdata)?;
        let scale = match unit {
            0 => r.instrument(index)?.market_precision,
            1 => r.instrument(index)?.amount_precision,
            2 => r.scale(index)?,
            other => return Err(fail(MbStatus::InvalidArgument, format!("unit {other}"))),
        };
        fill_text(
            &format_scaled(i128::from(value), scale),
            buf,
            capacity,
            len_out,
        )
    })
}

/// An order in decimal strings (the convenience path): `instrument` a code, `price` a
/// decimal or NULL (market orders), `amount` a decimal; `side`, `order_type`, `tif` as in
/// `mb_command`. Writes a ready `MB_COMMAND_KIND_PLACE_ORDER` command.
///
/// # Safety
/// `refdata` from a live handle; strings NUL-terminated (`price` may be NULL);
/// `out_command` writable.
///
/// Threads: any thread, concurrently (it never changes).
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a flat C signature")]
pub unsafe extern "C" fn mb_cmd_place_decimal(
    refdata: *const MbRefData,
    account: u32,
    instrument: *const c_char,
    side: u32,
    order_type: u32,
    tif: u32,
    price: *const c_char,
    amount: *const c_char,
    out_command: *mut MbCommand,
) -> MbStatus {
    guard(|| {
        let r = self::refdata(refdata)?;
        let slot = out(out_command, "out_command")?;
        // SAFETY: NUL-terminated per the contract.
        let (code, amount) = unsafe { (text(instrument, "instrument")?, text(amount, "amount")?) };
        let market = r.instrument_by_code(code)?;
        let ticks = if price.is_null() {
            0
        } else {
            // SAFETY: non-NULL and NUL-terminated per the contract.
            parse(unsafe { text(price, "price")? }, market.market_precision)?
        };
        let lots = parse(amount, market.amount_precision)?;
        let mut command =
            crate::constructors::mb_cmd_place_limit(account, market.id.0, side, ticks, lots, tif);
        command.order_type = order_type;
        *slot = command;
        Ok(())
    })
}
