//! `NativeNode`: the exchange node (`matchbook-node`) for Python: a data directory made
//! durable (journal, snapshots, recovery), deadlines kept (good-till-time expiries and
//! dead-man switches fire with no other traffic), optionally a member of a replicated
//! group, and the runtime's thread-safe handle behind it. Commands take no time argument:
//! the node's clock stamps them. Calls release the GIL while they wait for the runtime, so
//! any number of Python threads may use one node.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use matchbook::reference::ReferenceData;
use matchbook::runtime::{RuntimeError, RuntimeHandle, Subscription};
use matchbook::{AccountId, Applied, CancelScope, Command, CurrencyId, Engine, Order, Price, Qty};
use matchbook_config::{Directory, Exchange};
use matchbook_node::{Node, NodeBuilder, NodeConfig, NodeError, Replication};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{self, invalid, raise};
use crate::ints::{int, opt};
use crate::order_entry::{OrderArgs, new_order};
use crate::values::{self, pack, unpack};

/// Batches a subscriber may fall behind by before its feed is dropped.
const FEED_CAPACITY: usize = 65_536;

/// The Python object: the node's handle, its reference data and directory, the node.
#[pyclass(module = "matchbook._native", frozen)]
pub struct NativeNode {
    handle: RuntimeHandle,
    /// The definition's reference data, read from the node's engine once it opened:
    /// instruments, currencies and scales for parsing arguments and formatting answers
    /// without a trip to the runtime.
    reference: Arc<ReferenceData>,
    directory: Directory,
    node: Mutex<Option<Node>>,
}

/// What the runtime said, as a Python exception: a full queue or a follower is `BUSY`
/// (try again), a stopped node `STOPPED`.
fn runtime_error(py: Python<'_>, e: RuntimeError) -> PyErr {
    let (code, name) = match e {
        RuntimeError::Busy | RuntimeError::LogUnavailable | RuntimeError::NotLeader => {
            (9005, "BUSY")
        }
        RuntimeError::Stopped | RuntimeError::Failed => (9006, "STOPPED"),
    };
    raise(py, code, name, &e.to_string())
}

fn node_error(py: Python<'_>, e: &NodeError) -> PyErr {
    match e {
        NodeError::Definition(_) | NodeError::Config(_) | NodeError::Provision(_) => {
            invalid(py, e.to_string())
        }
        NodeError::Runtime(r) => runtime_error(py, *r),
        _ => raise(py, errors::STORAGE, "STORAGE", &e.to_string()),
    }
}

/// The group `log_servers` names, if any.
fn replication(
    py: Python<'_>,
    log_servers: Option<&str>,
    node_name: Option<&str>,
    lease_ms: u64,
) -> PyResult<Option<Replication>> {
    let Some(servers) = log_servers else {
        return Ok(None);
    };
    let name = node_name.ok_or_else(|| invalid(py, "log_servers needs node_name"))?;
    let mut config = NodeConfig::parse(servers, name).map_err(|e| invalid(py, e))?;
    if lease_ms != 0 {
        if !(100..=60_000).contains(&lease_ms) {
            return Err(invalid(py, format!("lease_ms {lease_ms}: 100 to 60000")));
        }
        config.lease = Duration::from_millis(lease_ms);
    }
    Ok(Some(Replication {
        config,
        address: String::new(),
        secret: None,
    }))
}

impl NativeNode {
    /// Applies `command` at the node's clock, the GIL released while it waits.
    fn apply(&self, py: Python<'_>, command: Command) -> PyResult<Applied> {
        let handle = self.handle.clone();
        let subject = errors::subject(&self.reference, &command);
        let outcome = py
            .detach(move || handle.apply_blocking(command))
            .map_err(|e| runtime_error(py, e))?;
        outcome
            .result
            .map_err(|e| errors::engine_about(py, e, subject))
    }

    /// Runs `read` on the runtime's copy of the engine, the GIL released while it waits.
    fn read<R: Send + 'static>(
        &self,
        py: Python<'_>,
        read: impl FnOnce(&Engine) -> R + Send + 'static,
    ) -> PyResult<R> {
        let handle = self.handle.clone();
        py.detach(move || handle.engine_blocking(read))
            .map_err(|e| runtime_error(py, e))
    }

    /// Runs `read` on the market stage's view, the GIL released; with the command it
    /// reflects.
    fn read_view<R: Send + 'static>(
        &self,
        py: Python<'_>,
        read: impl FnOnce(&matchbook::runtime::ReadView<'_>) -> R + Send + 'static,
    ) -> PyResult<(u64, R)> {
        let handle = self.handle.clone();
        py.detach(move || handle.read_blocking(move |view| (view.seq, read(view))))
            .map_err(|e| runtime_error(py, e))
    }

    fn currency(&self, py: Python<'_>, code: &str) -> PyResult<(CurrencyId, u8)> {
        crate::engine::currency_of(py, &self.reference, code)
    }
}

