//! The hub's view of accounts for `ACCOUNT_HISTORY`: the record of every live order, kept
//! from the published events as market data keeps its own (so an update carries the order
//! as it stands after that very event), and, per command, the updates of the accounts
//! someone watches, each with the balances that moved after it.
//!
//! A balance change belongs to the update of its account just before it in the command:
//! what an order reserved (`locked`), what an ended order released (`unlocked`), what a
//! fill paid (`spent`, the currency the order pays with) and received (`credited`), and a
//! funding payment (`credited` or `deducted`). A change with no such update (a deposit, a
//! transfer, an amend) is not an update of the contract and is not sent.
//!
//! The same events make the `TRADING` channel's order events ([`super::trading`]).

use std::collections::HashMap;

use matchbook::market::order_terms::OrderTermsStore;
use matchbook::market::orders::OrderRecord;
use matchbook::market::trades::TradeRecord;
use matchbook::runtime::ReadView;
use matchbook::{
    AcceptedOrder, AccountId, CancelReason, CurrencyId, Event, EventRecord, HolderId, InstrumentId,
    OrderRef, Price, Qty, Side, Timestamp, Trade, Uuid,
};

use super::account_messages::{AccountUpdate, AccountUpdateFrame, BalanceDelta};
use super::messages::Stamp;
use super::trading::{self, Fill, TradingFrame};
use crate::markets::Markets;
use crate::records::{OrderForm, add_order_terms, order_body, trade_wrapper};

/// An update being built: its account, and the currency its order pays with (fills).
struct Pending {
    account: AccountId,
    pays: Option<CurrencyId>,
    update: AccountUpdate,
    /// The order an `ORDER_CREATED` announces (its terms follow its acceptance).
    created: Option<u64>,
}

/// Live orders, and the frames of the command being applied.
#[derive(Default)]
pub struct AccountFeed {
    orders: HashMap<u64, OrderRecord>,
    pending: Vec<Pending>,
    /// Terms of the orders the command being applied placed (trail, display, links).
    command_terms: OrderTermsStore,
    trading: Vec<(AccountId, u64, TradingFrame)>,
}

/// The private frames of one command, each with its account and event sequence number.
#[derive(Default)]
pub struct PrivateFrames {
    /// `ACCOUNT_HISTORY` updates.
    pub history: Vec<(AccountId, u64, AccountUpdateFrame)>,
    /// `TRADING` order events.
    pub trading: Vec<(AccountId, u64, TradingFrame)>,
}

/// The event being applied: its sequence number and time.
type At = (u64, Timestamp);

/// The contract's name of why an order ended.
pub fn reason_name(reason: CancelReason) -> &'static str {
    match reason {
        CancelReason::Requested => "CANCELLED_BY_USER",
        CancelReason::Unfilled => "UNFILLED_REMAINDER",
        CancelReason::SelfTrade => "SELF_TRADE",
        CancelReason::Expired => "EXPIRED",
        CancelReason::FillOrKillUnfilled => "FILL_OR_KILL_UNFILLED",
        CancelReason::PostOnlyWouldTake => "POST_ONLY_WOULD_TAKE",
        CancelReason::AccountClosed => "ACCOUNT_CLOSED",
        CancelReason::InstrumentClosed => "INSTRUMENT_CLOSED",
        CancelReason::CancelAllAfter => "CANCEL_ALL_AFTER",
        CancelReason::TriggerRefused(_) => "TRIGGER_REFUSED",
        CancelReason::ContingentCancelled => "CONTINGENT_CANCELLED",
    }
}

/// An update of `kind` for `account` at `at`, its other fields empty.
fn update(kind: &'static str, account: AccountId, (seq, time): At) -> AccountUpdate {
    AccountUpdate {
        kind,
        account_id: Uuid::of_account(account).to_string(),
        sequence: seq,
        stamp: Some(Stamp::of(time)),
        ..AccountUpdate::default()
    }
}

