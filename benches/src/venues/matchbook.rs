//! Matchbook behind the harness: the same `Engine::apply` path every adapter of the project
//! uses. Book only (balances and fees off) or with balances and fees on (every account
//! funded by the file's deposit lines).

use matchbook::{
    AccountId, Applied, BracketExits, Command, Currency, CurrencyId, Engine, EngineConfig,
    EngineError, Event, EventRecord, InstrumentId, InstrumentKind, InstrumentSpec, InstrumentState,
    NewOrder, OrderRef, OrderType, Price, Qty, TimeInForce, Timestamp, Trail, TriggerRef, Uuid,
};

use super::{Fill, Level, OrderIds, Outcome, Venue};
use crate::script::{Line, Op, Script, Side, Target, Tif};
use crate::script_terms::{Kind, Leg, Terms, TrailSpec};

/// Code of the quote currency every bench instrument shares.
const QUOTE: &str = "QQQ";

/// Code of the base currency of instrument `i`: `B` and letters (`BAA`, `BAB`, ...).
fn base_code(i: u16) -> String {
    let (hi, lo) = (i / 26, i % 26);
    let letter = |n: u16| char::from(b'A' + (n % 26) as u8);
    format!("B{}{}{}", letter(hi / 26), letter(hi), letter(lo))
}

/// Engine configuration for a script: one quote currency and one base currency per instrument
/// (beside the demo currencies),
/// everything in whole units (1 lot = 1 base unit, 1 tick x 1 lot = 1 quote unit), prices
/// 1..=10^9, the default fee schedule.
pub fn script_config(script: &Script, balances: bool) -> EngineConfig {
    let mut config = matchbook::demo::config();
    config.enforce_balances = balances;
    let currency = |code: String| Currency {
        name: code.clone(),
        code,
        precision: 0,
        unified_cryptoasset_id: 0,
        collateral_percentage: rust_decimal::Decimal::ZERO,
    };
    // The demo currencies stay: the default fee groups name some of them.
    config.currencies.extend(
        std::iter::once(currency(QUOTE.into()))
            .chain((0..script.instruments).map(|i| currency(base_code(i)))),
    );
    config.instruments = (0..script.instruments)
        .map(|i| InstrumentSpec {
            code: format!("{}_{QUOTE}", base_code(i)),
            base: base_code(i),
            quote: QUOTE.into(),
            amount_precision: 0,
            market_precision: 0,
            min_size: "1".into(),
            min_price: "1".into(),
            max_price: "1000000000".into(),
            kind: InstrumentKind::Spot,
            state: InstrumentState::Active,
            futures: None,
        })
        .collect();
    config
}

/// The most distinct prices any one instrument's orders are placed or moved at: room
/// for that many levels per book means no level store grows while commands are timed.
fn levels_per_book(script: &Script) -> usize {
    let mut instrument_of: Vec<u16> = Vec::new();
    let mut prices = std::collections::BTreeSet::new();
    let mut numbers = crate::script::OrderCounter::default();
    for line in script.lines() {
        let number = numbers.number(line) as usize;
        let priced = match line.op {
            Op::Place {
                instrument, price, ..
            } => {
                instrument_of.resize(number + 1, 0);
                instrument_of[number] = instrument;
                price.map(|p| (instrument, p))
            }
            Op::PlaceWith {
                instrument, pair, ..
            } => {
                instrument_of.resize(number + 1 + usize::from(pair), instrument);
                None
            }
            Op::Move { order, price, .. } => instrument_of
                .get(order as usize)
                .map(|&instrument| (instrument, price)),
            _ => None,
        };
        prices.extend(priced);
    }
    let mut per_book = vec![0usize; usize::from(script.instruments)];
    for (instrument, _) in prices {
        if let Some(n) = per_book.get_mut(usize::from(instrument)) {
            *n += 1;
        }
    }
    per_book.into_iter().max().unwrap_or(0)
}

