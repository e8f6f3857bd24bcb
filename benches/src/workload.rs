//! Seeded workload profiles. A generator drives a private engine while it writes commands, so
//! every cancel and move targets an order that is live at that point of the stream; replaying
//! the stream on a fresh engine reproduces the same order handles.
//!
//! `exchange-core` follows that project's published benchmark (DESIGN section 6): one
//! instrument, about 1,000 resting orders over several hundred prices, 2,000 accounts, and a
//! command mix of 9% GTC, 3% IOC priced to sweep, 6% cancel and 82% move (an amend of the price
//! toward the last trade), cancel and move targets drawn from the oldest live orders.
//! `deep-book` is the same mix held around 100,000 resting orders.

use std::collections::{BTreeMap, VecDeque};

use matchbook::{
    AccountId, BracketExits, Command, Engine, EngineConfig, Event, EventRecord, InstrumentId,
    InstrumentKind, InstrumentSpec, InstrumentState, NewOrder, OrderRef, OrderType, Price, Qty,
    Side, TimeInForce, Timestamp, Trail,
};

use crate::rng::SplitMix64;

/// Time of the first command; each later command is one microsecond after the previous one.
pub const START: Timestamp = Timestamp(1_767_225_600_000_000_000);

/// Price the book starts around, in ticks.
pub const START_PRICE: i64 = 1_000_000;

/// Shape of a generated workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Profile {
    /// Name used on the command line and in reports.
    pub name: &'static str,
    /// Accounts (one holder each).
    pub accounts: u32,
    /// Resting orders the generator holds the book around.
    pub target_orders: usize,
    /// Ticks from the last trade over which passive orders spread, per side.
    pub price_span: i64,
}

/// The exchange-core benchmark mix.
pub const EXCHANGE_CORE: Profile = Profile {
    name: "exchange-core",
    accounts: 2_000,
    target_orders: 1_000,
    price_span: 400,
};

/// The same mix on a book of 100,000 resting orders.
pub const DEEP_BOOK: Profile = Profile {
    name: "deep-book",
    accounts: 2_000,
    target_orders: 100_000,
    price_span: 2_000,
};

/// A generated stream: set-up commands (accounts, the initial book) then the measured mix.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Profile it was made from.
    pub profile: Profile,
    /// Engine configuration to replay it on.
    pub config: EngineConfig,
    /// Holders and the initial resting orders.
    pub setup: Vec<Command>,
    /// The measured commands.
    pub commands: Vec<Command>,
}

/// The single benchmark instrument: integer ticks and lots, no practical price limits.
/// `balances` turns reservation, settlement and fees on (the default fee schedule).
/// Top-of-book events stay on (market data needs them); `Workload::config` can be changed
/// before `prepared_engine` to measure without them.
pub fn bench_config(balances: bool) -> EngineConfig {
    let mut config = matchbook::demo::config();
    config.enforce_balances = balances;
    config.instruments = vec![InstrumentSpec {
        code: "BENCH_EUR".into(),
        base: "BTC".into(),
        quote: "EUR".into(),
        amount_precision: 0,
        market_precision: 0,
        min_size: "1".into(),
        min_price: "1".into(),
        max_price: "1000000000".into(),
        kind: InstrumentKind::Spot,
        state: InstrumentState::Active,
        futures: None,
    }];
    config
}

/// As [`bench_config`] with balances on, the instrument turned into a USD-margined
/// perpetual (10 % initial, 5 % maintenance margin, the demo funding settings).
pub fn futures_bench_config() -> EngineConfig {
    let mut config = bench_config(true);
    let demo = matchbook::demo::config();
    let perp = demo
        .instruments
        .iter()
        .find(|i| i.kind == InstrumentKind::Perp)
        .and_then(|i| i.futures.clone());
    let inst = &mut config.instruments[0];
    inst.code = "BENCH_USD_PERP".into();
    inst.quote = "USD".into();
    inst.kind = InstrumentKind::Perp;
    inst.futures = perp;
    config
}

/// The instrument every profile trades.
pub const INSTRUMENT: InstrumentId = InstrumentId(0);

/// Time of the `i`-th command of a stream (set-up and measured commands count alike).
pub fn time_of(i: usize) -> Timestamp {
    Timestamp(START.0 + i as i64 * 1_000)
}