impl AccountFeed {
    /// The live orders of every account as of `view`.
    pub fn of(view: &ReadView<'_>) -> Self {
        let mut orders = HashMap::new();
        for holder in 0..view.engine.holder_count() {
            let holder = HolderId(u32::try_from(holder).unwrap_or(u32::MAX));
            for account in view.engine.holder_accounts(holder).unwrap_or_default() {
                for order in view.engine.open_orders(account.id) {
                    let id = order.handle().id;
                    if let Some(record) = view.market.orders().get(account.id, id) {
                        orders.insert(id, record.clone());
                    }
                }
            }
        }
        Self {
            orders,
            ..Self::default()
        }
    }

    /// Applies the events of one command; returns the frames of the accounts `watched`
    /// says are followed, in event order.
    pub fn apply(
        &mut self,
        markets: &Markets,
        events: &[EventRecord],
        watched: impl Fn(AccountId) -> bool,
    ) -> PrivateFrames {
        for record in events {
            self.on_event(markets, record, &watched);
        }
        self.attach_terms(markets);
        let history = (self.pending.drain(..))
            .map(|p| {
                let stamp = (p.update.stamp.clone()).unwrap_or_else(|| Stamp::of(Timestamp(0)));
                let frame = AccountUpdateFrame {
                    channel_name: "ACCOUNT_HISTORY",
                    kind: "ACCOUNT_UPDATE",
                    account_id: p.update.account_id.clone(),
                    sequence: p.update.sequence,
                    stamp,
                    update: p.update,
                };
                (p.account, frame.sequence, frame)
            })
            .collect();
        PrivateFrames {
            history,
            trading: std::mem::take(&mut self.trading),
        }
    }

    /// Puts the terms that came after each order's acceptance on its `ORDER_CREATED`,
    /// as REST's order record shows them.
    fn attach_terms(&mut self, markets: &Markets) {
        if self.command_terms.is_empty() {
            return;
        }
        let terms = std::mem::take(&mut self.command_terms);
        for p in &mut self.pending {
            let Some(id) = p.created else { continue };
            if let (Some(t), Some(r), Some(body)) =
                (terms.get(id), self.orders.get(&id), p.update.order.as_mut())
            {
                add_order_terms(markets, body, r, t);
            }
        }
    }

    fn on_event(
        &mut self,
        markets: &Markets,
        record: &EventRecord,
        watched: &impl Fn(AccountId) -> bool,
    ) {
        let at = (record.seq, record.time);
        match record.event {
            Event::OrderAccepted(accepted) => {
                self.on_accepted(markets, accepted, watched(accepted.account), at);
            }
            Event::Trade(trade) => self.on_trade(markets, &trade, watched, at),
            Event::OrderCancelled {
                order,
                account,
                reason,
                ..
            } => self.on_cancelled(markets, order, reason, watched(account), at),
            Event::OrderAmended {
                order,
                price,
                amount,
                ..
            } => self.on_amended(markets, order, (price, amount), watched, at),
            Event::StopTriggered {
                order,
                instrument,
                trigger_price,
                price,
            } => {
                if let Some(r) = self.orders.get_mut(&order.id) {
                    r.accepted.trigger_price = Some(trigger_price);
                    r.accepted.price = price;
                }
                self.on_triggered(markets, order, instrument, watched, at);
            }
            Event::TriggerMoved {
                order,
                trigger_price,
                ..
            } => {
                if let Some(r) = self.orders.get_mut(&order.id) {
                    r.accepted.trigger_price = Some(trigger_price);
                }
            }
            Event::OrderBooked { order, .. } => {
                if let Some(r) = self.orders.get(&order.id).cloned()
                    && watched(r.accepted.account)
                {
                    self.trade_event(markets, "BOOKED", &r, None, at);
                }
            }
            Event::FundingPaid {
                account,
                instrument,
                position_id,
                rate,
                mark,
                payment,
                ..
            } if watched(account) => {
                let paid = (instrument, position_id, rate, mark, payment);
                self.on_funding_paid(markets, account, paid, at);
            }
            Event::BalanceChanged {
                account,
                currency,
                available,
                locked,
            } => self.on_balance(markets, account, currency, available, locked),
            Event::OrderTerms { .. } | Event::OrdersLinked { .. } | Event::BracketPlaced { .. } => {
                self.command_terms.on_event(&record.event);
            }
            _ => {}
        }
    }

