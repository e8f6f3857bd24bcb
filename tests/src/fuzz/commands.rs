//! `engine_commands`: an input read as a sequence of commands on the demo exchange (three
//! funded holders, spot and futures markets), each applied and followed by the engine's
//! promises, checked from the outside: money is conserved per currency (USD with the
//! unrealised PnL of positions), every lock is backed by open orders (spot reservations,
//! futures order margin), no balance is negative, no book is crossed, and open interest is
//! balanced.

use matchbook::{
    AccountId, CancelScope, Command, CurrencyId, Engine, EventRecord, HolderId, InstrumentId,
    InstrumentState, NewOrder, OrderRef, OrderType, Price, Qty, Side, StpMode, TimeInForce,
    Timestamp, Trail, TriggerRef, Uuid,
};

use super::Input;

/// 2026-01-01 00:00 UTC.
const T0: i64 = 1_767_225_600_000_000_000;
/// Commands read from one input at most (keeps each run short).
const MAX_COMMANDS: usize = 400;
/// Reference price and order size of each demo instrument, by index.
const MARKETS: [(&str, &str); 7] = [
    ("60000", "0.01"),
    ("3000", "0.1"),
    ("0.05", "1"),
    ("65000", "0.01"),
    ("0.00002", "1000000"),
    ("60000", "0.01"),
    ("60000", "0.01"),
];
const FUNDS: [(&str, &str); 6] = [
    ("BTC", "50"),
    ("ETH", "500"),
    ("EUR", "5000000"),
    ("USD", "5000000"),
    ("USDT", "5000000"),
    ("SHIB", "100000000000"),
];

struct World {
    engine: Engine,
    accounts: Vec<AccountId>,
    holders: Vec<HolderId>,
    /// Reference price ticks and order lots of each instrument.
    markets: Vec<(i64, i64)>,
    orders: Vec<OrderRef>,
    /// Deposits less withdrawals, per currency.
    net_in: Vec<i128>,
    usd: CurrencyId,
    time: i64,
    events: Vec<EventRecord>,
    /// Market data fed with every event, when a caller wants it.
    market: Option<matchbook::market::MarketData>,
}

impl World {
    /// The demo exchange with three funded holders.
    fn new() -> Self {
        let mut world = Self::around(Engine::new(matchbook::demo::config()).expect("demo config"));
        for _ in 0..3 {
            if let Ok(applied) = world.apply(Command::CreateHolder) {
                world.holders.extend(applied.holder);
                world.accounts.extend(applied.account);
            }
        }
        for &account in &world.accounts.clone() {
            for (code, amount) in FUNDS {
                let Some(currency) = world.engine.currency_by_code(code) else {
                    continue;
                };
                let scale = world.engine.balance_scale(currency).unwrap_or(0);
                let Ok(amount) = matchbook::fixed::parse_scaled(amount, scale) else {
                    continue;
                };
                let _ = world.apply(Command::Deposit {
                    account,
                    currency,
                    amount,
                });
            }
        }
        world
    }

    /// A restored demo engine as it is: its holders, accounts and open orders become the
    /// world's, and what it holds now counts as deposited.
    fn resume(engine: Engine) -> Self {
        let mut world = Self::around(engine);
        world.time = world.time.max(world.engine.now().0);
        for h in 0..world.engine.holder_count() as u32 {
            world.holders.push(HolderId(h));
            for view in world
                .engine
                .holder_accounts(HolderId(h))
                .unwrap_or_default()
            {
                world.accounts.push(view.id);
                let orders = world.engine.open_orders(view.id);
                world.orders.extend(orders.iter().map(|o| o.handle()));
            }
        }
        world.net_in = world.holdings(&Command::AdvanceTime);
        world
    }

