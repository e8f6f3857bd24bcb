//! The engine: owns every book, order, account and counter, and applies one command at a
//! time (`Engine::apply`). It never reads a clock: each command brings its time.

mod account_chain;
mod accounts;
mod admin;
mod amend;
mod book_views;
mod build;
mod cancel;
mod contingent;
mod dead_man;
mod futures;
mod image;
mod integrity;
mod ledger;
mod level_watch;
mod lookahead;
mod matching;
mod place;
#[cfg(test)]
mod queue_tests;
mod reach;
mod slot_table;
mod state_hash;
mod tops;
mod transfer;
mod triggers;
mod views;

pub use accounts::MAIN_ACCOUNT_NAME;
pub use admin::MAX_ACCOUNT_NAME;
pub use futures::{FundingView, FuturesSummary, MarginState, PositionView, RATE_SCALE};
pub use integrity::IntegrityError;
pub use ledger::transfer_decimals;
pub use level_watch::{LevelChange, TopLevel};
pub use lookahead::Lookahead;
pub use views::{AccountFees, ActiveTier, MarginTotals, RunningVolume};

use std::collections::{BTreeMap, HashMap};

use crate::account::AccountView;
use crate::book::Book;
use crate::command::Command;
use crate::error::EngineError;
use crate::event::{Event, EventRecord, EventSink};
use crate::fees::{FeeGroup, FeeGroupSpec, HolderVolumes};
use crate::fixed::Price;
use crate::hashing::ClientKeyBuildHasher;
use crate::ids::{AccountId, CurrencyId, HolderId, InstrumentId, OrderRef, Timestamp, Uuid};
use crate::order::{Order, OrderStore, StpMode};
use crate::refdata::{ConfigError, Currency, Instrument, InstrumentSpec, InstrumentState};
use accounts::Accounts;

/// Default limit of open orders per holder across all markets (spec section 8).
pub const DEFAULT_MAX_OPEN_ORDERS: u32 = 200;

/// What an engine is built from. Its serde form is the canonical encoding a data
/// directory is pinned to (`matchbook_store::pin_config`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EngineConfig {
    /// Currencies, interned in this order.
    pub currencies: Vec<Currency>,
    /// Instruments, indexed in this order.
    pub instruments: Vec<InstrumentSpec>,
    /// Open orders allowed per holder.
    pub max_open_orders: u32,
    /// Fee groups (SPOT for spot markets, FUTURES for futures).
    pub fee_groups: Vec<FeeGroupSpec>,
    /// When false the engine matches without reserving or settling funds and charges no
    /// fees: the book-only mode of the benchmarks.
    pub enforce_balances: bool,
    /// Emit `TopOfBook` events when a book's best bid or ask changes (market data needs
    /// them; a bare matching benchmark can do without).
    pub publish_top_of_book: bool,
}

/// Ids a successful command produced, for callers that do not want to scan the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Applied {
    /// The order placed.
    pub order: Option<OrderRef>,
    /// The account created.
    pub account: Option<AccountId>,
    /// The holder created.
    pub holder: Option<HolderId>,
    /// Set when the order placed was accepted (it has a number and a history record) but
    /// ended at once without trading, because its time in force forbade what the book
    /// offered: `InsufficientLiquidity` for a fill-or-kill that could not fill completely,
    /// `PostOnlyWouldTake` for a post-only order that would have taken. Adapters report it
    /// to the caller as that error.
    pub rejected: Option<EngineError>,
    /// The second leg of a one-cancels-the-other pair placed.
    pub linked: Option<OrderRef>,
}

/// Best bid and ask of a book as last published, and whether the book changed since.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
struct PublishedTop {
    top: (Option<Price>, Option<Price>),
    dirty: bool,
}

