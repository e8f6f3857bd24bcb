//! Symbolic commands made concrete against the orders seen so far.

use super::*;

/// Turns a symbolic op into a command, given the orders seen so far and the clock.
pub(super) fn resolve(
    op: &Op,
    known: &[(OrderRef, usize)],
    live: &[(OrderRef, usize)],
    holders: &[u32],
    now: i64,
) -> Command {
    match op {
        Op::Place { .. } => place(op, now),
        Op::Oco { .. } => oco(op),
        Op::Bracket { .. } => bracket(op),
        Op::Amend { .. } | Op::Cancel { .. } | Op::CancelClient { .. } | Op::CancelAll { .. } => {
            amend_or_cancel(op, &Picker { known, live })
        }
        _ => operation(op, holders),
    }
}

/// Picks the order an amend or a cancel names among those seen so far.
struct Picker<'a> {
    known: &'a [(OrderRef, usize)],
    live: &'a [(OrderRef, usize)],
}

impl Picker<'_> {
    /// Mostly a live order, sometimes any order ever seen (likely ended); with its owner,
    /// or another account.
    fn pick(&self, pick: usize, owner: bool) -> (OrderRef, AccountId) {
        let (known, live) = (self.known, self.live);
        if known.is_empty() {
            return (
                OrderRef {
                    id: 999_999,
                    slot: 0,
                },
                AccountId(0),
            );
        }
        let (order, acc) = if pick.is_multiple_of(5) || live.is_empty() {
            known[pick / 5 % known.len()]
        } else {
            live[pick / 5 % live.len()]
        };
        (
            order,
            AccountId(if owner { acc } else { (acc + 1) % 5 } as u32),
        )
    }
}

/// A new order of every type, time in force and option (now and then a field it must not
/// have).
fn place(op: &Op, now: i64) -> Command {
    let Op::Place {
        account,
        instrument,
        side,
        kind,
        tif,
        price,
        trigger,
        amount,
        expire_in,
        client,
        stp,
    } = op
    else {
        panic!("not a new order: {op:?}");
    };
    let order_type = match kind {
        0..=10 => OrderType::Limit,
        11 | 19 => OrderType::Market,
        12 => OrderType::Stop,
        13 => OrderType::StopMarket,
        14 => OrderType::TakeProfit,
        15 => OrderType::TakeProfitMarket,
        16 | 17 => OrderType::TrailingStop,
        _ => OrderType::TrailingStopLimit,
    };
    let trailing = order_type.is_trailing();
    let held = order_type.is_trigger() && !trailing;
    let time_in_force = [
        TimeInForce::GoodTillCancelled,
        TimeInForce::GoodTillCancelled,
        TimeInForce::ImmediateOrCancelled,
        TimeInForce::FillOrKill,
        TimeInForce::PostOnly,
        TimeInForce::GoodTillTime,
    ][usize::from(*tif)];
    let gtt = time_in_force == TimeInForce::GoodTillTime;
    Command::PlaceOrder(NewOrder {
        account: AccountId(*account as u32),
        instrument: InstrumentId(*instrument),
        side: *side,
        order_type,
        time_in_force,
        price: (*price != -5
            && (!order_type.is_market() || *price % 2 == 0)
            && (!trailing || *price == 0))
            .then_some(Price(*price)),
        trigger_price: (held || *expire_in == 7).then_some(Price(*trigger)),
        trigger_ref: matchbook::TriggerRef::LastPrice,
        // A trail of 0..=20 ticks (0 is refused) or 50..=1,050 basis points; now and
        // then one on an order that does not trail.
        trail: (trailing || (*client == 3 && *expire_in == 5)).then(|| {
            if *kind == 17 {
                matchbook::Trail::Bps(((*trigger - 89) * 50) as u32)
            } else {
                matchbook::Trail::Price(Price(*trigger - 90))
            }
        }),
        limit_offset: (order_type == OrderType::TrailingStopLimit
            || (*expire_in == 4 && *client == 2))
            .then_some(Price(*expire_in)),
        // Icebergs showing 1 or 2 of their amount (now and then all of it, refused).
        display: (*kind < 4 || (*kind == 11 && *client == 1))
            .then_some(Qty(i64::from(*stp % 2) + 1)),
        amount: Qty(*amount),
        expire_at: (gtt != (*expire_in == 6)).then_some(Timestamp(now + expire_in * 1_000_000)),
        client_id: client_id(*client),
        stp: (*stp < 4).then(|| stp_mode(*stp)),
        reduce_only: false,
    })
}

/// A one-cancels-the-other pair of limit, stop, take-profit or market legs.
fn oco(op: &Op) -> Command {
    let Op::Oco {
        account,
        side,
        legs,
    } = op
    else {
        panic!("not an OCO pair: {op:?}");
    };
    let [first, second] = legs.map(|(kind, price, trigger, amount)| {
        let mut o = NewOrder::limit(
            AccountId(*account as u32),
            InstrumentId(0),
            *side,
            Price(price),
            Qty(amount),
        );
        o.order_type = [
            OrderType::Limit,
            OrderType::Limit,
            OrderType::Stop,
            OrderType::StopMarket,
            OrderType::TakeProfit,
            OrderType::TakeProfitMarket,
            OrderType::Market,
        ][usize::from(kind % 7)];
        if o.order_type.is_trigger() {
            o.trigger_price = Some(Price(trigger));
        }
        if o.order_type.is_market() {
            o.price = None;
        }
        o
    });
    Command::PlaceOco {
        first,
        second: Box::new(second),
    }
}

