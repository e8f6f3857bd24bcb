//! `NativeEngine`: an engine, its market data and its undelivered events behind one Python
//! object (and one lock); this file holds its construction, reference data and the account
//! and order commands (cancels are in `cancels.rs`, the operator's market commands in
//! `operator.rs`, reads in `queries.rs`, numpy batches in `batch.rs`). Every command takes
//! the time it happens at (nanoseconds since the epoch), so a backtest is a deterministic
//! function of its inputs.

use std::sync::{Mutex, MutexGuard, TryLockError};

use matchbook::market::{MarketData, MarketDataConfig};
use matchbook::reference::ReferenceData;
use matchbook::store::Host;
use matchbook::{
    AccountId, Applied, Command, CurrencyId, Engine, EngineError, HolderId, InstrumentId, Order,
    Price, Qty, Timestamp,
};
use matchbook_config::{Directory, Exchange};
use pyo3::prelude::*;

use crate::errors::{self, invalid};
use crate::ints::{int, opt};
use crate::pickling::Origin;
use crate::values::{self, pack, unpack};

/// The engine, its market data and undelivered events, in memory or durable: the host
/// type the C binding uses too.
pub(crate) type Core = Host;

/// The Python object: its engine behind a lock, so that a call from another thread while
/// one runs with the GIL released (a batch) waits for it instead of failing.
#[pyclass(module = "matchbook._native", frozen)]
pub struct NativeEngine {
    state: Mutex<Inner>,
}

/// What a `NativeEngine` holds.
pub(crate) struct Inner {
    pub(crate) core: Core,
    /// The definition's markets and currencies (the same for every engine `core` holds:
    /// a restore or a load replaces the engine with one of the same definition).
    pub(crate) reference: ReferenceData,
    pub(crate) directory: Directory,
    /// What it was built from (for pickling).
    pub(crate) origin: Origin,
}

impl From<Inner> for NativeEngine {
    fn from(inner: Inner) -> Self {
        Self {
            state: Mutex::new(inner),
        }
    }
}

impl NativeEngine {
    /// Applies `command` at `time_ns`, for a method whose answer is nothing.
    pub(crate) fn command(&self, py: Python<'_>, time_ns: i64, command: Command) -> PyResult<()> {
        self.lock(py)?.run(py, command, time_ns).map(drop)
    }

    /// This engine, for one call. Another thread's call holding it (only a call that
    /// released the GIL can) is waited for with the GIL released; one that panicked
    /// leaves the engine refused, as the C ABI's poisoned handle is.
    pub(crate) fn lock(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, Inner>> {
        loop {
            match self.state.try_lock() {
                Ok(guard) => return Ok(guard),
                Err(TryLockError::Poisoned(_)) => {
                    return Err(invalid(
                        py,
                        "engine is unusable: an earlier call panicked while using it",
                    ));
                }
                // Waited for without the GIL, then taken with it: whoever holds the
                // engine may need the GIL to finish.
                Err(TryLockError::WouldBlock) => py.detach(|| drop(self.state.lock())),
            }
        }
    }
}

pub(crate) fn instrument_of(
    py: Python<'_>,
    reference: &ReferenceData,
    code: &str,
) -> PyResult<InstrumentId> {
    (reference.market(code)).map(|m| m.id).ok_or_else(|| {
        errors::engine_about(py, EngineError::UnknownInstrument, format!("{code:?}"))
    })
}

pub(crate) fn currency_of(
    py: Python<'_>,
    reference: &ReferenceData,
    code: &str,
) -> PyResult<(CurrencyId, u8)> {
    let id = reference.currency_id(code).ok_or_else(|| {
        errors::engine_about(py, EngineError::UnknownCurrency, format!("{code:?}"))
    })?;
    Ok((id, reference.scale(id)))
}

impl Inner {
    /// The engine of a definition, its holders provisioned at `start_time_ns`, and the
    /// parsed definition.
    pub(crate) fn build(
        py: Python<'_>,
        definition: &str,
        format: &str,
        start_time_ns: i64,
        market_data: bool,
        keep_events: bool,
    ) -> PyResult<(Self, Exchange)> {
        let exchange = match format {
            "toml" => Exchange::from_toml(definition),
            "json" => Exchange::from_json(definition),
            other => return Err(invalid(py, format!("format {other:?}: toml or json"))),
        }
        .map_err(|e| invalid(py, e.to_string()))?;
        let config = exchange
            .engine_config()
            .map_err(|e| invalid(py, e.to_string()))?;
        let engine = Engine::new(config).map_err(|e| invalid(py, e.to_string()))?;
        let market = market_data
            .then(|| MarketData::new(engine.instruments().len(), MarketDataConfig::default()));
        let mut core = Core::in_memory(engine, market, keep_events);
        let directory = matchbook_config::provision_engine(
            &mut core.engine,
            &exchange.holders,
            Timestamp(start_time_ns),
            &mut Vec::new(),
        )
        .map_err(|e| invalid(py, e.to_string()))?;
        let origin = Origin {
            definition: definition.to_owned(),
            format: format.to_owned(),
            start_time_ns,
        };
        Ok((
            Self {
                reference: ReferenceData::of(&core.engine),
                core,
                directory,
                origin,
            },
            exchange,
        ))
    }

