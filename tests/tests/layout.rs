//! The shape of the engine crates, checked: the core depends on no crate that brings
//! threads, channels, files or an async runtime and names none of them in its sources, and
//! no source file of a stage crate grows past 600 lines.

#![warn(clippy::too_many_lines)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Crates whose presence in the core's dependency tree means it gained threads, queues,
/// I/O or an executor.
const FORBIDDEN_CRATES: &[&str] = &[
    "crossbeam",
    "tokio",
    "mio",
    "async-",
    "futures",
    "rayon",
    "parking_lot",
    "libc",
    "tempfile",
    "memmap",
];

/// Standard-library paths the core must not use: threads, channels, locks, files,
/// sockets, processes and the wall clock.
const FORBIDDEN_STD: &[&str] = &[
    "std::thread",
    "std::sync::mpsc",
    "std::sync::Mutex",
    "std::sync::RwLock",
    "std::fs",
    "std::net",
    "std::process",
    "std::time::Instant",
    "std::time::SystemTime",
    "std::env",
    "std::io::Write",
    "std::io::Read",
];

const MAX_LINES: usize = 600;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// The `.rs` files under `dir`, build output (`target`) and hidden directories left out.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name == "target" || name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source files of every stage crate (`engine/*/src`).
fn stage_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let engine = workspace().join("engine");
    for entry in std::fs::read_dir(&engine).expect("engine/") {
        let src = entry.expect("entry").path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    files
}

#[test]
fn the_core_depends_on_no_thread_queue_or_io_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(workspace())
        .args(["tree", "-p", "matchbook-core", "-e", "normal"])
        .args(["--prefix", "none", "--offline", "--color", "never"])
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).expect("utf-8");
    let names: Vec<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
    assert!(names.contains(&"matchbook-core"), "{tree}");
    assert!(
        names.contains(&"slab"),
        "the tree lists dependencies: {tree}"
    );
    for name in &names {
        // The one other crate of the project the core may use is the prefetch hint: no
        // stage, no dependency, one instruction the core cannot issue without `unsafe`.
        assert!(
            !name.starts_with("matchbook-")
                || ["matchbook-core", "matchbook-prefetch"].contains(name),
            "the core depends on another stage: {name}"
        );
        for forbidden in FORBIDDEN_CRATES {
            assert!(
                !name.starts_with(forbidden),
                "the core depends on {name}:\n{tree}"
            );
        }
    }
}

#[test]
fn the_core_sources_use_no_threads_files_or_clock() {
    let mut files = Vec::new();
    rust_files(&workspace().join("engine/core/src"), &mut files);
    assert!(files.len() > 10, "the core's sources were found");
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        for forbidden in FORBIDDEN_STD {
            assert!(
                !text.contains(forbidden),
                "{} uses {forbidden}",
                file.display()
            );
        }
    }
}

/// Every Rust file of the workspace, tests, benches, examples and fuzz targets included
/// (DESIGN section 5: files stay small and single-purpose).
#[test]
fn no_rust_file_is_longer_than_600_lines() {
    let mut files = Vec::new();
    for dir in [
        "engine",
        "config",
        "replica",
        "rest",
        "ffi",
        "python/src",
        "benches",
    ] {
        rust_files(&workspace().join(dir), &mut files);
    }
    for dir in ["tests/src", "tests/tests", "fuzz/fuzz_targets"] {
        rust_files(&workspace().join(dir), &mut files);
    }
    assert!(files.len() > 300, "the workspace's sources were found");
    assert!(
        stage_sources().iter().all(|f| files.contains(f)),
        "the stage crates' sources are among them"
    );
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(file)
                .expect("readable")
                .lines()
                .count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", file.display()))
        })
        .collect();
    assert!(long.is_empty(), "longer than {MAX_LINES} lines: {long:?}");
}
