//! Accounts, balances, reservations, settlement, fee tiers and transfers: one test per rule
//! and per error, on the demo markets. Every refusal is checked to change nothing.

mod common;

use common::{p, q};
use matchbook::{
    AccountId, AccountKind, AccountState, Applied, CancelReason, Command, CurrencyId, Engine,
    EngineError, Event, EventRecord, HolderId, InstrumentId, NewOrder, OrderType, Price, Qty, Side,
    TimeInForce, Timestamp,
};

const T0: i64 = 1_767_225_600_000_000_000;
const DAY: i64 = 86_400_000_000_000;
/// One whole unit of BTC, EUR or USD in balance units (all three keep 8 decimals here).
const ONE: i64 = 100_000_000;

struct World {
    engine: Engine,
    events: Vec<EventRecord>,
    now: i64,
    btc_eur: InstrumentId,
    btc: CurrencyId,
    eur: CurrencyId,
}

impl World {
    fn new() -> Self {
        let engine = Engine::new(matchbook::demo::config()).expect("demo");
        let btc_eur = engine.instrument_by_code("BTC_EUR").expect("market");
        let (btc, eur) = (
            engine.currency_by_code("BTC").expect("BTC"),
            engine.currency_by_code("EUR").expect("EUR"),
        );
        Self {
            engine,
            events: Vec::new(),
            now: T0,
            btc_eur,
            btc,
            eur,
        }
    }

    fn run(&mut self, command: Command) -> Result<matchbook::Applied, EngineError> {
        common::run(&mut self.engine, &mut self.events, self.now, &command)
    }

    fn ok(&mut self, command: Command) -> Applied {
        let debug = format!("{command:?}");
        self.run(command)
            .unwrap_or_else(|e| panic!("{debug}: {e:?}"))
    }

    fn refuse(&mut self, command: Command, error: EngineError) {
        common::refuse(&mut self.engine, &mut self.events, self.now, command, error);
    }

    fn holder(&mut self) -> (HolderId, AccountId) {
        let a = self.ok(Command::CreateHolder);
        (a.holder.expect("holder"), a.account.expect("main"))
    }

    fn sub(&mut self, holder: HolderId, name: &str, kind: AccountKind) -> AccountId {
        self.ok(Command::CreateSubaccount {
            holder,
            name: name.into(),
            kind,
        })
        .account
        .expect("sub")
    }

    fn deposit(&mut self, account: AccountId, currency: CurrencyId, amount: i64) {
        self.ok(Command::Deposit {
            account,
            currency,
            amount,
        });
    }

    fn balance(&self, account: AccountId, currency: CurrencyId) -> (i64, i64) {
        let b = self
            .engine
            .account(account)
            .expect("account")
            .balances
            .get(currency);
        (b.available, b.locked)
    }

    fn order(&self, account: AccountId, side: Side, price: &str, amount: &str) -> NewOrder {
        NewOrder::limit(account, self.btc_eur, side, p(price), q(amount))
    }

    fn transfer(
        &self,
        holder: HolderId,
        source: AccountId,
        destination: AccountId,
        currency: CurrencyId,
        amount: i64,
    ) -> Command {
        Command::Transfer {
            holder,
            source,
            destination,
            currency,
            amount,
        }
    }
}

#[test]
fn holders_have_a_main_account_then_subaccounts_closed_ones_included() {
    let mut w = World::new();
    let (holder, main) = w.holder();
    w.now += 5_000_000;
    let sub = w.sub(holder, "bot 1", AccountKind::Regular);
    let blp = w.sub(holder, "liquidity", AccountKind::Blp);
    w.ok(Command::CloseSubaccount { account: sub });
    let list = w.engine.holder_accounts(holder).expect("holder");
    let names: Vec<_> = list.iter().map(|a| (a.id, a.name, a.state)).collect();
    assert_eq!(
        names,
        vec![
            (main, "main", AccountState::Active),
            (sub, "bot 1", AccountState::Closed),
            (blp, "liquidity", AccountState::Active)
        ]
    );
    assert_eq!(
        list[0].created,
        Timestamp(0),
        "main account carries the 1970 placeholder"
    );
    assert_eq!(list[1].created, Timestamp(T0 + 5_000_000));
    assert_eq!(list[2].kind, AccountKind::Blp);
}

