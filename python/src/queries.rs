//! The reading half of `NativeEngine`: balances, orders and their history, the book at
//! every level, candles, tickers, positions, funding, trades as numpy columns, events,
//! time, fees and the state hash. Decimal values go out as text at their scale.

use matchbook::market::period::{Granularity, Unit};
use matchbook::reference::ReferenceData;
use matchbook::{AccountId, CurrencyId, EngineError, Order, Timestamp};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::engine::{Inner, NativeEngine, instrument_of};
use crate::errors::{self, invalid};
use crate::events;
use crate::ints::{int, opt};
use crate::values::{self, pack};

impl Inner {
    pub(crate) fn order_dict<'py>(
        &self,
        py: Python<'py>,
        o: &Order,
    ) -> PyResult<Bound<'py, PyDict>> {
        order_dict(py, self.reference(py)?, o)
    }
}

/// An open order as a dict, its values at the scales of the definition's reference data.
pub(crate) fn order_dict<'py>(
    py: Python<'py>,
    reference: &ReferenceData,
    o: &Order,
) -> PyResult<Bound<'py, PyDict>> {
    let (ps, qs) = values::scales(py, reference, o.instrument())?;
    let d = PyDict::new(py);
    d.set_item("handle", pack(o.handle()))?;
    d.set_item("id", o.handle().id)?;
    d.set_item("account", o.account().0)?;
    d.set_item(
        "instrument",
        (reference.market_of(o.instrument()))
            .map(|m| m.code.clone())
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
    d.set_item("trigger_reference", o.trigger_ref().as_str())?;
    let state = match o.state() {
        matchbook::LiveState::Resting => "RESTING",
        matchbook::LiveState::PendingTrigger => "HELD",
        matchbook::LiveState::Taking => "TAKING",
    };
    d.set_item("state", state)?;
    d.set_item("amount", values::text(o.amount().0, qs))?;
    d.set_item("filled", values::text(o.filled().0, qs))?;
    d.set_item("client_id", o.client_id().map(values::uuid_text))?;
    d.set_item("created", o.created().0)?;
    d.set_item("updated", o.updated().0)?;
    Ok(d)
}

/// Balances by currency code, (available, locked) as decimal text, from `balances` in
/// currency order.
pub(crate) fn balances_dict<'py>(
    py: Python<'py>,
    reference: &ReferenceData,
    balances: impl Iterator<Item = (i64, i64)>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (c, (available, locked)) in reference.currencies.iter().zip(balances) {
        let scale = c.scale;
        d.set_item(
            &c.code,
            (values::text(available, scale), values::text(locked, scale)),
        )?;
    }
    Ok(d)
}

#[pymethods]
impl NativeEngine {
    /// Engine time (the latest time applied).
    fn now(&self, py: Python<'_>) -> PyResult<i64> {
        let this = self.lock(py)?;
        Ok(this.engine(py)?.now().0)
    }

    /// Number of the newest trade the engine made (0 before the first).
    fn last_trade_id(&self, py: Python<'_>) -> PyResult<u64> {
        let this = self.lock(py)?;
        Ok(this.engine(py)?.last_trade_id())
    }

    /// Fees collected by the exchange, by currency code (decimal text).
    fn fees_collected<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let this = self.lock(py)?;
        let engine = this.engine(py)?;
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
    fn state_hash(&self, py: Python<'_>) -> PyResult<u64> {
        let this = self.lock(py)?;
        Ok(this.engine(py)?.state_hash())
    }

