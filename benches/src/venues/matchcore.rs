//! `matchcore` 0.4 (crates.io): one `OrderBook` per instrument, each fed consecutive
//! sequence numbers (an order's id is the sequence number of its submit command). Limit and
//! market orders with GTC / IOC / FOK and post-only, cancel and a native amend of the price.

use std::collections::HashMap;

use matchcore::{
    AmendCmd, AmendPatch, CancelCmd, Command, CommandKind, CommandMeta, CommandOutcome,
    CommandReport, LimitOrder, LimitOrderPatch, MarketOrder, NewOrder, OrderBook, OrderFlags,
    OrderId, OrderKind, OrderOutcome, Price, Quantity, QuantityPolicy, SequenceNumber,
    Side as MSide, SubmitCmd, TimeInForce, Timestamp,
};

use super::{ClientOrders, Fill, Gap, Level, OrderIds, Outcome, Venue};
use crate::script::{Line, Op, Script, Side, Tif};

const GAPS: &[Gap] = &[Gap {
    feature: "client order ids",
    handling: "emulated: a map in the adapter",
}];

/// matchcore driven by a script.
pub struct Matchcore {
    books: Vec<OrderBook>,
    /// Next sequence number per book.
    sequence: Vec<u64>,
    /// Instrument and matchcore id of each order, by number.
    ids: OrderIds<(u16, OrderId)>,
    /// File number by (instrument, matchcore id), kept only while recording fills.
    numbers: HashMap<(u16, u64), u32>,
    clients: ClientOrders,
}

impl Matchcore {
    /// One book per instrument.
    pub fn new(script: &Script) -> Self {
        Self {
            books: (0..script.instruments)
                .map(|i| OrderBook::new(&format!("I{i}")))
                .collect(),
            sequence: vec![0; usize::from(script.instruments)],
            ids: OrderIds::for_script(script),
            numbers: HashMap::new(),
            clients: ClientOrders::default(),
        }
    }

    /// Runs one command on an instrument's book.
    fn run(&mut self, instrument: u16, time: i64, kind: CommandKind) -> (OrderId, CommandOutcome) {
        let i = usize::from(instrument);
        let sequence = SequenceNumber(self.sequence[i]);
        self.sequence[i] += 1;
        let outcome = self.books[i].execute(&Command {
            meta: CommandMeta {
                sequence_number: sequence,
                timestamp: Timestamp(time as u64),
            },
            kind,
        });
        (OrderId::from(sequence), outcome)
    }

    fn report(&self, instrument: u16, taker: u32, order: &OrderOutcome, out: &mut Outcome) {
        let Some(result) = order.match_result() else {
            return;
        };
        for t in result.trades() {
            let amount = t.quantity().0 as i64;
            out.taken += amount;
            out.fills.push(Fill {
                instrument,
                taker,
                maker: self
                    .numbers
                    .get(&(instrument, t.maker_order_id().0))
                    .copied()
                    .unwrap_or(u32::MAX),
                price: t.price().0 as i64,
                amount,
            });
        }
    }
}

fn mside(side: Side) -> MSide {
    match side {
        Side::Buy => MSide::Buy,
        Side::Sell => MSide::Sell,
    }
}

/// The order of a `Place` line (`None` for a fill-or-kill market order, which this
/// book has no form of).
fn order_of(side: Side, price: Option<i64>, amount: i64, tif: Tif) -> Option<NewOrder> {
    let quantity = Quantity(amount as u64);
    Some(match price {
        // A market order that does not fill completely is cancelled (no
        // market-to-limit); fill-or-kill has no market form here.
        None if tif == Tif::Fok => return None,
        None => NewOrder::Market(MarketOrder::new(quantity, mside(side), false)),
        Some(p) => NewOrder::Limit(LimitOrder::new(
            Price(p as u64),
            QuantityPolicy::Standard { quantity },
            OrderFlags::new(
                mside(side),
                tif == Tif::PostOnly,
                match tif {
                    Tif::Ioc => TimeInForce::Ioc,
                    Tif::Fok => TimeInForce::Fok,
                    Tif::Gtc | Tif::PostOnly => TimeInForce::Gtc,
                },
            ),
        )),
    })
}

impl Venue for Matchcore {
    fn name(&self) -> &'static str {
        "matchcore"
    }

    fn gaps(&self) -> &'static [Gap] {
        GAPS
    }

    fn apply(&mut self, line: &Line, number: u32, out: &mut Outcome, record: bool) {
        match line.op {
            Op::Deposit { .. } => out.applied = true,
            // No trigger, iceberg or contingent orders: not applied (the harness runs
            // files with them on matchbook only).
            Op::PlaceWith { .. } => {}
            Op::Place {
                account,
                instrument,
                side,
                price,
                amount,
                tif,
                client,
            } => {
                let Some(order) = order_of(side, price, amount, tif) else {
                    return;
                };
                let (id, outcome) = self.run(
                    instrument,
                    line.time,
                    CommandKind::Submit(SubmitCmd { order }),
                );
                let CommandOutcome::Applied(CommandReport::Submit(effects)) = &outcome else {
                    return;
                };
                out.applied = true;
                self.ids.set(number, Some((instrument, id)));
                if record {
                    self.numbers.insert((instrument, id.0), number);
                    self.report(instrument, number, effects.target_order(), out);
                }
                self.clients.rests(account, client, number);
            }
            Op::Cancel { account, target } => {
                let number = self.clients.resolve(account, target);
                let Some((instrument, order_id)) = number.and_then(|k| self.ids.get(k)) else {
                    return;
                };
                let (_, outcome) = self.run(
                    instrument,
                    line.time,
                    CommandKind::Cancel(CancelCmd {
                        order_id,
                        order_kind: OrderKind::Limit,
                    }),
                );
                out.applied = matches!(outcome, CommandOutcome::Applied(_));
            }
            Op::Move { order, price, .. } => {
                let Some((instrument, order_id)) = self.ids.get(order) else {
                    return;
                };
                let (_, outcome) = self.run(
                    instrument,
                    line.time,
                    CommandKind::Amend(AmendCmd {
                        order_id,
                        patch: AmendPatch::Limit(
                            LimitOrderPatch::new().with_price(Price(price as u64)),
                        ),
                    }),
                );
                let CommandOutcome::Applied(CommandReport::Amend(effects)) = &outcome else {
                    return;
                };
                out.applied = true;
                if record {
                    self.report(instrument, order, effects.target_order(), out);
                }
            }
        }
    }

    fn top(&self, instrument: u16) -> (Level, Level) {
        let book = &self.books[usize::from(instrument)];
        let level = |l: Option<(Price, Quantity)>| l.map(|(p, q)| (p.0 as i64, q.0 as i64));
        (level(book.best_bid()), level(book.best_ask()))
    }
}