/// Matchbook driven by a script.
pub struct Matchbook {
    engine: Engine,
    balances: bool,
    /// Currency ids by script currency index, with the balance units of one whole unit
    /// (the file counts whole lots and tick x lots).
    currencies: Vec<(CurrencyId, i64)>,
    orders: OrderIds<OrderRef>,
    /// The script's order terms (`PlaceWith` lines).
    terms: Vec<Terms>,
    /// File order number by engine order id (kept only while recording fills).
    numbers: Vec<u32>,
    events: Vec<EventRecord>,
}

impl Matchbook {
    /// A fresh engine with one holder per account of `script`.
    pub fn new(script: &Script, balances: bool) -> Self {
        let engine = Engine::new(script_config(script, balances)).expect("bench config is valid");
        let currencies = std::iter::once(QUOTE.to_owned())
            .chain((0..script.instruments).map(base_code))
            .map(|code| {
                let id = engine.currency_by_code(&code).expect("configured");
                let scale = engine.balance_scale(id).expect("configured");
                (id, 10i64.pow(u32::from(scale)))
            })
            .collect();
        let mut venue = Self {
            engine,
            balances,
            currencies,
            orders: OrderIds::for_script(script),
            terms: script.terms.clone(),
            numbers: Vec::new(),
            // Room for a command that sweeps many levels with balances on (five events a
            // fill): the buffer never grows while commands are timed.
            events: Vec::with_capacity(4096),
        };
        // Room for every order the script places, as the floor has: the order store never
        // grows while the commands are timed.
        let placed: usize = (script.lines())
            .map(|l| l.op.orders_placed() as usize)
            .sum();
        venue.engine.reserve_orders(placed);
        venue.engine.reserve_levels(levels_per_book(script));
        let start = script.lines().next().map_or(0, |l| l.time);
        for _ in 0..script.accounts {
            let _ = venue
                .engine
                .apply(&Command::CreateHolder, Timestamp(start), &mut venue.events);
            venue.events.clear();
        }
        venue
    }

    /// The engine, for checks.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    fn command(&mut self, op: &Op) -> Option<Command> {
        Some(match *op {
            Op::Deposit {
                account,
                currency,
                amount,
            } => {
                let (currency, unit) = *self.currencies.get(usize::from(currency))?;
                Command::Deposit {
                    account: AccountId(account),
                    currency,
                    amount: amount.checked_mul(unit)?,
                }
            }
            Op::Place { .. } => Command::PlaceOrder(plain_order(op)?),
            Op::PlaceWith {
                account,
                instrument,
                side,
                amount,
                client,
                terms,
                ..
            } => {
                let terms = self.terms.get(terms as usize)?;
                let base = NewOrder::limit(
                    AccountId(account),
                    InstrumentId(instrument),
                    side_of(side),
                    Price(0),
                    Qty(amount),
                );
                let mut order = extended_order(base, terms);
                order.client_id = client.map(|c| Uuid(u128::from(c)));
                if let Some(leg) = terms.oco {
                    let second = leg_order(base, &leg);
                    return Some(Command::PlaceOco {
                        first: order,
                        second: Box::new(second),
                    });
                }
                match terms.bracket {
                    Some((tp, sl, limit)) => Command::PlaceBracket {
                        entry: order,
                        exits: BracketExits {
                            take_profit: Price(tp),
                            stop_loss: Price(sl),
                            stop_limit: limit.map(Price),
                        },
                    },
                    None => Command::PlaceOrder(order),
                }
            }
            Op::Cancel {
                account,
                target: Target::Order(k),
            } => self.cancel_command(account, k)?,
            Op::Cancel {
                account,
                target: Target::Client(c),
            } => Command::CancelByClientId {
                account: AccountId(account),
                client_id: Uuid(u128::from(c)),
            },
            Op::Move {
                account,
                order,
                price,
            } => self.move_command(account, order, price)?,
        })
    }

    /// A move of order `k` to `price`, if the engine made order `k`.
    #[inline(always)]
    fn move_command(&self, account: u32, k: u32, price: i64) -> Option<Command> {
        Some(Command::AmendOrder {
            account: AccountId(account),
            order: self.orders.get(k)?,
            amount: None,
            price: Some(Price(price)),
        })
    }

    /// A cancel of order `k`, if the engine made order `k`.
    #[inline(always)]
    fn cancel_command(&self, account: u32, k: u32) -> Option<Command> {
        Some(Command::CancelOrder {
            account: AccountId(account),
            order: self.orders.get(k)?,
        })
    }

    /// Applies the command of `op`, or `None` when it names what the engine never made.
    /// The commands of most lines (moves, cancels and plain orders) are built where they
    /// are applied: one shared construction of every kind cost each line a copy of the
    /// largest, and a new order built through `Option<Command>` some 50 instructions more
    /// on cancel-heavy.
    fn submit(&mut self, op: &Op, time: Timestamp) -> Option<Result<Applied, EngineError>> {
        let command = match *op {
            Op::Move {
                account,
                order,
                price,
            } => self.move_command(account, order, price)?,
            Op::Cancel {
                account,
                target: Target::Order(k),
            } => self.cancel_command(account, k)?,
            Op::Place { .. } => Command::PlaceOrder(plain_order(op)?),
            _ => {
                let command = self.command(op)?;
                return Some(self.engine.apply(&command, time, &mut self.events));
            }
        };
        Some(self.engine.apply(&command, time, &mut self.events))
    }

    fn number_of(&self, order: OrderRef) -> u32 {
        self.numbers
            .get(order.id as usize)
            .copied()
            .unwrap_or(u32::MAX)
    }
}

