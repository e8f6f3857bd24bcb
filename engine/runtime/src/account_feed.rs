//! The market stage's account feed: per event, what it did to an account's order, with
//! the order's record as it stands right after it (market data's own record, read as the
//! stage applies the event, so no host keeps a copy of the live orders), and the balances
//! the update moved, following the `ACCOUNT_HISTORY` contract.
//!
//! A balance change belongs to the latest update of its account in the same command that
//! takes balances (all but a booking and a trigger move): what an order reserved or an
//! amend re-reserved (`locked`), what an ended order released (`unlocked`), what a fill
//! paid (`spent`, in the currency the order pays with) and received (`credited`), and a
//! funding payment (`credited` or `deducted`). So from a snapshot, the moves keep an
//! account's balances exact as long as nothing but its orders and positions moves them;
//! a change with no update before it (a deposit, a transfer, a withdrawal, a fee paid to
//! the exchange's account) is attached to none.

use matchbook_core::{
    AccountId, CancelReason, CurrencyId, Engine, Event, EventRecord, InstrumentId, OrderRef, Price,
    Side, Timestamp, Trade,
};
use matchbook_market::MarketData;
use matchbook_market::order_terms::OrderTerms;
use matchbook_market::orders::OrderRecord;
use matchbook_market::trades::TradeRecord;

/// What an event did to an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountChange {
    /// An order was accepted; `terms` are those its command gave it beyond the record
    /// (trail, display, links).
    OrderCreated {
        /// The order's further terms.
        terms: Option<OrderTerms>,
    },
    /// The order now rests on its book.
    OrderBooked,
    /// The order's price or amount was amended.
    OrderAmended,
    /// The order filled in `trade`.
    TradeSettled {
        /// The trade.
        trade: TradeRecord,
        /// The fee this side paid (balance units of the currency it receives).
        fee: i64,
        /// Whether this side rested on the book.
        maker: bool,
    },
    /// The order ended before filling in full (refused when `reason.refusal()` is some).
    OrderClosed {
        /// Why.
        reason: CancelReason,
    },
    /// A stop order's trigger fired.
    StopTriggered,
    /// A trailing stop's trigger moved.
    TriggerMoved,
    /// A funding payment on a futures position.
    FundingPaid {
        /// The market.
        instrument: InstrumentId,
        /// The position.
        position_id: u64,
        /// The rate applied (8 decimal places).
        rate: i64,
        /// The mark price it was paid at.
        mark: Price,
        /// The payment (negative: paid by the account), balance units of the quote.
        payment: i64,
    },
}

impl AccountChange {
    /// Whether the balance changes after it belong to it.
    pub fn takes_balances(&self) -> bool {
        !matches!(self, Self::OrderBooked | Self::TriggerMoved)
    }
}

/// A balance as it stands after a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BalanceMove {
    /// The currency.
    pub currency: CurrencyId,
    /// Available after the change.
    pub available: i64,
    /// Locked after the change.
    pub locked: i64,
}

/// The balances an update moved, by what moved them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BalanceMoves {
    /// Reserved by an order (or by its amend).
    pub locked: Option<BalanceMove>,
    /// Released by an ended order.
    pub unlocked: Option<BalanceMove>,
    /// Paid by a fill.
    pub spent: Option<BalanceMove>,
    /// Received by a fill or a funding payment.
    pub credited: Option<BalanceMove>,
    /// Taken by a funding payment.
    pub deducted: Option<BalanceMove>,
}

/// One update of one account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountUpdate {
    /// The account.
    pub account: AccountId,
    /// The event's sequence number.
    pub seq: u64,
    /// The event's time.
    pub time: Timestamp,
    /// What happened.
    pub change: AccountChange,
    /// The order as it stands after the event (none for a funding payment).
    pub order: Option<OrderRecord>,
    /// The balances it moved.
    pub moves: BalanceMoves,
}

/// Builds a batch's account updates as market data takes in its events.
#[derive(Default)]
pub(crate) struct AccountUpdates {
    updates: Vec<(usize, AccountUpdate)>,
    /// The command whose events are being read, and where its updates start.
    command: usize,
    command_start: usize,
    /// A fill's side pays with this currency, per update index (fills only).
    pays: Vec<Option<CurrencyId>>,
}

