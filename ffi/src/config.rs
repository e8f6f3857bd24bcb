//! `mb_config`: an exchange definition built field by field (the struct API) or parsed
//! from TOML or JSON (the format of `matchbook-config`, the same the REST server reads),
//! from which either engine handle is created.

use std::ffi::c_char;

use matchbook::Engine;
use matchbook::market::{HistoryLimits, MarketData, MarketDataConfig};
use matchbook_config::{
    AccountConfig, CurrencyConfig, Exchange, FeeGroupConfig, FeeTierConfig, FuturesConfig,
    HolderConfig, InstrumentConfig,
};

use crate::boundary::{arg, fail, guard, out, text};
use crate::status::MbStatus;

/// An exchange definition under construction.
#[derive(Debug, Clone, Default)]
pub struct MbConfig {
    pub(crate) exchange: Exchange,
    pub(crate) market_data: bool,
    pub(crate) start_time_ns: i64,
    pub(crate) history_limits: HistoryLimits,
    /// Engines created from it keep no events for `mb_engine_poll_events`
    /// (`mb_config_set_keep_events(config, 0)`).
    pub(crate) drop_events: bool,
    /// Engines created from it leave calls from two threads at once to the caller
    /// (`mb_config_set_thread_checks(config, 0)`).
    pub(crate) unchecked_threads: bool,
}

impl MbConfig {
    /// Fresh market data for an engine of `instruments` instruments, with this
    /// definition's history limits.
    pub(crate) fn new_market(&self, instruments: usize) -> MarketData {
        let mut market = MarketData::new(instruments, MarketDataConfig::default());
        market.set_history_limits(self.history_limits);
        market
    }

    /// The engine this definition describes (holders not yet provisioned).
    pub(crate) fn engine(&self) -> Result<Engine, MbStatus> {
        let config = self
            .exchange
            .engine_config()
            .map_err(|e| fail(MbStatus::InvalidConfig, e.to_string()))?;
        Engine::new(config).map_err(|e| fail(MbStatus::InvalidConfig, e.to_string()))
    }
}

/// Futures terms of an instrument, percentages as decimal strings. The three funding
/// strings are all NULL (no funding) or all set.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MbFuturesSpec {
    /// Collar of the mark price around the index, percent.
    pub price_collar_percentage: *const c_char,
    /// Initial margin, percent of notional.
    pub initial_margin_percentage: *const c_char,
    /// Maintenance margin, percent of notional.
    pub maintenance_margin_percentage: *const c_char,
    /// Funding cap per period, percent (NULL: no funding).
    pub funding_cap: *const c_char,
    /// Funding clamp threshold, percent.
    pub funding_clamp_threshold: *const c_char,
    /// Annual interest rate, percent.
    pub funding_annual_interest_rate: *const c_char,
    /// Minutes between funding settlements.
    pub funding_interval_minutes: u32,
    /// Expiry date (`YYYY-MM-DD`) of a dated future, or NULL.
    pub contract_expiry_date: *const c_char,
}

/// An instrument, decimals as strings.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MbInstrumentSpec {
    /// Code, e.g. `BTC_EUR`.
    pub code: *const c_char,
    /// Base currency code.
    pub base: *const c_char,
    /// Quote currency code.
    pub quote: *const c_char,
    /// Decimals of amounts.
    pub amount_precision: u8,
    /// Decimals of prices.
    pub market_precision: u8,
    /// Minimum order value in the quote currency.
    pub min_size: *const c_char,
    /// Lowest price.
    pub min_price: *const c_char,
    /// Highest price.
    pub max_price: *const c_char,
    /// `SPOT`, `PERP`, `EQUITY_FUTURE` or `DATED_FUTURE`.
    pub kind: *const c_char,
    /// Futures terms (NULL for spot).
    pub futures: *const MbFuturesSpec,
}

fn config_mut<'a>(config: *mut MbConfig) -> Result<&'a mut MbConfig, MbStatus> {
    out(config, "config")
}

/// An optional C string.
///
/// # Safety
/// NULL or NUL-terminated.
unsafe fn optional(ptr: *const c_char, what: &str) -> Result<Option<String>, MbStatus> {
    if ptr.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded contract.
        unsafe { text(ptr, what) }.map(|s| Some(s.to_owned()))
    }
}

fn publish(config: MbConfig, out_config: *mut *mut MbConfig) -> Result<(), MbStatus> {
    let slot = out(out_config, "out_config")?;
    *slot = Box::into_raw(Box::new(config));
    Ok(())
}

