//! The model's symbolic commands and the strategies that draw them.

use super::*;

/// A command with its order and account references still symbolic.
#[derive(Debug, Clone)]
pub(super) enum Op {
    Place {
        account: usize,
        instrument: u16,
        side: Side,
        kind: u8,
        tif: u8,
        price: i64,
        trigger: i64,
        amount: i64,
        expire_in: i64,
        client: u8,
        stp: u8,
    },
    /// A one-cancels-the-other pair: two legs of (kind, price, trigger, amount).
    Oco {
        account: usize,
        side: Side,
        legs: [(u8, i64, i64, i64); 2],
    },
    /// A bracket: entry (kind, price, amount) and exits (take-profit, stop-loss, stop limit).
    Bracket {
        account: usize,
        side: Side,
        entry: (u8, i64, i64),
        exits: (i64, i64, Option<i64>),
    },
    Amend {
        pick: usize,
        owner: bool,
        amount: Option<i64>,
        price: Option<i64>,
    },
    Cancel {
        pick: usize,
        owner: bool,
    },
    CancelClient {
        account: usize,
        client: u8,
    },
    CancelAll {
        account: usize,
        scope: u8,
        picks: Vec<usize>,
    },
    SetStp {
        account: usize,
        mode: u8,
    },
    SetState {
        instrument: u16,
        state: u8,
    },
    Advance,
    AdvanceDays {
        days: i64,
    },
    Deposit {
        account: u32,
        currency: u16,
        amount: i64,
    },
    Withdraw {
        account: u32,
        currency: u16,
        amount: i64,
    },
    Transfer {
        holder: u32,
        source: u32,
        destination: u32,
        currency: u16,
        amount: i64,
        consistent: bool,
    },
    CloseSubaccount {
        account: u32,
    },
    CreateSubaccount {
        holder: u32,
        name: u8,
        kind: u8,
    },
    SetDerisk {
        account: u32,
        on: bool,
    },
    SetBlp {
        account: u32,
        currency: u16,
        amount: i64,
    },
    CancelAllAfter {
        account: u32,
        millis: u64,
    },
}

pub(super) fn money() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => (1i64..2_000).prop_map(|n| n * 500),
        1 => Just(0i64),
        1 => Just(-3i64),
        1 => Just(5_000_000_000i64),
    ]
}

pub(super) fn price() -> impl Strategy<Value = i64> {
    prop_oneof![
        20 => 95i64..=105,
        2 => prop_oneof![Just(0i64), Just(-5), Just(200_000)],
        2 => prop_oneof![Just(9_000i64), Just(20_000), Just(2)],
    ]
}

pub(super) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (0usize..6, 0u16..10, any::<bool>(), 0u8..20, 0u8..6, price(), 90i64..=110, prop_oneof![10 => 1i64..6, 1 => -1i64..=0], 0i64..8, 0u8..4, 0u8..8)
            .prop_map(|(account, instrument, buy, kind, tif, price, trigger, amount, expire_in, client, stp)| Op::Place {
                account, instrument: match instrument { 0..=4 => 0, 5..=8 => 1, _ => 8 }, side: if buy { Side::Buy } else { Side::Sell },
                kind, tif, price, trigger, amount, expire_in, client, stp,
            }),
        2 => (0usize..6, any::<bool>(), [(0u8..7, 93i64..=107, 93i64..=107, 1i64..5), (0u8..7, 93i64..=107, 93i64..=107, 1i64..5)])
            .prop_map(|(account, buy, legs)| Op::Oco { account, side: if buy { Side::Buy } else { Side::Sell }, legs }),
        2 => (0usize..6, any::<bool>(), (0u8..4, 95i64..=105, 1i64..6), (90i64..=110, 90i64..=110, prop::option::of(90i64..=110)))
            .prop_map(|(account, buy, entry, exits)| Op::Bracket { account, side: if buy { Side::Buy } else { Side::Sell }, entry, exits }),
        4 => (any::<usize>(), prop::bool::weighted(0.9), prop::option::weighted(0.7, 0i64..8), prop::option::weighted(0.7, price()))
            .prop_map(|(pick, owner, amount, price)| Op::Amend { pick, owner, amount, price }),
        3 => (any::<usize>(), prop::bool::weighted(0.9)).prop_map(|(pick, owner)| Op::Cancel { pick, owner }),
        1 => (0usize..5, 0u8..4).prop_map(|(account, client)| Op::CancelClient { account, client }),
        1 => (0usize..5, 0u8..5, prop::collection::vec(any::<usize>(), 0..4))
            .prop_map(|(account, scope, picks)| Op::CancelAll { account, scope, picks }),
        1 => (0usize..5, 0u8..4).prop_map(|(account, mode)| Op::SetStp { account, mode }),
        1 => (0u16..3, 0u8..30).prop_map(|(instrument, state)| Op::SetState { instrument, state }),
        1 => Just(Op::Advance),
        1 => (1i64..40).prop_map(|days| Op::AdvanceDays { days }),
        2 => (0u32..8, 0u16..3, money()).prop_map(|(account, currency, amount)| Op::Deposit { account, currency, amount }),
        1 => (0u32..8, 0u16..3, money()).prop_map(|(account, currency, amount)| Op::Withdraw { account, currency, amount }),
        4 => (0u32..4, 0u32..8, 0u32..8, 0u16..3, money(), prop::bool::weighted(0.8))
            .prop_map(|(holder, source, destination, currency, amount, consistent)| Op::Transfer { holder, source, destination, currency, amount, consistent }),
        1 => (0u32..8).prop_map(|account| Op::CloseSubaccount { account }),
        1 => (0u32..4, 0u8..5, 0u8..3).prop_map(|(holder, name, kind)| Op::CreateSubaccount { holder, name, kind }),
        1 => (0u32..8, any::<bool>()).prop_map(|(account, on)| Op::SetDerisk { account, on }),
        1 => (0u32..8, 0u16..3, money()).prop_map(|(account, currency, amount)| Op::SetBlp { account, currency, amount }),
        2 => (0u32..8, prop_oneof![1 => Just(0u64), 6 => 1u64..40]).prop_map(|(account, millis)| Op::CancelAllAfter { account, millis }),
    ]
}

pub(super) fn stp_mode(n: u8) -> StpMode {
    [
        StpMode::None,
        StpMode::CancelNewest,
        StpMode::CancelOldest,
        StpMode::CancelBoth,
    ][usize::from(n % 4)]
}

pub(super) fn client_id(n: u8) -> Option<Uuid> {
    (n > 0).then(|| Uuid(0x1000 + u128::from(n)))
}
