//! A naive reference engine: every live order in one `Vec`, the best maker found by a full
//! scan, no indexes, no caches. Written to be obviously right rather than fast, it emits the
//! same events as `matchbook::Engine` so the two can be compared after every command.

mod checks;
mod contingent;
mod entry;
pub mod funds;
mod operations;
mod reach;
mod triggers;

use funds::{RefAccount, RefFunds};
use matchbook::{
    AcceptedOrder, AccountId, BracketExits, CancelReason, CancelScope, Command, EngineError, Event,
    InstrumentId, InstrumentState, NewOrder, OrderRef, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp, Trade, TradeId, Trail, TriggerRef, Uuid,
};
use triggers::{is_market_type, spot_reduce_only, trail_trigger};

/// What the reference needs of an instrument, in fixed point.
#[derive(Debug, Clone)]
pub struct RefInstrument {
    /// Lowest price.
    pub min_price: i64,
    /// Highest price.
    pub max_price: i64,
    /// Minimum amount x price.
    pub min_size: i128,
    /// State.
    pub state: InstrumentState,
    /// Last trade price.
    pub last_price: Option<i64>,
    /// Base currency index.
    pub base: usize,
    /// Quote currency index.
    pub quote: usize,
    /// Base balance units per lot.
    pub base_unit: i64,
    /// Quote balance units per tick x lot.
    pub quote_unit: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    Taking,
    Resting,
    Pending,
}

/// A live order of the reference engine.
#[derive(Debug, Clone, Copy)]
pub struct RefOrder {
    /// Order number.
    pub id: u64,
    /// Owner.
    pub account: AccountId,
    /// Market.
    pub instrument: InstrumentId,
    /// Side.
    pub side: Side,
    order_type: OrderType,
    tif: TimeInForce,
    stp: StpMode,
    /// Limit price.
    pub price: Option<i64>,
    trigger: Option<i64>,
    /// Total amount.
    pub amount: i64,
    /// Filled so far.
    pub filled: i64,
    client_id: Option<Uuid>,
    expire_at: Option<Timestamp>,
    place: Where,
    /// Time priority: when it (last) joined the back of its price.
    stamp: u64,
    /// Balance units still reserved.
    pub reserved: i64,
    /// A trailing order's trail.
    trail: Option<Trail>,
    /// A trailing stop-limit's limit offset.
    limit_offset: i64,
    /// A trailing order's best reference price so far.
    extreme: i64,
    /// An iceberg's displayed amount.
    display: Option<i64>,
    /// An iceberg's shown part still to fill (0: not resting as an iceberg).
    shown: i64,
}

impl RefOrder {
    fn remaining(&self) -> i64 {
        self.amount - self.filled
    }
    /// What the book shows: an iceberg's shown part, else everything left.
    fn visible(&self) -> i64 {
        if self.shown > 0 {
            self.shown
        } else {
            self.remaining()
        }
    }
    fn limit(&self) -> i64 {
        match (self.price, self.side) {
            (Some(p), _) => p,
            (None, Side::Buy) => i64::MAX,
            (None, Side::Sell) => i64::MIN,
        }
    }
    fn counted(&self) -> bool {
        counted(self.order_type, self.tif)
    }
    fn handle(&self) -> OrderRef {
        OrderRef {
            id: self.id,
            slot: 0,
        }
    }
}

fn counted(order_type: OrderType, tif: TimeInForce) -> bool {
    !matches!(order_type, OrderType::Limit | OrderType::Market)
        || (order_type == OrderType::Limit
            && matches!(
                tif,
                TimeInForce::GoodTillCancelled | TimeInForce::PostOnly | TimeInForce::GoodTillTime
            ))
}

fn crosses(side: Side, limit: i64, resting: i64) -> bool {
    match side {
        Side::Buy => resting <= limit,
        Side::Sell => resting >= limit,
    }
}

/// What the checks of a new order decided (see `RefEngine::plan`).
#[derive(Debug, Clone, Copy)]
pub(super) struct RefPlan {
    order: RefOrder,
    new: NewOrder,
    refused: Option<CancelReason>,
    reservation: Option<(usize, i64)>,
    counted: bool,
    holder: usize,
    trigger_type: bool,
}