/// The matching engine. Single writer: `apply` takes `&mut self`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Engine {
    currencies: Vec<Currency>,
    instruments: Vec<Instrument>,
    books: Vec<Book>,
    orders: OrderStore,
    /// Whether hints pay at this engine's size ([`Engine::hints_pay`]), as of the start
    /// of the current command.
    #[serde(skip)]
    hinting: bool,
    accounts: Accounts,
    /// (account, client id) -> newest live order carrying it; older ones chain behind it.
    #[serde(deserialize_with = "crate::persist::sorted_map::deserialize")]
    client_index: HashMap<(AccountId, Uuid), u32, ClientKeyBuildHasher>,
    /// Each account's live orders, newest first.
    account_chains: account_chain::AccountChains,
    /// Good-till-time orders by (expiry, order number).
    expiries: BTreeMap<(Timestamp, u64), u32>,
    max_open_orders: u32,
    enforce_balances: bool,
    publish_top_of_book: bool,
    /// Books changed by the current command, to check their top afterwards.
    dirty_books: Vec<u16>,
    /// Per book: best bid and ask as last published, and whether it changed since. Kept
    /// apart from the books so the check touches one small array, not each book's tail.
    tops: Vec<PublishedTop>,
    /// Balance scale (decimal places) of each currency.
    scales: Vec<u8>,
    settlements: Vec<ledger::Settlement>,
    fee_groups: Vec<FeeGroup>,
    /// Running volume per holder, per fee group.
    volumes: HolderVolumes,
    /// The exchange's fee account, per currency.
    fees_collected: Vec<i64>,
    next_transfer: u64,
    seq: u64,
    /// The event sequence number before the command being applied: a book whose last
    /// change is at or before it has not changed in this command yet.
    #[serde(skip)]
    command_base: u64,
    /// Armed dead-man switches (format 6 had none).
    #[serde(skip)]
    dead_man: dead_man::DeadManSwitches,
    now: Timestamp,
    next_order: u64,
    next_trade: u64,
    scratch_slots: Vec<u32>,
    futures: futures::Futures,
    /// Trailing orders' terms by order number (format 8 had none).
    #[serde(skip)]
    trails: slot_table::SlotTable<triggers::Trailing>,
    /// Where each held order sits in its book's trigger queues, by slot.
    #[serde(skip)]
    held_at: crate::book::triggers::HeldPositions,
    /// Icebergs' displayed amounts by order number (format 8 had none).
    #[serde(skip)]
    displays: slot_table::SlotTable<crate::fixed::Qty>,
    /// One-cancels-the-other and bracket links by order number (format 8 had none).
    #[serde(skip)]
    links: slot_table::SlotTable<contingent::Link>,
    /// Bracket exits due, placed once the current taker is done (empty between commands).
    #[serde(skip)]
    activations: Vec<contingent::Activation>,
    /// The levels the commands changed, while a host watches them (not state).
    #[serde(skip)]
    level_watch: Option<Box<level_watch::LevelWatch>>,
}

impl Engine {
    /// Builds an engine with empty books from validated reference data.
    pub fn new(config: EngineConfig) -> Result<Self, ConfigError> {
        let instruments = build::instruments(&config.currencies, config.instruments)?;
        let config_instruments = instruments.len();
        let futures = futures::Futures::build(&instruments)?;
        let scales = build::balance_scales(&config.currencies, &instruments)?;
        let fee_groups = build::fee_groups(config.fee_groups, &config.currencies, &scales)?;
        Ok(Self {
            books: instruments.iter().map(|_| Book::default()).collect(),
            settlements: ledger::settlements(&instruments, &scales, &fee_groups)
                .into_iter()
                .zip(&futures.by_instrument)
                .map(|(s, &futures)| ledger::Settlement { futures, ..s })
                .collect(),
            fees_collected: vec![0; config.currencies.len()],
            accounts: Accounts::new(config.currencies.len()),
            currencies: config.currencies,
            instruments,
            orders: OrderStore::with_capacity(1024),
            hinting: false,
            client_index: HashMap::default(),
            expiries: BTreeMap::new(),
            max_open_orders: config.max_open_orders,
            enforce_balances: config.enforce_balances,
            publish_top_of_book: config.publish_top_of_book,
            dirty_books: Vec::with_capacity(8),
            tops: vec![PublishedTop::default(); config_instruments],
            scales,
            volumes: HolderVolumes::new(fee_groups.len()),
            fee_groups,
            next_transfer: 1,
            seq: 0,
            command_base: 0,
            dead_man: dead_man::DeadManSwitches::default(),
            now: Timestamp(0),
            next_order: 1,
            next_trade: 1,
            scratch_slots: Vec::new(),
            account_chains: Default::default(),
            futures,
            trails: Default::default(),
            held_at: Default::default(),
            displays: Default::default(),
            links: Default::default(),
            activations: Vec::new(),
            level_watch: None,
        })
    }