#[derive(Debug, Clone, Copy)]
struct Live {
    handle: OrderRef,
    account: AccountId,
    side: Side,
    price: i64,
}

struct Generator {
    profile: Profile,
    rng: SplitMix64,
    engine: Engine,
    live: BTreeMap<u64, Live>,
    last: i64,
    clock: usize,
    events: Vec<EventRecord>,
    /// Share of measured commands that are the order types beyond the exchange-core mix.
    new_types: f64,
    /// Held trigger orders, oldest first (some may have fired or ended since).
    held: VecDeque<(OrderRef, AccountId)>,
}

impl Generator {
    fn size(&mut self) -> Qty {
        let r = self.rng.below(6) as i64;
        Qty(1 + r * r * r)
    }

    fn account(&mut self) -> AccountId {
        AccountId(self.rng.below(u64::from(self.profile.accounts)) as u32)
    }

    fn passive(&mut self) -> Command {
        let side = if self.rng.chance(0.5) {
            Side::Buy
        } else {
            Side::Sell
        };
        let u = self.rng.unit();
        let offset = 1 + (u * u * self.profile.price_span as f64) as i64;
        let price = match side {
            Side::Buy => self.last - offset,
            Side::Sell => self.last + offset,
        };
        let (account, amount) = (self.account(), self.size());
        Command::PlaceOrder(NewOrder::limit(
            account,
            INSTRUMENT,
            side,
            Price(price),
            amount,
        ))
    }

    fn sweep(&mut self) -> Command {
        let side = if self.rng.chance(0.5) {
            Side::Buy
        } else {
            Side::Sell
        };
        let reach = 1 + self.rng.below(8) as i64;
        let price = match side {
            Side::Buy => self.last + reach,
            Side::Sell => self.last - reach,
        };
        let (account, amount) = (self.account(), self.size());
        Command::PlaceOrder(
            NewOrder::limit(account, INSTRUMENT, side, Price(price.max(1)), amount)
                .with_tif(TimeInForce::ImmediateOrCancelled),
        )
    }

    /// One of the oldest live orders.
    fn old_order(&mut self) -> Option<Live> {
        let window = self.live.len().min(128) as u64;
        if window == 0 {
            return None;
        }
        let k = self.rng.below(window) as usize;
        self.live.values().nth(k).copied()
    }

    /// An order of the types beyond the exchange-core mix, around the last trade: an
    /// iceberg, a stop-market, a take-profit limit, a trailing stop, an OCO exit pair or a
    /// bracket with an immediate entry; or, once 400 are held, a cancel of the oldest held.
    fn new_type(&mut self) -> Command {
        if self.held.len() > 400
            && let Some((order, account)) = self.held.pop_front()
        {
            return Command::CancelOrder { account, order };
        }
        let side = if self.rng.chance(0.5) {
            Side::Buy
        } else {
            Side::Sell
        };
        let (account, amount) = (self.account(), Qty(self.size().0 + 1));
        let away = 1 + self.rng.below((self.profile.price_span / 4).max(1) as u64) as i64;
        let last = self.last;
        // Passive prices and take-profit triggers lie on the order's own side of the last
        // trade; stop triggers on the other side.
        let (passive, stop) = match side {
            Side::Buy => ((last - away).max(1), last + away),
            Side::Sell => (last + away, (last - away).max(1)),
        };
        let limit = NewOrder::limit(account, INSTRUMENT, side, Price(passive), amount);
        let stop_market = NewOrder {
            order_type: OrderType::StopMarket,
            price: None,
            trigger_price: Some(Price(stop)),
            ..limit
        };
        match self.rng.below(6) {
            0 => Command::PlaceOrder(NewOrder {
                display: Some(Qty(1)),
                ..limit
            }),
            1 => Command::PlaceOrder(stop_market),
            2 => Command::PlaceOrder(NewOrder {
                order_type: OrderType::TakeProfit,
                trigger_price: Some(Price(passive)),
                ..limit
            }),
            3 => Command::PlaceOrder(NewOrder {
                order_type: OrderType::TrailingStop,
                price: None,
                trail: Some(Trail::Price(Price(away))),
                ..limit
            }),
            4 => Command::PlaceOco {
                first: limit,
                second: Box::new(stop_market),
            },
            _ => {
                let reach = match side {
                    Side::Buy => last + 1 + self.rng.below(8) as i64,
                    Side::Sell => (last - 1 - self.rng.below(8) as i64).max(1),
                };
                let entry = NewOrder::limit(account, INSTRUMENT, side, Price(reach), amount)
                    .with_tif(TimeInForce::ImmediateOrCancelled);
                let (take_profit, stop_loss) = match side {
                    Side::Buy => (last + 2 * away, (last - away).max(1)),
                    Side::Sell => ((last - 2 * away).max(1), last + away),
                };
                let exits = BracketExits {
                    take_profit: Price(take_profit),
                    stop_loss: Price(stop_loss),
                    stop_limit: None,
                };
                Command::PlaceBracket { entry, exits }
            }
        }
    }

