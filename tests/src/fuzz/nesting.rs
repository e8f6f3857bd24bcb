//! A structured generator of deep nesting for the request and message harnesses: a few
//! input bytes name a depth (up to 65,535 levels), the bracket of each level, whether the
//! bomb sits at the top or in a field, what it wraps and where it is cut off, so the
//! fuzzer reaches nesting at every depth without having to grow an input byte by byte.

use super::Input;

/// Fields a bomb may sit in: request fields of every kind (scalar, list, object) and the
/// stream messages' own fields.
const FIELDS: [&str; 8] = [
    "amount",
    "price",
    "scopes",
    "oco_order",
    "order",
    "channels",
    "api_token",
    "type",
];

/// The nested text `input` describes, at most `max_bytes` long.
pub(crate) fn nested_text(input: &mut Input<'_>, max_bytes: usize) -> Vec<u8> {
    let depth = usize::from(input.u16());
    let brackets = input.u8();
    let placement = input.u8();
    let cut = usize::from(input.u16());
    let inner = input.chunk(64).to_vec();
    let mut text = Vec::with_capacity(max_bytes.min(depth * 6 + inner.len() + 32));
    if placement & 1 == 1 {
        let field = FIELDS[usize::from(placement >> 1) % FIELDS.len()];
        text.extend_from_slice(format!("{{\"type\": \"CREATE_ORDER\", \"{field}\": ").as_bytes());
    }
    // Bit i of `brackets` (cycling) picks an object or an array for level i.
    let object = |level: usize| brackets.rotate_right((level % 8) as u32) & 1 == 1;
    for level in 0..depth {
        text.extend_from_slice(if object(level) { b"{\"a\":" } else { b"[" });
    }
    text.extend_from_slice(&inner);
    for level in (0..depth).rev() {
        text.push(if object(level) { b'}' } else { b']' });
    }
    if placement & 1 == 1 {
        text.push(b'}');
    }
    // A cut of zero keeps the whole text; any other leaves it unbalanced at that point.
    if cut != 0 {
        text.truncate(cut);
    }
    text.truncate(max_bytes);
    text
}