/// A definition with the embedded demo currencies, markets and fees, no holders, market
/// data on. Sections added later replace the demo section as a whole.
///
/// # Safety
/// `out_config` NULL or writable.
///
/// Threads: any thread, concurrently.
/// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_new_demo(out_config: *mut *mut MbConfig) -> MbStatus {
    guard(|| {
        publish(
            MbConfig {
                exchange: Exchange::default(),
                market_data: true,
                start_time_ns: 0,
                history_limits: HistoryLimits::default(),
                drop_events: false,
                unchecked_threads: false,
            },
            out_config,
        )
    })
}

/// Parses a TOML definition (`format` 0) or a JSON one (`format` 1); unknown keys are
/// refused with `MB_STATUS_INVALID_CONFIG` and the reason in `mb_last_error`, and so is a
/// definition over 16 MiB or nested deeper than 64 levels (JSON) or than the TOML
/// parser's limit, before it is parsed: no input overflows the caller's stack.
///
/// # Safety
/// `text` NULL or NUL-terminated; `out_config` NULL or writable.
///
/// Threads: any thread, concurrently.
/// Ownership: the caller owns the new handle; free it with its `mb_*_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_parse(
    definition: *const c_char,
    format: u32,
    out_config: *mut *mut MbConfig,
) -> MbStatus {
    guard(|| {
        // SAFETY: NUL-terminated per the contract.
        let source = unsafe { text(definition, "definition")? };
        let parsed = match format {
            0 => Exchange::from_toml(source),
            1 => Exchange::from_json(source),
            other => {
                return Err(fail(
                    MbStatus::InvalidArgument,
                    format!("format {other}: 0 (TOML) or 1 (JSON)"),
                ));
            }
        };
        let exchange = parsed.map_err(|e| fail(MbStatus::InvalidConfig, e.to_string()))?;
        publish(
            MbConfig {
                exchange,
                market_data: true,
                start_time_ns: 0,
                history_limits: HistoryLimits::default(),
                drop_events: false,
                unchecked_threads: false,
            },
            out_config,
        )
    })
}

/// Frees a definition (NULL is ignored). Engines created from it do not depend on it.
///
/// # Safety
/// `config` NULL or from `mb_config_*`, not freed before.
///
/// Threads: one thread at a time per definition.
/// Ownership: frees the handle (NULL is ignored); do not use it after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_free(config: *mut MbConfig) {
    // SAFETY: forwarded contract.
    unsafe { crate::boundary::release(config) };
}

/// Adds a currency (`precision` decimals).
///
/// # Safety
/// `config` live; strings NUL-terminated.
///
/// Threads: one thread at a time per definition.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_add_currency(
    config: *mut MbConfig,
    code: *const c_char,
    precision: u8,
    name: *const c_char,
) -> MbStatus {
    guard(|| {
        let c = config_mut(config)?;
        // SAFETY: NUL-terminated per the contract.
        let (code, name) = unsafe { (text(code, "code")?, text(name, "name")?) };
        c.exchange.currencies.push(CurrencyConfig {
            code: code.to_owned(),
            precision,
            unified_cryptoasset_id: 0,
            name: name.to_owned(),
            collateral_percentage: "0".into(),
        });
        Ok(())
    })
}

/// Adds an instrument.
///
/// # Safety
/// `config` live; `spec` and its strings valid for the call.
///
/// Threads: one thread at a time per definition.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_add_instrument(
    config: *mut MbConfig,
    spec: *const MbInstrumentSpec,
) -> MbStatus {
    guard(|| {
        let c = config_mut(config)?;
        let s = arg(spec, "spec")?;
        // SAFETY: every string of `spec` is NUL-terminated (or NULL where optional) per the
        // contract.
        let instrument = unsafe {
            let futures = match s.futures.as_ref() {
                None => None,
                Some(f) => Some(FuturesConfig {
                    price_collar_percentage: text(f.price_collar_percentage, "collar")?.into(),
                    initial_margin_percentage: text(f.initial_margin_percentage, "initial")?.into(),
                    maintenance_margin_percentage: text(
                        f.maintenance_margin_percentage,
                        "maintenance",
                    )?
                    .into(),
                    funding_cap: optional(f.funding_cap, "funding_cap")?,
                    funding_clamp_threshold: optional(f.funding_clamp_threshold, "clamp")?,
                    funding_annual_interest_rate: optional(
                        f.funding_annual_interest_rate,
                        "interest",
                    )?,
                    funding_period: None,
                    market_offset: 0,
                    funding_interval_minutes: f.funding_interval_minutes,
                    contract_expiry_date: optional(f.contract_expiry_date, "expiry")?,
                    contract_duration: None,
                }),
            };
            InstrumentConfig {
                code: text(s.code, "code")?.into(),
                base: text(s.base, "base")?.into(),
                quote: text(s.quote, "quote")?.into(),
                amount_precision: s.amount_precision,
                market_precision: s.market_precision,
                min_size: text(s.min_size, "min_size")?.into(),
                min_price: text(s.min_price, "min_price")?.into(),
                max_price: text(s.max_price, "max_price")?.into(),
                kind: text(s.kind, "kind")?.into(),
                state: "ACTIVE".into(),
                futures,
            }
        };
        c.exchange.instruments.push(instrument);
        Ok(())
    })
}

