//! Holders and subaccounts, deposits and withdrawals.

use super::*;

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
