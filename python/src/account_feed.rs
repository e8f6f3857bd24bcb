//! A node's account feed for Python (`NativeAccountFeed`): the followed accounts' live
//! orders and balances as a snapshot where the feed starts, then every update of their
//! orders as the runtime's market stage publishes it (the order's record after the
//! event, the trade, why it ended, the balances it moved: the `ACCOUNT_HISTORY`
//! contract). Decimal values go out as text at their scales.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use matchbook::market::orders::OrderRecord;
use matchbook::reference::ReferenceData;
use matchbook::runtime::Subscription;
use matchbook::runtime::{AccountChange, AccountUpdate, BalanceMove, FeedBatch, ReadView};
use matchbook::{AccountId, EngineError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::lookups::record_dict;
use crate::values;

/// One account read where a feed starts: its live orders and balances.
pub(crate) struct AccountRead {
    account: AccountId,
    orders: Vec<OrderRecord>,
    balances: Vec<(i64, i64)>,
}

/// The live orders and balances of `accounts` as of `view` (market data must be on: the
/// records are its).
pub(crate) fn read_accounts(
    view: &ReadView<'_>,
    accounts: &[AccountId],
) -> Result<Vec<AccountRead>, EngineError> {
    let mut read = Vec::with_capacity(accounts.len());
    for &account in accounts {
        let balances = view.engine.account(account)?.dense_balances();
        let orders = (view.engine.open_orders(account).into_iter())
            .filter_map(|o| view.market.orders().get(account, o.handle().id).cloned())
            .collect();
        read.push(AccountRead {
            account,
            orders,
            balances: balances.iter().map(|b| (b.available, b.locked)).collect(),
        });
    }
    Ok(read)
}

fn snapshot_dict<'py>(
    py: Python<'py>,
    reference: &ReferenceData,
    seq: u64,
    read: &AccountRead,
) -> PyResult<Bound<'py, PyDict>> {
    let orders = PyList::empty(py);
    for r in &read.orders {
        orders.append(record_dict(py, reference, r, None)?)?;
    }
    let d = PyDict::new(py);
    d.set_item("type", "snapshot")?;
    d.set_item("seq", seq)?;
    d.set_item("account", read.account.0)?;
    d.set_item("orders", orders)?;
    let balances = read.balances.iter().copied();
    d.set_item(
        "balances",
        crate::queries::balances_dict(py, reference, balances)?,
    )?;
    Ok(d)
}

/// The message type of an update.
fn type_of(change: &AccountChange) -> &'static str {
    match change {
        AccountChange::OrderCreated { .. } => "order_created",
        AccountChange::OrderBooked => "order_booked",
        AccountChange::OrderAmended => "order_amended",
        AccountChange::TradeSettled { .. } => "trade_settled",
        AccountChange::OrderClosed { .. } => "order_closed",
        AccountChange::StopTriggered => "stop_triggered",
        AccountChange::TriggerMoved => "trigger_moved",
        AccountChange::FundingPaid { .. } => "funding_paid",
    }
}

/// A balance moved, as (currency code, available, locked) text.
fn moved(reference: &ReferenceData, m: BalanceMove) -> (String, String, String) {
    let code = reference.currency_code(m.currency).to_owned();
    let scale = reference.scale(m.currency);
    (
        code,
        values::text(m.available, scale),
        values::text(m.locked, scale),
    )
}

fn update_dict<'py>(
    py: Python<'py>,
    reference: &ReferenceData,
    u: &AccountUpdate,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("type", type_of(&u.change))?;
    d.set_item("seq", u.seq)?;
    d.set_item("time", u.time.0)?;
    d.set_item("account", u.account.0)?;
    let terms = match &u.change {
        AccountChange::OrderCreated { terms } => terms.as_ref(),
        _ => None,
    };
    let order = (u.order.as_ref()).map(|r| record_dict(py, reference, r, terms));
    d.set_item("order", order.transpose()?)?;
    match u.change {
        AccountChange::TradeSettled { trade, fee, maker } => {
            let t = &trade.trade;
            let (ps, qs) = values::scales(py, reference, t.instrument)?;
            let side = (u.order.as_ref()).map_or(t.taker_side, |r| r.accepted.side);
            let (fee, fee_currency) = values::fee(py, reference, t.instrument, side, fee)?;
            d.set_item("trade", t.id.0)?;
            d.set_item("price", values::text(t.price.0, ps))?;
            d.set_item("amount", values::text(t.amount.0, qs))?;
            d.set_item("fee", fee)?;
            d.set_item("fee_currency", fee_currency)?;
            d.set_item("maker", maker)?;
        }
        AccountChange::OrderClosed { reason } => d.set_item("reason", reason.as_str())?,
        AccountChange::FundingPaid {
            instrument,
            position_id,
            rate,
            mark,
            payment,
        } => {
            let market = values::market(py, reference, instrument)?;
            let scale = reference.scale(market.quote);
            d.set_item("instrument", &market.code)?;
            d.set_item("position", position_id)?;
            d.set_item("funding_rate", values::text(rate, 8))?;
            d.set_item("mark_price", values::text(mark.0, market.market_precision))?;
            d.set_item("payment", values::text(payment, scale))?;
        }
        _ => {}
    }
    let moves = PyDict::new(py);
    let m = &u.moves;
    let named = [
        ("locked", m.locked),
        ("unlocked", m.unlocked),
        ("spent", m.spent),
        ("credited", m.credited),
        ("deducted", m.deducted),
    ];
    for (name, balance) in named {
        if let Some(balance) = balance {
            moves.set_item(name, moved(reference, balance))?;
        }
    }
    d.set_item("moves", moves)?;
    Ok(d)
}

/// A node's account feed.
#[pyclass(module = "matchbook._native", frozen)]
pub struct NativeAccountFeed {
    pub(crate) subscription: Subscription<FeedBatch>,
    pub(crate) accounts: HashSet<AccountId>,
    /// The node's reference data (scales), shared.
    pub(crate) reference: Arc<ReferenceData>,
    /// The snapshot taken where the feed starts, handed out by the first poll.
    pub(crate) snapshot: Mutex<Option<Vec<AccountRead>>>,
}

#[pymethods]
impl NativeAccountFeed {
    /// The messages since the last poll (the first poll gives each account's snapshot),
    /// waiting up to `timeout` seconds for a batch when none is queued. A feed that fell
    /// 65,536 batches behind, or whose node stopped, raises `STOPPED`.
    fn poll<'py>(&self, py: Python<'py>, timeout: f64) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let snapshot = self.snapshot.lock().ok().and_then(|mut s| s.take());
        if let Some(accounts) = snapshot {
            for read in &accounts {
                let start = self.subscription.start_seq;
                list.append(snapshot_dict(py, &self.reference, start, read)?)?;
            }
            return Ok(list);
        }
        crate::node::poll_batches(py, &self.subscription, timeout, |batch| {
            let followed =
                (batch.accounts.iter()).filter(|(_, u)| self.accounts.contains(&u.account));
            for (_, update) in followed {
                list.append(update_dict(py, &self.reference, update)?)?;
            }
            Ok(())
        })?;
        Ok(list)
    }
}
