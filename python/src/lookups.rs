//! What a notebook looks up instead of reading events: every account, an account's order
//! history a page at a time (open and ended orders, newest first), one order's record and
//! its trades. Decimal values go out as text at their scale, as in `queries`.

use matchbook::market::order_terms::OrderTerms;
use matchbook::market::orders::{OrderFilter, OrderRecord};
use matchbook::reference::ReferenceData;
use matchbook::{AccountId, AccountState, EngineError, HolderId, Price, Trail};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::engine::{Inner, NativeEngine};
use crate::errors::{self, invalid};
use crate::ints::{int, opt};
use crate::values::{self, pack};

/// An order's terms beyond its record (every key present, `None` when it has no such
/// term): its trigger reference (trigger types), trail, limit offset, iceberg display,
/// OCO peer and bracket parent (as handles) and a bracket entry's exits.
fn add_terms(
    d: &Bound<'_, PyDict>,
    trigger: bool,
    terms: Option<&OrderTerms>,
    ps: u8,
    qs: u8,
) -> PyResult<()> {
    let t = terms.copied().unwrap_or_default();
    let price = |p: Option<Price>| p.map(|p| values::text(p.0, ps));
    d.set_item("trigger_reference", trigger.then(|| t.reference.as_str()))?;
    let (ticks, bps) = match t.trail {
        Some(Trail::Price(p)) => (Some(p), None),
        Some(Trail::Bps(b)) => (None, Some(b)),
        None => (None, None),
    };
    d.set_item("trailing_offset", price(ticks))?;
    d.set_item("trailing_offset_bps", bps)?;
    d.set_item("limit_offset", price(t.limit_offset))?;
    d.set_item("display", t.display.map(|q| values::text(q.0, qs)))?;
    d.set_item("linked_order", t.peer.map(pack))?;
    d.set_item("parent_order", t.parent.map(pack))?;
    let exits = t.exits;
    d.set_item("take_profit_price", price(exits.map(|e| e.take_profit)))?;
    d.set_item("stop_loss_price", price(exits.map(|e| e.stop_loss)))?;
    d.set_item(
        "stop_loss_limit_price",
        price(exits.and_then(|e| e.stop_limit)),
    )?;
    Ok(())
}

impl Inner {
    /// The engine for a read; `StorageError` after a failed journal write, when memory may
    /// hold commands the journal does not (until the directory is reopened).
    pub(crate) fn engine(&self, py: Python<'_>) -> PyResult<&matchbook::Engine> {
        self.core
            .readable()
            .map_err(|e| crate::errors::storage(py, &e))?;
        Ok(&self.core.engine)
    }

    /// The definition's reference data, as [`Inner::engine`] allows reads.
    pub(crate) fn reference(&self, py: Python<'_>) -> PyResult<&ReferenceData> {
        self.engine(py)?;
        Ok(&self.reference)
    }

    /// Market data for a read, or `InvalidArgument` for an engine made without it (and
    /// `StorageError` as [`NativeEngine::engine`] says).
    pub(crate) fn market_data(&self, py: Python<'_>) -> PyResult<&matchbook::market::MarketData> {
        self.engine(py)?;
        self.core
            .market
            .as_ref()
            .ok_or_else(|| invalid(py, "market data is off"))
    }

    /// An order's history record as a dict (decimal text at its instrument's scales).
    pub(crate) fn record_dict<'py>(
        &self,
        py: Python<'py>,
        r: &OrderRecord,
    ) -> PyResult<Bound<'py, PyDict>> {
        let terms = self.market_data(py)?.order_terms().get(r.accepted.order.id);
        record_dict(py, self.reference(py)?, r, terms)
    }
}

/// An order's history record as a dict (decimal text at its instrument's scales), with
/// its further `terms`.
pub(crate) fn record_dict<'py>(
    py: Python<'py>,
    reference: &ReferenceData,
    r: &OrderRecord,
    terms: Option<&OrderTerms>,
) -> PyResult<Bound<'py, PyDict>> {
    let a = &r.accepted;
    let (ps, qs) = values::scales(py, reference, a.instrument)?;
    let code = reference.market_of(a.instrument).map(|m| m.code.as_str());
    let d = PyDict::new(py);
    d.set_item("handle", pack(a.order))?;
    d.set_item("id", a.order.id)?;
    d.set_item("account", a.account.0)?;
    d.set_item("instrument", code.unwrap_or_default())?;
    d.set_item("side", a.side.as_str())?;
    d.set_item("order_type", a.order_type.as_str())?;
    d.set_item("time_in_force", a.time_in_force.as_str())?;
    d.set_item("status", r.status_name())?;
    d.set_item("reason", r.status.reason())?;
    d.set_item("price", a.price.map(|p| values::text(p.0, ps)))?;
    d.set_item(
        "trigger_price",
        a.trigger_price.map(|p| values::text(p.0, ps)),
    )?;
    d.set_item("amount", values::text(a.amount.0, qs))?;
    d.set_item("filled", values::text(r.filled.0, qs))?;
    d.set_item(
        "average_price",
        r.average_price().map(|p| values::text(p.0, ps)),
    )?;
    let (fee, fee_currency) = values::fee(py, reference, a.instrument, a.side, r.total_fee)?;
    d.set_item("total_fee", fee)?;
    d.set_item("fee_currency", fee_currency)?;
    d.set_item("trades", r.trades.iter().map(|t| t.0).collect::<Vec<_>>())?;
    d.set_item("client_id", a.client_id.map(values::uuid_text))?;
    d.set_item("created", r.created.0)?;
    d.set_item("updated", r.updated.0)?;
    add_terms(&d, a.order_type.is_trigger(), terms, ps, qs)?;
    Ok(d)
}