    /// A currency code and a decimal amount of it, in balance units.
    fn funds(&self, py: Python<'_>, currency: &str, amount: &str) -> PyResult<(CurrencyId, i64)> {
        let (id, scale) = currency_of(py, &self.reference, currency)?;
        Ok((id, values::fixed(py, amount, scale, "amount")?))
    }

    /// The order `value` names for `account`: a handle as `place_order` returns it, or a
    /// bare order number (trade columns, history records), whose slot history knows; so
    /// either is accepted wherever an order is. A value wider than a handle is refused:
    /// its top bits would otherwise be dropped and name another handle's order.
    pub(crate) fn order_ref(
        &self,
        py: Python<'_>,
        account: u32,
        value: u128,
    ) -> PyResult<matchbook::OrderRef> {
        let Some(given) = unpack(value) else {
            return Err(invalid(
                py,
                format!("order {value}: not an order handle or number"),
            ));
        };
        if value >> 64 != 0 {
            return Ok(given);
        }
        Ok((self.core.market.as_ref())
            .and_then(|m| m.orders().get(AccountId(account), given.id))
            .map_or(given, |r| r.accepted.order))
    }

    pub(crate) fn run(
        &mut self,
        py: Python<'_>,
        command: Command,
        time_ns: i64,
    ) -> PyResult<Applied> {
        let now = self.core.engine.now();
        if time_ns < now.0 {
            return Err(invalid(
                py,
                format!("time {time_ns} is before the engine's time {}", now.0),
            ));
        }
        match self.core.apply(&command, Timestamp(time_ns)) {
            Ok(Ok(applied)) => Ok(applied),
            Ok(Err(e)) => Err(errors::engine_about(
                py,
                e,
                errors::subject(&self.reference, &command),
            )),
            Err(e) => Err(errors::storage(py, &e)),
        }
    }
}

#[pymethods]
impl NativeEngine {
    /// An engine from an exchange definition (`format` "toml" or "json"; empty text: the
    /// demo markets), its holders provisioned at `start_time_ns`.
    #[new]
    #[pyo3(signature = (definition, format = "toml", start_time_ns = 0, market_data = true, keep_events = true))]
    fn new(
        py: Python<'_>,
        definition: &str,
        format: &str,
        #[pyo3(from_py_with = int::<i64>)] start_time_ns: i64,
        market_data: bool,
        keep_events: bool,
    ) -> PyResult<Self> {
        Inner::build(
            py,
            definition,
            format,
            start_time_ns,
            market_data,
            keep_events,
        )
        .map(|(engine, _)| engine.into())
    }

