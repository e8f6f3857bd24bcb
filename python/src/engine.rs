//! `NativeEngine`: an engine, its market data and its undelivered events behind one Python
//! object. Every command takes the time it happens at (nanoseconds since the epoch), so a
//! backtest is a deterministic function of its inputs.

use matchbook::market::period::{Granularity, Unit};
use matchbook::market::{MarketData, MarketDataConfig};
use matchbook::{
    AccountId, Applied, CancelScope, Command, CurrencyId, Engine, EngineError, EventRecord,
    HolderId, InstrumentId, NewOrder, Order, Price, Qty, Timestamp,
};
use matchbook_config::{Directory, Exchange};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::batch::{self, OrderColumns};
use crate::errors::{self, invalid};
use crate::events;
use crate::values::{self, pack, unpack};

/// The engine with what a Python caller needs around it.
pub(crate) struct Core {
    engine: Engine,
    market: Option<MarketData>,
    pending: Vec<EventRecord>,
    keep_events: bool,
}

impl Core {
    /// Applies a command: events fed to market data and kept for polling (or dropped).
    pub(crate) fn apply(
        &mut self,
        command: &Command,
        time: Timestamp,
    ) -> Result<Applied, EngineError> {
        let start = self.pending.len();
        let applied = self.engine.apply(command, time, &mut self.pending);
        if let Some(m) = self.market.as_mut() {
            m.on_events(&self.pending[start..]);
        }
        if !self.keep_events {
            self.pending.clear();
        }
        applied
    }
}

/// The native engine (wrapped by `matchbook.Engine`).
#[pyclass(module = "matchbook._native")]
pub struct NativeEngine {
    core: Core,
    directory: Directory,
}

fn instrument_of(py: Python<'_>, engine: &Engine, code: &str) -> PyResult<InstrumentId> {
    engine
        .instrument_by_code(code)
        .ok_or_else(|| errors::engine(py, EngineError::UnknownInstrument))
}

fn currency_of(py: Python<'_>, engine: &Engine, code: &str) -> PyResult<(CurrencyId, u8)> {
    let id = engine
        .currency_by_code(code)
        .ok_or_else(|| errors::engine(py, EngineError::UnknownCurrency))?;
    let scale = engine
        .balance_scale(id)
        .map_err(|e| errors::engine(py, e))?;
    Ok((id, scale))
}

fn column<'a, T: numpy::Element>(
    py: Python<'_>,
    array: &'a PyReadonlyArray1<'_, T>,
    name: &str,
) -> PyResult<&'a [T]> {
    array
        .as_slice()
        .map_err(|_| invalid(py, format!("{name}: a contiguous 1-d array")))
}

impl NativeEngine {
    fn run(&mut self, py: Python<'_>, command: Command, time_ns: i64) -> PyResult<Applied> {
        self.core
            .apply(&command, Timestamp(time_ns))
            .map_err(|e| errors::engine(py, e))
    }

