//! The saved form of an engine's state: plain records, one per kind of state, holding what
//! the engine cannot recompute and nothing else. Reference data (currencies, instruments,
//! fee schedules, futures terms) is not here: it comes from the configuration the engine
//! is restored with, which the store pins separately. Indexes that only speed up lookups
//! (ladder windows and bitsets, the client-id, account, expiry and stop indexes, per-tier
//! caches) and scratch buffers are rebuilt on restore.
//!
//! These types are a file format. The snapshot file wraps them with its own version
//! number; changing a field here changes that format and must bump it (the store's
//! golden-bytes test fails until it does). [`crate::Engine::image`] writes one,
//! [`crate::Engine::restore`] reads one back and checks it.

use serde::{Deserialize, Serialize};

use crate::account::{AccountKind, AccountState, Balance};
use crate::fixed::{Notional, Price, Qty};
use crate::ids::{AccountId, HolderId, InstrumentId, Timestamp, Uuid};
use crate::order::{
    BracketExits, LiveState, OrderType, Side, StpMode, TimeInForce, Trail, TriggerRef,
};
use crate::refdata::InstrumentState;

/// Slot-addressed records: the occupied slots and the vacant ones in the order they will be
/// handed out, so a restored engine gives new orders and levels the same slots (and
/// therefore the same handles) as the engine that was saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlabImage<T> {
    /// (slot, record) of every occupied slot, ascending by slot.
    pub occupied: Vec<(u32, T)>,
    /// Vacant slots, next to be handed out first.
    pub vacant_in_order: Vec<u32>,
}

/// Everything an engine holds beyond its configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineImage {
    /// Sequence number of the last event.
    pub seq: u64,
    /// Engine time.
    pub now: Timestamp,
    /// Next order number to hand out.
    pub next_order: u64,
    /// Next trade number to hand out.
    pub next_trade: u64,
    /// Next transfer number to hand out.
    pub next_transfer: u64,
    /// State of each instrument (commands can halt or close one).
    pub instrument_states: Vec<InstrumentState>,
    /// One per instrument.
    pub books: Vec<BookImage>,
    /// Live orders (resting or waiting for a trigger).
    pub orders: SlabImage<OrderImage>,
    /// One per account, by account number.
    pub accounts: Vec<AccountImage>,
    /// One per holder, by holder number.
    pub holders: Vec<HolderImage>,
    /// Per holder, per fee group: traded volume.
    pub volumes: Vec<Vec<VolumeImage>>,
    /// The exchange's fee account, per currency.
    pub fees_collected: Vec<i64>,
    /// Futures positions, margin and funding.
    pub futures: FuturesImage,
    /// Armed dead-man switches: (account, deadline), by account. Added in format 8; a
    /// format 7 image has none.
    #[serde(deserialize_with = "crate::persist::added_last::deserialize", default)]
    pub cancel_all_after: Vec<(AccountId, Timestamp)>,
    /// Live orders whose terms go beyond their record (a mark-price reference, a trail, an
    /// iceberg's display, a contingent link), by order number. Added in format 9; older images have none.
    #[serde(deserialize_with = "crate::persist::added_last::deserialize", default)]
    pub order_terms: Vec<OrderTermsImage>,
}

/// A live order's terms beyond its [`OrderImage`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderTermsImage {
    /// Order number.
    pub order: u64,
    /// The price it watches.
    pub reference: TriggerRef,
    /// A trailing order's trail.
    pub trail: Option<Trail>,
    /// A trailing stop-limit's limit offset (0 otherwise).
    pub limit_offset: Price,
    /// A trailing order's best reference price so far (0 otherwise).
    pub extreme: Price,
    /// An iceberg's displayed amount (0 otherwise).
    pub display: Qty,
    /// A resting iceberg's shown part still to fill (0 otherwise).
    pub shown: Qty,
    /// The other leg of its one-cancels-the-other pair, by order number.
    pub peer: Option<u64>,
    /// A bracket entry's exits, placed once it is done.
    pub exits: Option<BracketExits>,
}

/// One instrument's book.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookImage {
    /// Price levels.
    pub levels: SlabImage<LevelImage>,
    /// Bid levels (slots in `levels`), best first.
    pub bids: Vec<u32>,
    /// Ask levels, best first.
    pub asks: Vec<u32>,
    /// Price of the last trade.
    pub last_price: Option<Price>,
    /// Book sequence: how many commands changed this book.
    pub sequence: u64,
    /// Best bid and ask as last published in a top-of-book event.
    pub published_top: (Option<Price>, Option<Price>),
}

/// One price level: its orders run head to tail through [`OrderImage::next`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelImage {
    /// Level price.
    pub price: Price,
    /// Remaining amount of its orders.
    pub total: Qty,
    /// Number of orders.
    pub count: u32,
    /// First order in time priority (an order slot).
    pub head: u32,
    /// Last order.
    pub tail: u32,
}