/// The reference engine.
#[derive(Debug, Clone)]
pub struct RefEngine {
    /// Instruments by index.
    pub instruments: Vec<RefInstrument>,
    /// Accounts by id.
    pub accounts: Vec<RefAccount>,
    /// Money state.
    pub funds: RefFunds,
    /// Open-order count per holder.
    pub holders: Vec<u32>,
    /// Every live order.
    pub orders: Vec<RefOrder>,
    max_open: u32,
    now: Timestamp,
    seq: u64,
    next_order: u64,
    next_trade: u64,
    next_stamp: u64,
    events: Vec<Event>,
    /// Best bid and ask last published per instrument.
    tops: Vec<(Option<i64>, Option<i64>)>,
    /// Armed dead-man switches: account -> deadline.
    switches: std::collections::BTreeMap<AccountId, Timestamp>,
    /// Contingent links: order -> (OCO peer, bracket exits).
    links: std::collections::BTreeMap<u64, (Option<u64>, Option<BracketExits>)>,
    /// Bracket exits due.
    activations: Vec<contingent::RefActivation>,
}

impl RefEngine {
    /// An empty reference engine over these instruments.
    pub fn new(instruments: Vec<RefInstrument>, max_open: u32, funds: RefFunds) -> Self {
        Self {
            instruments,
            accounts: Vec::new(),
            funds,
            holders: Vec::new(),
            orders: Vec::new(),
            max_open,
            now: Timestamp(0),
            seq: 0,
            next_order: 1,
            next_trade: 1,
            next_stamp: 0,
            events: Vec::new(),
            tops: Vec::new(),
            switches: Default::default(),
            links: Default::default(),
            activations: Vec::new(),
        }
    }

    /// Applies a command; returns its events (slots are zero) and its result.
    pub fn apply(
        &mut self,
        command: &Command,
        time: Timestamp,
    ) -> (Vec<Event>, Result<(), EngineError>) {
        self.events.clear();
        self.now = self.now.max(time);
        self.expire();
        self.run_switches();
        self.run_activations();
        self.publish_tops();
        let result = self.dispatch(command);
        self.run_activations();
        self.publish_tops();
        if let Err(error) = result {
            let (account, client_id) = (command.account(), command.client_id());
            self.events.push(Event::Rejected {
                account,
                client_id,
                error,
            });
        }
        self.seq += self.events.len() as u64;
        (std::mem::take(&mut self.events), result)
    }

    fn dispatch(&mut self, command: &Command) -> Result<(), EngineError> {
        match command {
            Command::CreateHolder => self.create_holder(),
            Command::CreateSubaccount { holder, name, kind } => {
                self.create_subaccount(*holder, name, *kind)
            }
            Command::CloseSubaccount { account } => self.close_subaccount(*account),
            Command::Deposit {
                account,
                currency,
                amount,
            } => self.deposit(*account, *currency, *amount),
            Command::Withdraw {
                account,
                currency,
                amount,
            } => self.withdraw(*account, *currency, *amount),
            Command::SetDerisk { account, on } => self.set_derisk(*account, *on),
            Command::SetBlpThreshold {
                account,
                currency,
                amount,
            } => self.set_blp(*account, *currency, *amount),
            Command::Transfer {
                holder,
                source,
                destination,
                currency,
                amount,
            } => self.transfer(*holder, *source, *destination, *currency, *amount),
            Command::SetStpMode { account, mode } => self.set_stp(*account, *mode),
            Command::SetInstrumentState { instrument, state } => {
                self.set_instrument_state(*instrument, *state)
            }
            Command::PlaceOrder(o) => self.place(o),
            Command::PlaceOco { first, second } => self.place_oco(first, second),
            Command::PlaceBracket { entry, exits } => self.place_bracket(entry, exits),
            Command::AmendOrder {
                account,
                order,
                amount,
                price,
            } => self.amend(*account, order.id, *amount, *price),
            Command::CancelOrder { account, order } => {
                let i = self.find(*account, order.id)?;
                self.cancel(i, CancelReason::Requested);
                Ok(())
            }
            Command::CancelByClientId { account, client_id } => {
                let i = self
                    .newest_with_client_id(*account, *client_id)
                    .ok_or(EngineError::OrderNotFound)?;
                self.cancel(i, CancelReason::Requested);
                Ok(())
            }
            Command::CancelAll { account, scope } => self.cancel_all(*account, scope),
            // Futures are not modelled here: the model drives spot markets only.
            Command::SetIndexPrice { .. } | Command::Liquidate { .. } => {
                Err(EngineError::NotFutures)
            }
            Command::AdvanceTime => Ok(()),
            Command::SetCancelAllAfter { account, timeout } => {
                self.set_cancel_all_after(*account, *timeout)
            }
        }
    }

    /// Cancels an account's orders (of one instrument, or all), oldest first.
    fn cancel_account_orders(
        &mut self,
        account: AccountId,
        only: Option<InstrumentId>,
        reason: CancelReason,
    ) {
        let mut ids: Vec<u64> = (self.orders.iter())
            .filter(|o| o.account == account && only.is_none_or(|i| i == o.instrument))
            .map(|o| o.id)
            .collect();
        ids.sort_unstable();
        for id in ids {
            if let Ok(i) = self.find(account, id) {
                self.cancel(i, reason);
            }
        }
    }