    /// Balances by currency code: (available, locked) as decimal text.
    fn balances<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
    ) -> PyResult<Bound<'py, PyDict>> {
        let this = self.lock(py)?;
        let engine = this.engine(py)?;
        let view = engine
            .account(AccountId(account))
            .map_err(|e| errors::engine(py, e))?;
        let count = engine.currencies().len();
        let balances = (0..count).map(|i| {
            let b = view.balances.get(CurrencyId(i as u16));
            (b.available, b.locked)
        });
        balances_dict(py, &this.reference, balances)
    }

    /// An account's open orders, oldest first.
    fn open_orders<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
    ) -> PyResult<Bound<'py, PyList>> {
        let this = self.lock(py)?;
        this.engine(py)?
            .account(AccountId(account))
            .map_err(|e| errors::engine(py, e))?;
        let list = PyList::empty(py);
        for o in this.engine(py)?.open_orders(AccountId(account)) {
            list.append(this.order_dict(py, o)?)?;
        }
        Ok(list)
    }

    /// One open order of `account` by handle, or by client id.
    #[pyo3(signature = (account, order = None, client_id = None))]
    fn order<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        #[pyo3(from_py_with = opt::<u128>)] order: Option<u128>,
        client_id: Option<&str>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let this = self.lock(py)?;
        let engine = this.engine(py)?;
        let found = match (order, client_id) {
            (Some(h), None) => engine
                .order(this.order_ref(py, account, h)?)
                .filter(|o| o.account() == AccountId(account)),
            (None, Some(c)) => {
                let id = values::uuid(py, c)?;
                engine.order_by_client_id(AccountId(account), id)
            }
            _ => return Err(invalid(py, "give order or client_id")),
        };
        let o = found.ok_or_else(|| errors::engine(py, EngineError::OrderNotFound))?;
        this.order_dict(py, o)
    }

    /// An order's history record (open or not): status, filled, average price, fees.
    fn order_history<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        #[pyo3(from_py_with = int::<u64>)] order_id: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let this = self.lock(py)?;
        let market = this.market_data(py)?;
        let r = market
            .orders()
            .get(AccountId(account), order_id)
            .ok_or_else(|| errors::engine(py, EngineError::OrderNotFound))?;
        this.record_dict(py, r)
    }

    /// The book: level 1 or 2 as price levels `(price, amount, orders)` (decimal text),
    /// level 3 as orders `(price, amount, order handle, account)`, best first.
    #[pyo3(signature = (instrument, depth = 10, level = 2))]
    fn book<'py>(
        &self,
        py: Python<'py>,
        instrument: &str,
        #[pyo3(from_py_with = int::<usize>)] depth: usize,
        #[pyo3(from_py_with = int::<u8>)] level: u8,
    ) -> PyResult<Bound<'py, PyDict>> {
        let this = self.lock(py)?;
        let engine = this.engine(py)?;
        let id = instrument_of(py, &this.reference, instrument)?;
        let (ps, qs) = values::scales(py, &this.reference, id)?;
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
        #[pyo3(from_py_with = int::<usize>)] depth: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let this = self.lock(py)?;
        let id = instrument_of(py, this.reference(py)?, instrument)?;
        let view = this
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
        #[pyo3(from_py_with = int::<u32>)] period: u32,
        #[pyo3(from_py_with = int::<i64>)] from_ns: i64,
        #[pyo3(from_py_with = int::<i64>)] to_ns: i64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let this = self.lock(py)?;
        let market = this.market_data(py)?;
        let id = instrument_of(py, this.reference(py)?, instrument)?;
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
        // No candle for a period after the engine's time (it would be flat, made up).
        let to = Timestamp(to_ns).min(this.engine(py)?.now());
        let mut candles = if Timestamp(from_ns) > to {
            Vec::new()
        } else {
            market
                .candles(id, granularity, Timestamp(from_ns), to, None)
                .map_err(|e| invalid(py, e.to_string()))?
        };
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
        d.set_item(
            "total_amount",
            PyArray1::from_vec(py, col(|c| c.total_amount)),
        )?;
        // As C's `mb_candle.volume`: saturated at the i64 range (numpy has no i128).
        let quote = |c: &matchbook::market::candles::Candle| {
            i64::try_from(c.volume).unwrap_or(if c.volume < 0 { i64::MIN } else { i64::MAX })
        };
        d.set_item(
            "volume",
            PyArray1::from_vec(py, candles.iter().map(quote).collect::<Vec<i64>>()),
        )?;
        Ok(d)
    }

    /// The 24-hour ticker at engine time (decimal text).
    fn ticker<'py>(&self, py: Python<'py>, instrument: &str) -> PyResult<Bound<'py, PyDict>> {
        let this = self.lock(py)?;
        let market = this.market_data(py)?;
        let id = instrument_of(py, this.reference(py)?, instrument)?;
        let (ps, qs) = values::scales(py, this.reference(py)?, id)?;
        let t = market
            .ticker(id, this.engine(py)?.now())
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
    fn positions<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
    ) -> PyResult<Bound<'py, PyList>> {
        let this = self.lock(py)?;
        let engine = this.engine(py)?;
        engine
            .account(AccountId(account))
            .map_err(|e| errors::engine(py, e))?;
        let list = PyList::empty(py);
        for p in engine.positions(AccountId(account)) {
            let (ps, qs) = values::scales(py, &this.reference, p.instrument)?;
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
        let this = self.lock(py)?;
        let engine = this.engine(py)?;
        let id = instrument_of(py, &this.reference, instrument)?;
        let (ps, _) = values::scales(py, &this.reference, id)?;
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

    /// Number of the oldest trade history still holds (the next trade's when it holds none).
    fn oldest_trade_id(&self, py: Python<'_>) -> PyResult<u64> {
        let this = self.lock(py)?;
        Ok(this.market_data(py)?.trades().first_retained())
    }

    /// Trades numbered after `after` (all retained by default) as numpy columns, prices in
    /// ticks and amounts in lots of each trade's instrument.
    #[pyo3(signature = (after = 0, instrument = None))]
    fn trades<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int::<u64>)] after: u64,
        instrument: Option<&str>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let this = self.lock(py)?;
        let market = this.market_data(py)?;
        let only = instrument
            .map(|c| instrument_of(py, this.reference(py)?, c))
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
    fn poll_events<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut this = self.lock(py)?;
        this.engine(py)?;
        if !this.core.keeps_events() {
            return Err(invalid(
                py,
                "events are off: the engine was made with keep_events=False",
            ));
        }
        let list = PyList::empty(py);
        for record in &this.core.events {
            list.append(events::to_dict(py, record)?)?;
        }
        this.core.events.clear();
        Ok(list)
    }
}