#[test]
fn subaccount_names_are_checked() {
    let mut w = World::new();
    let (holder, _) = w.holder();
    w.sub(holder, "alpha", AccountKind::Regular);
    let create = |name: &str| Command::CreateSubaccount {
        holder,
        name: name.into(),
        kind: AccountKind::Regular,
    };
    w.refuse(create("alpha"), EngineError::AccountNameTaken);
    w.refuse(create("main"), EngineError::AccountNameTaken);
    w.refuse(create(""), EngineError::InvalidAccountName);
    w.refuse(create("   "), EngineError::InvalidAccountName);
    w.refuse(create("bad\nname"), EngineError::InvalidAccountName);
    w.refuse(create(&"x".repeat(65)), EngineError::InvalidAccountName);
    w.sub(holder, &"x".repeat(64), AccountKind::Regular);
    w.refuse(
        Command::CreateSubaccount {
            holder: HolderId(7),
            name: "a".into(),
            kind: AccountKind::Regular,
        },
        EngineError::UnknownHolder,
    );
    // Another holder may reuse a name.
    let (other, _) = w.holder();
    w.sub(other, "alpha", AccountKind::Regular);
}

#[test]
fn deposits_and_withdrawals() {
    let mut w = World::new();
    let (_, a) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    w.deposit(a, eur, 20 * ONE);
    assert!(
        matches!(w.events[..], [EventRecord { event: Event::BalanceChanged { available, locked: 0, .. }, .. }] if available == 20 * ONE)
    );
    w.refuse(
        Command::Deposit {
            account: a,
            currency: eur,
            amount: 0,
        },
        EngineError::InvalidAmount,
    );
    w.refuse(
        Command::Deposit {
            account: a,
            currency: eur,
            amount: -1,
        },
        EngineError::InvalidAmount,
    );
    w.refuse(
        Command::Deposit {
            account: a,
            currency: CurrencyId(99),
            amount: 1,
        },
        EngineError::UnknownCurrency,
    );
    w.refuse(
        Command::Deposit {
            account: AccountId(99),
            currency: eur,
            amount: 1,
        },
        EngineError::UnknownAccount,
    );
    w.refuse(
        Command::Deposit {
            account: a,
            currency: eur,
            amount: i64::MAX,
        },
        EngineError::BalanceLimitExceeded,
    );
    w.ok(Command::Withdraw {
        account: a,
        currency: eur,
        amount: 4 * ONE,
    });
    assert_eq!(w.balance(a, eur), (16 * ONE, 0));
    w.refuse(
        Command::Withdraw {
            account: a,
            currency: eur,
            amount: 16 * ONE + 1,
        },
        EngineError::InsufficientFunds,
    );
    w.refuse(
        Command::Withdraw {
            account: a,
            currency: btc,
            amount: 1,
        },
        EngineError::InsufficientFunds,
    );
    // Locked funds cannot be withdrawn.
    w.ok(Command::PlaceOrder(w.order(a, Side::Buy, "100.00", "0.1")));
    assert_eq!(w.balance(a, eur), (6 * ONE, 10 * ONE));
    w.refuse(
        Command::Withdraw {
            account: a,
            currency: eur,
            amount: 6 * ONE + 1,
        },
        EngineError::InsufficientFunds,
    );
}

