//! The committed header is what cbindgen generates from the code: regenerate and compare
//! (`MATCHBOOK_BLESS=1` rewrites it after an intended change).

#![warn(clippy::too_many_lines)]

#[test]
fn committed_header_matches_the_code() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let config = cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).expect("config");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates")
        .write(&mut generated);
    let path = format!("{dir}/include/matchbook.h");
    if std::env::var_os("MATCHBOOK_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write header");
    }
    let committed = std::fs::read(&path).expect("committed header");
    assert!(
        committed == generated,
        "include/matchbook.h is stale: run MATCHBOOK_BLESS=1 cargo test -p matchbook-ffi --test header"
    );
}
