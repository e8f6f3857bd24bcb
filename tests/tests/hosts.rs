//! Every command of the engine reaches every host: a route of REST's OpenAPI documents, a
//! command kind of the C header, a method of Python's `Engine`, or a stated reason why
//! not. The list of commands is read from the core's `enum Command`, so a command added
//! there fails this test until each host issues it or says why it does not (the
//! checklist in `docs/hacking.md`).

#![warn(clippy::too_many_lines)]

use std::collections::BTreeSet;
use std::path::PathBuf;

/// How one host issues a command: where, or why it does not.
#[derive(Debug, Clone, Copy)]
enum Way {
    /// The route, the C command kind or the Python method.
    By(&'static str),
    /// Why this host does not issue it.
    Not(&'static str),
}

use Way::{By, Not};

/// Each command with its REST route (`METHOD path`), C kind (`MB_COMMAND_KIND_*` without
/// the prefix) and Python `Engine` method.
const HOSTS: &[(&str, Way, Way, Way)] = &[
    (
        "CreateHolder",
        By("post /admin/holders"),
        By("CREATE_HOLDER"),
        By("create_holder"),
    ),
    (
        "CreateSubaccount",
        By("post /admin/subaccounts"),
        By("CREATE_SUBACCOUNT"),
        By("create_subaccount"),
    ),
    (
        "CloseSubaccount",
        By("post /admin/accounts/{account_id}/close"),
        By("CLOSE_SUBACCOUNT"),
        By("close_subaccount"),
    ),
    (
        "Deposit",
        By("post /admin/deposits"),
        By("DEPOSIT"),
        By("deposit"),
    ),
    (
        "Withdraw",
        By("post /admin/withdrawals"),
        By("WITHDRAW"),
        By("withdraw"),
    ),
    (
        "SetDerisk",
        By("post /admin/derisk"),
        By("SET_DERISK"),
        By("set_derisk"),
    ),
    (
        "SetBlpThreshold",
        By("post /admin/blp-threshold"),
        By("SET_BLP_THRESHOLD"),
        By("set_blp_threshold"),
    ),
    (
        "Transfer",
        By("post /v1/subaccounts/transfers"),
        By("TRANSFER"),
        By("transfer"),
    ),
    (
        "SetStpMode",
        Not(
            "the REST spec has no self-trade prevention: its orders carry no STP mode and no route sets an account's",
        ),
        By("SET_STP_MODE"),
        By("set_stp_mode"),
    ),
    (
        "SetInstrumentState",
        By("post /admin/instruments/{instrument_code}/state"),
        By("SET_INSTRUMENT_STATE"),
        By("set_instrument_state"),
    ),
    (
        "PlaceOrder",
        By("post /v1/account/orders"),
        By("PLACE_ORDER"),
        By("place_order"),
    ),
    (
        "PlaceOco",
        By("post /v1/account/orders"),
        By("PLACE_OCO"),
        By("place_oco"),
    ),
    (
        "PlaceBracket",
        By("post /v1/account/orders"),
        By("PLACE_BRACKET"),
        By("place_bracket"),
    ),
    (
        "AmendOrder",
        By("put /v1/account/orders/{order_id}"),
        By("AMEND_ORDER"),
        By("amend_order"),
    ),
    (
        "CancelOrder",
        By("delete /v1/account/orders/{order_id}"),
        By("CANCEL_ORDER"),
        By("cancel_order"),
    ),
    (
        "CancelByClientId",
        By("delete /v1/account/orders/client/{client_id}"),
        By("CANCEL_BY_CLIENT_ID"),
        By("cancel_by_client_id"),
    ),
    (
        "CancelAll",
        By("delete /v1/account/orders"),
        By("CANCEL_ALL"),
        By("cancel_all"),
    ),
    (
        "SetIndexPrice",
        By("post /admin/index-price"),
        By("SET_INDEX_PRICE"),
        By("set_index_price"),
    ),
    (
        "Liquidate",
        By("post /admin/liquidate"),
        By("LIQUIDATE"),
        By("liquidate"),
    ),
    (
        "AdvanceTime",
        By("post /admin/time/advance"),
        By("ADVANCE_TIME"),
        By("advance_time"),
    ),
    (
        "SetCancelAllAfter",
        By("post /v1/account/orders/cancel-all-after"),
        By("SET_CANCEL_ALL_AFTER"),
        By("set_cancel_all_after"),
    ),
];

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(workspace().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The variants of `pub enum Command` in the core's source.
fn commands() -> BTreeSet<String> {
    let source = read("engine/core/src/command.rs");
    let body = source
        .split("pub enum Command {")
        .nth(1)
        .and_then(|rest| rest.split("\n}").next())
        .expect("the enum");
    (body.lines())
        .filter_map(|line| line.strip_prefix("    "))
        .filter(|line| line.starts_with(|c: char| c.is_ascii_uppercase()))
        .map(|line| {
            line.split(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or("")
                .to_owned()
        })
        .collect()
}

/// `METHOD path` of every operation both listeners document.
fn rest_operations() -> BTreeSet<String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let documents = runtime.block_on(async {
        let public = matchbook_rest::openapi::serve().await.0;
        let admin = matchbook_rest::openapi::serve_admin().await.0;
        [public, admin]
    });
    let mut operations = BTreeSet::new();
    for document in documents {
        let paths = document["paths"].as_object().cloned().unwrap_or_default();
        for (path, methods) in paths {
            for method in methods.as_object().into_iter().flat_map(|m| m.keys()) {
                operations.insert(format!("{method} {path}"));
            }
        }
    }
    operations
}

#[test]
fn every_command_reaches_rest_c_and_python_or_says_why_not() {
    let listed: BTreeSet<String> = HOSTS.iter().map(|(c, ..)| (*c).to_owned()).collect();
    assert_eq!(listed.len(), HOSTS.len(), "a command listed twice");
    assert_eq!(
        listed,
        commands(),
        "the commands of the core, each listed once"
    );
    let operations = rest_operations();
    let header = read("ffi/include/matchbook.h");
    let python = read("python/matchbook/__init__.py");
    for (command, rest, c, py) in HOSTS {
        match rest {
            By(operation) => assert!(
                operations.contains(*operation),
                "{command}: {operation} is not documented"
            ),
            Not(why) => assert!(why.len() > 20, "{command}: say why REST does not issue it"),
        }
        match c {
            By(kind) => {
                let constant = format!("MB_COMMAND_KIND_{kind} ");
                assert!(
                    header.contains(&constant),
                    "{command}: no {constant}in the header"
                );
            }
            Not(why) => assert!(why.len() > 20, "{command}: say why C does not issue it"),
        }
        match py {
            By(method) => {
                let def = format!("    def {method}(");
                assert!(python.contains(&def), "{command}: Engine has no {method}");
            }
            Not(why) => assert!(
                why.len() > 20,
                "{command}: say why Python does not issue it"
            ),
        }
    }
}
