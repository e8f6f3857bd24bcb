//! What the slow commands of a workload are: each measured command timed alone (look-ahead
//! included, as the harness's latency pass times it), then the slowest 200 counted by kind,
//! how many took over 2, 4, 8 and 20 us, and the commands that trade grouped by how many
//! fills they made (median and p90 each), beside plain moves. A venue's fills are counted
//! in a first, untimed pass on a second instance, so the timed pass records nothing.
//!
//! Usage: `tail_commands FILE [VENUE]` (venue `matchbook` by default).

#![warn(clippy::too_many_lines)]

use std::collections::BTreeMap;

use matchbook_bench::harness;
use matchbook_bench::script::{Line, Op, Script, Tif};
use matchbook_bench::venues::Outcome;

fn main() {
    if let Err(message) = run() {
        eprintln!("tail_commands: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().ok_or("usage: tail_commands FILE [VENUE]")?;
    let name = args.get(1).map_or("matchbook", String::as_str);
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let script = Script::parse(&text).map_err(|e| format!("{path}: {e}"))?;
    let open = || harness::prepared(name, &script).ok_or(format!("unknown venue {name}"));
    let fills = {
        let (mut venue, mut numbers) = open()?;
        let mut out = Outcome::default();
        (script.measured.iter())
            .map(|line| {
                out.clear();
                venue.apply(line, numbers.number(line), &mut out, true);
                out.fills.len()
            })
            .collect::<Vec<usize>>()
    };
    let (mut venue, mut numbers) = open()?;
    let mut ns = Vec::with_capacity(script.measured.len());
    harness::time_each(venue.as_mut(), &script.measured, &mut numbers, |t| {
        ns.push(t)
    });
    report(&script.measured, &ns, &fills);
    Ok(())
}

fn kind(op: &Op) -> &'static str {
    match op {
        Op::Place { price: None, .. } => "market",
        Op::Place { tif: Tif::Ioc, .. } => "ioc",
        Op::Place { tif: Tif::Fok, .. } => "fok",
        Op::Place {
            tif: Tif::PostOnly, ..
        } => "post-only",
        Op::Place { .. } => "place",
        Op::PlaceWith { .. } => "extended",
        Op::Move { .. } => "move",
        Op::Cancel { .. } => "cancel",
        Op::Deposit { .. } => "deposit",
    }
}

/// (median, p90) of `v`, sorted in place.
fn median_p90(v: &mut [u64]) -> (u64, u64) {
    v.sort_unstable();
    (v[v.len() / 2], v[v.len() * 9 / 10])
}

fn report(lines: &[Line], ns: &[u64], fills: &[usize]) {
    let mut slowest: Vec<usize> = (0..ns.len()).collect();
    slowest.sort_by_key(|&i| std::cmp::Reverse(ns[i]));
    let top = slowest.len().min(200);
    let p9999 = slowest.get(ns.len() / 10_000).map_or(0, |&i| ns[i]);
    println!("commands {}, p99.99 {p9999} ns", ns.len());
    for limit in [2_000, 4_000, 8_000, 20_000] {
        let over = ns.iter().filter(|&&t| t > limit).count();
        println!("  over {:>2} us: {over}", limit / 1000);
    }
    let mut kinds: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for line in lines {
        kinds.entry(kind(&line.op)).or_default().1 += 1;
    }
    for &i in &slowest[..top] {
        kinds.entry(kind(&lines[i].op)).or_default().0 += 1;
    }
    println!("slowest {top} by kind (of all):");
    for (k, (slow, all)) in kinds {
        println!("  {k:>9}: {slow:>4} ({all})");
    }
    let mut by_fills: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    for (i, &f) in fills.iter().enumerate() {
        if f > 0 {
            by_fills.entry(f.min(16) / 4 * 4).or_default().push(ns[i]);
        }
    }
    println!("commands that trade, by fills: count, median / p90 ns");
    for (f, mut v) in by_fills {
        let (median, p90) = median_p90(&mut v);
        let label = match f {
            16 => "16+".to_owned(),
            0 => "1-3".to_owned(),
            _ => format!("{f}-{}", f + 3),
        };
        println!("  {label:>4}: {:>7}, {median} / {p90}", v.len());
    }
    let mut moves: Vec<u64> = (0..ns.len())
        .filter(|&i| kind(&lines[i].op) == "move" && fills[i] == 0)
        .map(|i| ns[i])
        .collect();
    if !moves.is_empty() {
        let (median, p90) = median_p90(&mut moves);
        println!(
            "moves that trade nothing: {}, {median} / {p90}",
            moves.len()
        );
    }
}
