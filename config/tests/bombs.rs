//! Exchange definitions nested as an attacker writes them (127, 128, 129, 2,000 and 10,000
//! levels; objects and arrays; at the top and inside a field), and past the size bound:
//! each is refused with a `DefinitionError`, parsed on a thread with a small stack so a
//! parser that recursed per level would overflow it here rather than pass by luck.

use matchbook_config::bounds::{BoundError, MAX_DEFINITION_BYTES, MAX_NESTING};
use matchbook_config::{DefinitionError, Exchange};

const DEPTHS: [usize; 5] = [127, 128, 129, 2_000, 10_000];

/// A quarter of a tokio worker's stack: ample for the definition's own shape.
const SMALL_STACK: usize = 512 * 1024;

fn parsed_on_a_small_stack(
    text: String,
    read: fn(&str) -> Result<Exchange, DefinitionError>,
) -> Result<Exchange, DefinitionError> {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(move || read(&text))
        .expect("thread")
        .join()
        .expect("the parser returned instead of overflowing its stack")
}

fn nested(depth: usize, open: &str, close: &str, inner: &str) -> String {
    format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
}

#[test]
fn json_nested_past_the_bound_is_refused_unread_at_the_top_and_in_a_field() {
    for depth in DEPTHS {
        for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
            let bomb = nested(depth, open, close, "1");
            let in_field = format!("{{\"holders\": [{{\"name\": \"x\", \"accounts\": {bomb}}}]}}");
            for text in [bomb, in_field] {
                let refused = parsed_on_a_small_stack(text, Exchange::from_json);
                // The field adds three levels above the bomb.
                assert_eq!(
                    refused.err(),
                    Some(DefinitionError::Bound(BoundError::TooDeep {
                        limit: MAX_NESTING
                    })),
                    "{depth} levels of {open}"
                );
            }
        }
    }
}

#[test]
fn toml_nested_any_way_is_refused_by_its_parser() {
    for depth in DEPTHS {
        let forms = [
            format!("currencies = {}\n", nested(depth, "[", "]", "")),
            format!("max_open_orders = {}\n", nested(depth, "{a = ", "}", "1")),
            format!("{} = 1\n", vec!["a"; depth].join(".")),
            format!("[{}]\nb = 1\n", vec!["holders"; depth].join(".")),
            format!(
                "[[holders]]\nname = \"x\"\n[[holders.accounts]]\nname = \"m\"\ndeposits = {}\n",
                nested(depth, "{ EUR = ", "}", "\"1\"")
            ),
        ];
        for text in forms {
            let head: String = text.chars().take(40).collect();
            let refused = parsed_on_a_small_stack(text, Exchange::from_toml);
            assert!(
                matches!(refused, Err(DefinitionError::Syntax(_))),
                "{depth}: {head}"
            );
        }
    }
}

#[test]
fn a_definition_past_the_size_bound_is_refused_unread_in_either_format() {
    let padding = " ".repeat(MAX_DEFINITION_BYTES + 1);
    let too_large = Some(DefinitionError::Bound(BoundError::TooLarge {
        len: MAX_DEFINITION_BYTES + 1,
        limit: MAX_DEFINITION_BYTES,
    }));
    assert_eq!(Exchange::from_json(&padding).err(), too_large);
    assert_eq!(Exchange::from_toml(&padding).err(), too_large);
    // At the bound it is read (and here found empty: the demo definition).
    let at = format!("{{}}{}", " ".repeat(MAX_DEFINITION_BYTES - 2));
    assert!(Exchange::from_json(&at).is_ok());
}

#[test]
fn a_definition_nested_within_the_bound_still_reads() {
    let text = r#"{"holders": [{"name": "alice", "accounts": [{"name": "main",
        "deposits": {"EUR": "1000"}}]}]}"#;
    let exchange = parsed_on_a_small_stack(text.into(), Exchange::from_json).expect("reads");
    assert_eq!(exchange.holders[0].accounts[0].name, "main");
}
