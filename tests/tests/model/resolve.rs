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
    let account_id = |a: usize| matchbook::AccountId(a as u32);
    let pick = |pick: usize, owner: bool| -> (OrderRef, matchbook::AccountId) {
        if known.is_empty() {
            return (
                OrderRef {
                    id: 999_999,
                    slot: 0,
                },
                account_id(0),
            );
        }
        // Mostly a live order, sometimes any order ever seen (likely ended).
        let (order, acc) = if pick.is_multiple_of(5) || live.is_empty() {
            known[pick / 5 % known.len()]
        } else {
            live[pick / 5 % live.len()]
        };
        (order, account_id(if owner { acc } else { (acc + 1) % 5 }))
    };
    match op {
        Op::Place {
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
        } => {
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
                account: account_id(*account),
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
                expire_at: (gtt != (*expire_in == 6))
                    .then_some(Timestamp(now + expire_in * 1_000_000)),
                client_id: client_id(*client),
                stp: (*stp < 4).then(|| stp_mode(*stp)),
                reduce_only: false,
            })
        }
        Op::Amend {
            pick: p,
            owner,
            amount,
            price,
        } => {
            let (order, account) = pick(*p, *owner);
            Command::AmendOrder {
                account,
                order,
                amount: amount.map(Qty),
                price: price.map(Price),
            }
        }
        Op::Cancel { pick: p, owner } => {
            let (order, account) = pick(*p, *owner);
            Command::CancelOrder { account, order }
        }
        Op::CancelClient { account, client } => Command::CancelByClientId {
            account: account_id(*account),
            client_id: client_id(*client).unwrap_or(Uuid(7)),
        },
        Op::CancelAll {
            account,
            scope,
            picks,
        } => Command::CancelAll {
            account: account_id(*account),
            scope: match scope {
                0 => CancelScope::All,
                1 => CancelScope::Instrument(InstrumentId(0)),
                2 => CancelScope::Instrument(InstrumentId(5)),
                3 => CancelScope::Orders(picks.iter().map(|&p| pick(p, true).0).collect()),
                _ => CancelScope::ClientIds(
                    picks
                        .iter()
                        .map(|&p| client_id((p % 4) as u8).unwrap_or(Uuid(9)))
                        .collect(),
                ),
            },
        },
        Op::SetStp { account, mode } => Command::SetStpMode {
            account: account_id(*account),
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
        Op::Oco {
            account,
            side,
            legs,
        } => {
            let [first, second] = legs.map(|(kind, price, trigger, amount)| {
                let mut o = NewOrder::limit(
                    account_id(*account),
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
        Op::Bracket {
            account,
            side,
            entry: (kind, price, amount),
            exits: (take_profit, stop_loss, stop_limit),
        } => {
            let mut entry = NewOrder::limit(
                account_id(*account),
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
        Op::Transfer {
            holder,
            source,
            destination,
            currency,
            amount,
            consistent,
        } => {
            // Mostly between two accounts of the source's own holder, sometimes anything.
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
    }
}