    /// A world around `engine`, with nothing recorded yet.
    fn around(engine: Engine) -> Self {
        let markets = engine
            .instruments()
            .iter()
            .zip(MARKETS)
            .map(|(i, (price, size))| {
                let price = i.parse_price(price).map_or(1, |p| p.0);
                let lots = i.parse_qty(size).map_or(1, |q| q.0);
                (price.max(1), lots.max(1))
            })
            .collect();
        let usd = engine.currency_by_code("USD").expect("USD");
        let currencies = engine.currencies().len();
        Self {
            engine,
            accounts: Vec::new(),
            holders: Vec::new(),
            markets,
            orders: Vec::new(),
            net_in: vec![0; currencies],
            usd,
            time: T0,
            events: Vec::new(),
            market: None,
        }
    }

    fn apply(&mut self, command: Command) -> Result<matchbook::Applied, matchbook::EngineError> {
        self.events.clear();
        let applied = self
            .engine
            .apply(&command, Timestamp(self.time), &mut self.events);
        if let Some(market) = &mut self.market {
            market.on_events(&self.events);
        }
        if applied.is_ok() {
            match command {
                Command::Deposit {
                    currency, amount, ..
                } => self.net_in[usize::from(currency.0)] += i128::from(amount),
                Command::Withdraw {
                    currency, amount, ..
                } => self.net_in[usize::from(currency.0)] -= i128::from(amount),
                _ => {}
            }
        }
        if let Ok(a) = &applied {
            self.orders.extend(a.order);
            self.orders.extend(a.linked);
            self.accounts.extend(a.account);
        }
        applied
    }

    fn account(&self, input: &mut Input<'_>) -> AccountId {
        let i = usize::from(input.u8()) % self.accounts.len().max(1);
        self.accounts.get(i).copied().unwrap_or(AccountId(0))
    }

    fn order(&self, input: &mut Input<'_>) -> OrderRef {
        let i = usize::from(input.u16()) % self.orders.len().max(1);
        self.orders
            .get(i)
            .copied()
            .unwrap_or(OrderRef { id: 0, slot: 0 })
    }

    fn instrument(&self, input: &mut Input<'_>) -> (InstrumentId, i64, i64) {
        let i = usize::from(input.u8()) % self.markets.len();
        let (price, lots) = self.markets[i];
        (InstrumentId(i as u16), price, lots)
    }

    /// A new order (seven commands in sixteen): every order type, time in force and
    /// option, at and past the limits, now and then as an OCO pair or a bracket.
    fn place_command(&mut self, input: &mut Input<'_>) -> Command {
        let account = self.account(input);
        let (instrument, reference, lots) = self.instrument(input);
        let side = if input.u8().is_multiple_of(2) {
            Side::Buy
        } else {
            Side::Sell
        };
        let step = (reference / 500).max(1);
        let mut price = Price((reference + i64::from(input.i8()) * step).max(1));
        if input.u8() == 0
            && let Ok(inst) = self.engine.instrument(instrument)
        {
            // At the instrument's largest price, and one tick past it.
            price = Price(inst.max_price.0 + i64::from(input.u8() % 2));
        }
        let mut amount = Qty(lots * i64::from(input.u8() % 16 + 1));
        if input.u8() == 0 {
            // At the largest order amount, and one past it.
            amount = Qty(matchbook::limits::MAX_ORDER_LOTS + i64::from(input.u8() % 2));
        }
        let shape = input.u8();
        let mut order =
            NewOrder::limit(account, instrument, side, price, amount).with_tif(match shape % 5 {
                0 | 1 => TimeInForce::GoodTillCancelled,
                2 => TimeInForce::ImmediateOrCancelled,
                3 => TimeInForce::FillOrKill,
                _ => TimeInForce::PostOnly,
            });
        if shape & 0x08 != 0 {
            order.order_type = OrderType::Market;
            order.price = (shape & 0x10 != 0).then_some(price);
            order.time_in_force = TimeInForce::ImmediateOrCancelled;
        }
        if shape & 0x20 != 0 {
            trigger_terms(&mut order, input, price, step);
        }
        if shape & 0x40 != 0 {
            order.client_id = Some(Uuid(u128::from(input.u8() % 8)));
        }
        if shape & 0x80 != 0 {
            order.reduce_only = true;
            order.time_in_force = TimeInForce::GoodTillTime;
            order.expire_at = Some(Timestamp(self.time + i64::from(input.u8()) * 1_000_000_000));
        }
        contingent(order, step, input.u8())
    }