#[test]
fn orders_reserve_then_release_exactly() {
    let mut w = World::new();
    let (_, a) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    w.deposit(a, eur, 100 * ONE);
    w.deposit(a, btc, ONE);
    // Buy reserves amount x price of quote, sell reserves the amount of base.
    let buy = w
        .ok(Command::PlaceOrder(w.order(a, Side::Buy, "90.00", "1")))
        .order
        .expect("order");
    assert_eq!(w.balance(a, eur), (10 * ONE, 90 * ONE));
    assert_eq!(w.engine.order(buy).map(|o| o.reserved()), Some(90 * ONE));
    let sell = w
        .ok(Command::PlaceOrder(w.order(a, Side::Sell, "110.00", "0.4")))
        .order
        .expect("order");
    assert_eq!(w.balance(a, btc), (ONE * 6 / 10, ONE * 4 / 10));
    // Not enough: refused, nothing changes.
    w.refuse(
        Command::PlaceOrder(w.order(a, Side::Buy, "90.00", "0.12")),
        EngineError::InsufficientFunds,
    );
    w.refuse(
        Command::PlaceOrder(w.order(a, Side::Sell, "110.00", "0.60001")),
        EngineError::InsufficientFunds,
    );
    // Amends move the reservation; one beyond what is available is refused.
    w.ok(Command::AmendOrder {
        account: a,
        order: buy,
        amount: None,
        price: Some(p("80.00")),
    });
    assert_eq!(w.balance(a, eur), (20 * ONE, 80 * ONE));
    w.refuse(
        Command::AmendOrder {
            account: a,
            order: buy,
            amount: Some(q("2")),
            price: None,
        },
        EngineError::InsufficientFunds,
    );
    // Cancels release exactly what was reserved.
    w.ok(Command::CancelOrder {
        account: a,
        order: buy,
    });
    w.ok(Command::CancelOrder {
        account: a,
        order: sell,
    });
    assert_eq!(w.balance(a, eur), (100 * ONE, 0));
    assert_eq!(w.balance(a, btc), (ONE, 0));
}

#[test]
fn fills_settle_both_sides_with_price_improvement_and_fees() {
    let mut w = World::new();
    let (_, seller) = w.holder();
    let (_, buyer) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    w.deposit(seller, btc, ONE);
    w.deposit(buyer, eur, 200 * ONE);
    w.ok(Command::PlaceOrder(w.order(
        seller,
        Side::Sell,
        "100.00",
        "1",
    )));
    w.ok(Command::PlaceOrder(w.order(
        buyer,
        Side::Buy,
        "101.00",
        "1",
    )));
    let trade = w.events.iter().find_map(|e| match e.event {
        Event::Trade(t) => Some(t),
        _ => None,
    });
    let trade = trade.expect("traded");
    // Taker (buyer) pays 0.15 % of the BTC it receives; maker (seller) 0.10 % of its EUR.
    assert_eq!(
        (trade.taker_fee, trade.maker_fee),
        (ONE * 15 / 10_000, ONE * 100 / 1_000)
    );
    assert_eq!(
        w.balance(buyer, eur),
        (100 * ONE, 0),
        "paid 100, got the 1 EUR improvement back"
    );
    assert_eq!(w.balance(buyer, btc), (ONE - ONE * 15 / 10_000, 0));
    assert_eq!(w.balance(seller, btc), (0, 0));
    assert_eq!(w.balance(seller, eur), (100 * ONE - ONE / 10, 0));
    let fees = w.engine.fees_collected();
    assert_eq!(
        (fees[usize::from(btc.0)], fees[usize::from(eur.0)]),
        (ONE * 15 / 10_000, ONE / 10)
    );
}

#[test]
fn fees_round_up_in_the_exchanges_favour() {
    let mut w = World::new();
    let (_, seller) = w.holder();
    let (_, buyer) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    w.deposit(seller, btc, ONE);
    w.deposit(buyer, eur, 200 * ONE);
    w.ok(Command::PlaceOrder(NewOrder::limit(
        seller,
        w.btc_eur,
        Side::Sell,
        p("1000.01"),
        q("0.01001"),
    )));
    w.ok(Command::PlaceOrder(NewOrder::limit(
        buyer,
        w.btc_eur,
        Side::Buy,
        p("1000.01"),
        q("0.01001"),
    )));
    let trade = w
        .events
        .iter()
        .find_map(|e| {
            if let Event::Trade(t) = e.event {
                Some(t)
            } else {
                None
            }
        })
        .expect("trade");
    // Buyer receives 1,001,000 BTC units: 0.15 % is 1,501.5, charged 1,502.
    assert_eq!(trade.taker_fee, 1_502);
    // Seller receives 1,001,010,010 EUR units (10.0101001 EUR): 0.10 % is 1,001,010.01,
    // charged 1,001,011.
    assert_eq!(trade.maker_fee, 1_001_011);
    assert_eq!(w.balance(seller, eur), (1_001_010_010 - 1_001_011, 0));
}

