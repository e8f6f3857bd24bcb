//! The correctness check run before any speed is quoted: an engine and the reference book
//! replay the same script side by side and must agree, command by command, on the fills
//! (or, for an engine that does not list them, the lots taken) and on the best prices of
//! every book (with the sizes there on small scripts, and every 4,096 commands on large ones).
//! A divergence is shrunk to a small workload file that still shows it.

use super::{Fill, Outcome, Venue, open};
use crate::script::{Line, Op, OrderCounter, Script, Side, Target};

/// Where an engine first left the reference.
#[derive(Debug, Clone)]
pub struct Divergence {
    /// The command that diverged, as a workload line.
    pub line: String,
    /// What the engine did.
    pub got: String,
    /// What the reference did.
    pub want: String,
    /// A fill priced beyond its taker's limit, if that is what happened.
    pub through_limit: Option<Fill>,
    /// A workload file, as small as shrinking found, that still diverges.
    pub reproducer: String,
}

/// Replays `script` through `name` and the reference; `Err` at the first divergence, shrunk
/// to a small reproducer. Unknown names are an error too.
pub fn against_reference(name: &str, script: &Script) -> Result<(), Box<Divergence>> {
    against(name, "reference", script)
}

/// As [`against_reference`] with another engine as the baseline: the harness checks peers
/// against matchbook on workloads too large for the reference's linear search (matchbook
/// itself is checked against the reference by the tests).
pub fn against(name: &str, baseline: &str, script: &Script) -> Result<(), Box<Divergence>> {
    let Some(at) = first_divergence(name, baseline, script) else {
        return Ok(());
    };
    let mut prefix = script.clone();
    truncate(&mut prefix, at + 1);
    // Shrinking replays the prefix once per try: only small prefixes are shrunk, a large one
    // is reported as it is (the tests shrink divergences found on small workloads).
    let small = if at < 2_000 {
        shrink(name, baseline, prefix)
    } else {
        prefix
    };
    let lines: Vec<Line> = small.lines().copied().collect();
    let last = lines.len().saturating_sub(1);
    let mut venue = open(name, &small).ok_or_else(|| unknown(name))?;
    let mut reference = open(baseline, &small).ok_or_else(|| unknown(baseline))?;
    let (mut got, mut want) = (Outcome::default(), Outcome::default());
    let mut numbers = OrderCounter::default();
    for line in &lines {
        got.clear();
        want.clear();
        let number = numbers.number(line);
        venue.apply(line, number, &mut got, true);
        reference.apply(line, number, &mut want, true);
    }
    let tops = |v: &dyn Venue| (0..small.instruments).map(|k| v.top(k)).collect::<Vec<_>>();
    let through_limit = match lines.get(last).map(|l| l.op) {
        Some(Op::Place {
            price: Some(p),
            side,
            ..
        }) => got.fills.iter().copied().find(|f| match side {
            Side::Buy => f.price > p,
            Side::Sell => f.price < p,
        }),
        _ => None,
    };
    Err(Box::new(Divergence {
        line: lines.get(last).map(ToString::to_string).unwrap_or_default(),
        got: format!("{got:?}, tops {:?}", tops(venue.as_ref())),
        want: format!("{want:?}, tops {:?}", tops(reference.as_ref())),
        through_limit,
        reproducer: small.to_text(),
    }))
}

fn unknown(name: &str) -> Box<Divergence> {
    Box::new(Divergence {
        line: String::new(),
        got: format!("unknown engine {name}"),
        want: String::new(),
        through_limit: None,
        reproducer: String::new(),
    })
}

/// Index (over set-up and measured lines) of the first command where `name` and the
/// baseline disagree.
fn first_divergence(name: &str, baseline: &str, script: &Script) -> Option<usize> {
    let mut venue = open(name, script)?;
    let mut reference = open(baseline, script)?;
    let (mut got, mut want) = (Outcome::default(), Outcome::default());
    let total = script.setup.len() + script.measured.len();
    let mut numbers = OrderCounter::default();
    for (i, line) in script.lines().enumerate() {
        got.clear();
        want.clear();
        let number = numbers.number(line);
        venue.apply(line, number, &mut got, true);
        reference.apply(line, number, &mut want, true);
        let fills_differ = venue.reports_fills() && got.fills != want.fills;
        // Sizes at the touch cost some engines a walk of the whole book: on large scripts
        // they are compared every 4,096 commands and at the end, prices after every one.
        let sizes = total < 20_000 || i % 4_096 == 0 || i + 1 == total;
        let tops_differ = (0..script.instruments).any(|k| {
            if sizes {
                venue.top(k) != reference.top(k)
            } else {
                venue.best(k) != reference.best(k)
            }
        });
        if fills_differ || got.taken != want.taken || tops_differ {
            return Some(i);
        }
    }
    None
}

/// Keeps the first `n` lines (set-up first).
fn truncate(script: &mut Script, n: usize) {
    let setup = script.setup.len();
    script.measured.truncate(n.saturating_sub(setup));
    script.setup.truncate(n.min(setup));
}

/// Greedily drops lines (renumbering order references) while the script still diverges on
/// its last line, at most a few hundred tries.
fn shrink(name: &str, baseline: &str, mut script: Script) -> Script {
    let mut tries = 0;
    let mut i = script.setup.len() + script.measured.len();
    while i > 0 && tries < 400 {
        i -= 1;
        let total = script.setup.len() + script.measured.len();
        if i + 1 >= total {
            continue;
        }
        let Some(smaller) = without(&script, i) else {
            continue;
        };
        tries += 1;
        let n = smaller.setup.len() + smaller.measured.len();
        if first_divergence(name, baseline, &smaller) == Some(n - 1) {
            script = smaller;
        }
    }
    script
}

/// The script without line `i`, or `None` when a later line names the order it placed.
fn without(script: &Script, i: usize) -> Option<Script> {
    let lines: Vec<Line> = script.lines().copied().collect();
    let removed = lines[i];
    let number = match removed.op {
        Op::Place { .. } => Some(lines[..i].iter().map(|l| l.op.orders_placed()).sum()),
        _ => None,
    };
    let mut out = script.clone();
    out.setup.clear();
    out.measured.clear();
    let setup = script.setup.len();
    for (j, line) in lines.iter().enumerate() {
        if j == i {
            continue;
        }
        let mut line = *line;
        if let Some(k) = number {
            let renumber = |n: u32| -> Option<u32> {
                match n.cmp(&k) {
                    std::cmp::Ordering::Less => Some(n),
                    std::cmp::Ordering::Equal => None,
                    std::cmp::Ordering::Greater => Some(n - 1),
                }
            };
            match &mut line.op {
                Op::Cancel {
                    target: Target::Order(n),
                    ..
                }
                | Op::Move { order: n, .. } => *n = renumber(*n)?,
                _ => {}
            }
        }
        if j < setup {
            out.setup.push(line);
        } else {
            out.measured.push(line);
        }
    }
    Some(out)
}