    /// Applies one command at `time`, writing its events to `sink`. A refused command
    /// emits one `Rejected` event, returns the error and changes nothing else. Time never
    /// goes backwards: an earlier `time` is treated as the engine's current time.
    pub fn apply<S: EventSink>(
        &mut self,
        command: &Command,
        time: Timestamp,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        if time > crate::limits::TIME_HORIZON {
            return Err(EngineError::TimeOutOfRange);
        }
        if time > self.now {
            self.now = time;
        }
        self.begin_command(sink);
        let result = match command {
            Command::CreateHolder => Ok(self.create_holder(sink)),
            Command::CreateSubaccount { holder, name, kind } => {
                self.create_subaccount(*holder, name, *kind, sink)
            }
            Command::CloseSubaccount { account } => self.close_subaccount(*account, sink),
            Command::Deposit {
                account,
                currency,
                amount,
            } => self.deposit(*account, *currency, *amount, sink),
            Command::Withdraw {
                account,
                currency,
                amount,
            } => self.withdraw(*account, *currency, *amount, sink),
            Command::SetDerisk { account, on } => self.set_derisk(*account, *on, sink),
            Command::SetBlpThreshold {
                account,
                currency,
                amount,
            } => self.set_blp_threshold(*account, *currency, *amount, sink),
            Command::Transfer {
                holder,
                source,
                destination,
                currency,
                amount,
            } => self.transfer(*holder, *source, *destination, *currency, *amount, sink),
            Command::SetStpMode { account, mode } => self.set_stp(*account, *mode, sink),
            Command::SetInstrumentState { instrument, state } => {
                self.set_instrument_state(*instrument, *state, sink)
            }
            Command::PlaceOrder(order) => self.place(order, sink),
            Command::PlaceOco { first, second } => self.place_oco(first, second, sink),
            Command::PlaceBracket { entry, exits } => self.place_bracket(entry, exits, sink),
            Command::AmendOrder {
                account,
                order,
                amount,
                price,
            } => self.amend(*account, *order, *amount, *price, sink),
            Command::CancelOrder { account, order } => self.cancel_one(*account, *order, sink),
            Command::CancelByClientId { account, client_id } => {
                self.cancel_by_client_id(*account, *client_id, sink)
            }
            Command::CancelAll { account, scope } => self.cancel_all(*account, scope, sink),
            Command::SetIndexPrice { instrument, price } => {
                self.set_index_price(*instrument, *price, sink)
            }
            Command::Liquidate { account } => self.liquidate(*account, sink),
            Command::SetCancelAllAfter { account, timeout } => {
                self.set_cancel_all_after(*account, *timeout, sink)
            }
            Command::AdvanceTime => {
                self.check_all_margins(sink);
                Ok(Applied::default())
            }
        };
        self.run_activations(sink);
        self.run_mark_triggers(sink);
        self.publish_tops(sink);
        if let Err(error) = result {
            self.reject(command, error, sink);
        }
        result
    }

    /// What runs before every command, due at the time just taken: the futures schedule,
    /// expiries, dead-man switches, bracket activations, the tops owed.
    #[inline(always)]
    fn begin_command<S: EventSink>(&mut self, sink: &mut S) {
        self.command_base = self.seq;
        self.hinting = lookahead::hints_pay(
            self.orders.len(),
            self.accounts.core.len(),
            self.enforce_balances,
        );
        self.run_futures_schedule(sink);
        self.expire_due(sink);
        self.run_dead_man_switches(sink);
        self.run_activations(sink);
        self.publish_tops(sink);
    }

    /// A refused command's one event.
    #[cold]
    fn reject<S: EventSink>(&mut self, command: &Command, error: EngineError, sink: &mut S) {
        let (account, client_id) = (command.account(), command.client_id());
        self.emit(
            sink,
            Event::Rejected {
                account,
                client_id,
                error,
            },
        );
    }

    fn create_holder<S: EventSink>(&mut self, sink: &mut S) -> Applied {
        let (holder, main_account) = self.accounts.create_holder();
        self.volumes.push_holder();
        self.emit(
            sink,
            Event::HolderCreated {
                holder,
                main_account,
            },
        );
        Applied {
            holder: Some(holder),
            account: Some(main_account),
            ..Applied::default()
        }
    }

    fn set_stp<S: EventSink>(
        &mut self,
        account: AccountId,
        mode: StpMode,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        self.accounts.core_mut(account)?.stp = mode;
        self.emit(sink, Event::StpModeSet { account, mode });
        Ok(Applied::default())
    }

    fn set_instrument_state<S: EventSink>(
        &mut self,
        instrument: InstrumentId,
        state: InstrumentState,
        sink: &mut S,
    ) -> Result<Applied, EngineError> {
        self.instrument_mut(instrument)?.state = state;
        self.emit(sink, Event::InstrumentStateChanged { instrument, state });
        Ok(Applied::default())
    }

    /// Stamps and writes one event; returns its sequence number. Always inlined: the
    /// event is built in place in the sink rather than copied through a call.
    #[inline(always)]
    pub(crate) fn emit<S: EventSink>(&mut self, sink: &mut S, event: Event) -> u64 {
        self.seq += 1;
        sink.push(EventRecord {
            seq: self.seq,
            time: self.now,
            event,
        });
        self.seq
    }

    fn instrument_mut(&mut self, id: InstrumentId) -> Result<&mut Instrument, EngineError> {
        self.instruments
            .get_mut(usize::from(id.0))
            .ok_or(EngineError::UnknownInstrument)
    }

    // ---- read side -------------------------------------------------------------------

