//! The script: one step of every command kind, each as C builds it and as the engine
//! takes it.

use super::*;

/// One scripted step: the C command and the Rust command it must mean.
pub(super) struct Step {
    pub(super) c: MbCommand,
    pub(super) rust: Command,
}

pub(super) fn script(maker: u32, taker: u32, btc_eur: u16, perp: u16, eur: u16) -> Vec<Step> {
    let mut steps = account_steps(taker, eur);
    steps.extend(spot_order_steps(maker, taker, btc_eur, perp));
    steps.extend(futures_and_other_steps(maker, taker, perp, eur));
    steps.extend(closing_steps(maker, taker));
    let (m, spot) = (AccountId(maker), InstrumentId(btc_eur));
    // An amend and a cancel of an order placed in the script: the maker's first bid.
    steps.push(Step {
        c: mb_cmd_place_limit(maker, btc_eur, 0, 5_000_000, 1_000, 0),
        rust: Command::PlaceOrder(NewOrder::limit(
            m,
            spot,
            Side::Buy,
            Price(5_000_000),
            Qty(1_000),
        )),
    });
    steps
}

/// Holders, subaccounts, funds, transfers and account settings.
fn account_steps(taker: u32, eur: u16) -> Vec<Step> {
    let t = AccountId(taker);
    vec![
        Step {
            c: mb_cmd_create_holder(),
            rust: Command::CreateHolder,
        },
        Step {
            c: mb_cmd_create_subaccount(1, c"sub".as_ptr(), MbAccountKind::Regular as u32),
            rust: Command::CreateSubaccount {
                holder: HolderId(1),
                name: "sub".into(),
                kind: AccountKind::Regular,
            },
        },
        Step {
            c: mb_cmd_deposit(taker, eur, 1_000),
            rust: Command::Deposit {
                account: t,
                currency: CurrencyId(eur),
                amount: 1_000,
            },
        },
        Step {
            c: mb_cmd_withdraw(taker, eur, 10),
            rust: Command::Withdraw {
                account: t,
                currency: CurrencyId(eur),
                amount: 10,
            },
        },
        Step {
            c: mb_cmd_transfer(1, taker, 3, eur, 100),
            rust: Command::Transfer {
                holder: HolderId(1),
                source: t,
                destination: AccountId(3),
                currency: CurrencyId(eur),
                amount: 100,
            },
        },
        Step {
            c: MbCommand {
                account: taker,
                stp: MbStp::CancelNewest as u32,
                ..mb_cmd_advance_time_as(MbCommandKind::SetStpMode)
            },
            rust: Command::SetStpMode {
                account: t,
                mode: StpMode::CancelNewest,
            },
        },
    ]
}

/// Orders on the spot market: every type, time in force and option.
fn spot_order_steps(maker: u32, taker: u32, btc_eur: u16, perp: u16) -> Vec<Step> {
    let (m, t) = (AccountId(maker), AccountId(taker));
    let spot = InstrumentId(btc_eur);
    let client = MbUuid { bytes: [0x11; 16] };
    let client_id = Uuid(u128::from_be_bytes([0x11; 16]));
    let bid = NewOrder::limit(t, spot, Side::Buy, Price(5_900_000), Qty(1_000));
    let mut steps = vec![
        Step {
            c: MbCommand {
                client_id: client,
                ..mb_cmd_place_limit(taker, btc_eur, 0, 5_900_000, 1_000, 0)
            },
            rust: Command::PlaceOrder(NewOrder {
                client_id: Some(client_id),
                ..bid
            }),
        },
        // Nothing to sell to it: accepted and ended at once, reported as the refusal.
        Step {
            c: mb_cmd_place_limit(
                taker,
                btc_eur,
                0,
                5_900_000,
                1_000,
                MbTimeInForce::FillOrKill as u32,
            ),
            rust: Command::PlaceOrder(bid.with_tif(TimeInForce::FillOrKill)),
        },
        Step {
            c: MbCommand {
                expire_at_ns: START + 60_000_000_000,
                ..mb_cmd_place_limit(
                    taker,
                    btc_eur,
                    0,
                    5_800_000,
                    1_000,
                    MbTimeInForce::GoodTillTime as u32,
                )
            },
            rust: Command::PlaceOrder(NewOrder {
                price: Some(Price(5_800_000)),
                time_in_force: TimeInForce::GoodTillTime,
                expire_at: Some(Timestamp(START + 60_000_000_000)),
                ..bid
            }),
        },
        Step {
            c: MbCommand {
                order_type: MbOrderType::Stop as u32,
                trigger_price: 5_500_000,
                stp: MbStp::CancelBoth as u32,
                ..mb_cmd_place_limit(maker, btc_eur, 1, 5_400_000, 1_000, 0)
            },
            rust: Command::PlaceOrder(NewOrder {
                order_type: OrderType::Stop,
                trigger_price: Some(Price(5_500_000)),
                stp: Some(StpMode::CancelBoth),
                ..NewOrder::limit(m, spot, Side::Sell, Price(5_400_000), Qty(1_000))
            }),
        },
    ];
    steps.extend(spot_cancel_steps(maker, taker, btc_eur, perp));
    steps
}