#[pymethods]
impl NativeNode {
    /// Opens a node on the data directory `path` (created if missing): a new directory
    /// starts from the definition with its holders provisioned, an existing one is
    /// recovered and must have been written under the same definition.
    #[staticmethod]
    #[pyo3(signature = (path, definition, format = "toml", snapshot_every = 100_000, keep_snapshots = 2, fsync = true, queue_capacity = 0, log_servers = None, node_name = None, lease_ms = 0))]
    #[allow(
        clippy::too_many_arguments,
        reason = "keyword arguments of one Python call"
    )]
    fn open(
        py: Python<'_>,
        path: &str,
        definition: &str,
        format: &str,
        #[pyo3(from_py_with = int::<u64>)] snapshot_every: u64,
        #[pyo3(from_py_with = int::<usize>)] keep_snapshots: usize,
        fsync: bool,
        #[pyo3(from_py_with = int::<usize>)] queue_capacity: usize,
        log_servers: Option<&str>,
        node_name: Option<&str>,
        #[pyo3(from_py_with = int::<u64>)] lease_ms: u64,
    ) -> PyResult<Self> {
        if keep_snapshots == 0 {
            return Err(invalid(py, "keep_snapshots: at least 1"));
        }
        let exchange = match format {
            "toml" => Exchange::from_toml(definition),
            "json" => Exchange::from_json(definition),
            other => return Err(invalid(py, format!("format {other:?}: toml or json"))),
        }
        .map_err(|e| invalid(py, e.to_string()))?;
        // A definition that builds no engine is refused before any directory is made.
        (exchange.engine_config()).map_err(|e| invalid(py, e.to_string()))?;
        let store = crate::durable::store_options(snapshot_every, keep_snapshots, fsync);
        let mut builder = NodeBuilder::new(exchange, Path::new(path))
            .store(store)
            .queue_capacity(queue_capacity);
        if let Some(group) = replication(py, log_servers, node_name, lease_ms)? {
            builder = builder.replicated(group);
        }
        let node = py
            .detach(|| builder.open())
            .map_err(|e| node_error(py, &e))?;
        let handle = node.handle();
        let read = handle.clone();
        let reference = py
            .detach(move || read.engine_blocking(ReferenceData::of))
            .map_err(|e| runtime_error(py, e))?;
        Ok(Self {
            handle,
            reference: Arc::new(reference),
            directory: node.directory().clone(),
            node: Mutex::new(Some(node)),
        })
    }

    /// Stops the node: every queued command answered, the last snapshot written, a group's
    /// lease resigned, the directory unlocked. Nothing for a node already closed.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let node = match self.node.lock() {
            Ok(mut guard) => guard.take(),
            Err(_) => return Err(invalid(py, "node is unusable: a call panicked")),
        };
        match node {
            Some(node) => py
                .detach(|| node.stop())
                .map(drop)
                .map_err(|e| node_error(py, &e)),
            None => Ok(()),
        }
    }

    /// The definition's holders: name -> {account name: account id}.
    fn directory<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, entry) in &self.directory {
            let accounts = PyDict::new(py);
            for (account, id) in &entry.accounts {
                accounts.set_item(account, id.0)?;
            }
            d.set_item(name, accounts)?;
        }
        Ok(d)
    }

    /// Places an order at the node's clock; its handle.
    #[pyo3(signature = (account, instrument, side, amount, price = None, order_type = "LIMIT", time_in_force = "GOOD_TILL_CANCELLED", trigger_price = None, expire_at_ns = None, client_id = None, stp = None, reduce_only = false, trigger_reference = "LAST_PRICE", trailing_offset = None, trailing_offset_bps = None, limit_offset = None, display = None))]
    #[allow(clippy::too_many_arguments, reason = "mirrors the Python signature")]
    fn place_order(
        &self,
        py: Python<'_>,
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
        let args = OrderArgs {
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
        let order = new_order(py, &self.reference, &args)?;
        let applied = self.apply(py, Command::PlaceOrder(order))?;
        let handle = applied.order.map_or(0, pack);
        if let Some(refusal) = applied.rejected {
            let error = errors::engine(py, refusal);
            error.value(py).setattr("order", handle)?;
            return Err(error);
        }
        Ok(handle)
    }

    /// Amends an open order's amount and/or price (None: unchanged).
    #[pyo3(signature = (account, order, amount = None, price = None))]
    fn amend_order(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        #[pyo3(from_py_with = int::<u128>)] order: u128,
        amount: Option<&str>,
        price: Option<&str>,
    ) -> PyResult<()> {
        let order = unpack(order).ok_or_else(|| invalid(py, "not an order handle"))?;
        let instrument = self.read(py, move |e| e.order(order).map(Order::instrument))?;
        let instrument =
            instrument.ok_or_else(|| errors::engine(py, matchbook::EngineError::OrderNotFound))?;
        let (ps, qs) = values::scales(py, &self.reference, instrument)?;
        let command = Command::AmendOrder {
            account: AccountId(account),
            order,
            amount: (amount.map(|a| values::fixed(py, a, qs, "amount").map(Qty))).transpose()?,
            price: (price.map(|p| values::fixed(py, p, ps, "price").map(Price))).transpose()?,
        };
        self.apply(py, command).map(drop)
    }

    /// Cancels one open order by its handle.
    fn cancel_order(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        #[pyo3(from_py_with = int::<u128>)] order: u128,
    ) -> PyResult<()> {
        let order = unpack(order).ok_or_else(|| invalid(py, "not an order handle"))?;
        let account = AccountId(account);
        self.apply(py, Command::CancelOrder { account, order })
            .map(drop)
    }

    /// Cancels every open order of the account, or those in `instrument`.
    #[pyo3(signature = (account, instrument = None))]
    fn cancel_all(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        instrument: Option<&str>,
    ) -> PyResult<()> {
        let scope = match instrument {
            None => CancelScope::All,
            Some(code) => {
                CancelScope::Instrument(crate::engine::instrument_of(py, &self.reference, code)?)
            }
        };
        let account = AccountId(account);
        self.apply(py, Command::CancelAll { account, scope })
            .map(drop)
    }

    /// Credits an account (admin).
    fn deposit(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        currency: &str,
        amount: &str,
    ) -> PyResult<()> {
        let (currency, scale) = self.currency(py, currency)?;
        let amount = values::fixed(py, amount, scale, "amount")?;
        let account = AccountId(account);
        let command = Command::Deposit {
            account,
            currency,
            amount,
        };
        self.apply(py, command).map(drop)
    }

    /// Arms the account's dead-man switch (`timeout_ns` from now; 0 disarms it).
    fn set_cancel_all_after(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
        #[pyo3(from_py_with = int::<u64>)] timeout_ns: u64,
    ) -> PyResult<()> {
        let account = AccountId(account);
        let command = Command::SetCancelAllAfter {
            account,
            timeout: timeout_ns,
        };
        self.apply(py, command).map(drop)
    }

    /// The account's open orders, oldest first.
    fn open_orders<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
    ) -> PyResult<Bound<'py, PyList>> {
        let account = AccountId(account);
        let orders = self.read(py, move |e| {
            (e.account(account).map(drop)).map(|()| {
                e.open_orders(account)
                    .into_iter()
                    .cloned()
                    .collect::<Vec<Order>>()
            })
        })?;
        let orders = orders.map_err(|e| errors::engine(py, e))?;
        let list = PyList::empty(py);
        for o in &orders {
            list.append(crate::queries::order_dict(py, &self.reference, o)?)?;
        }
        Ok(list)
    }

    /// Balances by currency code: (available, locked) as decimal text.
    fn balances<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = int::<u32>)] account: u32,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (account, count) = (AccountId(account), self.reference.currencies.len());
        let balances = self.read(py, move |e| {
            e.account(account).map(|view| {
                (0..count)
                    .map(|i| {
                        let b = view.balances.get(CurrencyId(i as u16));
                        (b.available, b.locked)
                    })
                    .collect::<Vec<_>>()
            })
        })?;
        let balances = balances.map_err(|e| errors::engine(py, e))?;
        crate::queries::balances_dict(py, &self.reference, balances.into_iter())
    }

    /// The engine's state hash (equal on every node of a group at the same command).
    fn state_hash(&self, py: Python<'_>) -> PyResult<u64> {
        self.read(py, Engine::state_hash)
    }

    /// Engine time: the time of the latest command applied.
    fn now(&self, py: Python<'_>) -> PyResult<i64> {
        self.read(py, |e| e.now().0)
    }

    /// The market feed: every book as a snapshot now, then each command's changes.
    fn subscribe_market(&self, py: Python<'_>) -> PyResult<crate::node_feed::NativeMarketFeed> {
        let handle = self.handle.clone();
        let subscribed =
            py.detach(move || handle.subscribe_feed(FEED_CAPACITY, crate::node_feed::read_books));
        let (subscription, books) = subscribed.map_err(|e| runtime_error(py, e))?;
        Ok(crate::node_feed::NativeMarketFeed {
            subscription,
            reference: self.reference.clone(),
            snapshot: Mutex::new(Some(books)),
        })
    }

    /// The account feed of `accounts`: their live orders and balances now, then every
    /// update of their orders.
    fn subscribe_accounts(
        &self,
        py: Python<'_>,
        accounts: Vec<u32>,
    ) -> PyResult<crate::account_feed::NativeAccountFeed> {
        let handle = self.handle.clone();
        let wanted: Vec<AccountId> = accounts.iter().map(|&a| AccountId(a)).collect();
        let read = wanted.clone();
        let subscribed = py.detach(move || {
            handle.subscribe_feed(FEED_CAPACITY, move |view| {
                crate::account_feed::read_accounts(view, &read)
            })
        });
        let (subscription, read) = subscribed.map_err(|e| runtime_error(py, e))?;
        let read = read.map_err(|e| errors::engine(py, e))?;
        Ok(crate::account_feed::NativeAccountFeed {
            subscription,
            accounts: wanted.into_iter().collect(),
            reference: self.reference.clone(),
            snapshot: Mutex::new(Some(read)),
        })
    }

    /// One book now, as a snapshot message of the market feed.
    fn book<'py>(&self, py: Python<'py>, instrument: &str) -> PyResult<Bound<'py, PyDict>> {
        let id = crate::engine::instrument_of(py, &self.reference, instrument)?;
        let (seq, books) = self.read_view(py, crate::node_feed::read_books)?;
        let book = (books.iter())
            .find(|b| b.0 == id)
            .ok_or_else(|| invalid(py, format!("no book of {instrument}")))?;
        crate::node_feed::book_dict(py, &self.reference, seq, book)
    }

    /// A feed of every event from now on, in command order.
    fn subscribe(&self, py: Python<'_>) -> PyResult<NativeFeed> {
        let subscription =
            (self.handle.subscribe(FEED_CAPACITY)).map_err(|e| runtime_error(py, e))?;
        Ok(NativeFeed { subscription })
    }
}

