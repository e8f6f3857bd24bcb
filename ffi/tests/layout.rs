//! The C ABI's hygiene, checked against the committed header: every struct of the header
//! has Rust's size and field offsets (a C program generated from the header prints what
//! the C compiler lays out), every exported name carries the `mb_` prefix, and the library
//! reports the ABI version the header declares.

#![warn(clippy::too_many_lines)]

use std::collections::BTreeSet;
use std::mem::{offset_of, size_of};
use std::path::PathBuf;
use std::process::Command;

use matchbook_ffi::account_feed::MbAccountUpdate;
use matchbook_ffi::command::{MbCommand, MbResult};
use matchbook_ffi::config::{MbFuturesSpec, MbInstrumentSpec};
use matchbook_ffi::directory::{MbAccountInfo, MbInstrumentInfo};
use matchbook_ffi::durable::MbStoreOptions;
use matchbook_ffi::event::MbEvent;
use matchbook_ffi::history::{MbOrderRecord, MbTrade};
use matchbook_ffi::market_feed::MbMarketUpdate;
use matchbook_ffi::node::MbNodeOptions;
use matchbook_ffi::query::{
    MbBalance, MbBookOrder, MbCandle, MbLevel, MbOrder, MbPosition, MbTicker, MbTop,
};
use matchbook_ffi::runtime::MbRuntimeOptions;
use matchbook_ffi::types::{MbOrderRef, MbUuid};

/// `name size` and `name.field offset` lines of each struct, as the C program prints them.
macro_rules! layouts {
    ($($c:literal => $t:ty { $($f:ident),* $(,)? }),* $(,)?) => {{
        let mut lines = BTreeSet::new();
        $(
            lines.insert(format!("{} {}", $c, size_of::<$t>()));
            $( lines.insert(format!("{}.{} {}", $c, stringify!($f), offset_of!($t, $f))); )*
        )*
        lines
    }};
}

fn rust_layouts() -> BTreeSet<String> {
    layouts! {
        "mb_futures_spec" => MbFuturesSpec { price_collar_percentage, initial_margin_percentage,
            maintenance_margin_percentage, funding_cap, funding_clamp_threshold,
            funding_annual_interest_rate, funding_interval_minutes, contract_expiry_date },
        "mb_instrument_spec" => MbInstrumentSpec { code, base, quote, amount_precision,
            market_precision, min_size, min_price, max_price, kind, futures },
        "mb_order_ref" => MbOrderRef { id, slot },
        "mb_uuid" => MbUuid { bytes },
        "mb_command" => MbCommand { kind, account, other_account, holder, instrument, currency,
            side, order_type, time_in_force, stp, flag, price, trigger_price, amount,
            expire_at_ns, order, client_id, name, order_list, client_id_list, list_len,
            trigger_ref, trail_kind, trail, limit_offset, display, oco_order_type, oco_price,
            oco_trigger_price, oco_amount, take_profit, stop_loss, stop_limit },
        "mb_store_options" => MbStoreOptions { snapshot_every, keep_snapshots, fsync },
        "mb_market_update" => MbMarketUpdate { seq, book_sequence, trade, price, amount, orders,
            instrument, side, kind },
        "mb_node_options" => MbNodeOptions { store, queue_capacity, log_servers, node_name,
            lease_ms, checkpoint_every },
        "mb_result" => MbResult { order, account, holder, time_ns, linked },
        "mb_event" => MbEvent { seq, time_ns, kind, side, instrument, currency, account,
            maker_account, status, order, order_slot, maker_slot, maker_order, price, amount,
            fee, maker_fee, trade },
        "mb_balance" => MbBalance { currency, scale, available, locked },
        "mb_account_update" => MbAccountUpdate { seq, time_ns, kind, account, order, trade, fee,
            maker, reason, refusal, instrument, position_id, funding_rate, mark_price, payment,
            balance, moved, moves },
        "mb_order" => MbOrder { order, account, instrument, side, order_type, time_in_force,
            state, price, trigger_price, amount, filled, expire_at_ns, created_ns, updated_ns,
            client_id },
        "mb_top" => MbTop { bid, bid_amount, ask, ask_amount, sequence },
        "mb_level" => MbLevel { price, amount, orders },
        "mb_book_order" => MbBookOrder { order, account, price, amount },
        "mb_candle" => MbCandle { start_ns, end_ns, open, high, low, close, total_amount,
            volume },
        "mb_ticker" => MbTicker { open, high, low, last, base_volume, quote_volume, trades,
            bid, ask, sequence },
        "mb_position" => MbPosition { instrument, position_id, size, entry_price, mark_price,
            unrealised, realised, initial_margin, maintenance_margin, opened_ns },
        "mb_runtime_options" => MbRuntimeOptions { queue_capacity, manual_clock,
            start_time_ns, market_data_thread },
        "mb_account_info" => MbAccountInfo { account, holder, name, kind, closed, derisk },
        "mb_instrument_info" => MbInstrumentInfo { code, kind, base, quote, amount_precision,
            market_precision, state, min_size, min_price, max_price, is_future,
            initial_margin_percentage, maintenance_margin_percentage, funding_period_minutes,
            contract_expiry_date },
        "mb_order_record" => MbOrderRecord { order, account, instrument, side, order_type,
            time_in_force, status, reason, price, trigger_price, amount, filled, average_price,
            total_fee, created_ns, updated_ns, client_id },
        "mb_trade" => MbTrade { trade, time_ns, instrument, taker_side, price, amount,
            maker_order, maker_account, taker_order, taker_account, maker_fee, taker_fee },
    }
}