/// The order of a `Place` line (`None` for any other line): a limit order, or a market
/// order when it has no price.
#[inline(always)]
fn plain_order(op: &Op) -> Option<NewOrder> {
    let Op::Place {
        account,
        instrument,
        side,
        price,
        amount,
        tif,
        client,
    } = *op
    else {
        return None;
    };
    Some(NewOrder {
        order_type: if price.is_some() {
            OrderType::Limit
        } else {
            OrderType::Market
        },
        time_in_force: tif_of(tif),
        price: price.map(Price),
        client_id: client.map(|c| Uuid(u128::from(c))),
        ..NewOrder::limit(
            AccountId(account),
            InstrumentId(instrument),
            side_of(side),
            Price(0),
            Qty(amount),
        )
    })
}

/// The (account, order number) a move or a cancel of one order names.
fn named_order(op: &Op) -> Option<(u32, u32)> {
    match *op {
        Op::Move { account, order, .. } => Some((account, order)),
        Op::Cancel {
            account,
            target: Target::Order(k),
        } => Some((account, k)),
        _ => None,
    }
}

fn tif_of(tif: Tif) -> TimeInForce {
    match tif {
        Tif::Gtc => TimeInForce::GoodTillCancelled,
        Tif::Ioc => TimeInForce::ImmediateOrCancelled,
        Tif::Fok => TimeInForce::FillOrKill,
        Tif::PostOnly => TimeInForce::PostOnly,
    }
}

fn type_of(kind: Kind) -> OrderType {
    match kind {
        Kind::Limit => OrderType::Limit,
        Kind::Market => OrderType::Market,
        Kind::StopLimit => OrderType::Stop,
        Kind::StopMarket => OrderType::StopMarket,
        Kind::TakeProfit => OrderType::TakeProfit,
        Kind::TakeProfitMarket => OrderType::TakeProfitMarket,
        Kind::TrailingStop => OrderType::TrailingStop,
        Kind::TrailingStopLimit => OrderType::TrailingStopLimit,
    }
}

