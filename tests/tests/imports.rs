//! The REST adapter's modules import one another in one direction: no circle of imports
//! spans two files or more. A file's imports are the module paths it names (`crate::`,
//! `super::`, `self::` and its own submodules, grouped `use` lists included), outside its
//! unit tests; a path counts as an import of the deepest module it names.

#![warn(clippy::too_many_lines)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `rest/src` of this workspace.
fn rest_sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(|root| root.join("rest/src"))
        .expect("the workspace holds rest/src")
}

/// Every `.rs` file under `dir` but the binaries', with its module path.
fn modules(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    let entries = std::fs::read_dir(dir).expect("a readable directory");
    for entry in entries.map(|e| e.expect("an entry").path()) {
        if entry.is_dir() && !entry.ends_with("bin") {
            modules(&entry, root, out);
        } else if entry.extension().is_some_and(|e| e == "rs") {
            let relative = entry.strip_prefix(root).expect("under the root");
            let mut parts: Vec<String> = (relative.with_extension("").iter())
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            let text = std::fs::read_to_string(&entry).expect("a readable source");
            out.insert(parts.join("::"), without_tests(&text));
        }
    }
}

/// The source up to its unit-test module.
fn without_tests(text: &str) -> String {
    let cut = text.find("#[cfg(test)]").unwrap_or(text.len());
    text[..cut].to_owned()
}

/// Identifiers and the punctuation paths are made of, in order.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            let mut word = c.to_string();
            while let Some(&n) = chars.peek().filter(|n| n.is_alphanumeric() || **n == '_') {
                word.push(n);
                chars.next();
            }
            out.push(word);
        } else if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            out.push("::".into());
        } else if "{},;".contains(c) {
            out.push(c.to_string());
        } else if !c.is_whitespace() {
            out.push(" ".into());
        }
    }
    out
}

/// The paths a file names: `a::b::c` sequences, a grouped `a::{b, c::d}` as `a::b` and
/// `a::c::d` (one level of braces).
fn paths(tokens: &[String]) -> Vec<Vec<String>> {
    let word = |t: &String| t.chars().all(|c| c.is_alphanumeric() || c == '_');
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if !word(&tokens[i]) || (i > 0 && tokens[i - 1] == "::") {
            i += 1;
            continue;
        }
        let mut path = vec![tokens[i].clone()];
        while i + 2 < tokens.len() && tokens[i + 1] == "::" && word(&tokens[i + 2]) {
            path.push(tokens[i + 2].clone());
            i += 2;
        }
        if i + 2 < tokens.len() && tokens[i + 1] == "::" && tokens[i + 2] == "{" {
            let mut item = Vec::new();
            let mut j = i + 3;
            while j < tokens.len() && tokens[j] != "{" {
                match tokens[j].as_str() {
                    // `self` in a group names the module itself.
                    "," | "}" if item == ["self"] => {
                        out.push(path.clone());
                        item.clear();
                    }
                    "," | "}" if !item.is_empty() => {
                        out.push([path.clone(), std::mem::take(&mut item)].concat());
                    }
                    "::" => {}
                    t => item.push(t.to_owned()),
                }
                if tokens[j] == "}" {
                    break;
                }
                j += 1;
            }
        } else if path.len() > 1 {
            out.push(path);
        }
        i += 1;
    }
    out
}

/// The modules `module` imports.
fn imports(module: &str, text: &str, all: &BTreeMap<String, String>) -> BTreeSet<String> {
    let here: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
    let children: BTreeSet<String> = (tokens(text).windows(3))
        .filter(|w| w[0] == "mod" && w[2] == ";")
        .map(|w| w[1].clone())
        .collect();
    let mut found = BTreeSet::new();
    for path in paths(&tokens(text)) {
        let (base, rest): (Vec<&str>, &[String]) = match path[0].as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "super" => (here[..here.len().saturating_sub(1)].to_vec(), &path[1..]),
            "self" => (here.clone(), &path[1..]),
            first if children.contains(first) => (here.clone(), &path[..]),
            _ => continue,
        };
        let full: Vec<&str> = base
            .into_iter()
            .chain(rest.iter().map(String::as_str))
            .collect();
        let target = (1..=full.len())
            .rev()
            .map(|n| full[..n].join("::"))
            .find(|m| all.contains_key(m));
        if let Some(target) = target.filter(|t| t != module) {
            found.insert(target);
        }
    }
    found
}

/// Strongly connected components of more than one module.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Kosaraju: finish order on the graph, then components on the reversed one.
    fn visit(
        v: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        seen: &mut BTreeSet<String>,
        order: &mut Vec<String>,
    ) {
        if seen.insert(v.to_owned()) {
            for w in &edges[v] {
                visit(w, edges, seen, order);
            }
            order.push(v.to_owned());
        }
    }
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for v in edges.keys() {
        visit(v, edges, &mut seen, &mut order);
    }
    let mut reversed: BTreeMap<String, BTreeSet<String>> =
        edges.keys().map(|k| (k.clone(), BTreeSet::new())).collect();
    for (v, ws) in edges {
        for w in ws {
            reversed.entry(w.clone()).or_default().insert(v.clone());
        }
    }
    let mut assigned = BTreeSet::new();
    let mut out = Vec::new();
    for v in order.iter().rev() {
        let mut component = Vec::new();
        visit(v, &reversed, &mut assigned, &mut component);
        if component.len() > 1 {
            component.sort();
            out.push(component);
        }
    }
    out
}

#[test]
fn no_import_circle_spans_two_files() {
    let root = rest_sources();
    let mut all = BTreeMap::new();
    modules(&root, &root, &mut all);
    assert!(
        all.len() > 50,
        "{} modules found under {}",
        all.len(),
        root.display()
    );
    let edges: BTreeMap<String, BTreeSet<String>> = (all.iter())
        .map(|(m, text)| (m.clone(), imports(m, text, &all)))
        .collect();
    assert!(
        edges["ws::order_entry"].contains("entry::service"),
        "imports are read"
    );
    assert!(
        !(edges.iter())
            .any(|(m, to)| m.starts_with("ws") && to.iter().any(|t| t.starts_with("http"))),
        "no WebSocket module imports an HTTP one"
    );
    let found = circles(&edges);
    assert!(found.is_empty(), "import circles in rest/src: {found:?}");
}

#[test]
fn a_circle_is_found() {
    let edges: BTreeMap<String, BTreeSet<String>> =
        [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]
            .into_iter()
            .map(|(v, w)| (v.to_owned(), BTreeSet::from([w.to_owned()])))
            .collect();
    assert_eq!(
        circles(&edges),
        vec![vec!["a".to_owned(), "b".into(), "c".into()]]
    );
    let text = "use crate::x::{y, z::w,};\nuse crate::m::{self};\nuse super::q;\nmod kid;\nfn f() { kid::go(); crate::x::y::T::new(); }";
    let all: BTreeMap<String, String> = ["x", "x::y", "x::z", "m", "m::n", "m::n::kid", "m::q"]
        .into_iter()
        .map(|m| (m.to_owned(), String::new()))
        .collect();
    let found = imports("m::n", text, &all);
    let want: BTreeSet<String> = ["x::y", "x::z", "m::n::kid", "m::q", "m"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(found, want);
}