    /// Creates a holder with its main account: (holder id, account id).
    fn create_holder(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
    ) -> PyResult<(u32, u32)> {
        let mut this = self.lock(py)?;
        let a = this.run(py, Command::CreateHolder, time_ns)?;
        Ok((a.holder.map_or(0, |h| h.0), a.account.map_or(0, |a| a.0)))
    }

    /// Creates a subaccount; its id.
    #[pyo3(signature = (time_ns, holder, name, kind = "regular"))]
    fn create_subaccount(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] holder: u32,
        name: &str,
        kind: &str,
    ) -> PyResult<u32> {
        let mut this = self.lock(py)?;
        let kind = values::account_kind(py, kind)?;
        let command = Command::CreateSubaccount {
            holder: HolderId(holder),
            name: name.to_owned(),
            kind,
        };
        Ok(this.run(py, command, time_ns)?.account.map_or(0, |a| a.0))
    }

    /// Closes a subaccount (its open orders are cancelled).
    fn close_subaccount(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
    ) -> PyResult<()> {
        self.command(
            py,
            time_ns,
            Command::CloseSubaccount {
                account: AccountId(account),
            },
        )
    }

    /// Credits `amount` (decimal text) of `currency` (admin).
    fn deposit(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        currency: &str,
        amount: &str,
    ) -> PyResult<()> {
        let mut this = self.lock(py)?;
        let (id, amount) = this.funds(py, currency, amount)?;
        this.run(
            py,
            Command::Deposit {
                account: AccountId(account),
                currency: id,
                amount,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Debits `amount` of `currency` (admin).
    fn withdraw(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        currency: &str,
        amount: &str,
    ) -> PyResult<()> {
        let mut this = self.lock(py)?;
        let (id, amount) = this.funds(py, currency, amount)?;
        this.run(
            py,
            Command::Withdraw {
                account: AccountId(account),
                currency: id,
                amount,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Moves funds between two accounts of `holder`.
    #[allow(clippy::too_many_arguments, reason = "mirrors the Python signature")]
    fn transfer(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] holder: u32,
        #[pyo3(from_py_with = int::<u32>)] source: u32,
        #[pyo3(from_py_with = int::<u32>)] destination: u32,
        currency: &str,
        amount: &str,
    ) -> PyResult<()> {
        let mut this = self.lock(py)?;
        let (id, amount) = this.funds(py, currency, amount)?;
        let command = Command::Transfer {
            holder: HolderId(holder),
            source: AccountId(source),
            destination: AccountId(destination),
            currency: id,
            amount,
        };
        this.run(py, command, time_ns).map(drop)
    }

    /// Sets or clears de-risk on an account (admin).
    fn set_derisk(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        on: bool,
    ) -> PyResult<()> {
        self.command(
            py,
            time_ns,
            Command::SetDerisk {
                account: AccountId(account),
                on,
            },
        )
    }

    /// Sets a BLP account's minimum balance of `currency` (admin).
    fn set_blp_threshold(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        currency: &str,
        amount: &str,
    ) -> PyResult<()> {
        let mut this = self.lock(py)?;
        let (id, amount) = this.funds(py, currency, amount)?;
        this.run(
            py,
            Command::SetBlpThreshold {
                account: AccountId(account),
                currency: id,
                amount,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Sets an account's default self-trade prevention.
    fn set_stp_mode(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        mode: &str,
    ) -> PyResult<()> {
        let mut this = self.lock(py)?;
        let mode = values::stp(py, mode)?;
        this.run(
            py,
            Command::SetStpMode {
                account: AccountId(account),
                mode,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Places an order; its handle (an int). A fill-or-kill that cannot fill, or a post-only
    /// order that would take, raises its refusal with the handle as the exception's `order`.
    #[pyo3(signature = (time_ns, account, instrument, side, amount, price = None, order_type = "LIMIT", time_in_force = "GOOD_TILL_CANCELLED", trigger_price = None, expire_at_ns = None, client_id = None, stp = None, reduce_only = false, trigger_reference = "LAST_PRICE", trailing_offset = None, trailing_offset_bps = None, limit_offset = None, display = None))]
    #[allow(clippy::too_many_arguments, reason = "mirrors the Python signature")]
    fn place_order(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        instrument: &str,
        side: &str,
        amount: &str,
        price: Option<&str>,
        order_type: &str,
        time_in_force: &str,
        trigger_price: Option<&str>,
        #[pyo3(from_py_with = opt::<i64>)] expire_at_ns: Option<i64>,
        client_id: Option<&str>,
        stp: Option<&str>,
        reduce_only: bool,
        trigger_reference: &str,
        trailing_offset: Option<&str>,
        #[pyo3(from_py_with = opt::<u32>)] trailing_offset_bps: Option<u32>,
        limit_offset: Option<&str>,
        display: Option<&str>,
    ) -> PyResult<u128> {
        let mut this = self.lock(py)?;
        let args = crate::order_entry::OrderArgs {
            account,
            instrument,
            side,
            amount,
            price,
            order_type,
            time_in_force,
            trigger_price,
            expire_at_ns,
            client_id,
            stp,
            reduce_only,
            trigger_reference,
            trailing_offset,
            trailing_offset_bps,
            limit_offset,
            display,
        };
        let order = crate::order_entry::new_order(py, &this.reference, &args)?;
        let applied = this.run(py, Command::PlaceOrder(order), time_ns)?;
        let handle = applied.order.map_or(0, pack);
        if let Some(refusal) = applied.rejected {
            // Accepted and ended at once by its time in force: raised as that refusal, with
            // the order's handle on the exception (its history record keeps the rejection).
            let error = errors::engine(py, refusal);
            error.value(py).setattr("order", handle)?;
            return Err(error);
        }
        Ok(handle)
    }

    /// Amends an open order's amount and/or price (None: unchanged).
    #[pyo3(signature = (time_ns, account, order, amount = None, price = None))]
    fn amend_order(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        #[pyo3(from_py_with = int::<u128>)] order: u128,
        amount: Option<&str>,
        price: Option<&str>,
    ) -> PyResult<()> {
        let mut this = self.lock(py)?;
        let handle = this.order_ref(py, account, order)?;
        let instrument = this
            .core
            .engine
            .order(handle)
            .map(Order::instrument)
            .ok_or_else(|| errors::engine(py, EngineError::OrderNotFound))?;
        let (ps, qs) = values::scales(py, &this.reference, instrument)?;
        let command = Command::AmendOrder {
            account: AccountId(account),
            order: handle,
            amount: amount
                .map(|a| values::fixed(py, a, qs, "amount").map(Qty))
                .transpose()?,
            price: price
                .map(|p| values::fixed(py, p, ps, "price").map(Price))
                .transpose()?,
        };
        this.run(py, command, time_ns).map(drop)
    }

    /// Arms `account`'s dead-man switch: its open orders are cancelled once `timeout_ns`
    /// nanoseconds of engine time have passed, unless it is set again first; 0 turns it
    /// off.
    fn set_cancel_all_after(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        #[pyo3(from_py_with = int::<u64>)] timeout_ns: u64,
    ) -> PyResult<()> {
        let command = Command::SetCancelAllAfter {
            account: AccountId(account),
            timeout: timeout_ns,
        };
        self.command(py, time_ns, command)
    }

    /// Moves time to `time_ns`: expiries, dead-man switches, funding samples and
    /// settlements.
    fn advance_time(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<i64>)] time_ns: i64,
    ) -> PyResult<()> {
        self.command(py, time_ns, Command::AdvanceTime)
    }
}