#[test]
fn ioc_remainder_and_market_buys_release_what_they_did_not_use() {
    let mut w = World::new();
    let (_, seller) = w.holder();
    let (_, buyer) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    w.deposit(seller, btc, ONE);
    w.deposit(buyer, eur, 1_000 * ONE);
    w.ok(Command::PlaceOrder(w.order(
        seller,
        Side::Sell,
        "100.00",
        "0.5",
    )));
    w.ok(Command::PlaceOrder(
        w.order(buyer, Side::Buy, "100.00", "2")
            .with_tif(TimeInForce::ImmediateOrCancelled),
    ));
    assert_eq!(w.balance(buyer, eur), (950 * ONE, 0));
    w.ok(Command::PlaceOrder(w.order(
        seller,
        Side::Sell,
        "200.00",
        "0.5",
    )));
    let mut market = w.order(buyer, Side::Buy, "1", "1");
    market.order_type = OrderType::Market;
    market.price = None;
    w.ok(Command::PlaceOrder(market));
    // Reserved exactly the cost of what the book offered (100 EUR), spent it all.
    assert!(
        w.events.iter().any(
            |e| matches!(e.event, Event::BalanceChanged { locked, .. } if locked == 100 * ONE)
        )
    );
    assert_eq!(w.balance(buyer, eur), (850 * ONE, 0));
    // A market buy that cannot pay for what the book offers is refused.
    w.deposit(seller, btc, ONE);
    w.ok(Command::PlaceOrder(w.order(
        seller,
        Side::Sell,
        "100.00",
        "0.5",
    )));
    let (_, broke) = w.holder();
    w.refuse(
        Command::PlaceOrder(NewOrder {
            account: broke,
            ..market
        }),
        EngineError::InsufficientFunds,
    );
}

/// A fill of an OCO leg cancels its peer mid-sweep, so the walk before a sweep (what a market
/// buy reserves, whether a fill-or-kill order fills whole) must not count a peer it reaches
/// after the leg: counted, the market buy reserved too little and spent past its balance,
/// and the fill-or-kill order filled in part.
#[test]
fn a_sweep_that_cancels_an_oco_peer_is_priced_without_it() {
    let mut w = World::new();
    let (_, seller) = w.holder();
    let (_, far_seller) = w.holder();
    let (_, buyer) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    w.deposit(seller, btc, ONE);
    w.deposit(far_seller, btc, ONE);
    w.deposit(buyer, eur, 1_000 * ONE);
    let near = w.order(seller, Side::Sell, "100.00", "0.5");
    let peer = w.order(seller, Side::Sell, "110.00", "0.5");
    w.ok(Command::PlaceOco {
        first: near,
        second: Box::new(peer),
    });
    w.ok(Command::PlaceOrder(w.order(
        far_seller,
        Side::Sell,
        "200.00",
        "1",
    )));
    let traded = |w: &World| -> Vec<(Price, Qty)> {
        w.events
            .iter()
            .filter_map(|e| match e.event {
                Event::Trade(t) => Some((t.price, t.amount)),
                _ => None,
            })
            .collect()
    };
    // Up to 110 the book holds 0.5 once the leg at 100 has traded: all or nothing is nothing.
    let fok = w
        .order(buyer, Side::Buy, "110.00", "1")
        .with_tif(TimeInForce::FillOrKill);
    w.ok(Command::PlaceOrder(fok));
    assert_eq!(traded(&w), []);
    assert_eq!(w.balance(buyer, eur), (1_000 * ONE, 0));
    // The market buy reserves 0.5 at 100 and 0.5 at 200, and spends exactly that.
    let mut market = w.order(buyer, Side::Buy, "1", "1");
    market.order_type = OrderType::Market;
    market.price = None;
    w.ok(Command::PlaceOrder(market));
    assert!(w.events.iter().any(|e| matches!(
        e.event,
        Event::BalanceChanged { account, locked, .. } if account == buyer && locked == 150 * ONE
    )));
    assert_eq!(
        traded(&w),
        [(p("100.00"), q("0.5")), (p("200.00"), q("0.5"))]
    );
    assert_eq!(w.balance(buyer, eur), (850 * ONE, 0));
}

