//! The C and C++ examples and the C defect checks (`tests/c/defects.c`), compiled against
//! the static library warning-free (`-Wall -Wextra -Werror`), run, their output checked;
//! then run under valgrind (when installed) with no errors and no definite leaks; and a C
//! program placing orders on a node, killed with SIGKILL and checked after reopening.

#![warn(clippy::too_many_lines)]

use std::path::PathBuf;
use std::process::Command;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn static_library() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        // The test profile reuses what `cargo test` already compiled (same output dir).
        .args([
            "build",
            "--quiet",
            "--profile",
            "test",
            "-p",
            "matchbook-ffi",
        ])
        .current_dir(workspace())
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the static library builds");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from);
    target.join("debug").join("libmatchbook_ffi.a")
}

/// Compiles one example against the static library, warning-free.
fn compile(compiler: &str, standard: &str, source: &str) -> PathBuf {
    let lib = static_library();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let stem = source
        .rsplit('/')
        .next()
        .unwrap_or(source)
        .replace('.', "-");
    let out = std::env::temp_dir().join(format!("mb-{stem}-{}", std::process::id()));
    let compiled = Command::new(compiler)
        .args([standard, "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(dir.join("include"))
        .arg(dir.join(source))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out)
        .status()
        .expect("the compiler runs");
    assert!(compiled.success(), "{source} compiles warning-free");
    out
}

/// Runs an example, checks each expected line is in its output, then runs it under
/// valgrind (when installed): no errors, no definite leaks.
fn run_and_check(program: &PathBuf, expected: &[&str]) {
    let run = Command::new(program).output().expect("runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for line in expected {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
    if Command::new("valgrind").arg("--version").output().is_ok() {
        let checked = Command::new("valgrind")
            .args([
                "--quiet",
                "--error-exitcode=3",
                "--leak-check=full",
                "--errors-for-leak-kinds=definite",
            ])
            .arg(program)
            .output()
            .expect("valgrind runs");
        assert!(
            checked.status.success(),
            "valgrind: {}",
            String::from_utf8_lossy(&checked.stderr)
        );
    }
    let _ = std::fs::remove_file(program);
}

#[test]
fn the_c_market_maker_runs_and_reports_what_the_engine_did() {
    let program = compile("gcc", "-std=c11", "examples/c/market_maker.c");
    // 0.04 BTC lifted at 60100.00: the taker pays 0.15% in BTC (0.00006), the maker
    // 0.1% of 2404 EUR; the rest of the ask (0.06) stays locked and on the book.
    run_and_check(
        &program,
        &[
            "poll into 1 slot: BUFFER_TOO_SMALL",
            "trade 1: 4000 lots at 6010000 ticks, taker fee 6000, maker fee 240400000",
            "cancel twice: ORDER_NOT_FOUND",
            "taker BTC available 0.03994000 locked 0",
            "maker EUR available 102401.59600000 BTC locked 0.06000000",
            "book: 0 bids, 1 asks; best ask 60100.00 x 0.06000",
            "ticker last 60100.00 trades 1",
            "taker positions 1: size 0.1000 entry 60000.0",
            "maker position size -0.1000",
            "requote: 3 submitted: OK OK OK",
            "requoted book: 1 bids, 1 asks; best bid 59950.00",
            "unknown currency: UNKNOWN_CURRENCY",
        ],
    );
}

#[test]
fn the_c_bracket_places_its_exits_and_the_stop_loss_fires() {
    let program = compile("gcc", "-std=c11", "examples/c/bracket.c");
    // The entry (order 2) buys 0.05 of its 0.10 and ends; its exits are orders 3 (take
    // profit, LIMIT = 0) and 4 (stop-loss, STOP_MARKET = 3), for the 0.04992 BTC the trader
    // holds (0.05 less the 0.15 % taker fee of 0.000075, in whole lots). A trade at
    // 58000.00 fires the stop-loss, which cancels the take-profit and sells into the bid.
    run_and_check(
        &program,
        &[
            "entry: 5000 lots at 6000000 (taker 2)",
            "entry: order 2 cancelled with 5000 lots left",
            "entry: exits 3 and 4 linked for entry 2",
            "exit 3: type 0, 4992 lots, price 6300000, trigger 0",
            "exit 4: type 3, 4992 lots, price 0, trigger 5800000",
            "fall: 1000 lots at 5800000 (taker 6)",
            "fall: order 4 fired at 5800000",
            "fall: order 3 cancelled with 4992 lots left",
            "fall: 4992 lots at 5800000 (taker 4)",
            "trader open orders: 0",
        ],
    );
}

#[test]
fn the_cpp_producers_share_one_engine_without_losing_an_order() {
    let program = compile("g++", "-std=c++17", "examples/cpp/multi_producer.cpp");
    // 4 x 200 bids, every second one cancelled: 400 rest, one per price level (prices
    // 50000.00 to 50007.99, the best 50007.98 as 799 was cancelled); the sweep of
    // 0.4 BTC fills each once; each buyer gets 100 x 0.001 BTC less the 0.1% maker fee.
    let mut expected: Vec<String> = (0..4)
        .map(|i| format!("producer {i}: placed 200, cancelled 100"))
        .collect();
    expected.push("open bids 400 on 400 levels, best 50007.98".into());
    expected.push("sold in 400 trades".into());
    expected.extend((0..4).map(|i| format!("buyer {i} BTC 0.09990000")));
    let lines: Vec<&str> = expected.iter().map(String::as_str).collect();
    run_and_check(&program, &lines);
}

#[test]
fn the_cpp_inspector_reads_everything_from_queries() {
    let program = compile("g++", "-std=c++17", "examples/cpp/inspect.cpp");
    // The taker lifted 0.01 at 60,100 and 0.005 at 60,200: 0.15% taker fee in BTC is
    // 0.0000225; the maker's 0.1% of 902 EUR is 0.902. Its 60,200 remainder and the 60,300
    // ask stay open; the taker's cancelled bid is the newest of its history.
    run_and_check(
        &program,
        &[
            "account 0 holder 0 main kind 0",
            "account 1 holder 0 hedge kind 2",
            "account 2 holder 1 main kind 0",
            "instruments 7 (2 futures); BTC_EUR SPOT min price 0.01",
            "maker open orders 2",
            "page 1: order 5 CANCELLED filled 0.00000 of 0.01000 in 0 trades",
            "page 2: order 4 FILLED_FULLY filled 0.01500 of 0.01500 in 2 trades",
            "fees collected BTC 0.00002250 EUR 0.90200000",
        ],
    );
}

#[test]
fn each_defect_the_c_abi_had_is_gone() {
    let program = compile("gcc", "-std=c11", "tests/c/defects.c");
    run_and_check(
        &program,
        &[
            "ok levels: sizes asked with NULL buffers report both",
            "ok levels: room for the bids only copies nothing",
            "ok levels: room for both copies both",
            "ok orders: room for the bids only copies nothing",
            "ok format: a buffer of the reported size fits",
            "ok last error: a buffer of the reported size fits",
            "ok status names: every code its own name",
            "ok status names: the enumerator's",
            "ok status wire code: REST's code, shared where REST shares it",
            "ok runtime: market data off is honoured",
            "ok time: an earlier time is refused and changes nothing",
            "ok candles: none for minutes after the engine's time",
            "ok candles: total_amount in lots, volume in quote at ticks x lots",
            "ok durable: a failed journal write is MB_STATUS_STORAGE",
            "ok durable: reads after a failed journal write are refused",
            "ok durable: the reopened directory has every acknowledged order",
            "ok nesting: every bomb is MB_STATUS_INVALID_CONFIG",
            "ok nesting: a JSON bomb's error names the bound",
            "ok nesting: a definition parses afterwards",
            "0 failures",
        ],
    );
}

#[test]
fn the_cpp_durable_node_fires_its_dead_man_switch_and_reopens() {
    let program = compile("g++", "-std=c++17", "examples/cpp/durable_node.cpp");
    // The bid is order 1 (the holder's deposit was the only command before it); the
    // switch cancels it 300 ms after it was armed, with nothing else submitted.
    run_and_check(
        &program,
        &[
            "placed order 1; open orders 1",
            "dead-man switch fired: order 1 cancelled with no other traffic after its 300 ms",
            "open orders 0",
            "reopened: open orders 0, trader is account 0",
        ],
    );
}

/// Kills (SIGKILL) a C program placing orders on a node once it has acknowledged
/// `at_least` of them, then has it reopen the directory and check every acknowledged
/// order is there.
#[test]
fn a_node_killed_mid_load_keeps_every_order_it_acknowledged() {
    let program = compile("gcc", "-std=c11", "tests/c/node_crash.c");
    let dir = std::env::temp_dir().join(format!("mb-node-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a directory");
    let (data, acks) = (dir.join("data"), dir.join("acks"));
    let mut load = Command::new(&program)
        .arg("load")
        .args([&data, &acks])
        .spawn()
        .expect("the load runs");
    let at_least = 1_500;
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let acknowledged =
        |path: &PathBuf| std::fs::read_to_string(path).map_or(0, |text| text.lines().count());
    while acknowledged(&acks) < at_least {
        assert!(
            load.try_wait().expect("the load's state").is_none(),
            "the load ended before it was killed"
        );
        assert!(
            std::time::Instant::now() < give_up,
            "no {at_least} acknowledgements in 120 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    load.kill().expect("SIGKILL");
    load.wait().expect("reaped");
    let checked = Command::new(&program)
        .arg("check")
        .args([&data, &acks])
        .output()
        .expect("the check runs");
    let stdout = String::from_utf8_lossy(&checked.stdout);
    assert!(
        checked.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(stdout.contains("acknowledged "), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(program);
}