fn header() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include/matchbook.h");
    std::fs::read_to_string(path).expect("the committed header")
}

/// Each `typedef struct { ... } name;` of the header with its field names, in order.
fn header_structs(text: &str) -> Vec<(String, Vec<String>)> {
    let mut structs = Vec::new();
    for block in text.split("typedef struct {").skip(1) {
        let Some((body, rest)) = block.split_once('}') else {
            continue;
        };
        let name = rest.split(';').next().unwrap_or_default().trim().to_owned();
        let fields = body
            .lines()
            .map(str::trim)
            .filter(|l| l.ends_with(';') && !l.starts_with("//"))
            .filter_map(|l| {
                let declarator = l.trim_end_matches(';').split_whitespace().last()?;
                let field = declarator.split('[').next()?.trim_start_matches('*');
                Some(field.to_owned())
            })
            .collect();
        structs.push((name, fields));
    }
    structs
}

/// A C program that prints the C compiler's layout of every struct of the header.
fn layout_program(structs: &[(String, Vec<String>)]) -> String {
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include \"matchbook.h\"\nint main(void) {\n",
    );
    for (name, fields) in structs {
        c += &format!("    printf(\"{name} %zu\\n\", sizeof({name}));\n");
        for f in fields {
            c += &format!("    printf(\"{name}.{f} %zu\\n\", offsetof({name}, {f}));\n");
        }
    }
    c + "    return 0;\n}\n"
}

#[test]
fn every_struct_of_the_header_has_the_layout_rust_gives_it() {
    let structs = header_structs(&header());
    assert!(structs.len() >= 17, "{structs:?}");
    let dir = std::env::temp_dir().join(format!("mb-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let source = dir.join("layout.c");
    std::fs::write(&source, layout_program(&structs)).expect("write");
    let program = dir.join("layout");
    let include = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include");
    let built = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Werror", "-I"])
        .arg(include)
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .status()
        .expect("gcc runs");
    assert!(built.success(), "the layout program compiles");
    let run = Command::new(&program).output().expect("runs");
    let _ = std::fs::remove_dir_all(&dir);
    let c: BTreeSet<String> = String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let rust = rust_layouts();
    let only_c: Vec<_> = c.difference(&rust).collect();
    let only_rust: Vec<_> = rust.difference(&c).collect();
    assert!(
        only_c.is_empty() && only_rust.is_empty(),
        "C lays out {only_c:?}, Rust {only_rust:?}"
    );
}

#[test]
fn every_exported_name_carries_the_prefix() {
    let text = header();
    let mut names: Vec<String> = header_structs(&text).into_iter().map(|(n, _)| n).collect();
    for line in text.lines() {
        let comment = ["//", "/*", "*"]
            .iter()
            .any(|c| line.trim_start().starts_with(c));
        if comment || line.starts_with(' ') {
            continue;
        }
        let first = |rest: &str| rest.split_whitespace().next().map(str::to_owned);
        if let Some(rest) = line.strip_prefix("typedef struct ") {
            names.extend(first(rest).filter(|n| n != "{"));
        } else if let Some(rest) = line.strip_prefix("enum ") {
            names.extend(first(rest));
        } else if let Some(rest) = line.strip_prefix("#define ") {
            names.extend(first(rest));
        } else if let Some((head, _)) = line.split_once('(').filter(|_| !line.starts_with('#')) {
            let name = head.split_whitespace().last().unwrap_or_default();
            names.push(name.trim_start_matches('*').to_owned());
        }
    }
    let outside: Vec<_> = names
        .iter()
        .filter(|n| !(n.starts_with("mb_") || n.starts_with("MB_") || n.as_str() == "MATCHBOOK_H"))
        .collect();
    assert!(names.len() > 40, "{names:?}");
    assert!(
        outside.is_empty(),
        "names without the mb_ prefix: {outside:?}"
    );
}

#[test]
fn the_library_reports_the_abi_version_of_the_header() {
    let declared = header()
        .lines()
        .find_map(|l| l.strip_prefix("#define MB_ABI_VERSION "))
        .and_then(|v| v.trim().parse::<u32>().ok());
    assert_eq!(declared, Some(matchbook_ffi::diagnostics::mb_abi_version()));
}

#[test]
fn every_function_says_which_threads_may_call_it_and_who_owns_what() {
    let text = header();
    let lines: Vec<&str> = text.lines().collect();
    let mut checked = 0;
    let mut silent = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let declares = line.starts_with("mb_status mb_")
            || line.starts_with("void mb_")
            || line.starts_with("const ")
            || line.starts_with("uint32_t mb_")
            || line.starts_with("mb_command mb_")
            || line.starts_with("mb_store_options mb_")
            || line.starts_with("mb_node_options mb_");
        if !declares || !line.contains('(') {
            continue;
        }
        let comment: Vec<&str> = lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.starts_with("//") || l.starts_with("#if"))
            .copied()
            .collect();
        let says = |word: &str| comment.iter().any(|l| l.contains(word));
        checked += 1;
        if !(says("Threads:") && says("Ownership:")) {
            silent.push(line.to_string());
        }
    }
    assert!(checked > 90, "{checked} functions found");
    assert!(silent.is_empty(), "no Threads:/Ownership: for {silent:#?}");
}