    /// An amend: the order's record follows it, and its account is told.
    fn on_amended(
        &mut self,
        markets: &Markets,
        order: OrderRef,
        (price, amount): (Option<Price>, Qty),
        watched: &impl Fn(AccountId) -> bool,
        at: At,
    ) {
        if let Some(r) = self.orders.get_mut(&order.id) {
            r.on_touch(Some(price), Some(amount), at.1, at.0);
            let r = r.clone();
            if watched(r.accepted.account) {
                self.trade_event(markets, "UPDATE", &r, None, at);
            }
        }
    }

    /// A funding payment of a watched account: (instrument, position, rate, mark, payment).
    fn on_funding_paid(
        &mut self,
        markets: &Markets,
        account: AccountId,
        (instrument, position_id, rate, mark, payment): (InstrumentId, u64, i64, Price, i64),
        at: At,
    ) {
        let Some(market) = markets.market_of(instrument) else {
            return;
        };
        let mut update = update("FUNDING_PAYMENT", account, at);
        update.instrument_code = Some(market.code.clone());
        update.position_id = Some(position_id.to_string());
        update.funding_rate = Some(crate::format::decimal(rate, 8));
        update.mark_price = Some(market.price(mark));
        update.payment = Some(markets.balance(market.quote, i128::from(payment)));
        self.push(account, None, update);
    }

    fn on_accepted(&mut self, markets: &Markets, accepted: AcceptedOrder, watched: bool, at: At) {
        let order = OrderRecord::accepted(accepted, at.1, at.0);
        if watched {
            let mut created = update("ORDER_CREATED", accepted.account, at);
            created.order_id = Some(Uuid::of_order(accepted.order).to_string());
            created.order = order_body(markets, &order, OrderForm::Full);
            self.push(accepted.account, None, created);
            if let Some(p) = self.pending.last_mut() {
                p.created = Some(accepted.order.id);
            }
            let kind = if accepted.order_type.is_trigger() {
                "STOP_TRACKED"
            } else {
                "TRACKED"
            };
            self.trade_event(markets, kind, &order, None, at);
        }
        self.orders.insert(accepted.order.id, order);
    }

    fn on_trade(
        &mut self,
        markets: &Markets,
        trade: &Trade,
        watched: &impl Fn(AccountId) -> bool,
        at: At,
    ) {
        let fill = TradeRecord::new(*trade, at.1, at.0);
        let t = trade;
        let sides = [
            (
                true,
                t.maker,
                t.maker_account,
                t.maker_fee,
                t.maker_remaining,
            ),
            (
                false,
                t.taker,
                t.taker_account,
                t.taker_fee,
                t.taker_remaining,
            ),
        ];
        for (maker, order, account, fee, remaining) in sides {
            let Some(r) = self.orders.get_mut(&order.id) else {
                continue;
            };
            let ended = r.on_fill(&fill, fee, remaining);
            let r = r.clone();
            if ended {
                self.orders.remove(&order.id);
            }
            if !watched(account) {
                continue;
            }
            let mut settled = update("TRADE_SETTLED", account, at);
            settled.order_id = Some(Uuid::of_order(order).to_string());
            settled.order = order_body(markets, &r, OrderForm::Full);
            if let Some(wrapper) = trade_wrapper(markets, &fill, account) {
                settled.trade = Some(wrapper.trade);
                settled.fee = Some(wrapper.fee);
            }
            let pays = (markets.market_of(t.instrument)).map(|m| match r.accepted.side {
                Side::Buy => m.quote,
                Side::Sell if m.kind.is_future() => m.quote,
                Side::Sell => m.base,
            });
            self.push(account, pays, settled);
            let side = Fill {
                trade: &fill,
                fee,
                maker,
            };
            self.trade_event(markets, "FILL", &r, Some(side), at);
            if ended {
                self.trade_event(markets, "DONE", &r, None, at);
            }
        }
    }