#[pymethods]
impl NativeEngine {
    /// Every account of every holder: account, holder, name, kind, state, derisk.
    fn accounts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let this = self.lock(py)?;
        let list = PyList::empty(py);
        let e = this.engine(py)?;
        for h in 0..u32::try_from(e.holder_count()).unwrap_or(u32::MAX) {
            for a in e
                .holder_accounts(HolderId(h))
                .map_err(|e| errors::engine(py, e))?
            {
                let d = PyDict::new(py);
                d.set_item("account", a.id.0)?;
                d.set_item("holder", a.holder.0)?;
                d.set_item("name", a.name)?;
                d.set_item("kind", a.kind.as_str())?;
                let closed = a.state == AccountState::Closed;
                d.set_item("state", if closed { "CLOSED" } else { "ACTIVE" })?;
                d.set_item("derisk", a.derisk)?;
                list.append(d)?;
            }
        }
        Ok(list)
    }

    /// A page of `account`'s orders, open and ended, newest first: at most `limit` below
    /// order number `before` (0: from the newest); and the `before` of the next page (0:
    /// none). A page reads at most 10,000 records, so it can hold fewer than `limit` (even
    /// none) with a next `before`: go on until 0.
    #[pyo3(signature = (account, before = 0, limit = 100))]
    fn order_page<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        #[pyo3(from_py_with = int::<u64>)] before: u64,
        #[pyo3(from_py_with = int::<usize>)] limit: usize,
    ) -> PyResult<(Bound<'py, PyList>, u64)> {
        let this = self.lock(py)?;
        if limit == 0 {
            return Err(invalid(py, "limit 0: a page holds at least one order"));
        }
        let filter = OrderFilter::every(limit, (before > 0).then_some(before));
        let page = this
            .market_data(py)?
            .orders()
            .page(AccountId(account), &filter)
            .map_err(|e| invalid(py, e.to_string()))?;
        let list = PyList::empty(py);
        for r in &page.orders {
            list.append(this.record_dict(py, r)?)?;
        }
        Ok((list, page.cursor.unwrap_or(0)))
    }

    /// The trades of one of `account`'s orders (by number), oldest first.
    fn order_trades<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        #[pyo3(from_py_with = int::<u64>)] order_id: u64,
    ) -> PyResult<Bound<'py, PyList>> {
        let this = self.lock(py)?;
        let market = this.market_data(py)?;
        let record = market
            .orders()
            .get(AccountId(account), order_id)
            .ok_or_else(|| errors::engine(py, EngineError::OrderNotFound))?;
        let list = PyList::empty(py);
        for t in record
            .trades
            .iter()
            .filter_map(|&id| market.trades().get(id))
        {
            let x = &t.trade;
            let (ps, qs) = values::scales(py, this.reference(py)?, x.instrument)?;
            let d = PyDict::new(py);
            d.set_item("trade", x.id.0)?;
            d.set_item("time", t.time.0)?;
            d.set_item("price", values::text(x.price.0, ps))?;
            d.set_item("amount", values::text(x.amount.0, qs))?;
            d.set_item("taker_side", x.taker_side.as_str())?;
            d.set_item("maker_account", x.maker_account.0)?;
            d.set_item("maker_order", pack(x.maker))?;
            let reference = this.reference(py)?;
            let (maker_fee, maker_currency) = values::fee(
                py,
                reference,
                x.instrument,
                x.taker_side.opposite(),
                x.maker_fee,
            )?;
            let (taker_fee, taker_currency) =
                values::fee(py, reference, x.instrument, x.taker_side, x.taker_fee)?;
            d.set_item("maker_fee", maker_fee)?;
            d.set_item("maker_fee_currency", maker_currency)?;
            d.set_item("taker_account", x.taker_account.0)?;
            d.set_item("taker_order", pack(x.taker))?;
            d.set_item("taker_fee", taker_fee)?;
            d.set_item("taker_fee_currency", taker_currency)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// Sets the most order and trade records history keeps (`None`: no limit); past a
    /// limit the oldest go first, whatever their age (open orders stay until they end).
    #[pyo3(signature = (orders = None, trades = None))]
    fn set_history_limits(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = opt::<u64>)] orders: Option<u64>,
        #[pyo3(from_py_with = opt::<u64>)] trades: Option<u64>,
    ) -> PyResult<()> {
        let mut this = self.lock(py)?;
        let most = |n: Option<u64>, name: &str| match n {
            None => Ok(usize::MAX),
            Some(0) => Err(invalid(py, format!("{name}: at least 1 (None: no limit)"))),
            Some(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        };
        let limits = matchbook::market::HistoryLimits {
            orders: most(orders, "orders")?,
            trades: most(trades, "trades")?,
        };
        this.market_data(py)?;
        if let Some(market) = this.core.market.as_mut() {
            market.set_history_limits(limits);
        }
        Ok(())
    }
}