    /// A deposit or a withdrawal, up to the balance cap and past it.
    fn funds_command(&mut self, input: &mut Input<'_>) -> Command {
        let account = self.account(input);
        let currency = CurrencyId(u16::from(input.u8() % 6));
        let amount = match input.u8() % 32 {
            // Up to the balance cap, and past it, as an operator's mistake would.
            0 => matchbook::limits::MAX_BALANCE - i64::from(input.u16()),
            1 => i64::MAX - i64::from(input.u16()),
            _ => i64::from(input.u16()) * 1_000,
        };
        if input.u8().is_multiple_of(2) {
            Command::Deposit {
                account,
                currency,
                amount,
            }
        } else {
            Command::Withdraw {
                account,
                currency,
                amount,
            }
        }
    }

    /// A subaccount created, or a transfer between accounts of a holder.
    fn holder_command(&mut self, input: &mut Input<'_>) -> Command {
        let h = usize::from(input.u8()) % self.holders.len().max(1);
        let holder = self.holders.get(h).copied().unwrap_or(HolderId(0));
        if input.u8().is_multiple_of(4) {
            Command::CreateSubaccount {
                holder,
                name: format!("sub{}", input.u8() % 4),
                kind: matchbook::AccountKind::Regular,
            }
        } else {
            Command::Transfer {
                holder,
                source: self.account(input),
                destination: self.account(input),
                currency: CurrencyId(u16::from(input.u8() % 6)),
                amount: i64::from(input.u16()) * 10_000,
            }
        }
    }

    /// Time passing: minutes, or decades at once.
    fn advance_time(&mut self, input: &mut Input<'_>) -> Command {
        if input.u8() == 0 {
            // Decades at once, up to the horizon: funding settles in bounded work.
            let horizon = matchbook::limits::TIME_HORIZON.0;
            self.time = self
                .time
                .max(horizon - i64::from(input.u16()) * 3_600_000_000_000);
        } else {
            self.time += i64::from(input.u16()) * 60_000_000_000;
        }
        Command::AdvanceTime
    }

    /// A dead-man switch, a liquidation, a self-trade mode or de-risking.
    fn account_setting(&mut self, input: &mut Input<'_>) -> Command {
        match input.u8() % 4 {
            3 => Command::SetCancelAllAfter {
                account: self.account(input),
                timeout: u64::from(input.u16()) * 1_000_000,
            },
            0 => Command::Liquidate {
                account: self.account(input),
            },
            1 => Command::SetStpMode {
                account: self.account(input),
                mode: StpMode::CancelBoth,
            },
            _ => Command::SetDerisk {
                account: self.account(input),
                on: input.u8().is_multiple_of(2),
            },
        }
    }

    /// Reads one command.
    fn command(&mut self, input: &mut Input<'_>) -> Command {
        let op = input.u8();
        match op % 16 {
            0..=6 => self.place_command(input),
            7 => Command::CancelOrder {
                account: self.account(input),
                order: self.order(input),
            },
            8 => Command::CancelAll {
                account: self.account(input),
                scope: match input.u8() % 4 {
                    0 => CancelScope::All,
                    1 => CancelScope::Instrument(self.instrument(input).0),
                    2 => CancelScope::Orders(vec![self.order(input), self.order(input)]),
                    _ => CancelScope::ClientIds(vec![Uuid(u128::from(input.u8() % 8))]),
                },
            },
            9 => Command::AmendOrder {
                account: self.account(input),
                order: self.order(input),
                amount: (input.u8().is_multiple_of(2)).then(|| Qty(i64::from(input.u16()))),
                price: (input.u8().is_multiple_of(2)).then(|| Price(i64::from(input.u16()) * 100)),
            },
            10 => self.funds_command(input),
            11 => self.holder_command(input),
            12 => {
                let (instrument, reference, _) = self.instrument(input);
                Command::SetIndexPrice {
                    instrument,
                    price: Price(
                        (reference + i64::from(input.i8()) * (reference / 100).max(1)).max(1),
                    ),
                }
            }
            13 => self.advance_time(input),
            14 => Command::SetInstrumentState {
                instrument: self.instrument(input).0,
                state: match input.u8() % 8 {
                    0 => InstrumentState::PostOnly,
                    1 => InstrumentState::Suspended,
                    2 => InstrumentState::Closed,
                    _ => InstrumentState::Active,
                },
            },
            _ => self.account_setting(input),
        }
    }