/// Adds a fee tier (percentages as decimal strings) to fee group `group` (`SPOT` or
/// `FUTURES`), creating the group on first use with `volume_currency`.
///
/// # Safety
/// `config` live; strings NUL-terminated.
///
/// Threads: one thread at a time per definition.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_add_fee_tier(
    config: *mut MbConfig,
    group: *const c_char,
    volume_currency: *const c_char,
    volume: *const c_char,
    maker_fee: *const c_char,
    taker_fee: *const c_char,
) -> MbStatus {
    guard(|| {
        let c = config_mut(config)?;
        // SAFETY: NUL-terminated per the contract.
        let (group, currency, volume, maker, taker) = unsafe {
            (
                text(group, "group")?,
                text(volume_currency, "volume_currency")?,
                text(volume, "volume")?,
                text(maker_fee, "maker_fee")?,
                text(taker_fee, "taker_fee")?,
            )
        };
        let groups = &mut c.exchange.fee_groups;
        let index = match groups.iter().position(|g| g.id == group) {
            Some(i) => i,
            None => {
                groups.push(FeeGroupConfig {
                    id: group.to_owned(),
                    display_text: group.to_owned(),
                    volume_currency: currency.to_owned(),
                    tiers: Vec::new(),
                });
                groups.len() - 1
            }
        };
        groups[index].tiers.push(FeeTierConfig {
            volume: volume.to_owned(),
            maker_fee: maker.to_owned(),
            taker_fee: taker.to_owned(),
        });
        Ok(())
    })
}

/// Adds a holder (created with its main account when the engine starts; the n-th holder
/// added is holder n).
///
/// # Safety
/// `config` live; `name` NUL-terminated.
///
/// Threads: one thread at a time per definition.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_add_holder(
    config: *mut MbConfig,
    name: *const c_char,
) -> MbStatus {
    guard(|| {
        let c = config_mut(config)?;
        // SAFETY: NUL-terminated per the contract.
        let name = unsafe { text(name, "name")? };
        if c.exchange.holders.iter().any(|h| h.name == name) {
            return Err(fail(
                MbStatus::InvalidArgument,
                format!("holder {name} exists"),
            ));
        }
        c.exchange.holders.push(HolderConfig {
            name: name.to_owned(),
            accounts: Vec::new(),
        });
        Ok(())
    })
}

/// Credits `amount` (decimal string) of `currency` to account `account` of holder
/// `holder` at start; `account` is `main` or a subaccount name, created on first use with
/// `kind` (`regular`, `instant-trade`, `blp`; NULL = regular). With `currency` and
/// `amount` NULL it only declares the account.
///
/// # Safety
/// `config` live; strings NUL-terminated (`kind`, `currency`, `amount` may be NULL).
///
/// Threads: one thread at a time per definition.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_add_deposit(
    config: *mut MbConfig,
    holder: *const c_char,
    account: *const c_char,
    kind: *const c_char,
    currency: *const c_char,
    amount: *const c_char,
) -> MbStatus {
    guard(|| {
        let c = config_mut(config)?;
        // SAFETY: NUL-terminated per the contract.
        let (holder, account, kind, currency, amount) = unsafe {
            (
                text(holder, "holder")?,
                text(account, "account")?,
                optional(kind, "kind")?,
                optional(currency, "currency")?,
                optional(amount, "amount")?,
            )
        };
        let h = c
            .exchange
            .holders
            .iter_mut()
            .find(|h| h.name == holder)
            .ok_or_else(|| fail(MbStatus::UnknownHolder, format!("no holder {holder}")))?;
        let index = match h.accounts.iter().position(|a| a.name == account) {
            Some(i) => i,
            None => {
                h.accounts.push(AccountConfig {
                    name: account.to_owned(),
                    kind,
                    deposits: Default::default(),
                });
                h.accounts.len() - 1
            }
        };
        match (currency, amount) {
            (Some(currency), Some(amount)) => {
                h.accounts[index].deposits.insert(currency, amount);
                Ok(())
            }
            (None, None) => Ok(()),
            _ => Err(fail(
                MbStatus::NullArgument,
                "currency and amount go together",
            )),
        }
    })
}

