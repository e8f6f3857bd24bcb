//! The private frames of one command, encoded from the account updates the runtime's
//! market stage publishes ([`matchbook::runtime::AccountUpdate`]: each order's record as
//! it stands after the event, with the balances it moved): `ACCOUNT_HISTORY` updates and
//! the `TRADING` channel's order events ([`super::trading`]). The hub keeps no copy of
//! the live orders; it only spells what the stage published.

use matchbook::market::orders::OrderRecord;
use matchbook::runtime::{AccountChange, AccountUpdate, BalanceMove};
use matchbook::{AccountId, OrderStatus, Uuid};

use super::account_messages::{
    AccountUpdate as UpdateBody, AccountUpdateFrame, BalanceDelta, BalanceMoves,
};
use super::messages::Stamp;
use super::trading::{self, Fill, TradingFrame};
use crate::markets::Markets;
use crate::records::{OrderForm, add_order_terms, order_body, trade_wrapper};

/// The private frames of one command, each with its account and event sequence number.
#[derive(Default)]
pub struct PrivateFrames {
    /// `ACCOUNT_HISTORY` updates.
    pub history: Vec<(AccountId, u64, AccountUpdateFrame)>,
    /// `TRADING` order events.
    pub trading: Vec<(AccountId, u64, TradingFrame)>,
}

impl PrivateFrames {
    /// The frames of a command's `updates` for the accounts `watched` says are followed,
    /// in event order.
    pub fn of<'a>(
        markets: &Markets,
        updates: impl Iterator<Item = &'a AccountUpdate>,
        watched: impl Fn(AccountId) -> bool,
    ) -> Self {
        let mut frames = Self::default();
        for update in updates.filter(|u| watched(u.account)) {
            if let Some(order) = &update.order {
                frames.trading_events(markets, update, order);
            }
            if let Some(body) = history_update(markets, update) {
                let frame = AccountUpdateFrame {
                    channel_name: "ACCOUNT_HISTORY",
                    kind: "ACCOUNT_UPDATE",
                    account_id: body.account_id.clone(),
                    sequence: update.seq,
                    stamp: Stamp::of(update.time),
                    update: body,
                };
                frames.history.push((update.account, update.seq, frame));
            }
        }
        frames
    }

    /// The `TRADING` events of one update.
    fn trading_events(&mut self, markets: &Markets, update: &AccountUpdate, order: &OrderRecord) {
        let mut push = |kind, fill| {
            if let Some(frame) = trading::event(markets, kind, order, fill, update.seq, update.time)
            {
                self.trading.push((update.account, update.seq, frame));
            }
        };
        match &update.change {
            AccountChange::OrderCreated { .. } if order.accepted.order_type.is_trigger() => {
                push("STOP_TRACKED", None);
            }
            AccountChange::OrderCreated { .. } => push("TRACKED", None),
            AccountChange::OrderBooked => push("BOOKED", None),
            AccountChange::OrderAmended => push("UPDATE", None),
            AccountChange::StopTriggered => push("STOP_TRIGGERED", None),
            AccountChange::OrderClosed { .. } => push("DONE", None),
            AccountChange::TradeSettled { trade, fee, maker } => {
                let fee = *fee;
                let maker = *maker;
                push("FILL", Some(Fill { trade, fee, maker }));
                if order.status != OrderStatus::Open {
                    push("DONE", None);
                }
            }
            AccountChange::TriggerMoved | AccountChange::FundingPaid { .. } => {}
        }
    }
}

/// The `ACCOUNT_HISTORY` update of one account update, if the contract reports it.
fn history_update(markets: &Markets, update: &AccountUpdate) -> Option<UpdateBody> {
    let mut body = UpdateBody {
        account_id: Uuid::of_account(update.account).to_string(),
        sequence: update.seq,
        stamp: Some(Stamp::of(update.time)),
        moves: moves(markets, &update.moves),
        ..UpdateBody::default()
    };
    let order = update.order.as_ref();
    body.order_id = order.map(|r| Uuid::of_order(r.accepted.order).to_string());
    body.order = order.and_then(|r| order_body(markets, r, OrderForm::Full));
    body.kind = match &update.change {
        AccountChange::OrderCreated { terms } => {
            if let (Some(terms), Some(r), Some(order)) = (terms, order, body.order.as_mut()) {
                add_order_terms(markets, order, r, terms);
            }
            "ORDER_CREATED"
        }
        AccountChange::TradeSettled { trade, .. } => {
            if let Some(wrapper) = trade_wrapper(markets, trade, update.account) {
                body.trade = Some(wrapper.trade);
                body.fee = Some(wrapper.fee);
            }
            "TRADE_SETTLED"
        }
        AccountChange::OrderClosed { reason } => {
            body.filled_amount = order.and_then(|r| {
                let market = markets.market_of(r.accepted.instrument)?;
                Some(market.qty(r.filled))
            });
            body.reason = Some(reason.as_str());
            match reason.refusal() {
                Some(_) => "ORDER_REJECTED",
                None => "ORDER_CLOSED",
            }
        }
        AccountChange::StopTriggered => {
            body.order = None;
            body.instrument_code = order
                .and_then(|r| markets.market_of(r.accepted.instrument))
                .map(|m| m.code.clone());
            "STOP_ORDER_TRIGGERED"
        }
        AccountChange::FundingPaid {
            instrument,
            position_id,
            rate,
            mark,
            payment,
        } => {
            let market = markets.market_of(*instrument)?;
            body.instrument_code = Some(market.code.clone());
            body.position_id = Some(position_id.to_string());
            body.funding_rate = Some(crate::format::decimal(*rate, 8));
            body.mark_price = Some(market.price(*mark));
            body.payment = Some(markets.balance(market.quote, i128::from(*payment)));
            "FUNDING_PAYMENT"
        }
        AccountChange::OrderBooked | AccountChange::OrderAmended | AccountChange::TriggerMoved => {
            return None;
        }
    };
    Some(body)
}

/// The balance changes of an update as the contract spells them.
fn moves(markets: &Markets, moves: &matchbook::runtime::BalanceMoves) -> BalanceMoves {
    let delta = |m: &Option<BalanceMove>| {
        m.map(|m| BalanceDelta {
            currency_code: markets.currency_code(m.currency).to_owned(),
            new_available: markets.balance(m.currency, i128::from(m.available)),
            new_locked: markets.balance(m.currency, i128::from(m.locked)),
        })
    };
    BalanceMoves {
        locked: delta(&moves.locked),
        unlocked: delta(&moves.unlocked),
        spent: delta(&moves.spent),
        credited: delta(&moves.credited),
        deducted: delta(&moves.deducted),
    }
}
