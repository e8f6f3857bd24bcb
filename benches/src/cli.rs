//! `matchbook-bench generate` and `matchbook-bench run`: argument parsing and files; the
//! work is in [`crate::profiles`], [`crate::harness`] and [`crate::report`].

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use crate::harness::{self, Options};
use crate::script::Script;
use crate::{profiles, report, venues};

/// Engines `--engine all` runs (the reference is too slow for large books; it checks the
/// engines in the tests), ending with `null`, the harness's own cost.
pub const ALL: [&str; 8] = [
    "matchbook",
    "matchbook-balances",
    "floor",
    "rust-order-book",
    "lobster",
    "orderbook-rs",
    "matchcore",
    "null",
];

/// Pairs of `--flag value` after the subcommand.
pub fn flags(args: &[String]) -> Result<Vec<(&str, &str)>, String> {
    args.chunks(2)
        .map(|pair| match pair {
            [flag, value] if flag.starts_with("--") => Ok((flag.as_str(), value.as_str())),
            [flag, _] => Err(format!("expected a --flag, found {flag}")),
            [flag] => Err(format!("{flag} needs a value")),
            _ => Err("empty flag".into()),
        })
        .collect()
}

/// The words of a command line, as a tool's parser takes them (`std::env::args` past the
/// program's name), for the tools' tests.
pub fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

/// The number `value` of `flag`, or an error naming both.
pub fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{flag} takes a number, not {value}"))
}

/// `generate --profile P [--seed S] [--n N] --out FILE`.
pub fn generate(args: &[String]) -> Result<(), String> {
    let (mut profile, mut seed, mut n, mut out) = (None, 1u64, 1_000_000usize, None);
    for (flag, value) in flags(args)? {
        match flag {
            "--profile" => {
                profile = Some(profiles::by_name(value).ok_or_else(|| {
                    let names: Vec<&str> = profiles::PROFILES.iter().map(|p| p.name).collect();
                    format!("unknown profile {value}; one of {}", names.join(", "))
                })?);
            }
            "--seed" => seed = number(flag, value)?,
            "--n" => n = number(flag, value)?,
            "--out" => out = Some(PathBuf::from(value)),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let profile = profile.ok_or("--profile is required")?;
    let out = out.ok_or("--out is required")?;
    if n == 0 {
        return Err("--n takes at least 1 (commands measured)".into());
    }
    let script = profiles::generate(profile, seed, n);
    std::fs::write(&out, script.to_text())
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    eprintln!(
        "{}: {} set-up and {} measured commands ({} seed {seed})",
        out.display(),
        script.setup.len(),
        script.measured.len(),
        profile.name
    );
    Ok(())
}

/// The engines of `--engine`: `all`, or names separated by commas.
fn engine_names(value: &str) -> Result<Vec<&'static str>, String> {
    if value == "all" {
        return Ok(ALL.to_vec());
    }
    value
        .split(',')
        .map(|name| {
            (venues::NAMES.iter().copied().find(|n| *n == name)).ok_or_else(|| {
                format!(
                    "unknown engine {name}; one of {} or all",
                    venues::NAMES.join(", ")
                )
            })
        })
        .collect()
}

/// The workload file at `input`, parsed; refused when nothing in it is timed (that would
/// report a throughput of f64::MAX commands a second).
fn read_script(input: &Path) -> Result<Script, String> {
    let text = std::fs::read_to_string(input)
        .map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    let script = Script::parse(&text).map_err(|e| format!("{}: {e}", input.display()))?;
    if script.measured.is_empty() {
        return Err(format!(
            "{}: no measured commands (the `measure` section is empty)",
            input.display()
        ));
    }
    Ok(script)
}

/// `run --input FILE [--engine NAME|all] [--runs R] [--json FILE] [--plot FILE.png]`; the
/// plot defaults to the input's name with `.png`.
pub fn run(args: &[String], allocations: &dyn Fn() -> u64) -> Result<(), String> {
    let (mut input, mut engines, mut runs, mut json) = (None, ALL.to_vec(), 3usize, None);
    let mut plot: Option<PathBuf> = None;
    for (flag, value) in flags(args)? {
        match flag {
            "--input" => input = Some(PathBuf::from(value)),
            "--engine" => engines = engine_names(value)?,
            "--runs" => runs = number(flag, value)?,
            "--json" => json = Some(PathBuf::from(value)),
            "--plot" => plot = Some(PathBuf::from(value)),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let input: PathBuf = input.ok_or("--input is required")?;
    if runs == 0 {
        return Err("--runs takes at least 1".into());
    }
    let plot = plot.unwrap_or_else(|| input.with_extension("png"));
    let script = read_script(&input)?;
    if script.has_extended_orders() {
        engines.retain(|name| {
            let places = venues::open(name, &script).is_some_and(|v| v.places_extended_orders());
            if !places {
                eprintln!("{name}: skipped: the file has trigger, iceberg or contingent orders");
            }
            places
        });
    }
    let bar = indicatif::ProgressBar::new(0);
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let reports = harness::compare(
        &script,
        &Options {
            engines,
            runs,
            allocations,
            progress: &progress,
        },
    );
    bar.finish_and_clear();
    let timer = harness::timer_cost();
    print!("{}", report::table(&script.name, timer, &reports));
    std::fs::write(&plot, crate::plot::latency_png(&script.name, &reports))
        .map_err(|e| format!("cannot write {}: {e}", plot.display()))?;
    eprintln!("latency plot: {}", plot.display());
    if let Some(path) = json {
        let body = report::json(&script.name, script.measured.len(), timer, &reports);
        std::fs::write(&path, body).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workload of no measured command (`generate --n 0`) ran and reported a throughput
    /// of f64::MAX commands a second for every engine, and `--runs 0` ran once.
    #[test]
    fn nothing_to_measure_is_refused_not_reported() {
        let dir = std::env::temp_dir().join(format!("mb-bench-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("empty.txt");
        let path = file.to_str().expect("UTF-8 path");
        let generated = generate(&words(&format!(
            "--profile exchange-core --n 0 --out {path}"
        )));
        assert!(generated.is_err_and(|e| e.contains("--n")));
        let script = profiles::generate(profiles::by_name("exchange-core").expect("known"), 1, 0);
        std::fs::write(&file, script.to_text()).expect("written");
        let none = || 0;
        let ran = run(&words(&format!("--input {path} --engine floor")), &none);
        assert!(ran.is_err_and(|e| e.contains("no measured commands")));
        let ran = run(&words(&format!("--input {path} --runs 0")), &none);
        assert!(ran.is_err_and(|e| e.contains("--runs")));
        let _ = std::fs::remove_dir_all(dir);
    }
}