    fn next_command(&mut self) -> Command {
        if self.new_types > 0.0 && self.rng.chance(self.new_types) {
            return self.new_type();
        }
        let n = self.live.len();
        let target = self.profile.target_orders;
        let gtc = if n < target * 95 / 100 {
            0.15
        } else if n > target * 105 / 100 {
            0.04
        } else {
            0.09
        };
        let r = self.rng.unit();
        if r < gtc {
            return self.passive();
        }
        if r < gtc + 0.03 {
            return self.sweep();
        }
        let Some(order) = self.old_order() else {
            return self.passive();
        };
        if r < gtc + 0.09 {
            return Command::CancelOrder {
                account: order.account,
                order: order.handle,
            };
        }
        // Toward the last trade by up to half the distance (at least a tick), so old orders
        // drift to the touch and some cross it; an order already at the last price steps back.
        let distance = self.last - order.price;
        let step = if distance != 0 {
            distance.signum() * (1 + self.rng.below(distance.unsigned_abs() / 2 + 1) as i64)
        } else if order.side == Side::Buy {
            -1
        } else {
            1
        };
        Command::AmendOrder {
            account: order.account,
            order: order.handle,
            amount: None,
            price: Some(Price((order.price + step).max(1))),
        }
    }

    fn apply(&mut self, command: &Command) {
        self.events.clear();
        let _ = self
            .engine
            .apply(command, time_of(self.clock), &mut self.events);
        self.clock += 1;
        for record in &self.events {
            match record.event {
                Event::OrderAccepted(a) if a.order_type.is_trigger() => {
                    self.held.push_back((a.order, a.account));
                }
                Event::OrderBooked {
                    order, price, side, ..
                } => {
                    let account = self
                        .engine
                        .order(order)
                        .map_or(AccountId(0), |o| o.account());
                    self.live.insert(
                        order.id,
                        Live {
                            handle: order,
                            account,
                            side,
                            price: price.0,
                        },
                    );
                }
                Event::Trade(t) => {
                    self.last = t.price.0;
                    if t.maker_remaining.0 == 0 {
                        self.live.remove(&t.maker.id);
                    }
                    if t.taker_remaining.0 == 0 {
                        self.live.remove(&t.taker.id);
                    }
                }
                Event::OrderCancelled { order, .. } => {
                    self.live.remove(&order.id);
                }
                Event::OrderAmended {
                    order,
                    price: Some(price),
                    ..
                } => {
                    if let Some(live) = self.live.get_mut(&order.id) {
                        live.price = price.0;
                    }
                }
                _ => {}
            }
        }
    }
}

/// Generates `n` measured commands of `profile` from `seed`, after the set-up that creates
/// the accounts and fills the book to its target size; book only (no balances or fees).
pub fn generate(profile: Profile, seed: u64, n: usize) -> Workload {
    generate_with(profile, seed, n, false)
}

/// As [`generate`], with balances and fees on: every account is funded at set-up with
/// enough base and quote that no order of the profile is refused for funds.
pub fn generate_funded(profile: Profile, seed: u64, n: usize) -> Workload {
    generate_with(profile, seed, n, true)
}

/// As [`generate_funded`] on a USD-margined perpetual: every account gets USD collateral,
/// orders reserve initial margin and fills move positions.
pub fn generate_futures(profile: Profile, seed: u64, n: usize) -> Workload {
    generate_from(profile, seed, n, futures_bench_config())
}

/// Balance units each account is funded with, per currency, in funded workloads.
pub const FUNDING: i64 = 100_000_000_000_000_000;

fn generate_with(profile: Profile, seed: u64, n: usize, balances: bool) -> Workload {
    generate_from(profile, seed, n, bench_config(balances))
}

