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

use std::collections::HashMap;

use matchbook::market::orders::OrderRecord;
use matchbook::market::trades::TradeRecord;
use matchbook::runtime::ReadView;
use matchbook::{AccountId, CancelReason, CurrencyId, Event, EventRecord, HolderId, Side, Uuid};

use super::account_messages::{AccountUpdate, AccountUpdateFrame, BalanceDelta};
use super::messages::Stamp;
use crate::markets::Markets;
use crate::records::{OrderForm, order_body, trade_wrapper};

/// An update being built: its account, and the currency its order pays with (fills).
struct Pending {
    account: AccountId,
    pays: Option<CurrencyId>,
    update: AccountUpdate,
}

/// Live orders, and the updates of the command being applied.
#[derive(Default)]
pub struct AccountFeed {
    orders: HashMap<u64, OrderRecord>,
    pending: Vec<Pending>,
}

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
            pending: Vec::new(),
        }
    }

    /// Applies the events of one command; returns the updates of the accounts `watched`
    /// says are followed, in event order.
    pub fn apply(
        &mut self,
        markets: &Markets,
        events: &[EventRecord],
        watched: impl Fn(AccountId) -> bool,
    ) -> Vec<(AccountId, u64, AccountUpdateFrame)> {
        for record in events {
            self.on_event(markets, record, &watched);
        }
        (self.pending.drain(..))
            .map(|p| {
                let frame = AccountUpdateFrame {
                    channel_name: "ACCOUNT_HISTORY",
                    kind: "ACCOUNT_UPDATE",
                    account_id: p.update.account_id.clone(),
                    sequence: p.update.sequence,
                    stamp: p
                        .update
                        .stamp
                        .clone()
                        .unwrap_or_else(|| Stamp::of(Default::default())),
                    update: p.update,
                };
                (p.account, frame.sequence, frame)
            })
            .collect()
    }

    fn on_event(
        &mut self,
        markets: &Markets,
        record: &EventRecord,
        watched: &impl Fn(AccountId) -> bool,
    ) {
        let (seq, time) = (record.seq, record.time);
        let base = |kind, account: AccountId| AccountUpdate {
            kind,
            account_id: Uuid::of_account(account).to_string(),
            sequence: seq,
            stamp: Some(Stamp::of(time)),
            ..AccountUpdate::default()
        };
        match record.event {
            Event::OrderAccepted(accepted) => {
                let order = OrderRecord::accepted(accepted, time, seq);
                if watched(accepted.account) {
                    let mut update = base("ORDER_CREATED", accepted.account);
                    update.order_id = Some(Uuid::of_order(accepted.order).to_string());
                    update.order = order_body(markets, &order, OrderForm::Full);
                    self.push(accepted.account, None, update);
                }
                self.orders.insert(accepted.order.id, order);
            }
            Event::Trade(trade) => {
                let fill = TradeRecord::new(trade, time, seq);
                let sides = [
                    (
                        trade.maker,
                        trade.maker_account,
                        trade.maker_fee,
                        trade.maker_remaining,
                    ),
                    (
                        trade.taker,
                        trade.taker_account,
                        trade.taker_fee,
                        trade.taker_remaining,
                    ),
                ];
                for (order, account, fee, remaining) in sides {
                    let Some(r) = self.orders.get_mut(&order.id) else {
                        continue;
                    };
                    let ended = r.on_fill(&fill, fee, remaining);
                    if watched(account) {
                        let mut update = base("TRADE_SETTLED", account);
                        update.order_id = Some(Uuid::of_order(order).to_string());
                        update.order = order_body(markets, r, OrderForm::Full);
                        if let Some(wrapper) = trade_wrapper(markets, &fill, account) {
                            update.trade = Some(wrapper.trade);
                            update.fee = Some(wrapper.fee);
                        }
                        let pays =
                            markets
                                .market_of(trade.instrument)
                                .map(|m| match r.accepted.side {
                                    Side::Buy => m.quote,
                                    Side::Sell if m.kind.is_future() => m.quote,
                                    Side::Sell => m.base,
                                });
                        self.push(account, pays, update);
                    }
                    if ended {
                        self.orders.remove(&order.id);
                    }
                }
            }
            Event::OrderCancelled {
                order,
                account,
                reason,
                ..
            } => {
                let Some(mut r) = self.orders.remove(&order.id) else {
                    return;
                };
                r.on_cancel(reason, time, seq);
                if watched(account) {
                    let refused = reason.refusal().is_some();
                    let kind = if refused {
                        "ORDER_REJECTED"
                    } else {
                        "ORDER_CLOSED"
                    };
                    let mut update = base(kind, account);
                    update.order_id = Some(Uuid::of_order(order).to_string());
                    update.filled_amount =
                        (markets.market_of(r.accepted.instrument)).map(|m| m.qty(r.filled));
                    update.reason = Some(reason_name(reason));
                    update.order = order_body(markets, &r, OrderForm::Full);
                    self.push(account, None, update);
                }
            }
            Event::OrderAmended {
                order,
                price,
                amount,
                ..
            } => {
                if let Some(r) = self.orders.get_mut(&order.id) {
                    r.on_touch(Some(price), Some(amount), time, seq);
                }
            }
            Event::StopTriggered { order, instrument } => {
                let Some(r) = self.orders.get_mut(&order.id) else {
                    return;
                };
                r.on_touch(None, None, time, seq);
                let account = r.accepted.account;
                if watched(account) {
                    let mut update = base("STOP_ORDER_TRIGGERED", account);
                    update.order_id = Some(Uuid::of_order(order).to_string());
                    update.instrument_code = markets.market_of(instrument).map(|m| m.code.clone());
                    self.push(account, None, update);
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
                let Some(market) = markets.market_of(instrument) else {
                    return;
                };
                let mut update = base("FUNDING_PAYMENT", account);
                update.instrument_code = Some(market.code.clone());
                update.position_id = Some(position_id.to_string());
                update.funding_rate = Some(crate::format::decimal(rate, 8));
                update.mark_price = Some(market.price(mark));
                update.payment = Some(markets.balance(market.quote, i128::from(payment)));
                self.push(account, None, update);
            }
            Event::BalanceChanged {
                account,
                currency,
                available,
                locked,
            } => self.on_balance(markets, account, currency, available, locked),
            _ => {}
        }
    }

    fn push(&mut self, account: AccountId, pays: Option<CurrencyId>, update: AccountUpdate) {
        self.pending.push(Pending {
            account,
            pays,
            update,
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
