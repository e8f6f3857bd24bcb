//! Every generated profile round-trips through the workload text format and has the command
//! mix its definition promises; the exchange-core profile trades on about 6% of commands,
//! as the published benchmark does.

#![warn(clippy::too_many_lines)]

use matchbook_bench::profiles::{self, PROFILES};
use matchbook_bench::script::{Op, OrderCounter, Script, Tif};
use matchbook_bench::venues::{self, Outcome};

#[test]
fn every_profile_round_trips_and_has_its_mix() {
    for profile in PROFILES {
        let script = profiles::generate(profile, 3, 20_000);
        let text = script.to_text();
        assert_eq!(
            Script::parse(&text).as_ref(),
            Ok(&script),
            "{}",
            profile.name
        );
        assert_eq!(script.accounts, profile.accounts);
        assert_eq!(script.instruments, profile.instruments);

        let n = script.measured.len() as f64;
        let share = |f: &dyn Fn(&Op) -> bool| {
            script.measured.iter().filter(|l| f(&l.op)).count() as f64 / n
        };
        let cancels = share(&|op| matches!(op, Op::Cancel { .. }));
        let iocs = share(&|op| matches!(op, Op::Place { tif: Tif::Ioc, .. }));
        let gtcs = share(&|op| matches!(op, Op::Place { tif: Tif::Gtc, .. }));
        let moves = share(&|op| matches!(op, Op::Move { .. }));
        eprintln!(
            "{}: gtc {gtcs:.3} ioc {iocs:.3} cancel {cancels:.3} move {moves:.3}",
            profile.name
        );
        assert!(
            (cancels - profile.cancel).abs() < 0.03,
            "{}: cancels {cancels}",
            profile.name
        );
        assert!(
            (iocs - profile.ioc).abs() < 0.01,
            "{}: iocs {iocs}",
            profile.name
        );
        let expected_moves = 1.0 - profile.gtc - profile.ioc - profile.cancel;
        assert!(
            (moves - expected_moves).abs() < 0.06,
            "{}: moves {moves}",
            profile.name
        );
    }
}

#[test]
fn exchange_core_trades_on_about_six_percent_of_commands() {
    let script = profiles::generate(profiles::EXCHANGE_CORE, 5, 100_000);
    let mut engine = venues::open("matchbook", &script).expect("matchbook");
    let mut out = Outcome::default();
    let mut numbers = OrderCounter::default();
    let mut trading = 0usize;
    for (i, line) in script.lines().enumerate() {
        out.clear();
        engine.apply(line, numbers.number(line), &mut out, true);
        if i >= script.setup.len() {
            trading += usize::from(!out.fills.is_empty());
        }
    }
    let share = trading as f64 / script.measured.len() as f64;
    assert!((0.03..0.10).contains(&share), "trading share {share}");
}

#[test]
fn price_jumps_leave_orders_far_from_the_touch() {
    let script = profiles::generate(profiles::PRICE_JUMPS, 9, 50_000);
    let far = script
        .lines()
        .filter(|l| {
            matches!(l.op, Op::Place { price: Some(p), .. }
                if (p - profiles::START_PRICE).abs() > 10 * profiles::PRICE_JUMPS.price_span)
        })
        .count();
    assert!(far > 500, "{far} orders placed 10 spans or more away");
}

#[test]
fn cancel_heavy_cancels_most_of_the_orders_it_places() {
    let script = profiles::generate(profiles::CANCEL_HEAVY, 11, 100_000);
    let mut engine = venues::open("matchbook", &script).expect("matchbook");
    let mut out = Outcome::default();
    let mut numbers = OrderCounter::default();
    let (mut placed, mut cancelled) = (0usize, 0usize);
    for (i, line) in script.lines().enumerate() {
        out.clear();
        engine.apply(line, numbers.number(line), &mut out, false);
        if i < script.setup.len() {
            continue;
        }
        match line.op {
            Op::Place { tif: Tif::Gtc, .. } => placed += 1,
            Op::Cancel { .. } => cancelled += usize::from(out.applied),
            _ => {}
        }
    }
    let share = cancelled as f64 / placed as f64;
    eprintln!("cancel-heavy: {cancelled} cancels for {placed} orders placed ({share:.3})");
    assert!((0.8..1.0).contains(&share), "cancelled share {share}");
}

/// With balances and fees on, every profile is the same work as book only: every deposit
/// is taken and no command is refused that book only takes (a funding too large for the
/// balance limit once left every buy unfunded, so "with balances" matched half the flow).
#[test]
fn with_balances_every_profile_refuses_nothing_more_than_book_only() {
    for profile in PROFILES {
        let script = profiles::generate(profile, 11, 20_000);
        let refused = |engine: &str| {
            let mut venue = venues::open(engine, &script).expect("matchbook");
            let (mut out, mut numbers) = (Outcome::default(), OrderCounter::default());
            let mut refused = Vec::new();
            for (i, line) in script.lines().enumerate() {
                out.clear();
                venue.apply(line, numbers.number(line), &mut out, false);
                if !out.applied {
                    refused.push(i);
                }
            }
            refused
        };
        let (book_only, with_balances) = (refused("matchbook"), refused("matchbook-balances"));
        let deposits = script.setup.iter().enumerate();
        let deposits = deposits.filter(|(_, l)| matches!(l.op, Op::Deposit { .. }));
        for (i, _) in deposits {
            assert!(!with_balances.contains(&i), "{}: deposit {i}", profile.name);
        }
        assert_eq!(with_balances, book_only, "{}", profile.name);
    }
}
