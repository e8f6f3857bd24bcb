//! The standard `Forwarded` header (RFC 7239), as a proxy in front of the exchange may
//! write it instead of `X-Forwarded-For`: one element per hop, each a list of `name=value`
//! pairs, of which `for` is the address the proxy was reached from (`for=192.0.2.43`,
//! `for="[2001:db8:cafe::17]:4711"`). Only the addresses are read here; which of them
//! to believe is `proxies`' business.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The `for` node of each element of one header value, from the last element (the
/// nearest hop) to the first; `None` for an element whose `for` is not an address
/// (`unknown`, an obfuscated name, missing or malformed), where a walk must stop.
pub(crate) fn nodes_from_the_right(value: &str) -> impl Iterator<Item = Option<IpAddr>> + '_ {
    split_outside_quotes(value, ',')
        .into_iter()
        .rev()
        .map(|element| for_node(element).and_then(node_address))
}

/// The value of an element's `for` pair (parameter names are case-insensitive), unquoted.
fn for_node(element: &str) -> Option<String> {
    split_outside_quotes(element, ';')
        .into_iter()
        .find_map(|pair| {
            let (name, value) = pair.split_once('=')?;
            name.trim()
                .eq_ignore_ascii_case("for")
                .then(|| unquote(value.trim()))?
        })
}

/// A token as it is, or a quoted string with its escapes undone; `None` for an
/// unterminated quote.
fn unquote(value: &str) -> Option<String> {
    let Some(inner) = value.strip_prefix('"') else {
        return Some(value.to_owned());
    };
    let mut text = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.push(chars.next()?),
            '"' => return chars.as_str().is_empty().then_some(text),
            c => text.push(c),
        }
    }
    None
}

/// The address of a node: `192.0.2.43`, `192.0.2.43:47011`, `[2001:db8::17]` or
/// `[2001:db8::17]:4711` (a bare IPv6 address is not a node: the brackets are required).
fn node_address(node: String) -> Option<IpAddr> {
    if let Some(rest) = node.strip_prefix('[') {
        let (address, after) = rest.split_once(']')?;
        let port_ok = after.is_empty() || after.strip_prefix(':').is_some_and(is_port);
        return port_ok
            .then(|| address.parse::<Ipv6Addr>().ok())?
            .map(|ip| IpAddr::V6(ip).to_canonical());
    }
    let (address, port) = match node.split_once(':') {
        Some((address, port)) => (address, Some(port)),
        None => (node.as_str(), None),
    };
    if !port.is_none_or(is_port) {
        return None;
    }
    address.parse::<Ipv4Addr>().ok().map(IpAddr::V4)
}

/// A port as RFC 7239 allows it: a number, or an obfuscated one (`_` and a name).
fn is_port(port: &str) -> bool {
    port.parse::<u16>().is_ok()
        || (port.starts_with('_') && port.len() > 1 && port.bytes().all(is_obfuscated_char))
}

fn is_obfuscated_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')
}

/// `text` split at `separator` wherever it is not inside a quoted string.
fn split_outside_quotes(text: &str, separator: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == separator && !quoted => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(value: &str) -> Vec<Option<IpAddr>> {
        nodes_from_the_right(value).collect()
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().expect("address"))
    }

    #[test]
    fn each_elements_for_address_is_read_from_the_right() {
        assert_eq!(
            nodes("for=192.0.2.60;proto=http;by=203.0.113.43, For=\"[2001:db8:cafe::17]:4711\""),
            vec![ip("2001:db8:cafe::17"), ip("192.0.2.60")]
        );
        assert_eq!(nodes("for=\"192.0.2.43:47011\""), vec![ip("192.0.2.43")]);
        assert_eq!(nodes(" for = \"[::ffff:10.1.2.3]\" "), vec![ip("10.1.2.3")]);
        assert_eq!(nodes("for=\"192.0.2.43:_port\""), vec![ip("192.0.2.43")]);
        assert_eq!(nodes("for=\"\\1\\92.0.2.43\""), vec![ip("192.0.2.43")]);
    }

    #[test]
    fn what_is_not_an_address_stops_the_walk_where_it_stands() {
        for value in [
            "for=unknown",
            "for=_hidden",
            "proto=https",
            "for=2001:db8::1",
            "for=\"[2001:db8::1\"",
            "for=\"192.0.2.43",
            "for=\"192.0.2.43\"x",
            "for=192.0.2.43:99999",
            "for=localhost",
            "",
        ] {
            assert_eq!(nodes(value), vec![None], "{value}");
        }
        assert_eq!(
            nodes("for=192.0.2.1, for=unknown, for=10.0.0.5"),
            vec![ip("10.0.0.5"), None, ip("192.0.2.1")]
        );
    }

    #[test]
    fn separators_inside_quotes_split_nothing() {
        assert_eq!(
            nodes("for=\"1.1.1.1, for=8.8.8.8\";by=x, for=203.0.113.7"),
            vec![ip("203.0.113.7"), None]
        );
    }
}