    /// The engine's promises, checked from its public views.
    fn audit(&self, after: &Command) {
        assert_eq!(
            self.holdings(after),
            self.net_in,
            "money conserved after {after:?}"
        );
        let e = &self.engine;
        for i in 0..e.instruments().len() {
            if let Ok((Some(bid), Some(ask))) = e.best_bid_ask(InstrumentId(i as u16)) {
                assert!(bid < ask, "book {i} crossed after {after:?}");
            }
        }
    }

    /// What every account and the fee account hold per currency (USD with the unrealised
    /// PnL of positions), after checking that no balance is negative, every lock is backed
    /// by open orders and open interest is balanced.
    fn holdings(&self, after: &Command) -> Vec<i128> {
        let e = &self.engine;
        let usd = usize::from(self.usd.0);
        let mut held = vec![0i128; self.net_in.len()];
        let mut open_interest = vec![0i64; e.instruments().len()];
        for h in 0..e.holder_count() as u32 {
            let Ok(accounts) = e.holder_accounts(HolderId(h)) else {
                panic!("holder {h} has no accounts")
            };
            for view in accounts {
                let mut reserved = vec![0i64; held.len()];
                for order in e.open_orders(view.id) {
                    let Ok(instrument) = e.instrument(order.instrument()) else {
                        panic!("open order on an unknown instrument")
                    };
                    if instrument.spec.futures.is_none() {
                        let currency = match order.side() {
                            Side::Buy => instrument.quote,
                            Side::Sell => instrument.base,
                        };
                        reserved[usize::from(currency.0)] += order.reserved();
                    }
                }
                let summary = e.futures_summary(view.id).expect("futures summary");
                for (c, b) in view.dense_balances().iter().enumerate() {
                    assert!(
                        b.available >= 0 && b.locked >= 0,
                        "negative balance of account {} currency {c} after {after:?}",
                        view.id.0
                    );
                    held[c] += i128::from(b.available) + i128::from(b.locked);
                    let backing = if c == usd {
                        summary.margin.order_margin
                    } else {
                        i128::from(reserved[c])
                    };
                    assert_eq!(
                        i128::from(b.locked),
                        backing,
                        "lock of account {} currency {c} after {after:?}",
                        view.id.0
                    );
                }
                held[usd] += summary.margin.unrealised;
                for p in &summary.positions {
                    open_interest[usize::from(p.instrument.0)] += p.size;
                }
            }
        }
        for (c, fee) in e.fees_collected().iter().enumerate() {
            held[c] += i128::from(*fee);
        }
        assert!(
            open_interest.iter().all(|&n| n == 0),
            "open interest {open_interest:?} after {after:?}"
        );
        held
    }
}

/// Applies the commands an input describes, auditing the engine after each.
pub fn engine_commands(data: &[u8]) {
    let mut world = World::new();
    world.audit(&Command::AdvanceTime);
    world.run(&mut Input::new(data));
}

/// Runs the commands an input describes on a restored demo engine, auditing after each:
/// an engine that passed the load check must behave like one that was never saved.
pub fn run_restored(engine: Engine, data: &[u8]) {
    let mut world = World::resume(engine);
    world.audit(&Command::AdvanceTime);
    world.run(&mut Input::new(data));
}