/// A market order, cancels by client id and scope and amends on the spot market, and the
/// perpetual's index.
fn spot_cancel_steps(maker: u32, taker: u32, btc_eur: u16, perp: u16) -> Vec<Step> {
    let (m, t) = (AccountId(maker), AccountId(taker));
    let (spot, fut) = (InstrumentId(btc_eur), InstrumentId(perp));
    let client = MbUuid { bytes: [0x11; 16] };
    let client_id = Uuid(u128::from_be_bytes([0x11; 16]));
    let bid = NewOrder::limit(t, spot, Side::Buy, Price(5_900_000), Qty(1_000));
    vec![
        Step {
            c: mb_cmd_place_market(maker, btc_eur, 1, 500, 5_000_000),
            rust: Command::PlaceOrder(NewOrder {
                order_type: OrderType::Market,
                time_in_force: TimeInForce::ImmediateOrCancelled,
                price: Some(Price(5_000_000)),
                ..NewOrder::limit(m, spot, Side::Sell, Price(5_000_000), Qty(500))
            }),
        },
        Step {
            c: mb_cmd_cancel_by_client_id(taker, client),
            rust: Command::CancelByClientId {
                account: t,
                client_id,
            },
        },
        Step {
            c: mb_cmd_set_instrument_state(btc_eur, MbInstrumentState::PostOnly as u32),
            rust: Command::SetInstrumentState {
                instrument: spot,
                state: InstrumentState::PostOnly,
            },
        },
        Step {
            c: mb_cmd_place_limit(taker, btc_eur, 0, 6_100_000, 1_000, 0),
            rust: Command::PlaceOrder(NewOrder {
                price: Some(Price(6_100_000)),
                ..bid
            }),
        },
        Step {
            c: mb_cmd_set_instrument_state(btc_eur, MbInstrumentState::Active as u32),
            rust: Command::SetInstrumentState {
                instrument: spot,
                state: InstrumentState::Active,
            },
        },
        Step {
            c: MbCommand {
                client_id: LISTED[1],
                ..mb_cmd_place_limit(taker, btc_eur, 0, 5_700_000, 1_000, 0)
            },
            rust: Command::PlaceOrder(NewOrder {
                price: Some(Price(5_700_000)),
                client_id: LISTED[1].to_uuid(),
                ..bid
            }),
        },
        Step {
            c: mb_cmd_cancel_client_ids(taker, LISTED.as_ptr(), LISTED.len()),
            rust: Command::CancelAll {
                account: t,
                scope: CancelScope::ClientIds(LISTED.iter().filter_map(|u| u.to_uuid()).collect()),
            },
        },
        Step {
            c: mb_cmd_cancel_all(taker, 1, btc_eur),
            rust: Command::CancelAll {
                account: t,
                scope: CancelScope::Instrument(spot),
            },
        },
        Step {
            c: mb_cmd_set_index_price(perp, 600_000),
            rust: Command::SetIndexPrice {
                instrument: fut,
                price: Price(600_000),
            },
        },
    ]
}

/// The perpetual's orders, de-risking, a BLP threshold, a liquidation.
fn futures_and_other_steps(maker: u32, taker: u32, perp: u16, eur: u16) -> Vec<Step> {
    let (m, t) = (AccountId(maker), AccountId(taker));
    let fut = InstrumentId(perp);
    vec![
        Step {
            c: mb_cmd_place_limit(maker, perp, 1, 600_000, 2_000, 0),
            rust: Command::PlaceOrder(NewOrder::limit(
                m,
                fut,
                Side::Sell,
                Price(600_000),
                Qty(2_000),
            )),
        },
        Step {
            c: mb_cmd_place_market(taker, perp, 0, 1_000, 0),
            rust: Command::PlaceOrder(NewOrder {
                order_type: OrderType::Market,
                time_in_force: TimeInForce::ImmediateOrCancelled,
                price: None,
                ..NewOrder::limit(t, fut, Side::Buy, Price(1), Qty(1_000))
            }),
        },
        Step {
            c: MbCommand {
                flag: 1,
                ..mb_cmd_place_limit(taker, perp, 0, 600_000, 500, 0)
            },
            rust: Command::PlaceOrder(NewOrder {
                reduce_only: true,
                ..NewOrder::limit(t, fut, Side::Buy, Price(600_000), Qty(500))
            }),
        },
        Step {
            c: MbCommand {
                account: 3,
                flag: 1,
                ..mb_cmd_advance_time_as(MbCommandKind::SetDerisk)
            },
            rust: Command::SetDerisk {
                account: AccountId(3),
                on: true,
            },
        },
        Step {
            c: MbCommand {
                account: 3,
                currency: eur,
                amount: 5,
                ..mb_cmd_advance_time_as(MbCommandKind::SetBlpThreshold)
            },
            rust: Command::SetBlpThreshold {
                account: AccountId(3),
                currency: CurrencyId(eur),
                amount: 5,
            },
        },
        Step {
            c: mb_cmd_liquidate(taker),
            rust: Command::Liquidate { account: t },
        },
    ]
}

/// Time passing, dead-man switches set and cleared, a cancel of everything, a subaccount
/// closed.
fn closing_steps(maker: u32, taker: u32) -> Vec<Step> {
    let (m, t) = (AccountId(maker), AccountId(taker));
    vec![
        Step {
            c: mb_cmd_advance_time(),
            rust: Command::AdvanceTime,
        },
        Step {
            c: mb_cmd_set_cancel_all_after(maker, 60_000_000_000),
            rust: Command::SetCancelAllAfter {
                account: m,
                timeout: 60_000_000_000,
            },
        },
        Step {
            c: mb_cmd_set_cancel_all_after(taker, 0),
            rust: Command::SetCancelAllAfter {
                account: t,
                timeout: 0,
            },
        },
        Step {
            c: mb_cmd_cancel_all(maker, 0, 0),
            rust: Command::CancelAll {
                account: m,
                scope: CancelScope::All,
            },
        },
        Step {
            c: MbCommand {
                account: 3,
                ..mb_cmd_advance_time_as(MbCommandKind::CloseSubaccount)
            },
            rust: Command::CloseSubaccount {
                account: AccountId(3),
            },
        },
    ]
}
