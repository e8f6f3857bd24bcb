//! Order entry as an operation, for every gateway (HTTP, the WebSocket's `TRADING`
//! channel, FIX): place, amend, cancel and cancel-all on a runtime, each answered with the
//! order's history record as market data holds it right after the command (read on the
//! market stage in the same hop as the acknowledgement, so no gateway rebuilds a record
//! from events or re-adds the fills market data already summed). Answers come through a
//! callback, so an async server, a thread per session or a blocking caller each wait in
//! their own way; a gateway only translates its wire format to these calls and their
//! errors to its own.

use matchbook::market::MarketData;
use matchbook::market::orders::OrderRecord;
use matchbook::runtime::{Outcome, RuntimeError, RuntimeHandle};
use matchbook::{
    AccountId, CancelScope, Command, EngineError, Event, InstrumentId, OrderRef, Price, Qty, Uuid,
};

/// Which open order of an account a request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderTarget {
    /// By the exchange's order handle.
    Order(OrderRef),
    /// The account's newest open order with this client id.
    ClientId(Uuid),
}

/// Why an order request was not carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OrderEntryError {
    /// The engine refused the command, or ended the order at entry for its time in force
    /// (post-only that would take, fill-or-kill that could not fill).
    #[error("refused: {0}")]
    Refused(#[from] EngineError),
    /// No such open order of the account.
    #[error("no such open order")]
    NotFound,
    /// A command other than a placement was given to place.
    #[error("not an order placement")]
    NotAPlacement,
    /// Market data keeps no history on this runtime (it runs without), so there is no
    /// record to answer with; the command was carried out.
    #[error("market data keeps no order history")]
    NoHistory,
    /// The runtime could not take the request (busy, stopped).
    #[error("runtime: {0}")]
    Runtime(#[from] RuntimeError),
}

/// An order placed: its record right after the command (what filled at entry included),
/// and the second leg of a one-cancels-the-other pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// The order's history record.
    pub record: OrderRecord,
    /// The pair's second leg, if any.
    pub linked: Option<OrderRef>,
}

/// An answer to an order request.
pub type Answer<T> = Result<T, OrderEntryError>;

/// Order entry on one runtime (cheap to clone: a handle).
#[derive(Clone, Debug)]
pub struct OrderService {
    handle: RuntimeHandle,
}

impl OrderService {
    /// Order entry on `handle`'s runtime.
    pub fn new(handle: RuntimeHandle) -> Self {
        Self { handle }
    }

    /// Places an order (`PlaceOrder`, `PlaceOco` or `PlaceBracket`; any other command is
    /// not carried out and answered [`OrderEntryError::NotAPlacement`]); `reply` gets the
    /// entry order's record.
    pub fn place(
        &self,
        command: Command,
        reply: impl FnOnce(Answer<Placed>) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        let placement = matches!(
            command,
            Command::PlaceOrder(_) | Command::PlaceOco { .. } | Command::PlaceBracket { .. }
        );
        if !placement {
            reply(Err(OrderEntryError::NotAPlacement));
            return Ok(());
        }
        let account = command.account();
        (self.handle).submit_with_market(command, move |outcome, md| {
            reply(placed(&outcome, md, account));
        })
    }

    /// Finds `account`'s open order `target` and its market (a gateway reads an amend's
    /// amount and price at that market's precision before calling [`OrderService::amend`]).
    pub fn find(
        &self,
        account: AccountId,
        target: OrderTarget,
        reply: impl FnOnce(Answer<(OrderRef, InstrumentId)>) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        self.handle.read_engine(move |e| {
            let order = match target {
                OrderTarget::Order(order) => e.order(order),
                OrderTarget::ClientId(client_id) => e.order_by_client_id(account, client_id),
            };
            let found =
                (order.filter(|o| o.account() == account)).map(|o| (o.handle(), o.instrument()));
            reply(found.ok_or(OrderEntryError::NotFound));
        })
    }

    /// Amends `account`'s open order `order` to a new total `amount` and/or limit
    /// `price`; `reply` gets its record after the amend (and what the amend traded).
    pub fn amend(
        &self,
        account: AccountId,
        order: OrderRef,
        (amount, price): (Option<Qty>, Option<Price>),
        reply: impl FnOnce(Answer<OrderRecord>) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        let command = Command::AmendOrder {
            account,
            order,
            amount,
            price,
        };
        (self.handle).submit_with_market(command, move |outcome, md| {
            let answer = outcome.result.map_err(OrderEntryError::from).and_then(|_| {
                let record = md.orders().get(account, order.id);
                record.cloned().ok_or(OrderEntryError::NoHistory)
            });
            reply(answer);
        })
    }

    /// Cancels `account`'s open order `target`; `reply` gets its record as it ended.
    pub fn cancel(
        &self,
        account: AccountId,
        target: OrderTarget,
        reply: impl FnOnce(Answer<OrderRecord>) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        let command = match target {
            OrderTarget::Order(order) => Command::CancelOrder { account, order },
            OrderTarget::ClientId(client_id) => Command::CancelByClientId { account, client_id },
        };
        (self.handle).submit_with_market(command, move |outcome, md| {
            reply(cancelled(&outcome, md, account));
        })
    }

    /// Cancels `account`'s open orders in `scope` (none there is no error); `reply` gets
    /// the orders cancelled, in the order they ended.
    pub fn cancel_all(
        &self,
        account: AccountId,
        scope: CancelScope,
        reply: impl FnOnce(Answer<Vec<OrderRef>>) + Send + 'static,
    ) -> Result<(), RuntimeError> {
        (self.handle).submit(Command::CancelAll { account, scope }, move |outcome| {
            let answer = match outcome.result {
                Ok(_) | Err(EngineError::OrderNotFound) => Ok(cancelled_orders(&outcome)),
                Err(e) => Err(e.into()),
            };
            reply(answer);
        })
    }
}

/// The placed order's record, or why there is none.
fn placed(outcome: &Outcome, md: &MarketData, account: Option<AccountId>) -> Answer<Placed> {
    let applied = outcome.result?;
    if let Some(refusal) = applied.rejected {
        return Err(refusal.into());
    }
    let record = (applied.order.zip(account))
        .and_then(|(order, account)| md.orders().get(account, order.id))
        .cloned();
    // With history on, every placement the engine accepted is in it by now.
    debug_assert!(
        record.is_some() || !md.is_on(),
        "a placed order without its record"
    );
    Ok(Placed {
        record: record.ok_or(OrderEntryError::NoHistory)?,
        linked: applied.linked,
    })
}

/// The cancelled order's record as it ended.
fn cancelled(outcome: &Outcome, md: &MarketData, account: AccountId) -> Answer<OrderRecord> {
    outcome.result?;
    let order = (outcome.events.iter())
        .find_map(|e| match e.event {
            Event::OrderCancelled { order, .. } => Some(order),
            _ => None,
        })
        .ok_or(OrderEntryError::NotFound)?;
    (md.orders().get(account, order.id).cloned()).ok_or(OrderEntryError::NoHistory)
}

fn cancelled_orders(outcome: &Outcome) -> Vec<OrderRef> {
    (outcome.events.iter())
        .filter_map(|e| match e.event {
            Event::OrderCancelled { order, .. } => Some(order),
            _ => None,
        })
        .collect()
}