    fn on_cancelled(
        &mut self,
        markets: &Markets,
        order: OrderRef,
        reason: CancelReason,
        watched: bool,
        at: At,
    ) {
        let Some(mut r) = self.orders.remove(&order.id) else {
            return;
        };
        r.on_cancel(reason, at.1, at.0);
        if !watched {
            return;
        }
        let account = r.accepted.account;
        let kind = match reason.refusal() {
            Some(_) => "ORDER_REJECTED",
            None => "ORDER_CLOSED",
        };
        let mut closed = update(kind, account, at);
        closed.order_id = Some(Uuid::of_order(order).to_string());
        closed.filled_amount = (markets.market_of(r.accepted.instrument)).map(|m| m.qty(r.filled));
        closed.reason = Some(reason_name(reason));
        closed.order = order_body(markets, &r, OrderForm::Full);
        self.push(account, None, closed);
        self.trade_event(markets, "DONE", &r, None, at);
    }

    fn on_triggered(
        &mut self,
        markets: &Markets,
        order: OrderRef,
        instrument: InstrumentId,
        watched: &impl Fn(AccountId) -> bool,
        at: At,
    ) {
        let Some(r) = self.orders.get_mut(&order.id) else {
            return;
        };
        r.on_touch(None, None, at.1, at.0);
        let r = r.clone();
        let account = r.accepted.account;
        if !watched(account) {
            return;
        }
        let mut triggered = update("STOP_ORDER_TRIGGERED", account, at);
        triggered.order_id = Some(Uuid::of_order(order).to_string());
        triggered.instrument_code = markets.market_of(instrument).map(|m| m.code.clone());
        self.push(account, None, triggered);
        self.trade_event(markets, "STOP_TRIGGERED", &r, None, at);
    }

    /// Queues a `TRADING` event of `record`'s order.
    fn trade_event(
        &mut self,
        markets: &Markets,
        kind: &'static str,
        record: &OrderRecord,
        fill: Option<Fill<'_>>,
        (seq, time): At,
    ) {
        if let Some(frame) = trading::event(markets, kind, record, fill, seq, time) {
            self.trading.push((record.accepted.account, seq, frame));
        }
    }

    fn push(&mut self, account: AccountId, pays: Option<CurrencyId>, update: AccountUpdate) {
        self.pending.push(Pending {
            account,
            pays,
            update,
            created: None,
        });
    }

    /// Attaches a balance change to the account's latest update in this command.
    fn on_balance(
        &mut self,
        markets: &Markets,
        account: AccountId,
        currency: CurrencyId,
        available: i64,
        locked: i64,
    ) {
        let Some(pending) = self.pending.iter_mut().rev().find(|p| p.account == account) else {
            return;
        };
        let delta = BalanceDelta {
            currency_code: markets.coin_code(currency).to_owned(),
            new_available: markets.balance(currency, i128::from(available)),
            new_locked: markets.balance(currency, i128::from(locked)),
        };
        let moves = &mut pending.update.moves;
        let slot = match pending.update.kind {
            "ORDER_CREATED" | "STOP_ORDER_TRIGGERED" => &mut moves.locked,
            "ORDER_CLOSED" | "ORDER_REJECTED" => &mut moves.unlocked,
            "TRADE_SETTLED" if pending.pays == Some(currency) => &mut moves.spent,
            "FUNDING_PAYMENT"
                if pending
                    .update
                    .payment
                    .as_deref()
                    .is_some_and(|p| p.starts_with('-')) =>
            {
                &mut moves.deducted
            }
            _ => &mut moves.credited,
        };
        *slot = Some(delta);
    }
}