    /// Currencies in interned order.
    pub fn currencies(&self) -> &[Currency] {
        &self.currencies
    }

    /// Instruments in index order.
    pub fn instruments(&self) -> &[Instrument] {
        &self.instruments
    }

    /// One instrument.
    pub fn instrument(&self, id: InstrumentId) -> Result<&Instrument, EngineError> {
        self.instruments
            .get(usize::from(id.0))
            .ok_or(EngineError::UnknownInstrument)
    }

    /// Looks an instrument up by code.
    pub fn instrument_by_code(&self, code: &str) -> Option<InstrumentId> {
        self.instruments
            .iter()
            .position(|i| i.code() == code)
            .map(|i| InstrumentId(i as u16))
    }

    /// Sequence number of the last event emitted.
    pub fn sequence(&self) -> u64 {
        self.seq
    }

    /// Makes room for `additional` more resting orders than the engine holds now, so that
    /// placing them never grows the order store on the matching path (it otherwise
    /// doubles as it fills, copying every order each time): a host that knows its peak
    /// pre-sizes. The room is written now, so the first use of a slot does not fault a
    /// fresh page in either; slots are handed out in the same order as without it.
    pub fn reserve_orders(&mut self, additional: usize) {
        self.orders.reserve_touched(additional);
        self.account_chains.reserve(self.orders.slots());
    }

    /// Makes room for `additional` more price levels in every book, written now as
    /// [`Engine::reserve_orders`] does: a host that knows how many prices a book will
    /// hold at once keeps new levels from growing (and copying) its level store while
    /// commands are timed.
    pub fn reserve_levels(&mut self, additional: usize) {
        for book in &mut self.books {
            book.levels.reserve_touched(additional);
        }
    }

    /// Engine time (the latest command time seen).
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// Number of the newest trade made (0 before the first): trades are numbered from 1
    /// across the exchange, so a reader of trade history can start after it.
    pub fn last_trade_id(&self) -> u64 {
        self.next_trade.saturating_sub(1)
    }

    /// The hasher of the client-id index (tests check it is keyed).
    #[cfg(test)]
    pub(crate) fn client_index_hasher(&self) -> &ClientKeyBuildHasher {
        self.client_index.hasher()
    }

    /// A live order (open, or a stop waiting for its trigger).
    pub fn order(&self, handle: OrderRef) -> Option<&Order> {
        self.orders
            .get(handle.slot as usize)
            .filter(|o| o.id == handle.id)
    }

    /// Live orders of an account, oldest first (a walk of the account's own chain).
    pub fn open_orders(&self, account: AccountId) -> Vec<&Order> {
        let mut list: Vec<&Order> = self
            .account_slots(account)
            .map(|slot| &self.orders[slot as usize])
            .collect();
        list.reverse();
        list
    }

    /// Number of live orders of every account.
    pub fn live_order_count(&self) -> usize {
        self.orders.len()
    }

    /// The holder owning `account`.
    pub fn holder_of(&self, account: AccountId) -> Result<HolderId, EngineError> {
        self.accounts.core(account).map(|a| a.holder)
    }

    /// Open orders counted against a holder's limit.
    pub fn open_order_count(&self, holder: HolderId) -> Result<u32, EngineError> {
        self.accounts.holder(holder).map(|h| h.open_orders)
    }

    /// An account with its balances.
    pub fn account(&self, account: AccountId) -> Result<AccountView<'_>, EngineError> {
        self.accounts.view(account)
    }

    /// Every account of a holder: the main account first, then subaccounts in creation order
    /// (closed ones included).
    pub fn holder_accounts(&self, holder: HolderId) -> Result<Vec<AccountView<'_>>, EngineError> {
        self.accounts
            .holder(holder)?
            .accounts
            .iter()
            .map(|&a| self.accounts.view(a))
            .collect()
    }

    /// Number of holders.
    pub fn holder_count(&self) -> usize {
        self.accounts.holders.len()
    }

    /// Looks a currency up by code.
    pub fn currency_by_code(&self, code: &str) -> Option<CurrencyId> {
        self.currencies
            .iter()
            .position(|c| c.code == code)
            .map(|i| CurrencyId(i as u16))
    }

    /// Decimal places of a currency's balances (see the ledger module).
    pub fn balance_scale(&self, currency: CurrencyId) -> Result<u8, EngineError> {
        self.scales
            .get(usize::from(currency.0))
            .copied()
            .ok_or(EngineError::UnknownCurrency)
    }

    /// The exchange's fee account: fees collected per currency, in balance units.
    pub fn fees_collected(&self) -> &[i64] {
        &self.fees_collected
    }

    /// Whether orders reserve and settle funds.
    pub fn enforces_balances(&self) -> bool {
        self.enforce_balances
    }
}
