//! The generated exchange-core stream has the published shape: command mix, book size,
//! spread of prices and share of commands that trade.

#![warn(clippy::too_many_lines)]

use matchbook::{Command, EventRecord};
use matchbook_bench::workload::{self, EXCHANGE_CORE};

#[test]
fn exchange_core_mix_has_the_published_shape() {
    let w = workload::generate(EXCHANGE_CORE, 7, 200_000);
    let n = w.commands.len() as f64;
    let share =
        |f: &dyn Fn(&Command) -> bool| w.commands.iter().filter(|c| f(c)).count() as f64 / n;
    let moves = share(&|c| matches!(c, Command::AmendOrder { .. }));
    let cancels = share(&|c| matches!(c, Command::CancelOrder { .. }));
    let places = share(&|c| matches!(c, Command::PlaceOrder(_)));
    eprintln!("moves {moves} cancels {cancels} places {places}");
    assert!((0.78..0.86).contains(&moves), "moves {moves}");
    assert!((0.04..0.08).contains(&cancels), "cancels {cancels}");
    assert!((0.09..0.16).contains(&places), "places {places}");

    let mut engine = w.prepared_engine();
    let mut events: Vec<EventRecord> = Vec::new();
    let mut trading = 0usize;
    let mut rejected = 0usize;
    let mut sizes = Vec::new();
    for (i, command) in w.commands.iter().enumerate() {
        events.clear();
        rejected += usize::from(
            engine
                .apply(command, w.time_of_command(i), &mut events)
                .is_err(),
        );
        trading += usize::from(
            events
                .iter()
                .any(|e| matches!(e.event, matchbook::Event::Trade(_))),
        );
        if i % 1000 == 0 {
            sizes.push(engine.live_order_count());
        }
    }
    let trading = trading as f64 / n;
    eprintln!(
        "trading {trading} rejected {rejected} sizes {:?}",
        &sizes[..5]
    );
    assert!((0.03..0.10).contains(&trading), "trading share {trading}");
    assert!(rejected as f64 / n < 0.01, "rejected {rejected}");
    sizes.sort_unstable();
    let median = sizes[sizes.len() / 2];
    assert!((800..1300).contains(&median), "median live orders {median}");
    let view = engine
        .book_levels(workload::INSTRUMENT, usize::MAX)
        .expect("book");
    let levels = view.bids.len() + view.asks.len();
    assert!((300..1000).contains(&levels), "price levels {levels}");
}

#[test]
fn funded_workload_is_accepted_and_trades() {
    let w = workload::generate_funded(EXCHANGE_CORE, 7, 50_000);
    let mut engine = w.prepared_engine();
    let mut events: Vec<EventRecord> = Vec::new();
    let (mut rejected, mut trades) = (0usize, 0usize);
    for (i, command) in w.commands.iter().enumerate() {
        events.clear();
        rejected += usize::from(
            engine
                .apply(command, w.time_of_command(i), &mut events)
                .is_err(),
        );
        trades += events
            .iter()
            .filter(|e| matches!(e.event, matchbook::Event::Trade(_)))
            .count();
    }
    assert!(rejected * 100 < w.commands.len(), "rejected {rejected}");
    assert!(trades > 1_000, "trades {trades}");
}
