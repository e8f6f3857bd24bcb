//! Reports of a comparison: a table for the terminal (throughput, latency percentiles,
//! allocations, each peer's ratio to matchbook) and the same figures as JSON for machines.

use std::fmt::Write as _;

use crate::harness::EngineReport;

/// Latency percentiles reported, as quantiles with their labels.
pub const PERCENTILES: [(f64, &str); 5] = [
    (0.50, "p50"),
    (0.90, "p90"),
    (0.99, "p99"),
    (0.999, "p99.9"),
    (0.9999, "p99.99"),
];

fn ns(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.0}"))
}

/// The terminal table, with the workload's name, the timer cost and each engine's gaps and
/// check result below it.
pub fn table(workload: &str, timer_ns: f64, reports: &[EngineReport]) -> String {
    let base = reports.iter().find(|r| r.name == "matchbook");
    let base_throughput = base.and_then(EngineReport::throughput);
    let base_p99 = base.and_then(|r| r.percentile(0.99));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "workload {workload}; latencies in ns include one timer pair ({timer_ns:.0} ns); medians over runs"
    );
    let _ = write!(out, "{:<20} {:>12}", "engine", "cmds/s");
    for (_, label) in PERCENTILES {
        let _ = write!(out, " {label:>8}");
    }
    let _ = writeln!(
        out,
        " {:>9} {:>9} {:>13} {:>13}",
        "max", "allocs", "mb/peer tput", "peer/mb p99"
    );
    for r in reports {
        let _ = write!(out, "{:<20}", r.name);
        if let Err(d) = &r.check {
            let _ = writeln!(out, " INCORRECT, not timed: diverged at `{}`", d.line);
            continue;
        }
        let _ = write!(out, " {:>12}", ns(r.throughput()));
        for (q, _) in PERCENTILES {
            let _ = write!(out, " {:>8}", ns(r.percentile(q)));
        }
        // The null engine is the harness's floor, not a peer.
        let peer = r.name != "null";
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 && peer => format!("{:.2}x", a / b),
            _ => "-".into(),
        };
        let _ = writeln!(
            out,
            " {:>9} {:>9} {:>13} {:>13}",
            r.max().map_or_else(|| "-".into(), |m| m.to_string()),
            allocations_cell(r.allocations()),
            ratio(base_throughput, r.throughput()),
            ratio(r.percentile(0.99), base_p99),
        );
    }
    let floor = reports
        .iter()
        .find(|r| r.name == "floor" && r.check.is_ok());
    if let (Some(floor), Some(base)) = (floor.and_then(EngineReport::throughput), base_throughput) {
        let _ = writeln!(
            out,
            "matchbook / floor (the bare-book limit): {:.2}x throughput",
            base / floor
        );
    }
    for r in reports {
        for gap in r.gaps {
            let _ = writeln!(out, "  {}: {} ({})", r.name, gap.feature, gap.handling);
        }
        if let Err(d) = &r.check {
            let _ = writeln!(
                out,
                "  {}: at `{}` it did {} where matchbook did {}",
                r.name, d.line, d.got, d.want
            );
        }
    }
    out
}

/// The same figures as JSON.
pub fn json(workload: &str, commands: usize, timer_ns: f64, reports: &[EngineReport]) -> String {
    let engines: Vec<serde_json::Value> = reports
        .iter()
        .map(|r| {
            let mut latency = serde_json::Map::new();
            for (q, label) in PERCENTILES {
                latency.insert(label.into(), r.percentile(q).into());
            }
            latency.insert("max".into(), r.max().into());
            serde_json::json!({
                "engine": r.name,
                "correct": r.check.is_ok(),
                "divergence": r.check.as_ref().err().map(|d| serde_json::json!({
                    "line": d.line, "engine": d.got, "matchbook": d.want,
                    "reproducer": d.reproducer,
                })),
                "gaps": r.gaps.iter().map(|g| serde_json::json!({
                    "feature": g.feature, "handling": g.handling,
                })).collect::<Vec<_>>(),
                "runs": r.runs.len(),
                "throughput_per_s": r.throughput(),
                "throughput_per_run": r.runs.iter().map(|x| x.throughput).collect::<Vec<_>>(),
                "latency_ns": latency,
                "allocations_per_command": r.allocations(),
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({
        "workload": workload,
        "measured_commands": commands,
        "timer_pair_ns": timer_ns,
        "engines": engines,
    }))
    .unwrap_or_default()
}

/// Allocations per command as a cell: exactly 0 as "0", a rare allocation never rounded
/// away (15 in a million commands once printed as 0.000).
fn allocations_cell(per_command: Option<f64>) -> String {
    match per_command {
        None => "-".into(),
        Some(0.0) => "0".into(),
        Some(v) if v < 0.001 => format!("{v:.1e}"),
        Some(v) => format!("{v:.3}"),
    }
}
