//! The workload text format: round trips and refusals with their line numbers.

use super::*;

fn sample() -> Script {
    let place = |account, side, price, tif, client| Op::Place {
        account,
        instrument: 0,
        side,
        price,
        amount: 5,
        tif,
        client,
    };
    Script {
        name: "sample".into(),
        instruments: 1,
        accounts: 2,
        terms: Vec::new(),
        setup: vec![
            Line {
                time: 1,
                op: Op::Deposit {
                    account: 0,
                    currency: 1,
                    amount: 100,
                },
            },
            Line {
                time: 2,
                op: place(0, Side::Sell, Some(101), Tif::Gtc, Some(7)),
            },
        ],
        measured: vec![
            Line {
                time: 3,
                op: place(1, Side::Buy, None, Tif::Ioc, None),
            },
            Line {
                time: 4,
                op: place(1, Side::Buy, Some(99), Tif::PostOnly, None),
            },
            Line {
                time: 5,
                op: Op::Move {
                    account: 1,
                    order: 2,
                    price: 98,
                },
            },
            Line {
                time: 6,
                op: Op::Cancel {
                    account: 0,
                    target: Target::Client(7),
                },
            },
            Line {
                time: 7,
                op: Op::Cancel {
                    account: 1,
                    target: Target::Order(2),
                },
            },
        ],
    }
}

#[test]
fn text_round_trips() {
    let script = sample();
    let text = script.to_text();
    assert_eq!(Script::parse(&text), Ok(script.clone()));
    assert_eq!(script.setup_orders(), 1);
}

#[test]
fn bad_lines_are_refused_with_their_line_number() {
    let text = sample().to_text();
    let cases = [
        (
            "N 3 1 0 B M IOC - 5 -",
            "N 3 1 0 B M GTC - 5 -",
            "a market order",
        ),
        ("C 7 1 #2", "C 7 1 #9", "not placed"),
        ("C 7 1 #2", "C 7 5 #2", "account 5"),
        (
            "N 3 1 0 B M IOC - 5 -",
            "N 3 1 3 B M IOC - 5 -",
            "instrument 3",
        ),
        ("M 5 1 #2 98", "M 5 1 #2 -98", "positive"),
        ("M 5 1 #2 98", "M 5 1 #2 9x", "integer"),
        ("D 1 0 1 100", "D 1 0 2 100", "currency 2"),
        ("N 3 1 0 B M IOC - 5 -", "N 3 1 0 X M IOC - 5 -", "side"),
        ("measure\n", "", "missing"),
    ];
    for (from, to, want) in cases {
        let bad = text.replacen(from, to, 1);
        let err = Script::parse(&bad).expect_err(to);
        assert!(err.message.contains(want), "{to}: {err}");
    }
    let err = Script::parse("matchbook-workload 1\nsetup\nX 1\n").expect_err("X");
    assert_eq!(err.line, 3);
}
