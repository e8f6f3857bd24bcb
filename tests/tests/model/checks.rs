//! Running both engines side by side, and what must hold after each command.

use super::*;

/// Invariants of the engine's own state: books never crossed, levels consistent with their
/// orders, every resting order with something left, open-order counts as listed.
pub(super) fn check_invariants(engine: &Engine) -> Result<(), TestCaseError> {
    for i in 0..engine.instruments().len() {
        let inst = InstrumentId(i as u16);
        let l2 = engine.book_levels(inst, usize::MAX).expect("book");
        let l3 = engine.book_orders(inst, usize::MAX).expect("book");
        if let (Some(bid), Some(ask)) = (l2.bids.first(), l2.asks.first()) {
            prop_assert!(bid.price < ask.price, "crossed book {:?} / {:?}", bid, ask);
        }
        for (levels, orders) in [(&l2.bids, &l3.bids), (&l2.asks, &l3.asks)] {
            for level in levels.iter() {
                let at: Vec<_> = orders.iter().filter(|o| o.price == level.price).collect();
                prop_assert_eq!(at.len() as u32, level.number_of_orders);
                prop_assert_eq!(at.iter().map(|o| o.amount.0).sum::<i64>(), level.amount.0);
                prop_assert!(at.iter().all(|o| o.amount.0 > 0));
            }
        }
    }
    Ok(())
}

/// Applies a set-up command to both engines; both must accept it.
pub(super) fn both(engine: &mut Engine, reference: &mut RefEngine, command: Command, now: i64) {
    let mut sink: Vec<EventRecord> = Vec::new();
    engine
        .apply(&command, Timestamp(now), &mut sink)
        .expect("engine set-up");
    reference
        .apply(&command, Timestamp(now))
        .1
        .expect("reference set-up");
}

/// Engine balances of every account, (available, locked) per currency.
pub(super) fn balances(engine: &Engine) -> Vec<Vec<(i64, i64)>> {
    (0..)
        .map_while(|a| engine.account(AccountId(a)).ok())
        .map(|v| {
            v.dense_balances()
                .iter()
                .map(|b| (b.available, b.locked))
                .collect()
        })
        .collect()
}

/// Money invariants: nothing negative; locked equals what open orders reserve; per
/// currency, balances plus the fee account equal net deposits.
pub(super) fn check_money(engine: &Engine, net_deposits: &[i64]) -> Result<(), TestCaseError> {
    let all = balances(engine);
    let mut reserved = vec![vec![0i64; 2]; all.len()];
    for (a, row) in reserved.iter_mut().enumerate() {
        for o in engine.open_orders(AccountId(a as u32)) {
            let inst = engine.instrument(o.instrument()).expect("instrument");
            let c = if o.side() == Side::Buy {
                inst.quote
            } else {
                inst.base
            };
            row[usize::from(c.0)] += o.reserved();
        }
    }
    for (a, row) in all.iter().enumerate() {
        for (c, &(available, locked)) in row.iter().enumerate() {
            prop_assert!(
                available >= 0 && locked >= 0,
                "negative balance {a}/{c}: {available} {locked}"
            );
            prop_assert_eq!(
                locked,
                reserved[a][c],
                "locked vs reservations, account {} currency {}",
                a,
                c
            );
        }
    }
    for (c, &net) in net_deposits.iter().enumerate() {
        let held: i64 = all.iter().map(|row| row[c].0 + row[c].1).sum();
        prop_assert_eq!(
            held + engine.fees_collected()[c],
            net,
            "conservation of currency {}",
            c
        );
    }
    Ok(())
}