    /// Runs out the dead-man switches whose deadline has come, earliest (then lowest
    /// account) first.
    fn run_switches(&mut self) {
        loop {
            let due = (self.switches.iter())
                .filter(|&(_, &at)| at <= self.now)
                .map(|(&account, &at)| (at, account))
                .min();
            let Some((_, account)) = due else {
                return;
            };
            self.switches.remove(&account);
            let deadline = None;
            self.events
                .push(Event::CancelAllAfterSet { account, deadline });
            self.cancel_account_orders(account, None, CancelReason::CancelAllAfter);
        }
    }

    /// Emits `TopOfBook` for each instrument whose best bid or ask changed, by index.
    fn publish_tops(&mut self) {
        self.tops.resize(self.instruments.len(), (None, None));
        for i in 0..self.instruments.len() {
            let inst = InstrumentId(i as u16);
            let best = |side| {
                self.queue(inst, side)
                    .first()
                    .map(|&o| self.orders[o].price.unwrap_or(0))
            };
            let top = (best(Side::Buy), best(Side::Sell));
            if top != self.tops[i] {
                self.tops[i] = top;
                self.events.push(Event::TopOfBook {
                    instrument: inst,
                    bid: top.0.map(Price),
                    ask: top.1.map(Price),
                });
            }
        }
    }

    fn find(&self, account: AccountId, id: u64) -> Result<usize, EngineError> {
        self.orders
            .iter()
            .position(|o| o.id == id && o.account == account)
            .ok_or(EngineError::OrderNotFound)
    }

    fn newest_with_client_id(&self, account: AccountId, client_id: Uuid) -> Option<usize> {
        (0..self.orders.len())
            .filter(|&i| {
                let o = &self.orders[i];
                o.account == account && o.client_id == Some(client_id) && o.counted()
            })
            .max_by_key(|&i| self.orders[i].id)
    }

    fn expire(&mut self) {
        loop {
            let due = (0..self.orders.len())
                .filter(|&i| self.orders[i].expire_at.is_some_and(|t| t <= self.now))
                .min_by_key(|&i| (self.orders[i].expire_at, self.orders[i].id));
            match due {
                Some(i) => self.cancel(i, CancelReason::Expired),
                None => return,
            }
        }
    }

    fn check_price(&self, inst: &RefInstrument, price: Price) -> Result<(), EngineError> {
        if price.0 <= 0 {
            return Err(EngineError::InvalidPrice);
        }
        if price.0 < inst.min_price || price.0 > inst.max_price {
            return Err(EngineError::PriceOutOfRange);
        }
        Ok(())
    }

    fn check_min_size(inst: &RefInstrument, price: i64, amount: i64) -> Result<(), EngineError> {
        if i128::from(price) * i128::from(amount) < inst.min_size {
            return Err(EngineError::MinSizeNotSatisfied);
        }
        Ok(())
    }

    /// Resting orders of `side` in `instrument`, best price first, then oldest.
    fn queue(&self, instrument: InstrumentId, side: Side) -> Vec<usize> {
        let mut list: Vec<usize> = (0..self.orders.len())
            .filter(|&i| {
                let o = &self.orders[i];
                o.place == Where::Resting && o.instrument == instrument && o.side == side
            })
            .collect();
        list.sort_by_key(|&i| {
            let o = &self.orders[i];
            let price = o.price.unwrap_or(0);
            (if side == Side::Buy { -price } else { price }, o.stamp)
        });
        list
    }

    fn would_take(&self, instrument: InstrumentId, side: Side, limit: i64) -> bool {
        self.queue(instrument, side.opposite())
            .first()
            .is_some_and(|&i| crosses(side, limit, self.orders[i].price.unwrap_or(0)))
    }

    /// Resting orders of a side in priority order as (order number, account, price, remaining).
    pub fn book_side(
        &self,
        instrument: InstrumentId,
        side: Side,
    ) -> Vec<(u64, AccountId, i64, i64)> {
        self.queue(instrument, side)
            .into_iter()
            .map(|i| {
                let o = &self.orders[i];
                (o.id, o.account, o.price.unwrap_or(0), o.visible())
            })
            .collect()
    }

    /// Pending stop orders, sorted by number.
    pub fn pending_stops(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .orders
            .iter()
            .filter(|o| o.place == Where::Pending)
            .map(|o| o.id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Events emitted so far.
    pub fn sequence(&self) -> u64 {
        self.seq
    }
}