    fn order_dict<'py>(&self, py: Python<'py>, o: &Order) -> PyResult<Bound<'py, PyDict>> {
        let (ps, qs) = values::scales(py, &self.core.engine, o.instrument())?;
        let d = PyDict::new(py);
        d.set_item("handle", pack(o.handle()))?;
        d.set_item("id", o.handle().id)?;
        d.set_item("account", o.account().0)?;
        d.set_item(
            "instrument",
            self.core
                .engine
                .instrument(o.instrument())
                .map(|i| i.code().to_owned())
                .unwrap_or_default(),
        )?;
        d.set_item("side", o.side().as_str())?;
        d.set_item("order_type", o.order_type().as_str())?;
        d.set_item("time_in_force", o.time_in_force().as_str())?;
        d.set_item("price", o.price().map(|p| values::text(p.0, ps)))?;
        d.set_item(
            "trigger_price",
            o.trigger_price().map(|p| values::text(p.0, ps)),
        )?;
        d.set_item("amount", values::text(o.amount().0, qs))?;
        d.set_item("filled", values::text(o.filled().0, qs))?;
        d.set_item("client_id", o.client_id().map(values::uuid_text))?;
        d.set_item("created", o.created().0)?;
        d.set_item("updated", o.updated().0)?;
        Ok(d)
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
        start_time_ns: i64,
        market_data: bool,
        keep_events: bool,
    ) -> PyResult<Self> {
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
        let mut core = Core {
            engine,
            market,
            pending: Vec::new(),
            keep_events,
        };
        let currencies: Vec<(String, CurrencyId, u8)> = core
            .engine
            .currencies()
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let id = CurrencyId(i as u16);
                (
                    c.code.clone(),
                    id,
                    core.engine.balance_scale(id).unwrap_or(0),
                )
            })
            .collect();
        let directory = matchbook_config::provision(
            &exchange.holders,
            |code| currencies.iter().find(|c| c.0 == code).map(|c| (c.1, c.2)),
            |command| core.apply(&command, Timestamp(start_time_ns)),
        )
        .map_err(|e| invalid(py, e.to_string()))?;
        core.pending.clear();
        Ok(Self { core, directory })
    }

    /// Every instrument: code, index, base, quote, type, state and precisions.
    fn instruments<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (i, inst) in self.core.engine.instruments().iter().enumerate() {
            let d = PyDict::new(py);
            d.set_item("code", inst.code())?;
            d.set_item("index", i)?;
            d.set_item("base", &inst.spec.base)?;
            d.set_item("quote", &inst.spec.quote)?;
            d.set_item("type", inst.spec.kind.as_str())?;
            d.set_item("state", inst.state.as_str())?;
            d.set_item("amount_precision", inst.spec.amount_precision)?;
            d.set_item("market_precision", inst.spec.market_precision)?;
            d.set_item("min_size", &inst.spec.min_size)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// Every currency: code, index, precision and balance scale.
    fn currencies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (i, c) in self.core.engine.currencies().iter().enumerate() {
            let d = PyDict::new(py);
            d.set_item("code", &c.code)?;
            d.set_item("index", i)?;
            d.set_item("precision", c.precision)?;
            d.set_item(
                "scale",
                self.core
                    .engine
                    .balance_scale(CurrencyId(i as u16))
                    .unwrap_or(0),
            )?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// (holder id, account id) of a configured holder's account.
    fn account(&self, py: Python<'_>, holder: &str, name: &str) -> PyResult<(u32, u32)> {
        let entry = self
            .directory
            .get(holder)
            .ok_or_else(|| errors::engine(py, EngineError::UnknownHolder))?;
        let account = entry
            .accounts
            .get(name)
            .ok_or_else(|| errors::engine(py, EngineError::UnknownAccount))?;
        Ok((entry.holder.0, account.0))
    }

    /// Creates a holder with its main account: (holder id, account id).
    fn create_holder(&mut self, py: Python<'_>, time_ns: i64) -> PyResult<(u32, u32)> {
        let a = self.run(py, Command::CreateHolder, time_ns)?;
        Ok((a.holder.map_or(0, |h| h.0), a.account.map_or(0, |a| a.0)))
    }

    /// Creates a subaccount; its id.
    #[pyo3(signature = (time_ns, holder, name, kind = "regular"))]
    fn create_subaccount(
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        holder: u32,
        name: &str,
        kind: &str,
    ) -> PyResult<u32> {
        let kind = values::account_kind(py, kind)?;
        let command = Command::CreateSubaccount {
            holder: HolderId(holder),
            name: name.to_owned(),
            kind,
        };
        Ok(self.run(py, command, time_ns)?.account.map_or(0, |a| a.0))
    }

    /// Closes a subaccount (its open orders are cancelled).
    fn close_subaccount(&mut self, py: Python<'_>, time_ns: i64, account: u32) -> PyResult<()> {
        self.run(
            py,
            Command::CloseSubaccount {
                account: AccountId(account),
            },
            time_ns,
        )
        .map(drop)
    }

    /// Credits `amount` (decimal text) of `currency` (admin).
    fn deposit(
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        account: u32,
        currency: &str,
        amount: &str,
    ) -> PyResult<()> {
        let (id, scale) = currency_of(py, &self.core.engine, currency)?;
        let amount = values::fixed(py, amount, scale, "amount")?;
        self.run(
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
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        account: u32,
        currency: &str,
        amount: &str,
    ) -> PyResult<()> {
        let (id, scale) = currency_of(py, &self.core.engine, currency)?;
        let amount = values::fixed(py, amount, scale, "amount")?;
        self.run(
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
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        holder: u32,
        source: u32,
        destination: u32,
        currency: &str,
        amount: &str,
    ) -> PyResult<()> {
        let (id, scale) = currency_of(py, &self.core.engine, currency)?;
        let amount = values::fixed(py, amount, scale, "amount")?;
        let command = Command::Transfer {
            holder: HolderId(holder),
            source: AccountId(source),
            destination: AccountId(destination),
            currency: id,
            amount,
        };
        self.run(py, command, time_ns).map(drop)
    }

    /// Sets or clears de-risk on an account (admin).
    fn set_derisk(&mut self, py: Python<'_>, time_ns: i64, account: u32, on: bool) -> PyResult<()> {
        self.run(
            py,
            Command::SetDerisk {
                account: AccountId(account),
                on,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Sets a BLP account's minimum balance of `currency` (admin).
    fn set_blp_threshold(
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        account: u32,
        currency: &str,
        amount: &str,
    ) -> PyResult<()> {
        let (id, scale) = currency_of(py, &self.core.engine, currency)?;
        let amount = values::fixed(py, amount, scale, "amount")?;
        self.run(
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
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        account: u32,
        mode: &str,
    ) -> PyResult<()> {
        let mode = values::stp(py, mode)?;
        self.run(
            py,
            Command::SetStpMode {
                account: AccountId(account),
                mode,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Changes an instrument's state (admin).
    fn set_instrument_state(
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        instrument: &str,
        state: &str,
    ) -> PyResult<()> {
        let id = instrument_of(py, &self.core.engine, instrument)?;
        let state = values::instrument_state(py, state)?;
        self.run(
            py,
            Command::SetInstrumentState {
                instrument: id,
                state,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Places an order; its handle (an int).
    #[pyo3(signature = (time_ns, account, instrument, side, amount, price = None, order_type = "LIMIT", time_in_force = "GOOD_TILL_CANCELLED", trigger_price = None, expire_at_ns = None, client_id = None, stp = None, reduce_only = false))]
    #[allow(clippy::too_many_arguments, reason = "mirrors the Python signature")]
    fn place_order(
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        account: u32,
        instrument: &str,
        side: &str,
        amount: &str,
        price: Option<&str>,
        order_type: &str,
        time_in_force: &str,
        trigger_price: Option<&str>,
        expire_at_ns: Option<i64>,
        client_id: Option<&str>,
        stp: Option<&str>,
        reduce_only: bool,
    ) -> PyResult<u128> {
        let id = instrument_of(py, &self.core.engine, instrument)?;
        let (ps, qs) = values::scales(py, &self.core.engine, id)?;
        let order = NewOrder {
            account: AccountId(account),
            instrument: id,
            side: values::side(py, side)?,
            order_type: values::order_type(py, order_type)?,
            time_in_force: values::time_in_force(py, time_in_force)?,
            price: price
                .map(|p| values::fixed(py, p, ps, "price").map(Price))
                .transpose()?,
            trigger_price: trigger_price
                .map(|p| values::fixed(py, p, ps, "trigger price").map(Price))
                .transpose()?,
            amount: Qty(values::fixed(py, amount, qs, "amount")?),
            expire_at: expire_at_ns.map(Timestamp),
            client_id: client_id.map(|c| values::uuid(py, c)).transpose()?,
            stp: stp.map(|s| values::stp(py, s)).transpose()?,
            reduce_only,
        };
        let applied = self.run(py, Command::PlaceOrder(order), time_ns)?;
        Ok(applied.order.map_or(0, pack))
    }

    /// Amends an open order's amount and/or price (None: unchanged).
    #[pyo3(signature = (time_ns, account, order, amount = None, price = None))]
    fn amend_order(
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        account: u32,
        order: u128,
        amount: Option<&str>,
        price: Option<&str>,
    ) -> PyResult<()> {
        let handle = unpack(order);
        let instrument = self
            .core
            .engine
            .order(handle)
            .map(Order::instrument)
            .ok_or_else(|| errors::engine(py, EngineError::OrderNotFound))?;
        let (ps, qs) = values::scales(py, &self.core.engine, instrument)?;
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
        self.run(py, command, time_ns).map(drop)
    }

    /// Cancels one order.
    fn cancel_order(
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        account: u32,
        order: u128,
    ) -> PyResult<()> {
        self.run(
            py,
            Command::CancelOrder {
                account: AccountId(account),
                order: unpack(order),
            },
            time_ns,
        )
        .map(drop)
    }

    /// Cancels the newest open order with `client_id`.
    fn cancel_by_client_id(
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        account: u32,
        client_id: &str,
    ) -> PyResult<()> {
        let client_id = values::uuid(py, client_id)?;
        self.run(
            py,
            Command::CancelByClientId {
                account: AccountId(account),
                client_id,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Cancels every open order of the account, or those in `instrument`, or the listed
    /// handles, or the newest open order for each listed client id.
    #[pyo3(signature = (time_ns, account, instrument = None, orders = None, client_ids = None))]
    #[allow(clippy::too_many_arguments, reason = "mirrors the Python signature")]
    fn cancel_all(
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        account: u32,
        instrument: Option<&str>,
        orders: Option<Vec<u128>>,
        client_ids: Option<Vec<String>>,
    ) -> PyResult<()> {
        let scope = match (instrument, orders, client_ids) {
            (None, None, None) => CancelScope::All,
            (Some(code), None, None) => {
                CancelScope::Instrument(instrument_of(py, &self.core.engine, code)?)
            }
            (None, Some(list), None) => CancelScope::Orders(list.into_iter().map(unpack).collect()),
            (None, None, Some(ids)) => CancelScope::ClientIds(
                ids.iter()
                    .map(|id| values::uuid(py, id))
                    .collect::<PyResult<_>>()?,
            ),
            _ => return Err(invalid(py, "give one of instrument, orders or client_ids")),
        };
        self.run(
            py,
            Command::CancelAll {
                account: AccountId(account),
                scope,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Sets a futures instrument's index price (admin).
    fn set_index_price(
        &mut self,
        py: Python<'_>,
        time_ns: i64,
        instrument: &str,
        price: &str,
    ) -> PyResult<()> {
        let id = instrument_of(py, &self.core.engine, instrument)?;
        let (ps, _) = values::scales(py, &self.core.engine, id)?;
        let price = Price(values::fixed(py, price, ps, "price")?);
        self.run(
            py,
            Command::SetIndexPrice {
                instrument: id,
                price,
            },
            time_ns,
        )
        .map(drop)
    }

    /// Closes an account's futures positions against the book (admin).
    fn liquidate(&mut self, py: Python<'_>, time_ns: i64, account: u32) -> PyResult<()> {
        self.run(
            py,
            Command::Liquidate {
                account: AccountId(account),
            },
            time_ns,
        )
        .map(drop)
    }

    /// Moves time to `time_ns`: expiries, funding samples and settlements.
    fn advance_time(&mut self, py: Python<'_>, time_ns: i64) -> PyResult<()> {
        self.run(py, Command::AdvanceTime, time_ns).map(drop)
    }

    /// Engine time (the latest time applied).
    fn now(&self) -> i64 {
        self.core.engine.now().0
    }

    /// Fees collected by the exchange, by currency code (decimal text).
    fn fees_collected<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let engine = &self.core.engine;
        let d = PyDict::new(py);
        for (i, (c, fee)) in engine
            .currencies()
            .iter()
            .zip(engine.fees_collected())
            .enumerate()
        {
            let scale = engine.balance_scale(CurrencyId(i as u16)).unwrap_or(0);
            d.set_item(&c.code, values::text(*fee, scale))?;
        }
        Ok(d)
    }

    /// The state hash: equal engines, equal hashes.
    fn state_hash(&self) -> u64 {
        self.core.engine.state_hash()
    }

    /// Balances by currency code: (available, locked) as decimal text.
    fn balances<'py>(&self, py: Python<'py>, account: u32) -> PyResult<Bound<'py, PyDict>> {
        let engine = &self.core.engine;
        let view = engine
            .account(AccountId(account))
            .map_err(|e| errors::engine(py, e))?;
        let d = PyDict::new(py);
        for (i, c) in engine.currencies().iter().enumerate() {
            let scale = engine.balance_scale(CurrencyId(i as u16)).unwrap_or(0);
            let b = view.balances[i];
            d.set_item(
                &c.code,
                (
                    values::text(b.available, scale),
                    values::text(b.locked, scale),
                ),
            )?;
        }
        Ok(d)
    }

    /// An account's open orders, oldest first.
    fn open_orders<'py>(&self, py: Python<'py>, account: u32) -> PyResult<Bound<'py, PyList>> {
        self.core
            .engine
            .account(AccountId(account))
            .map_err(|e| errors::engine(py, e))?;
        let list = PyList::empty(py);
        for o in self.core.engine.open_orders(AccountId(account)) {
            list.append(self.order_dict(py, o)?)?;
        }
        Ok(list)
    }

    /// One open order of `account` by handle, or by client id.
    #[pyo3(signature = (account, order = None, client_id = None))]
    fn order<'py>(
        &self,
        py: Python<'py>,
        account: u32,
        order: Option<u128>,
        client_id: Option<&str>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let engine = &self.core.engine;
        let found = match (order, client_id) {
            (Some(h), None) => engine
                .order(unpack(h))
                .filter(|o| o.account() == AccountId(account)),
            (None, Some(c)) => {
                let id = values::uuid(py, c)?;
                engine
                    .open_orders(AccountId(account))
                    .into_iter()
                    .filter(|o| o.client_id() == Some(id))
                    .max_by_key(|o| o.sequence())
            }
            _ => return Err(invalid(py, "give order or client_id")),
        };
        let o = found.ok_or_else(|| errors::engine(py, EngineError::OrderNotFound))?;
        self.order_dict(py, o)
    }

    /// An order's history record (open or not): status, filled, average price, fees.
    fn order_history<'py>(
        &self,
        py: Python<'py>,
        account: u32,
        order_id: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let market = self
            .core
            .market
            .as_ref()
            .ok_or_else(|| invalid(py, "market data is off"))?;
        let r = market
            .orders()
            .get(AccountId(account), order_id)
            .ok_or_else(|| errors::engine(py, EngineError::OrderNotFound))?;
        let (ps, qs) = values::scales(py, &self.core.engine, r.accepted.instrument)?;
        let d = PyDict::new(py);
        d.set_item("id", order_id)?;
        d.set_item("status", r.status.as_str())?;
        d.set_item("amount", values::text(r.accepted.amount.0, qs))?;
        d.set_item("filled", values::text(r.filled.0, qs))?;
        d.set_item(
            "average_price",
            r.average_price().map(|p| values::text(p.0, ps)),
        )?;
        d.set_item("total_fee", r.total_fee)?;
        d.set_item("trades", r.trades.iter().map(|t| t.0).collect::<Vec<_>>())?;
        d.set_item("created", r.created.0)?;
        d.set_item("updated", r.updated.0)?;
        Ok(d)
    }

    /// The book: level 1 or 2 as price levels `(price, amount, orders)` (decimal text),
    /// level 3 as orders `(price, amount, order handle, account)`, best first.
    #[pyo3(signature = (instrument, depth = 10, level = 2))]
    fn book<'py>(
        &self,
        py: Python<'py>,
        instrument: &str,
        depth: usize,
        level: u8,
    ) -> PyResult<Bound<'py, PyDict>> {
        let engine = &self.core.engine;
        let id = instrument_of(py, engine, instrument)?;
        let (ps, qs) = values::scales(py, engine, id)?;
        let d = PyDict::new(py);
        match level {
            1 | 2 => {
                let depth = if level == 1 { 1 } else { depth };
                let view = engine
                    .book_levels(id, depth)
                    .map_err(|e| errors::engine(py, e))?;
                let side = |levels: &[matchbook::LevelView]| {
                    levels
                        .iter()
                        .map(|l| {
                            (
                                values::text(l.price.0, ps),
                                values::text(l.amount.0, qs),
                                l.number_of_orders,
                            )
                        })
                        .collect::<Vec<_>>()
                };
                d.set_item("bids", side(&view.bids))?;
                d.set_item("asks", side(&view.asks))?;
                d.set_item("sequence", view.sequence)?;
            }
            3 => {
                let view = engine
                    .book_orders(id, depth)
                    .map_err(|e| errors::engine(py, e))?;
                let side = |orders: &[matchbook::OrderView]| {
                    orders
                        .iter()
                        .map(|o| {
                            (
                                values::text(o.price.0, ps),
                                values::text(o.amount.0, qs),
                                pack(o.order),
                                o.account.0,
                            )
                        })
                        .collect::<Vec<_>>()
                };
                d.set_item("bids", side(&view.bids))?;
                d.set_item("asks", side(&view.asks))?;
                d.set_item("sequence", view.sequence)?;
            }
            other => return Err(invalid(py, format!("level {other}: 1, 2 or 3"))),
        }
        Ok(d)
    }

    /// Price levels as numpy columns, bids (best first) then asks (best first): `side`
    /// (0 bid, 1 ask), `price` (ticks), `amount` (lots), `orders`.
    #[pyo3(signature = (instrument, depth = 10))]
    fn book_columns<'py>(
        &self,
        py: Python<'py>,
        instrument: &str,
        depth: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let id = instrument_of(py, &self.core.engine, instrument)?;
        let view = self
            .core
            .engine
            .book_levels(id, depth)
            .map_err(|e| errors::engine(py, e))?;
        let levels: Vec<(u8, &matchbook::LevelView)> = view
            .bids
            .iter()
            .map(|l| (0, l))
            .chain(view.asks.iter().map(|l| (1, l)))
            .collect();
        let d = PyDict::new(py);
        let sides: Vec<u8> = levels.iter().map(|(s, _)| *s).collect();
        let prices: Vec<i64> = levels.iter().map(|(_, l)| l.price.0).collect();
        let amounts: Vec<i64> = levels.iter().map(|(_, l)| l.amount.0).collect();
        let orders: Vec<u32> = levels.iter().map(|(_, l)| l.number_of_orders).collect();
        d.set_item("side", PyArray1::from_vec(py, sides))?;
        d.set_item("price", PyArray1::from_vec(py, prices))?;
        d.set_item("amount", PyArray1::from_vec(py, amounts))?;
        d.set_item("orders", PyArray1::from_vec(py, orders))?;
        Ok(d)
    }

    /// Candles as numpy columns (prices in ticks, amounts in lots), oldest first.
    fn candles<'py>(
        &self,
        py: Python<'py>,
        instrument: &str,
        unit: &str,
        period: u32,
        from_ns: i64,
        to_ns: i64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let market = self
            .core
            .market
            .as_ref()
            .ok_or_else(|| invalid(py, "market data is off"))?;
        let id = instrument_of(py, &self.core.engine, instrument)?;
        let unit = match unit {
            "MINUTES" => Unit::Minutes,
            "HOURS" => Unit::Hours,
            "DAYS" => Unit::Days,
            "WEEKS" => Unit::Weeks,
            "MONTHS" => Unit::Months,
            other => {
                return Err(invalid(
                    py,
                    format!("unit {other:?}: MINUTES, HOURS, DAYS, WEEKS or MONTHS"),
                ));
            }
        };
        let granularity = Granularity::new(unit, period)
            .map_err(|e| invalid(py, format!("period {period}: {e}")))?;
        let mut candles = market
            .candles(id, granularity, Timestamp(from_ns), Timestamp(to_ns), None)
            .map_err(|e| invalid(py, e.to_string()))?;
        candles.reverse();
        let d = PyDict::new(py);
        let col = |f: fn(&matchbook::market::candles::Candle) -> i64| {
            candles.iter().map(f).collect::<Vec<i64>>()
        };
        d.set_item("start", PyArray1::from_vec(py, col(|c| c.start.0)))?;
        d.set_item("open", PyArray1::from_vec(py, col(|c| c.open)))?;
        d.set_item("high", PyArray1::from_vec(py, col(|c| c.high)))?;
        d.set_item("low", PyArray1::from_vec(py, col(|c| c.low)))?;
        d.set_item("close", PyArray1::from_vec(py, col(|c| c.close)))?;
        d.set_item("volume", PyArray1::from_vec(py, col(|c| c.total_amount)))?;
        Ok(d)
    }

    /// The 24-hour ticker at engine time (decimal text).
    fn ticker<'py>(&self, py: Python<'py>, instrument: &str) -> PyResult<Bound<'py, PyDict>> {
        let market = self
            .core
            .market
            .as_ref()
            .ok_or_else(|| invalid(py, "market data is off"))?;
        let id = instrument_of(py, &self.core.engine, instrument)?;
        let (ps, qs) = values::scales(py, &self.core.engine, id)?;
        let t = market
            .ticker(id, self.core.engine.now())
            .map_err(|e| invalid(py, e.to_string()))?;
        let d = PyDict::new(py);
        d.set_item("instrument", instrument)?;
        d.set_item("open", values::text(t.stats.open, ps))?;
        d.set_item("high", values::text(t.stats.high, ps))?;
        d.set_item("low", values::text(t.stats.low, ps))?;
        d.set_item("last", values::text(t.stats.last, ps))?;
        d.set_item("base_volume", values::text(t.stats.base_volume, qs))?;
        d.set_item(
            "quote_volume",
            values::wide_text(t.stats.quote_volume, ps + qs),
        )?;
        d.set_item("trades", t.stats.trades)?;
        d.set_item("bid", t.highest_bid.map(|p| values::text(p.0, ps)))?;
        d.set_item("ask", t.lowest_ask.map(|p| values::text(p.0, ps)))?;
        Ok(d)
    }

    /// An account's futures positions (decimal text; money in USD).
    fn positions<'py>(&self, py: Python<'py>, account: u32) -> PyResult<Bound<'py, PyList>> {
        let engine = &self.core.engine;
        engine
            .account(AccountId(account))
            .map_err(|e| errors::engine(py, e))?;
        let list = PyList::empty(py);
        for p in engine.positions(AccountId(account)) {
            let (ps, qs) = values::scales(py, engine, p.instrument)?;
            let money = engine
                .currency_by_code("USD")
                .and_then(|c| engine.balance_scale(c).ok())
                .unwrap_or(0);
            let d = PyDict::new(py);
            d.set_item(
                "instrument",
                engine
                    .instrument(p.instrument)
                    .map(|i| i.code().to_owned())
                    .unwrap_or_default(),
            )?;
            d.set_item("position_id", p.position_id)?;
            d.set_item("size", values::text(p.size, qs))?;
            d.set_item("entry_price", values::text(p.entry_price.0, ps))?;
            d.set_item("mark_price", values::text(p.mark_price.0, ps))?;
            d.set_item("unrealised", values::wide_text(p.unrealised, money))?;
            d.set_item("realised", values::text(p.realised, money))?;
            d.set_item("initial_margin", values::wide_text(p.initial_margin, money))?;
            d.set_item(
                "maintenance_margin",
                values::wide_text(p.maintenance_margin, money),
            )?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// Funding state of a futures instrument (rates in 1e-8 per period).
    fn funding<'py>(&self, py: Python<'py>, instrument: &str) -> PyResult<Bound<'py, PyDict>> {
        let engine = &self.core.engine;
        let id = instrument_of(py, engine, instrument)?;
        let (ps, _) = values::scales(py, engine, id)?;
        let f = engine.funding_view(id).map_err(|e| errors::engine(py, e))?;
        let d = PyDict::new(py);
        d.set_item("mark_price", f.mark_price.map(|p| values::text(p.0, ps)))?;
        d.set_item("index_price", f.index_price.map(|p| values::text(p.0, ps)))?;
        d.set_item("funding_rate", f.funding_rate)?;
        d.set_item("last_rate", f.last_rate)?;
        d.set_item("next_settlement", f.next_settlement.map(|t| t.0))?;
        d.set_item("open_interest", f.open_interest)?;
        Ok(d)
    }

    /// Trades numbered after `after` (all retained by default) as numpy columns, prices in
    /// ticks and amounts in lots of each trade's instrument.
    #[pyo3(signature = (after = 0, instrument = None))]
    fn trades<'py>(
        &self,
        py: Python<'py>,
        after: u64,
        instrument: Option<&str>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let market = self
            .core
            .market
            .as_ref()
            .ok_or_else(|| invalid(py, "market data is off"))?;
        let only = instrument
            .map(|c| instrument_of(py, &self.core.engine, c))
            .transpose()?;
        let rows: Vec<&matchbook::market::trades::TradeRecord> = market
            .trades()
            .since(after)
            .filter(|r| only.is_none_or(|i| r.trade.instrument == i))
            .collect();
        let d = PyDict::new(py);
        let u = |f: fn(&matchbook::market::trades::TradeRecord) -> u64| {
            rows.iter().map(|r| f(r)).collect::<Vec<u64>>()
        };
        let i = |f: fn(&matchbook::market::trades::TradeRecord) -> i64| {
            rows.iter().map(|r| f(r)).collect::<Vec<i64>>()
        };
        d.set_item("id", PyArray1::from_vec(py, u(|r| r.trade.id.0)))?;
        d.set_item("time", PyArray1::from_vec(py, i(|r| r.time.0)))?;
        d.set_item(
            "instrument",
            PyArray1::from_vec(py, u(|r| u64::from(r.trade.instrument.0))),
        )?;
        d.set_item("price", PyArray1::from_vec(py, i(|r| r.trade.price.0)))?;
        d.set_item("amount", PyArray1::from_vec(py, i(|r| r.trade.amount.0)))?;
        d.set_item(
            "taker_side",
            PyArray1::from_vec(
                py,
                u(|r| u64::from(r.trade.taker_side == matchbook::Side::Sell)),
            ),
        )?;
        d.set_item(
            "taker_account",
            PyArray1::from_vec(py, u(|r| u64::from(r.trade.taker_account.0))),
        )?;
        d.set_item(
            "maker_account",
            PyArray1::from_vec(py, u(|r| u64::from(r.trade.maker_account.0))),
        )?;
        d.set_item(
            "taker_order",
            PyArray1::from_vec(py, u(|r| r.trade.taker.id)),
        )?;
        d.set_item(
            "maker_order",
            PyArray1::from_vec(py, u(|r| r.trade.maker.id)),
        )?;
        d.set_item(
            "taker_fee",
            PyArray1::from_vec(py, i(|r| r.trade.taker_fee)),
        )?;
        d.set_item(
            "maker_fee",
            PyArray1::from_vec(py, i(|r| r.trade.maker_fee)),
        )?;
        Ok(d)
    }

    /// The events since the last poll, as dicts.
    fn poll_events<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for record in &self.core.pending {
            list.append(events::to_dict(py, record)?)?;
        }
        self.core.pending.clear();
        Ok(list)
    }

    /// Limit orders as numpy columns (`side` 0 buy / 1 sell; `tif` 0 GTC, 1 IOC, 2 FOK,
    /// 3 post-only; prices in ticks, amounts in lots), applied in order with the GIL
    /// released. Returns columns `status` (0 or the error code), `order_id`, `slot`.
    #[allow(clippy::too_many_arguments, reason = "one numpy column each")]
    fn submit_orders<'py>(
        &mut self,
        py: Python<'py>,
        time_ns: PyReadonlyArray1<'py, i64>,
        account: PyReadonlyArray1<'py, u32>,
        instrument: PyReadonlyArray1<'py, u16>,
        side: PyReadonlyArray1<'py, u8>,
        price: PyReadonlyArray1<'py, i64>,
        amount: PyReadonlyArray1<'py, i64>,
        tif: PyReadonlyArray1<'py, u8>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let columns = OrderColumns {
            time: column(py, &time_ns, "time_ns")?,
            account: column(py, &account, "account")?,
            instrument: column(py, &instrument, "instrument")?,
            side: column(py, &side, "side")?,
            price: column(py, &price, "price")?,
            amount: column(py, &amount, "amount")?,
            tif: column(py, &tif, "tif")?,
        };
        let n = columns.time.len();
        let lengths = [
            columns.account.len(),
            columns.instrument.len(),
            columns.side.len(),
            columns.price.len(),
            columns.amount.len(),
            columns.tif.len(),
        ];
        if lengths.iter().any(|&l| l != n) {
            return Err(invalid(
                py,
                format!("columns of different lengths: {n} times, {lengths:?}"),
            ));
        }
        let core = &mut self.core;
        let answers = py.detach(|| batch::place(core, &columns));
        let d = PyDict::new(py);
        d.set_item("status", PyArray1::from_vec(py, answers.status))?;
        d.set_item("order_id", PyArray1::from_vec(py, answers.order_id))?;
        d.set_item("slot", PyArray1::from_vec(py, answers.slot))?;
        Ok(d)
    }
}