/// As [`generate`] (or [`generate_funded`]), with `share` of the measured commands
/// replaced by the order types beyond the exchange-core mix: icebergs, stop-markets,
/// take-profits, trailing stops, OCO exit pairs and brackets (and cancels of the oldest
/// held triggers, so about 400 stay held).
pub fn generate_with_new_types(
    profile: Profile,
    seed: u64,
    n: usize,
    balances: bool,
    share: f64,
) -> Workload {
    mixed_from(profile, seed, n, bench_config(balances), share, &[])
}

/// As [`generate`] (or [`generate_funded`]), with `count` stop-market orders placed at
/// set-up (before the book is filled, so the stream's handles account for them), parked so
/// far from the price that no trade reaches them: sell stops near the bottom of the range,
/// buy stops near its top. What held triggers cost a stream that never fires them.
pub fn generate_with_parked_triggers(
    profile: Profile,
    seed: u64,
    n: usize,
    balances: bool,
    count: usize,
) -> Workload {
    let parked = (0..count).map(|i| {
        let (side, trigger) = if i % 2 == 0 {
            (Side::Sell, 1 + (i % 1_000) as i64)
        } else {
            (Side::Buy, 900_000_000 - (i % 1_000) as i64)
        };
        let account = AccountId((i as u32) % profile.accounts);
        Command::PlaceOrder(NewOrder {
            order_type: OrderType::StopMarket,
            price: None,
            trigger_price: Some(Price(trigger)),
            ..NewOrder::limit(account, INSTRUMENT, side, Price(1), Qty(1))
        })
    });
    let parked: Vec<Command> = parked.collect();
    mixed_from(profile, seed, n, bench_config(balances), 0.0, &parked)
}

fn generate_from(profile: Profile, seed: u64, n: usize, config: EngineConfig) -> Workload {
    mixed_from(profile, seed, n, config, 0.0, &[])
}

fn mixed_from(
    profile: Profile,
    seed: u64,
    n: usize,
    config: EngineConfig,
    share: f64,
    parked: &[Command],
) -> Workload {
    let balances = config.enforce_balances;
    let mut g = Generator {
        profile,
        rng: SplitMix64::new(seed),
        engine: Engine::new(config.clone()).expect("bench config is valid"),
        live: BTreeMap::new(),
        last: START_PRICE,
        clock: 0,
        events: Vec::new(),
        new_types: share,
        held: VecDeque::new(),
    };
    let mut setup = Vec::with_capacity(profile.accounts as usize + profile.target_orders);
    for _ in 0..profile.accounts {
        setup.push(Command::CreateHolder);
        g.apply(&Command::CreateHolder);
    }
    if balances {
        let inst = g.engine.instrument(INSTRUMENT).expect("bench instrument");
        // A future is margined in its quote currency only.
        let currencies = if inst.spec.kind.is_future() {
            vec![inst.quote]
        } else {
            vec![inst.base, inst.quote]
        };
        for account in 0..profile.accounts {
            for &currency in &currencies {
                let deposit = Command::Deposit {
                    account: AccountId(account),
                    currency,
                    amount: FUNDING,
                };
                g.apply(&deposit);
                setup.push(deposit);
            }
        }
    }
    for command in parked {
        g.apply(command);
        setup.push(command.clone());
    }
    while g.live.len() < profile.target_orders {
        let command = g.passive();
        g.apply(&command);
        setup.push(command);
    }
    let mut commands = Vec::with_capacity(n);
    for _ in 0..n {
        let command = g.next_command();
        g.apply(&command);
        commands.push(command);
    }
    Workload {
        profile,
        config,
        setup,
        commands,
    }
}

impl Workload {
    /// A fresh engine with the set-up applied: the state the measured commands start from.
    pub fn prepared_engine(&self) -> Engine {
        let mut engine = Engine::new(self.config.clone()).expect("bench config is valid");
        let mut events = Vec::with_capacity(64);
        for (i, command) in self.setup.iter().enumerate() {
            events.clear();
            let _ = engine.apply(command, time_of(i), &mut events);
        }
        engine
    }

    /// Time of the `i`-th measured command.
    pub fn time_of_command(&self, i: usize) -> Timestamp {
        time_of(self.setup.len() + i)
    }
}