pub(super) fn run(ops: &[(Op, i64)], enforce_balances: bool) -> Result<(), TestCaseError> {
    let (mut engine, mut reference, mut net_deposits) = funded(enforce_balances);
    let mut known: Vec<(OrderRef, usize)> = Vec::new();
    let mut sink: Vec<EventRecord> = Vec::new();
    let mut now = 1_000_000_000i64;
    let mut shadow = balances(&engine);
    let mut mirror = super::levels::LevelMirror::start(&mut engine);
    for (op, dt) in ops {
        now += dt * 1_000_000;
        if let Op::AdvanceDays { days } = op {
            now += days * 86_400_000_000_000;
        }
        let live: Vec<(OrderRef, usize)> = (0..8u32)
            .flat_map(|a| engine.open_orders(matchbook::AccountId(a)))
            .map(|o| (o.handle(), o.account().0 as usize))
            .collect();
        let holders: Vec<u32> = (0..)
            .map_while(|a| engine.account(AccountId(a)).ok())
            .map(|v| v.holder.0)
            .collect();
        let command = resolve(op, &known, &live, &holders, now);
        sink.clear();
        let before = engine.content_hash();
        let got = engine.apply(&command, Timestamp(now), &mut sink);
        let (want_events, want) = reference.apply(&command, Timestamp(now));
        let got_events: Vec<_> = sink.iter().map(|r| normalize(r.event)).collect();
        prop_assert_eq!(&got_events, &want_events, "command {:?}", command);
        prop_assert_eq!(got.map(|_| ()), want, "result of {:?}", command);
        prop_assert_eq!(engine.sequence(), reference.sequence());
        if got.is_err() && sink.len() == 1 {
            prop_assert_eq!(
                engine.content_hash(),
                before,
                "refused {:?} changed state",
                command
            );
        }
        if got.is_ok() {
            match command {
                Command::Deposit {
                    currency, amount, ..
                } => net_deposits[usize::from(currency.0)] += amount,
                Command::Withdraw {
                    currency, amount, ..
                } => net_deposits[usize::from(currency.0)] -= amount,
                _ => {}
            }
        }
        mirror.check(&mut engine)?;
        check_balances(&engine, &reference, &mut shadow, &sink)?;
        check_money(&engine, &net_deposits)?;
        record_outcomes(&sink, &mut known);
        check_invariants(&engine)?;
        for holder in 0..3u32 {
            prop_assert_eq!(
                engine
                    .open_order_count(matchbook::HolderId(holder))
                    .expect("holder"),
                reference.holders[holder as usize]
            );
        }
    }
    check_books_and_stops(&engine, &reference)
}
/// Both engines with three holders, a subaccount of each kind and every account funded
/// in both currencies; what was deposited, by currency.
fn funded(enforce_balances: bool) -> (Engine, RefEngine, Vec<i64>) {
    let (mut engine, mut reference) = setup(enforce_balances);
    let now = 1_000_000_000i64;
    for _ in 0..3 {
        both(&mut engine, &mut reference, Command::CreateHolder, now);
    }
    for (holder, name, kind) in [
        (0, "sub", AccountKind::Regular),
        (1, "blp", AccountKind::Blp),
        (2, "instant", AccountKind::InstantTrade),
    ] {
        let command = Command::CreateSubaccount {
            holder: HolderId(holder),
            name: name.into(),
            kind,
        };
        both(&mut engine, &mut reference, command, now);
    }
    let mut net_deposits = vec![0i64; 2];
    for account in 0..6u32 {
        for (currency, amount) in [(0u16, 100 * UNIT), (1, 5_000 * UNIT)] {
            let command = Command::Deposit {
                account: AccountId(account),
                currency: CurrencyId(currency),
                amount,
            };
            both(&mut engine, &mut reference, command, now);
            net_deposits[usize::from(currency)] += amount;
        }
    }
    (engine, reference, net_deposits)
}

/// Balance events carry the new values: replaying them into `shadow` must give the
/// engine's balances, and those the reference's; the fees collected agree too.
fn check_balances(
    engine: &Engine,
    reference: &RefEngine,
    shadow: &mut Vec<Vec<(i64, i64)>>,
    sink: &[EventRecord],
) -> Result<(), TestCaseError> {
    shadow.resize(balances(engine).len(), vec![(0, 0); 2]);
    for record in sink {
        if let matchbook::Event::BalanceChanged {
            account,
            currency,
            available,
            locked,
        } = record.event
        {
            shadow[account.0 as usize][usize::from(currency.0)] = (available, locked);
        }
    }
    prop_assert_eq!(
        &*shadow,
        &balances(engine),
        "balance events disagree with balances"
    );
    let ref_balances: Vec<Vec<(i64, i64)>> = reference
        .accounts
        .iter()
        .map(|a| a.balances.clone())
        .collect();
    prop_assert_eq!(
        &*shadow,
        &ref_balances,
        "balances differ from the reference"
    );
    prop_assert_eq!(engine.fees_collected(), &reference.funds.fees[..]);
    Ok(())
}

/// Counts each event's outcome for the generator's coverage test, and the orders
/// accepted, for later commands to name.
fn record_outcomes(sink: &[EventRecord], known: &mut Vec<(OrderRef, usize)>) {
    let mut last_maker = None;
    for record in sink {
        let mut seen = outcome(&record.event);
        match record.event {
            // An iceberg booked again right after its shown part filled: replenished.
            matchbook::Event::OrderBooked { order, .. } if last_maker == Some(order) => {
                seen = "Iceberg replenished".into();
            }
            matchbook::Event::Trade(t) => last_maker = Some(t.maker),
            matchbook::Event::OrdersLinked {
                parent: Some(_), ..
            } => seen = "Bracket exits placed".into(),
            _ => {}
        }
        OUTCOMES.with(|s| *s.borrow_mut().entry(seen).or_insert(0) += 1);
        if let matchbook::Event::OrderAccepted(a) = record.event {
            known.push((a.order, a.account.0 as usize));
        }
    }
}

/// At the end: the books, order by order, and the held stop orders agree.
fn check_books_and_stops(engine: &Engine, reference: &RefEngine) -> Result<(), TestCaseError> {
    for i in 0..2u16 {
        let inst = InstrumentId(i);
        let l3 = engine.book_orders(inst, usize::MAX).expect("book");
        for (side, got) in [(Side::Buy, &l3.bids), (Side::Sell, &l3.asks)] {
            let got: Vec<_> = got
                .iter()
                .map(|o| (o.order.id, o.account, o.price.0, o.amount.0))
                .collect();
            prop_assert_eq!(got, reference.book_side(inst, side));
        }
    }
    let mut pending: Vec<u64> = (0..8u32)
        .flat_map(|a| engine.open_orders(matchbook::AccountId(a)))
        .filter(|o| o.state() == matchbook::LiveState::PendingTrigger)
        .map(|o| o.handle().id)
        .collect();
    pending.sort_unstable();
    prop_assert_eq!(pending, reference.pending_stops());
    Ok(())
}