impl AccountUpdates {
    /// Notes event `record` of command `command`, just applied to `market`.
    pub(crate) fn on_event(
        &mut self,
        command: usize,
        record: &EventRecord,
        market: &MarketData,
        replica: &Engine,
    ) {
        if command != self.command {
            self.end_command(market);
            self.command = command;
            self.command_start = self.updates.len();
        }
        let record_of = |order: OrderRef| market.orders().record(order.id).cloned();
        let at = (record.seq, record.time);
        match record.event {
            Event::OrderAccepted(a) => {
                let terms = None;
                self.push(
                    a.account,
                    at,
                    AccountChange::OrderCreated { terms },
                    record_of(a.order),
                );
            }
            Event::OrderBooked { order, .. } => {
                self.push_order(at, AccountChange::OrderBooked, record_of(order))
            }
            Event::OrderAmended { order, .. } => {
                self.push_order(at, AccountChange::OrderAmended, record_of(order))
            }
            Event::StopTriggered { order, .. } => {
                self.push_order(at, AccountChange::StopTriggered, record_of(order))
            }
            Event::TriggerMoved { order, .. } => {
                self.push_order(at, AccountChange::TriggerMoved, record_of(order))
            }
            Event::OrderCancelled { order, reason, .. } => {
                self.push_order(at, AccountChange::OrderClosed { reason }, record_of(order));
            }
            Event::Trade(t) => self.on_trade(&t, at, market, replica),
            Event::FundingPaid {
                account,
                instrument,
                position_id,
                rate,
                mark,
                payment,
                ..
            } => {
                let change = AccountChange::FundingPaid {
                    instrument,
                    position_id,
                    rate,
                    mark,
                    payment,
                };
                self.push(account, at, change, None);
            }
            Event::BalanceChanged {
                account,
                currency,
                available,
                locked,
            } => {
                self.on_balance(
                    account,
                    BalanceMove {
                        currency,
                        available,
                        locked,
                    },
                );
            }
            _ => {}
        }
    }

    /// A trade: an update of each of its orders.
    fn on_trade(
        &mut self,
        t: &Trade,
        (seq, time): (u64, Timestamp),
        market: &MarketData,
        replica: &Engine,
    ) {
        let trade = TradeRecord::new(*t, time, seq);
        let sides = [(t.maker, t.maker_fee, true), (t.taker, t.taker_fee, false)];
        for (order, fee, maker) in sides {
            let Some(order) = market.orders().record(order.id).cloned() else {
                continue;
            };
            let pays = pays_with(replica, t.instrument, order.accepted.side);
            let change = AccountChange::TradeSettled { trade, fee, maker };
            self.push(order.accepted.account, (seq, time), change, Some(order));
            if let Some(last) = self.pays.last_mut() {
                *last = pays;
            }
        }
    }

    /// The updates of the batch, each with its command's index; market data's record of
    /// every order created has its terms by now.
    pub(crate) fn take(&mut self, market: &MarketData) -> Vec<(usize, AccountUpdate)> {
        self.end_command(market);
        self.command = 0;
        self.command_start = 0;
        self.pays.clear();
        std::mem::take(&mut self.updates)
    }

    /// Puts the terms that came after each order's acceptance in the command on its
    /// `OrderCreated`.
    fn end_command(&mut self, market: &MarketData) {
        if market.order_terms().is_empty() {
            return;
        }
        for (_, update) in &mut self.updates[self.command_start..] {
            if let (AccountChange::OrderCreated { terms }, Some(order)) =
                (&mut update.change, &update.order)
            {
                *terms = market.order_terms().get(order.accepted.order.id).cloned();
            }
        }
    }

    fn push_order(
        &mut self,
        at: (u64, Timestamp),
        change: AccountChange,
        order: Option<OrderRecord>,
    ) {
        if let Some(order) = order {
            self.push(order.accepted.account, at, change, Some(order));
        }
    }

    fn push(
        &mut self,
        account: AccountId,
        (seq, time): (u64, Timestamp),
        change: AccountChange,
        order: Option<OrderRecord>,
    ) {
        let update = AccountUpdate {
            account,
            seq,
            time,
            change,
            order,
            moves: BalanceMoves::default(),
        };
        self.updates.push((self.command, update));
        self.pays.push(None);
    }

    /// Attaches a balance change to its account's latest update in the command that takes
    /// balances.
    fn on_balance(&mut self, account: AccountId, moved: BalanceMove) {
        let start = self.command_start;
        let Some((index, update)) = (self.updates[start..].iter_mut().enumerate().rev())
            .map(|(i, (_, u))| (start + i, u))
            .find(|(_, u)| u.account == account && u.change.takes_balances())
        else {
            return;
        };
        let moves = &mut update.moves;
        let slot = match update.change {
            AccountChange::OrderCreated { .. }
            | AccountChange::StopTriggered
            | AccountChange::OrderAmended => &mut moves.locked,
            AccountChange::OrderClosed { .. } => &mut moves.unlocked,
            AccountChange::TradeSettled { .. } if self.pays[index] == Some(moved.currency) => {
                &mut moves.spent
            }
            AccountChange::FundingPaid { payment, .. } if payment < 0 => &mut moves.deducted,
            _ => &mut moves.credited,
        };
        *slot = Some(moved);
    }
}

/// The currency a fill of an order on `side` of `instrument` pays with: the quote for a
/// buy and for any futures order, else the base.
fn pays_with(replica: &Engine, instrument: InstrumentId, side: Side) -> Option<CurrencyId> {
    let market = replica.instruments().get(usize::from(instrument.0))?;
    Some(match side {
        Side::Buy => market.quote,
        Side::Sell if market.spec.kind.is_future() => market.quote,
        Side::Sell => market.base,
    })
}
