//! What a new `ACCOUNT_HISTORY` subscriber gets first, read from the engine replica and
//! market data at one command: its open orders with their trades, its orders that ended in
//! the last day (up to [`INACTIVE_LIMIT`], newest first), and its balances.

use matchbook::market::orders::{OrderFilter, OrderRecord};
use matchbook::runtime::ReadView;
use matchbook::{AccountId, OrderStatus, Timestamp, Uuid};

use super::account_messages::{BalancesSnapshotFrame, OrdersSnapshotFrame};
use super::messages::Stamp;
use crate::market_bodies::balance_bodies;
use crate::markets::Markets;
use crate::records::{OrderForm, order_body, trade_wrappers};
use crate::trade_lists::embedded;
use crate::wire::orders::OrderWithTrades;

/// Ended orders the inactive snapshot lists at most.
pub const INACTIVE_LIMIT: usize = 100;

/// How far back the inactive snapshot looks.
const INACTIVE_WINDOW: i64 = 24 * 3_600 * 1_000_000_000;

fn with_trades(
    view: &ReadView<'_>,
    markets: &Markets,
    account: AccountId,
    record: &OrderRecord,
) -> Option<OrderWithTrades> {
    Some(OrderWithTrades {
        order: order_body(markets, record, OrderForm::Full)?,
        trades: trade_wrappers(markets, &embedded(view.market, &record.trades), account),
    })
}

/// The three snapshot frames, as JSON text.
pub fn snapshots(
    view: &ReadView<'_>,
    markets: &Markets,
    account: AccountId,
    now: Timestamp,
) -> Vec<String> {
    let account_id = Uuid::of_account(account).to_string();
    let orders = view.market.orders();
    let mut active: Vec<OrderWithTrades> = (view.engine.open_orders(account).iter())
        .filter_map(|o| orders.get(account, o.handle().id))
        .filter_map(|r| with_trades(view, markets, account, r))
        .collect();
    active.reverse();
    let filter = OrderFilter {
        from: Timestamp(now.0.saturating_sub(INACTIVE_WINDOW)),
        to: now,
        instrument: None,
        with_cancelled_and_rejected: true,
        with_just_filled_inactive: true,
        max_page_size: INACTIVE_LIMIT,
        cursor: None,
    };
    let inactive: Vec<OrderWithTrades> = (orders.page(account, &filter).ok())
        .map(|page| {
            (page.orders.iter())
                .filter(|r| r.status != OrderStatus::Open)
                .filter_map(|r| with_trades(view, markets, account, r))
                .collect()
        })
        .unwrap_or_default();
    let balances = (view.engine.account(account).ok())
        .map(|a| balance_bodies(markets, &a.dense_balances()))
        .unwrap_or_default();
    let orders_frame = |kind, orders| OrdersSnapshotFrame {
        channel_name: "ACCOUNT_HISTORY",
        kind,
        account_id: account_id.clone(),
        orders,
        stamp: Stamp::of(now),
    };
    let text = |frame: &OrdersSnapshotFrame| serde_json::to_string(frame).unwrap_or_default();
    vec![
        text(&orders_frame("ACTIVE_ORDERS_SNAPSHOT", active)),
        text(&orders_frame("INACTIVE_ORDERS_SNAPSHOT", inactive)),
        serde_json::to_string(&BalancesSnapshotFrame {
            channel_name: "ACCOUNT_HISTORY",
            kind: "BALANCES_SNAPSHOT",
            account_id: account_id.clone(),
            balances,
            stamp: Stamp::of(now),
        })
        .unwrap_or_default(),
    ]
}