/// Sets the open-order limit per holder.
///
/// # Safety
/// `config` live.
///
/// Threads: one thread at a time per definition.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_set_max_open_orders(
    config: *mut MbConfig,
    max: u32,
) -> MbStatus {
    guard(|| {
        config_mut(config)?.exchange.max_open_orders = Some(max);
        Ok(())
    })
}

/// Turns market data (candles, tickers, order and trade history) on (nonzero) or off for
/// the engines and runtimes created from this definition; off saves the work on every
/// command, and their market-data queries answer `MB_STATUS_MARKET_DATA_OFF`.
///
/// # Safety
/// `config` live.
///
/// Threads: one thread at a time per definition.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_set_market_data(config: *mut MbConfig, on: u8) -> MbStatus {
    guard(|| {
        config_mut(config)?.market_data = on != 0;
        Ok(())
    })
}

/// Sets the most order and trade records the market data of engines and runtimes created
/// from this definition keeps (0: no limit, the default): past a limit the oldest go
/// first, whatever their age (open orders stay until they end), so a long run's history
/// holds its memory at about 280 bytes an order and 200 a trade kept.
///
/// # Safety
/// `config` live.
///
/// Threads: one thread at a time per definition.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_set_history_limits(
    config: *mut MbConfig,
    max_orders: u64,
    max_trades: u64,
) -> MbStatus {
    guard(|| {
        let most = |n: u64| match n {
            0 => usize::MAX,
            n => usize::try_from(n).unwrap_or(usize::MAX),
        };
        config_mut(config)?.history_limits = HistoryLimits {
            orders: most(max_orders),
            trades: most(max_trades),
        };
        Ok(())
    })
}

/// Whether single-threaded engines created from this definition (`mb_engine_new`,
/// `mb_engine_open`) keep each command's events for `mb_engine_poll_events` (nonzero, the
/// default) or drop them (0). Kept events stay until polled or cleared, about 1 KB for
/// an order placed and cancelled: a program that never polls should turn them off.
/// Sessions of a runtime choose at `mb_session_new`.
///
/// # Safety
/// `config` live.
///
/// Threads: one thread at a time per definition.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_set_keep_events(config: *mut MbConfig, on: u8) -> MbStatus {
    guard(|| {
        config_mut(config)?.drop_events = on == 0;
        Ok(())
    })
}

/// Whether single-threaded engines created from this definition (`mb_engine_new`,
/// `mb_engine_open`) refuse a call made while a call from another thread is inside them
/// (nonzero, the default: `MB_STATUS_IN_USE`, nothing done) or leave it to the caller (0).
/// The check is an atomic swap a call: about 2-6 ns a call in a tight loop of place and
/// cancel (BENCHMARKS.md). Turn it off only where one thread at a time is guaranteed: two
/// threads in calls at once are then undefined behaviour.
///
/// # Safety
/// `config` live.
///
/// Threads: one thread at a time per definition.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_set_thread_checks(config: *mut MbConfig, on: u8) -> MbStatus {
    guard(|| {
        config_mut(config)?.unchecked_threads = on == 0;
        Ok(())
    })
}

/// Sets the time (ns since the epoch) a single-threaded engine provisions its holders at
/// (default 0). Set it near the times you will submit: futures funding clocks start at
/// the first command, and a later jump runs every funding period in between.
///
/// # Safety
/// `config` live.
///
/// Threads: one thread at a time per definition.
/// Ownership: borrows its arguments for the call; nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_config_set_start_time(config: *mut MbConfig, time_ns: i64) -> MbStatus {
    guard(|| {
        config_mut(config)?.start_time_ns = time_ns;
        Ok(())
    })
}