/// The demo engine and its market data after the commands an input describes (snapshot
/// seeds start here).
pub fn demo_state_after(data: &[u8]) -> (Engine, matchbook::market::MarketData) {
    let mut world = World::new();
    let instruments = world.engine.instruments().len();
    world.market = Some(matchbook::market::MarketData::new(
        instruments,
        Default::default(),
    ));
    world.run(&mut Input::new(data));
    // End with a trade on the first market, so the history has one whatever the input did.
    let (price, lots) = world.markets[0];
    let _ = world.apply(Command::SetInstrumentState {
        instrument: InstrumentId(0),
        state: InstrumentState::Active,
    });
    for (account, side) in [(0, Side::Sell), (1, Side::Buy)] {
        let _ = world.apply(Command::PlaceOrder(NewOrder::limit(
            AccountId(account),
            InstrumentId(0),
            side,
            Price(price),
            Qty(lots),
        )));
    }
    let market = world
        .market
        .take()
        .unwrap_or_else(|| matchbook::market::MarketData::new(instruments, Default::default()));
    (world.engine, market)
}

impl World {
    /// Applies the commands of `input` one by one, auditing after each.
    fn run(&mut self, input: &mut Input<'_>) {
        for _ in 0..MAX_COMMANDS {
            if input.is_empty() {
                break;
            }
            self.time += i64::from(input.u8()) * 1_000_000;
            let command = self.command(input);
            let _ = self.apply(command.clone());
            self.audit(&command);
        }
    }
}

/// Now and then the order as one leg of an OCO pair (with a stop or a further limit on the
/// same side, or a leg on the other side the engine refuses) or as a bracket's entry
/// (exits on either side, with or without a stop limit).
fn contingent(order: NewOrder, step: i64, shape: u8) -> Command {
    let price = order.price.unwrap_or(Price(step * 500)).0;
    match shape % 8 {
        0 => {
            let mut second = order;
            second.order_type = OrderType::StopMarket;
            second.price = None;
            second.trigger_price = Some(Price((price - step * 2).max(1)));
            second.client_id = None;
            if shape & 0x40 != 0 {
                // A second leg resting further from the touch: a sweep that fills the first
                // cancels it on the way.
                let away = step * i64::from(1 + ((shape >> 4) & 3));
                second.order_type = OrderType::Limit;
                second.trigger_price = None;
                second.price = Some(Price(match order.side {
                    Side::Sell => price + away,
                    Side::Buy => (price - away).max(1),
                }));
            }
            if shape & 0x80 != 0 {
                second.side = second.side.opposite();
            }
            Command::PlaceOco {
                first: order,
                second: Box::new(second),
            }
        }
        1 => {
            let away = step * i64::from(shape >> 4).max(1);
            let (take_profit, stop_loss) = match (order.side, shape & 0x08 != 0) {
                (Side::Buy, true) | (Side::Sell, false) => (price + away, price - away),
                _ => (price - away, price + away),
            };
            Command::PlaceBracket {
                entry: order,
                exits: matchbook::BracketExits {
                    take_profit: Price(take_profit.max(1)),
                    stop_loss: Price(stop_loss.max(1)),
                    stop_limit: (shape & 0x04 != 0).then_some(Price(stop_loss.max(1))),
                },
            }
        }
        _ => Command::PlaceOrder(order),
    }
}

/// Every trigger type, with the fields it needs (and now and then one it must not have:
/// the engine refuses those).
fn trigger_terms(order: &mut NewOrder, input: &mut Input<'_>, price: Price, step: i64) {
    let kind = input.u8();
    order.order_type = OrderType::ALL[2 + usize::from(kind % 6)];
    order.trigger_price = Some(Price((price.0 + step * 3).max(1)));
    if order.order_type.is_market() || order.order_type.is_trailing() {
        order.price = (kind & 0x40 != 0).then_some(price);
    }
    if order.order_type.is_trailing() {
        order.trigger_price = None;
        order.trail = Some(if kind & 0x08 != 0 {
            Trail::Bps(u32::from(input.u8()) * 40)
        } else {
            Trail::Price(Price(step * i64::from(input.u8() % 8)))
        });
        order.limit_offset = (kind & 0x10 != 0).then_some(Price(step));
    }
    if kind & 0x80 != 0 {
        order.trigger_ref = TriggerRef::MarkPrice;
    }
}
