//! Transfers, closing subaccounts, margin totals and volume in other currencies.

use super::*;

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

/// A holder's accounts for the transfer rules: main, a subaccount, an instant-trade
/// account, a BLP account and a closed one (main, instant and BLP funded with 10 EUR);
/// and another holder's main account.
struct TransferAccounts {
    holder: HolderId,
    main: AccountId,
    sub: AccountId,
    instant: AccountId,
    blp: AccountId,
    closed: AccountId,
    stranger_holder: HolderId,
    stranger: AccountId,
}

fn transfer_accounts(w: &mut World) -> TransferAccounts {
    let (holder, main) = w.holder();
    let sub = w.sub(holder, "sub", AccountKind::Regular);
    let instant = w.sub(holder, "instant", AccountKind::InstantTrade);
    let blp = w.sub(holder, "blp", AccountKind::Blp);
    let closed = w.sub(holder, "old", AccountKind::Regular);
    let (stranger_holder, stranger) = w.holder();
    for a in [main, instant, blp] {
        w.deposit(a, w.eur, 10 * ONE);
    }
    w.ok(Command::CloseSubaccount { account: closed });
    TransferAccounts {
        holder,
        main,
        sub,
        instant,
        blp,
        closed,
        stranger_holder,
        stranger,
    }
}

#[test]
fn transfer_rules_and_errors() {
    let mut w = World::new();
    let TransferAccounts {
        holder,
        main,
        sub,
        instant,
        stranger_holder,
        stranger,
        ..
    } = transfer_accounts(&mut w);
    let (btc, eur) = (w.btc, w.eur);
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
}

/// De-risk blocks transfers out of an account, a BLP account keeps its minimum, and a
/// closed account takes nothing in but lets its funds out.
#[test]
fn de_risk_blp_minimums_and_closed_accounts_limit_transfers() {
    let mut w = World::new();
    let TransferAccounts {
        holder,
        main,
        sub,
        blp,
        closed,
        ..
    } = transfer_accounts(&mut w);
    let eur = w.eur;
    let t = |w: &World, s, d, amount| w.transfer(holder, s, d, eur, amount);
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