/// A bracket: a limit, immediate-or-cancel or market entry with its exits.
fn bracket(op: &Op) -> Command {
    let Op::Bracket {
        account,
        side,
        entry: (kind, price, amount),
        exits: (take_profit, stop_loss, stop_limit),
    } = op
    else {
        panic!("not a bracket: {op:?}");
    };
    let mut entry = NewOrder::limit(
        AccountId(*account as u32),
        InstrumentId(0),
        *side,
        Price(*price),
        Qty(*amount),
    );
    match kind % 4 {
        0 => entry.time_in_force = TimeInForce::ImmediateOrCancelled,
        1 => {
            entry.order_type = OrderType::Market;
            entry.price = None;
        }
        _ => {}
    }
    Command::PlaceBracket {
        entry,
        exits: matchbook::BracketExits {
            take_profit: Price(*take_profit),
            stop_loss: Price(*stop_loss),
            stop_limit: stop_limit.map(Price),
        },
    }
}

/// An amend or a cancel of an order picked among those seen, or of a scope.
fn amend_or_cancel(op: &Op, picker: &Picker<'_>) -> Command {
    match op {
        Op::Amend {
            pick: p,
            owner,
            amount,
            price,
        } => {
            let (order, account) = picker.pick(*p, *owner);
            Command::AmendOrder {
                account,
                order,
                amount: amount.map(Qty),
                price: price.map(Price),
            }
        }
        Op::Cancel { pick: p, owner } => {
            let (order, account) = picker.pick(*p, *owner);
            Command::CancelOrder { account, order }
        }
        Op::CancelClient { account, client } => Command::CancelByClientId {
            account: AccountId(*account as u32),
            client_id: client_id(*client).unwrap_or(Uuid(7)),
        },
        Op::CancelAll {
            account,
            scope,
            picks,
        } => Command::CancelAll {
            account: AccountId(*account as u32),
            scope: match scope {
                0 => CancelScope::All,
                1 => CancelScope::Instrument(InstrumentId(0)),
                2 => CancelScope::Instrument(InstrumentId(5)),
                3 => CancelScope::Orders(picks.iter().map(|&p| picker.pick(p, true).0).collect()),
                _ => CancelScope::ClientIds(
                    picks
                        .iter()
                        .map(|&p| client_id((p % 4) as u8).unwrap_or(Uuid(9)))
                        .collect(),
                ),
            },
        },
        other => panic!("not an amend or a cancel: {other:?}"),
    }
}

/// A command that is not an order's: settings, market states, time, funds, accounts.
fn operation(op: &Op, holders: &[u32]) -> Command {
    match op {
        Op::SetStp { account, mode } => Command::SetStpMode {
            account: AccountId(*account as u32),
            mode: stp_mode(*mode),
        },
        Op::SetState { instrument, state } => Command::SetInstrumentState {
            instrument: InstrumentId(*instrument),
            state: match state {
                0 => InstrumentState::PostOnly,
                1 => InstrumentState::Suspended,
                2 => InstrumentState::Closed,
                _ => InstrumentState::Active,
            },
        },
        Op::Advance | Op::AdvanceDays { .. } => Command::AdvanceTime,
        Op::CancelAllAfter { account, millis } => Command::SetCancelAllAfter {
            account: AccountId(*account),
            timeout: millis * 1_000_000,
        },
        Op::Deposit {
            account,
            currency,
            amount,
        } => Command::Deposit {
            account: AccountId(*account),
            currency: CurrencyId(*currency),
            amount: *amount,
        },
        Op::Withdraw {
            account,
            currency,
            amount,
        } => Command::Withdraw {
            account: AccountId(*account),
            currency: CurrencyId(*currency),
            amount: *amount,
        },
        Op::Transfer { .. } => transfer(op, holders),
        Op::CloseSubaccount { account } => Command::CloseSubaccount {
            account: AccountId(*account),
        },
        Op::CreateSubaccount { holder, name, kind } => Command::CreateSubaccount {
            holder: HolderId(*holder),
            name: ["sub", "extra", "", "main", "tab\tname"][usize::from(*name)].to_owned(),
            kind: [
                AccountKind::Regular,
                AccountKind::Blp,
                AccountKind::InstantTrade,
            ][usize::from(*kind)],
        },
        Op::SetDerisk { account, on } => Command::SetDerisk {
            account: AccountId(*account),
            on: *on,
        },
        Op::SetBlp {
            account,
            currency,
            amount,
        } => Command::SetBlpThreshold {
            account: AccountId(*account),
            currency: CurrencyId(*currency),
            amount: *amount,
        },
        other => panic!("an order's op: {other:?}"),
    }
}

/// A transfer: mostly between two accounts of the source's own holder, sometimes
/// anything.
fn transfer(op: &Op, holders: &[u32]) -> Command {
    let Op::Transfer {
        holder,
        source,
        destination,
        currency,
        amount,
        consistent,
    } = op
    else {
        panic!("not a transfer: {op:?}");
    };
    let (holder, destination) = match holders.get(*source as usize) {
        Some(&owner) if *consistent => {
            let siblings: Vec<u32> = (0..holders.len() as u32)
                .filter(|&a| holders[a as usize] == owner && a != *source)
                .collect();
            let destination = if siblings.is_empty() {
                *destination
            } else {
                siblings[*destination as usize % siblings.len()]
            };
            (owner, destination)
        }
        _ => (*holder, *destination),
    };
    Command::Transfer {
        holder: HolderId(holder),
        source: AccountId(*source),
        destination: AccountId(destination),
        currency: CurrencyId(*currency),
        amount: *amount,
    }
}