#[test]
fn fee_tiers_follow_combined_volume_and_expire_after_30_days() {
    let mut w = World::new();
    let (holder, main) = w.holder();
    let sub = w.sub(holder, "sub", AccountKind::Regular);
    let (_, other) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    for a in [main, sub, other] {
        w.deposit(a, btc, 10_000 * ONE);
        w.deposit(a, eur, 10_000_000 * ONE);
    }
    let fees = w.engine.account_fees(main).expect("fees");
    assert_eq!(
        fees.running_volumes
            .iter()
            .map(|v| v.fee_group_id)
            .collect::<Vec<_>>(),
        vec!["SPOT", "FUTURES"]
    );
    assert_eq!(fees.active_fee_tiers[0].taker_fee, "0.1500");
    // 60,000 EUR by the main account and 40,000 EUR by the subaccount: 100,000 together.
    w.ok(Command::PlaceOrder(w.order(
        other,
        Side::Sell,
        "100.00",
        "1000",
    )));
    w.ok(Command::PlaceOrder(w.order(
        main,
        Side::Buy,
        "100.00",
        "600",
    )));
    w.ok(Command::PlaceOrder(w.order(
        sub,
        Side::Buy,
        "100.00",
        "400",
    )));
    let fees = w.engine.account_fees(sub).expect("fees");
    assert_eq!(fees.running_volumes[0].volume, 100_000 * i128::from(ONE));
    assert_eq!(
        (
            fees.active_fee_tiers[0].maker_fee,
            fees.active_fee_tiers[0].taker_fee
        ),
        ("0.0800", "0.1300")
    );
    // The next trade is charged at the new taker rate.
    w.ok(Command::PlaceOrder(w.order(
        other,
        Side::Sell,
        "100.00",
        "1",
    )));
    w.ok(Command::PlaceOrder(w.order(main, Side::Buy, "100.00", "1")));
    let trade = w
        .events
        .iter()
        .find_map(|e| {
            if let Event::Trade(t) = e.event {
                Some(t)
            } else {
                None
            }
        })
        .expect("trade");
    assert_eq!(trade.taker_fee, ONE * 13 / 10_000);
    // Thirty days on, the volume has left the window.
    w.now += 30 * DAY;
    w.ok(Command::AdvanceTime);
    let fees = w.engine.account_fees(main).expect("fees");
    assert_eq!(
        (
            fees.running_volumes[0].volume,
            fees.active_fee_tiers[0].taker_fee
        ),
        (0, "0.1500")
    );
    let groups: Vec<_> = w
        .engine
        .fee_groups()
        .map(|g| (g.id.as_str(), g.volume_currency.as_str(), g.tiers.len()))
        .collect();
    assert_eq!(groups, vec![("SPOT", "EUR", 6), ("FUTURES", "USD", 4)]);
}

#[test]
fn transfers_move_funds_between_a_holders_accounts() {
    let mut w = World::new();
    let (holder, main) = w.holder();
    let sub = w.sub(holder, "sub", AccountKind::Regular);
    let eur = w.eur;
    w.deposit(main, eur, 10 * ONE);
    w.ok(w.transfer(holder, main, sub, eur, 4 * ONE));
    assert_eq!(
        (w.balance(main, eur), w.balance(sub, eur)),
        ((6 * ONE, 0), (4 * ONE, 0))
    );
    match w.events.last().map(|e| e.event) {
        Some(Event::TransferCompleted {
            transfer,
            source,
            destination,
            amount,
            ..
        }) => {
            assert_eq!(
                (transfer, source, destination, amount),
                (1, main, sub, 4 * ONE)
            );
        }
        other => panic!("expected a transfer record, got {other:?}"),
    }
}

