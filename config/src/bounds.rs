//! Bounds on outside text (request bodies, stream messages, exchange definitions), checked
//! before any parser reads it: its size, and how deep its JSON nests.
//!
//! A parser that recurses per level of nesting overflows its thread's stack on input
//! nested deep enough, and a decoder that starts a parser afresh per level escapes that
//! parser's own limit (the REST body reader did, until 2026-12: a 60 KB object nested
//! 10,000 deep aborted the server). [`check_json`] walks the bytes once in a loop, with no
//! recursion and no allocation, so every decoder of outside JSON can refuse such input
//! before it parses anything. TOML is bounded by its parser (see [`MAX_NESTING`]).

/// Deepest nesting of JSON arrays and objects accepted: `{}` nests one level,
/// `{"a": [1]}` two. No document the project reads nests more than five; serde_json's
/// own parser stops at 128, which a decoder that re-enters it per level escapes.
pub const MAX_NESTING: usize = 64;

/// Largest exchange definition (TOML or JSON text) read.
pub const MAX_DEFINITION_BYTES: usize = 16 << 20;

/// Why outside text was refused before it was parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BoundError {
    /// Arrays and objects nested deeper than the limit.
    #[error("nested deeper than {limit} levels")]
    TooDeep {
        /// The limit ([`MAX_NESTING`]).
        limit: usize,
    },
    /// More bytes than the limit.
    #[error("{len} bytes, more than the limit of {limit}")]
    TooLarge {
        /// The text's length.
        len: usize,
        /// The limit.
        limit: usize,
    },
}

/// Checks that `text` is at most `max_bytes` long and that its JSON arrays and objects
/// nest at most [`MAX_NESTING`] deep. Brackets inside strings do not count. The text need
/// not be valid JSON: this only bounds what the parser that follows is given.
pub fn check_json(text: &[u8], max_bytes: usize) -> Result<(), BoundError> {
    check_size(text.len(), max_bytes)?;
    if json_nesting_exceeds(text, MAX_NESTING) {
        return Err(BoundError::TooDeep { limit: MAX_NESTING });
    }
    Ok(())
}

/// Checks that a text of `len` bytes is at most `max_bytes` long.
pub fn check_size(len: usize, max_bytes: usize) -> Result<(), BoundError> {
    if len > max_bytes {
        return Err(BoundError::TooLarge {
            len,
            limit: max_bytes,
        });
    }
    Ok(())
}

/// Whether the arrays and objects of `text` nest deeper than `limit` anywhere: one pass,
/// stopping at the first level past it.
fn json_nesting_exceeds(text: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in text {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `depth` levels of `open`/`close` around `inner`, the way an attacker writes them.
    fn nested(depth: usize, open: &str, close: &str, inner: &str) -> String {
        format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
    }

    /// The reference: the depth serde_json reports for a valid document, measured by
    /// walking the parsed value (only used on documents under serde_json's own limit).
    fn parsed_depth(value: &serde_json::Value) -> usize {
        let mut deepest = 0;
        let mut pending = vec![(value, 0usize)];
        while let Some((value, above)) = pending.pop() {
            let children: Vec<&serde_json::Value> = match value {
                serde_json::Value::Array(items) => items.iter().collect(),
                serde_json::Value::Object(fields) => fields.values().collect(),
                _ => {
                    deepest = deepest.max(above);
                    continue;
                }
            };
            deepest = deepest.max(above + 1);
            pending.extend(children.into_iter().map(|c| (c, above + 1)));
        }
        deepest
    }

    #[test]
    fn the_bound_falls_between_its_level_and_the_next_for_objects_and_arrays() {
        for (open, close, inner) in [("[", "]", "1"), ("{\"a\":", "}", "1")] {
            let at = nested(MAX_NESTING, open, close, inner);
            let past = nested(MAX_NESTING + 1, open, close, inner);
            assert_eq!(check_json(at.as_bytes(), usize::MAX), Ok(()), "{open}");
            assert_eq!(
                check_json(past.as_bytes(), usize::MAX),
                Err(BoundError::TooDeep { limit: MAX_NESTING }),
                "{open}"
            );
        }
    }

    #[test]
    fn brackets_in_strings_and_escaped_quotes_do_not_count() {
        let brackets = format!("{{\"a\": \"{}\"}}", "[{".repeat(1000));
        assert_eq!(check_json(brackets.as_bytes(), usize::MAX), Ok(()));
        let escaped = format!("[\"\\\"{}\"]", "[".repeat(1000));
        assert_eq!(check_json(escaped.as_bytes(), usize::MAX), Ok(()));
        let closed = format!("[\"\\\\\"{}", "[".repeat(MAX_NESTING));
        assert!(
            check_json(closed.as_bytes(), usize::MAX).is_err(),
            "\\\\ ends"
        );
    }

    #[test]
    fn a_text_over_the_size_is_refused_with_both_figures() {
        assert_eq!(
            check_json(b"{}", 1),
            Err(BoundError::TooLarge { len: 2, limit: 1 })
        );
        assert_eq!(check_json(b"{}", 2), Ok(()));
    }

    fn document(depth: u32) -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<i32>().prop_map(serde_json::Value::from),
            "[\\[\\]{}\"\\\\a]{0,4}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(depth, 256, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z\\[{\"]{0,3}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Against the parsed document's own depth: the check passes exactly the
        /// documents nested at most the limit (shown here with the limit lowered).
        #[test]
        fn the_scan_measures_the_depth_the_parser_sees(doc in document(12), limit in 0usize..10) {
            let text = serde_json::to_vec(&doc).expect("serialises");
            prop_assert_eq!(json_nesting_exceeds(&text, limit), parsed_depth(&doc) > limit);
        }
    }
}