/// A node's events as they are published: batches in command order.
#[pyclass(module = "matchbook._native", frozen)]
pub struct NativeFeed {
    subscription: Subscription,
}

#[pymethods]
impl NativeFeed {
    /// The events published since the last poll, waiting up to `timeout` seconds for the
    /// first batch when none is queued (an empty list when none came). A feed that fell
    /// 65,536 batches behind, or whose node stopped, raises `STOPPED`.
    fn poll<'py>(&self, py: Python<'py>, timeout: f64) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        poll_batches(py, &self.subscription, timeout, |published| {
            for record in &published.events {
                list.append(crate::events::to_dict(py, record)?)?;
            }
            Ok(())
        })?;
        Ok(list)
    }
}

/// Hands every batch queued on `subscription` to `each`, waiting up to `timeout` seconds
/// (the GIL released) for the first when none is queued. A feed that ended (it fell
/// behind, or the node stopped) is `STOPPED`.
pub(crate) fn poll_batches<T: Send + Sync>(
    py: Python<'_>,
    subscription: &Subscription<T>,
    timeout: f64,
    mut each: impl FnMut(&T) -> PyResult<()>,
) -> PyResult<()> {
    let wait = Duration::try_from_secs_f64(timeout.max(0.0))
        .map_err(|_| invalid(py, "timeout: a number of seconds"))?;
    let receiver = subscription.receiver().clone();
    let Some(first) = py.detach(move || receiver.recv_timeout(wait).ok()) else {
        return match subscription.try_recv() {
            Err(reason) => Err(raise(
                py,
                9006,
                "STOPPED",
                &format!("the feed ended: {reason}"),
            )),
            Ok(_) => Ok(()),
        };
    };
    let mut batch = Some(first);
    while let Some(published) = batch {
        each(&published)?;
        batch = subscription.try_recv().ok().flatten();
    }
    Ok(())
}