#[test]
fn transfer_rules_and_errors() {
    let mut w = World::new();
    let (holder, main) = w.holder();
    let sub = w.sub(holder, "sub", AccountKind::Regular);
    let instant = w.sub(holder, "instant", AccountKind::InstantTrade);
    let blp = w.sub(holder, "blp", AccountKind::Blp);
    let closed = w.sub(holder, "old", AccountKind::Regular);
    let (stranger_holder, stranger) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    for a in [main, instant, blp] {
        w.deposit(a, eur, 10 * ONE);
    }
    w.ok(Command::CloseSubaccount { account: closed });
    let t = |w: &World, s, d, amount| w.transfer(holder, s, d, eur, amount);
    w.refuse(t(&w, main, main, ONE), EngineError::SameAccount);
    w.refuse(t(&w, main, stranger, ONE), EngineError::PermissionDenied);
    w.refuse(
        t(&w, main, AccountId(500), ONE),
        EngineError::PermissionDenied,
    );
    w.refuse(
        w.transfer(stranger_holder, main, sub, eur, ONE),
        EngineError::PermissionDenied,
    );
    w.refuse(
        w.transfer(HolderId(99), main, sub, eur, ONE),
        EngineError::PermissionDenied,
    );
    w.refuse(t(&w, main, instant, ONE), EngineError::InstantTradeAccount);
    w.refuse(t(&w, instant, main, ONE), EngineError::InstantTradeAccount);
    w.refuse(t(&w, main, sub, 0), EngineError::InvalidAmount);
    w.refuse(
        w.transfer(holder, main, sub, CurrencyId(99), ONE),
        EngineError::UnknownCurrency,
    );
    w.refuse(
        t(&w, main, sub, 11 * ONE),
        EngineError::InsufficientBalance {
            account: main,
            currency: eur,
            available: 10 * ONE,
            requested: 11 * ONE,
        },
    );
    w.refuse(
        w.transfer(holder, main, sub, btc, 1),
        EngineError::InsufficientBalance {
            account: main,
            currency: btc,
            available: 0,
            requested: 1,
        },
    );
    // De-risk blocks transfers out of the account, not into it.
    w.ok(Command::SetDerisk {
        account: main,
        on: true,
    });
    w.refuse(t(&w, main, sub, ONE), EngineError::AccountInDerisk);
    w.ok(t(&w, blp, main, ONE));
    w.ok(Command::SetDerisk {
        account: main,
        on: false,
    });
    w.ok(t(&w, main, sub, ONE));
    // A BLP account keeps its minimum.
    w.refuse(
        Command::SetBlpThreshold {
            account: main,
            currency: eur,
            amount: ONE,
        },
        EngineError::NotBlpAccount,
    );
    w.refuse(
        Command::SetBlpThreshold {
            account: blp,
            currency: eur,
            amount: -1,
        },
        EngineError::InvalidAmount,
    );
    w.ok(Command::SetBlpThreshold {
        account: blp,
        currency: eur,
        amount: 5 * ONE,
    });
    w.refuse(
        t(&w, blp, main, 4 * ONE + 1),
        EngineError::BelowBlpThreshold,
    );
    w.ok(t(&w, blp, main, 4 * ONE));
    // A closed destination refuses the credit; the debit is rolled back.
    let before = w.balance(main, eur);
    w.refuse(t(&w, main, closed, ONE), EngineError::AccountClosed);
    assert_eq!(w.balance(main, eur), before);
    // Funds can still leave a closed account.
    w.deposit(sub, eur, ONE);
    w.ok(Command::CloseSubaccount { account: sub });
    w.ok(t(&w, sub, main, ONE));
}