/// A live order. Slot links (`u32::MAX`: none) keep the queues' order: time priority in its
/// level, and newest-first chains per account and per (account, client id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderImage {
    /// Order number.
    pub id: u64,
    /// Owner.
    pub account: AccountId,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Side.
    pub side: Side,
    /// Type.
    pub order_type: OrderType,
    /// Time in force.
    pub time_in_force: TimeInForce,
    /// Self-trade prevention.
    pub stp: StpMode,
    /// Resting or waiting for its trigger.
    pub state: LiveState,
    /// Futures: never takes the position past flat.
    pub reduce_only: bool,
    /// Limit price.
    pub price: Price,
    /// Ordered amount.
    pub amount: Qty,
    /// Filled amount.
    pub filled: Qty,
    /// Value filled.
    pub filled_notional: Notional,
    /// Stop trigger (`Price(0)`: none).
    pub trigger_price: Price,
    /// Balance units still reserved.
    pub reserved: i64,
    /// Creation time.
    pub created: Timestamp,
    /// Last change.
    pub updated: Timestamp,
    /// Sequence number of its last event.
    pub sequence: u64,
    /// Good-till-time expiry.
    pub expire_at: Option<Timestamp>,
    /// Client order id.
    pub client_id: Option<Uuid>,
    /// Level this order rests in (a level slot of its book).
    pub level: u32,
    /// Previous order in its level.
    pub prev: u32,
    /// Next order in its level.
    pub next: u32,
    /// Next older order with the same account and client id.
    pub client_older: u32,
    /// Next newer order with the same account and client id.
    pub client_newer: u32,
    /// Next older live order of the same account.
    pub account_older: u32,
    /// Next newer live order of the same account.
    pub account_newer: u32,
}

/// An account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountImage {
    /// Holder that owns it.
    pub holder: HolderId,
    /// Self-trade prevention default.
    pub stp: StpMode,
    /// Active, suspended or closed.
    pub state: AccountState,
    /// Name.
    pub name: String,
    /// Creation time.
    pub created: Timestamp,
    /// Main or subaccount.
    pub kind: AccountKind,
    /// Futures de-risk mode.
    pub derisk: bool,
    /// Per currency.
    pub balances: Vec<Balance>,
    /// Per currency: the balance-limit-protection threshold.
    pub blp_threshold: Vec<i64>,
}

/// A holder: its accounts (the main one first) and its open-order count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HolderImage {
    /// Accounts, main first.
    pub accounts: Vec<AccountId>,
    /// Open orders across its accounts.
    pub open_orders: u32,
}

/// Traded volume of one holder in one fee group: daily buckets of the ring as they stand
/// (day number, volume), and the day the window was last moved to. The running sum and
/// the tier are recomputed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumeImage {
    /// Day the window was last moved to (`i64::MIN`: never).
    pub as_of_day: i64,
    /// The ring's buckets in ring order.
    pub buckets: Vec<(i64, i128)>,
}

/// Futures state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FuturesImage {
    /// One per futures market, in configuration order.
    pub markets: Vec<FuturesMarketImage>,
    /// `account * markets + market`.
    pub positions: Vec<PositionImage>,
    /// Per account that ever traded futures.
    pub accounts: Vec<FuturesAccountImage>,
    /// Next position number.
    pub next_position: u64,
    /// Earliest time scheduled work is due.
    pub next_due: Timestamp,
    /// Whether the schedule was initialised.
    pub scheduled: bool,
}

/// The moving parts of one futures market.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FuturesMarketImage {
    /// Index price, once set.
    pub index: Option<Price>,
    /// Sum of long sizes.
    pub open_interest: i64,
    /// Funding accumulation, for a market with funding.
    pub funding: Option<FundingImage>,
}

/// Funding accumulated in the current period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FundingImage {
    /// Sum of premium samples.
    pub premium_sum: i128,
    /// Number of samples.
    pub samples: i64,
    /// Last settled rate.
    pub last_rate: i64,
    /// Next sample time.
    pub next_sample: Timestamp,
    /// Next settlement time.
    pub next_settlement: Timestamp,
}

/// One account's position in one market.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PositionImage {
    /// Position number (0: never opened).
    pub id: u64,
    /// Signed size.
    pub size: i64,
    /// Cost of entry.
    pub entry_cost: i128,
    /// Realised PnL since it opened.
    pub realised: i64,
    /// Time it opened.
    pub opened: Timestamp,
    /// Last funding settlement.
    pub last_settlement: Timestamp,
}

/// One account's futures margin state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FuturesAccountImage {
    /// Margin reserved by open futures orders.
    pub order_margin: i64,
    /// Under a margin call.
    pub margin_call: bool,
}