/// `base` (account, instrument, side, amount) with the type, prices and options of `t`.
fn extended_order(base: NewOrder, t: &Terms) -> NewOrder {
    NewOrder {
        order_type: type_of(t.kind),
        time_in_force: tif_of(t.tif),
        price: t.price.map(Price),
        trigger_price: t.trigger.map(Price),
        trigger_ref: if t.mark {
            TriggerRef::MarkPrice
        } else {
            TriggerRef::LastPrice
        },
        trail: t.trail.map(|trail| match trail {
            TrailSpec::Ticks(ticks) => Trail::Price(Price(ticks)),
            TrailSpec::Bps(bps) => Trail::Bps(bps),
        }),
        limit_offset: t.offset.map(Price),
        display: t.display.map(Qty),
        ..base
    }
}

/// The second leg of an OCO pair placed with `base`.
fn leg_order(base: NewOrder, leg: &Leg) -> NewOrder {
    NewOrder {
        order_type: type_of(leg.kind),
        time_in_force: tif_of(leg.tif),
        price: leg.price.map(Price),
        trigger_price: leg.trigger.map(Price),
        amount: Qty(leg.amount),
        ..base
    }
}

fn side_of(side: Side) -> matchbook::Side {
    match side {
        Side::Buy => matchbook::Side::Buy,
        Side::Sell => matchbook::Side::Sell,
    }
}

impl Venue for Matchbook {
    fn name(&self) -> &'static str {
        if self.balances {
            "matchbook-balances"
        } else {
            "matchbook"
        }
    }

    fn apply(&mut self, line: &Line, number: u32, out: &mut Outcome, record: bool) {
        let placing = line.op.orders_placed() > 0;
        self.events.clear();
        let Some(applied) = self.submit(&line.op, Timestamp(line.time)) else {
            if placing {
                self.orders.set(number, None);
            }
            return;
        };
        // A fill-or-kill or post-only order the book refuses is accepted and ended at once:
        // refused, as the other books count it.
        out.applied = applied.is_ok_and(|a| a.rejected.is_none());
        if placing {
            let handles = applied.map_or([None; 2], |a| [a.order, a.linked]);
            for (k, handle) in (number..number + line.op.orders_placed()).zip(handles) {
                self.orders.set(k, handle);
                if record && let Some(h) = handle {
                    let id = h.id as usize;
                    if self.numbers.len() <= id {
                        self.numbers.resize(id + 1, u32::MAX);
                    }
                    self.numbers[id] = k;
                }
            }
        }
        if record {
            for record in &self.events {
                if let Event::Trade(t) = record.event {
                    let fill = Fill {
                        instrument: t.instrument.0,
                        taker: self.number_of(t.taker),
                        maker: self.number_of(t.maker),
                        price: t.price.0,
                        amount: t.amount.0,
                    };
                    out.taken += fill.amount;
                    out.fills.push(fill);
                }
            }
        }
    }

    fn look_ahead(&self, upcoming: &[Line]) {
        if !self.engine.hints_pay() {
            return;
        }
        // What the next line names (the order a move or a cancel names, or the record a
        // new order will take; with balances the reservation and the account's balances),
        // and the table entry the line after will read to find its order. Read from the
        // lines' fields: building the next command here would cost about what it saves.
        if let Some(k) = upcoming.get(1).and_then(|line| named_order(&line.op)) {
            let entry = self.orders.address(k.1);
            if entry != 0 {
                matchbook::prefetch::line(entry);
            }
        }
        let ahead = match upcoming.first().map(|line| &line.op) {
            Some(&Op::Place { account, .. }) => self.engine.lookahead_new_order(AccountId(account)),
            Some(op) => match named_order(op) {
                Some((account, k)) => match self.orders.get(k) {
                    Some(order) => self.engine.lookahead_order(AccountId(account), order),
                    None => return,
                },
                None => return,
            },
            None => return,
        };
        ahead.hint();
    }

    fn places_extended_orders(&self) -> bool {
        true
    }

    fn top(&self, instrument: u16) -> (Level, Level) {
        let first =
            |levels: &[matchbook::LevelView]| levels.first().map(|l| (l.price.0, l.amount.0));
        match self.engine.book_levels(InstrumentId(instrument), 1) {
            Ok(view) => (first(&view.bids), first(&view.asks)),
            Err(_) => (None, None),
        }
    }
}