#[test]
fn closing_a_subaccount_cancels_its_orders_and_locks_it() {
    let mut w = World::new();
    let (holder, main) = w.holder();
    let sub = w.sub(holder, "sub", AccountKind::Regular);
    let eur = w.eur;
    w.deposit(sub, eur, 100 * ONE);
    let order = w
        .ok(Command::PlaceOrder(w.order(sub, Side::Buy, "90.00", "1")))
        .order
        .expect("order");
    w.ok(Command::CloseSubaccount { account: sub });
    assert!(
        matches!(w.events[0].event, Event::OrderCancelled { order: o, reason: CancelReason::AccountClosed, .. } if o == order)
    );
    assert!(
        w.events
            .iter()
            .any(|e| matches!(e.event, Event::AccountClosed { account } if account == sub))
    );
    assert!(
        matches!(
            w.events.last().map(|e| e.event),
            Some(Event::TopOfBook {
                bid: None,
                ask: None,
                ..
            })
        ),
        "the emptied book publishes its new top last"
    );
    assert_eq!(w.balance(sub, eur), (100 * ONE, 0), "reservation released");
    w.refuse(
        Command::PlaceOrder(w.order(sub, Side::Buy, "90.00", "1")),
        EngineError::AccountClosed,
    );
    w.refuse(
        Command::Deposit {
            account: sub,
            currency: eur,
            amount: ONE,
        },
        EngineError::AccountClosed,
    );
    w.refuse(
        Command::CloseSubaccount { account: sub },
        EngineError::AccountClosed,
    );
    w.refuse(
        Command::CloseSubaccount { account: main },
        EngineError::CannotCloseMain,
    );
    w.refuse(
        Command::CloseSubaccount {
            account: AccountId(77),
        },
        EngineError::UnknownAccount,
    );
    w.ok(Command::Withdraw {
        account: sub,
        currency: eur,
        amount: ONE,
    });
}

#[test]
fn margin_totals_count_usd_cash() {
    let mut w = World::new();
    let (_, a) = w.holder();
    let usd = w.engine.currency_by_code("USD").expect("USD");
    w.deposit(a, usd, 250 * ONE);
    let m = w.engine.margin_totals(a).expect("account");
    assert_eq!(
        (m.account_equity, m.margin_used, m.margin_available),
        (250 * i128::from(ONE), 0, 250 * i128::from(ONE))
    );
    assert_eq!(w.engine.balance_scale(usd), Ok(8));
    assert_eq!(matchbook::transfer_decimals("SHIB"), 3);
    let shib = w.engine.currency_by_code("SHIB").expect("SHIB");
    assert_eq!(w.engine.balance_scale(shib), Ok(3));
}

#[test]
fn volume_in_another_quote_currency_is_converted_at_the_last_price() {
    let mut w = World::new();
    let (_, a) = w.holder();
    let (_, b) = w.holder();
    let (btc, eur) = (w.btc, w.eur);
    let eth = w.engine.currency_by_code("ETH").expect("ETH");
    let eth_btc = w.engine.instrument_by_code("ETH_BTC").expect("ETH_BTC");
    for account in [a, b] {
        w.deposit(account, btc, 10 * ONE);
        w.deposit(account, eur, 100_000 * ONE);
        w.deposit(account, eth, 10 * ONE);
    }
    // Before BTC_EUR has traded there is no price to convert with: not counted.
    let eth_order =
        |account, side| NewOrder::limit(account, eth_btc, side, Price(5_000), Qty(1_000));
    w.ok(Command::PlaceOrder(eth_order(a, Side::Sell)));
    w.ok(Command::PlaceOrder(eth_order(b, Side::Buy)));
    assert_eq!(
        w.engine.account_fees(a).expect("fees").running_volumes[0].volume,
        0
    );
    // BTC_EUR trades 0.1 BTC at 30,000 (3,000 EUR); then 1 ETH at 0.05 BTC counts 1,500 EUR.
    w.ok(Command::PlaceOrder(w.order(
        a,
        Side::Sell,
        "30000.00",
        "0.1",
    )));
    w.ok(Command::PlaceOrder(w.order(
        b,
        Side::Buy,
        "30000.00",
        "0.1",
    )));
    w.ok(Command::PlaceOrder(eth_order(a, Side::Sell)));
    w.ok(Command::PlaceOrder(eth_order(b, Side::Buy)));
    for account in [a, b] {
        let v = w
            .engine
            .account_fees(account)
            .expect("fees")
            .running_volumes[0];
        assert_eq!((v.volume, v.currency), (4_500 * i128::from(ONE), eur));
    }
}
