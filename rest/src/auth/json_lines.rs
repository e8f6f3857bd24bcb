//! The data directory's append-only files of JSON lines: the key file (one key record a
//! line) and the revoked keys' file (one digest a line). Adding to either is one append
//! and one fsync, whatever the number of lines the file holds. A file of an earlier
//! release (one JSON list) is read too and rewritten as lines. A last line cut short by a
//! crash after whole lines was never answered (an answer waits for the fsync): it is
//! dropped, and the file rewritten without it. Any other line that does not parse is
//! damage.

use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::auth::key_files::{KeyFileError, read_text, write_text_atomically};

/// The lines of the file at `path` (none when it does not exist), with the file left
/// ready for appends: rewritten as lines when it was a list or ended mid-line.
pub(crate) fn load<T: Serialize + DeserializeOwned>(path: &Path) -> Result<Vec<T>, KeyFileError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = read_text(path)?;
    let damaged = |source| KeyFileError::Format {
        path: path.to_owned(),
        source,
    };
    if text.trim_start().starts_with('[') {
        let records: Vec<T> = serde_json::from_str(&text).map_err(damaged)?;
        rewrite(path, &records)?;
        return Ok(records);
    }
    let (whole, torn) = match text.rfind('\n') {
        Some(end) => text.split_at(end + 1),
        None => ("", text.as_str()),
    };
    let mut records = (whole.lines())
        .filter(|line| !line.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<Vec<T>, _>>()
        .map_err(damaged)?;
    let tail = torn.trim();
    if !tail.is_empty() {
        // A line cut short begins as the whole ones do.
        let first = |line: &str| line.trim_start().chars().next();
        let begins_as_a_line = whole.lines().find_map(first) == first(tail);
        match serde_json::from_str(tail) {
            // Whole, only its newline missing (an edit by hand).
            Ok(record) => records.push(record),
            // Only an append after whole lines can have been cut short.
            Err(source) if records.is_empty() || !begins_as_a_line => {
                return Err(damaged(source));
            }
            Err(_) => tracing::warn!(
                file = %path.display(),
                "dropped a line cut short by a crash (never answered)"
            ),
        }
        rewrite(path, &records)?;
    }
    Ok(records)
}

/// Appends `added` to the file at `path` and syncs it. A file an earlier append left
/// mid-line is rewritten as `whole()` instead (everything it is to hold, `added` too). If
/// the append fails the file is cut back to where it was, as far as the failure allows.
pub(crate) fn append<T: Serialize>(
    path: &Path,
    added: &[T],
    whole: impl FnOnce() -> Vec<T>,
) -> Result<(), KeyFileError> {
    let failed = |source| KeyFileError::Io {
        path: path.to_owned(),
        source,
    };
    let created = !path.exists();
    let file = (std::fs::OpenOptions::new())
        .read(true)
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
        .map_err(failed)?;
    let length = file.metadata().map_err(failed)?.len();
    let mut last = [b'\n'];
    if length > 0 {
        file.read_exact_at(&mut last, length - 1).map_err(failed)?;
    }
    if last[0] != b'\n' {
        return rewrite(path, &whole());
    }
    let lines = lines_of(path, added)?;
    let written = (&file)
        .write_all(lines.as_bytes())
        .and_then(|()| file.sync_all());
    if let Err(source) = written {
        let _ = file.set_len(length);
        return Err(failed(source));
    }
    if created {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        let dir = std::fs::File::open(dir.unwrap_or(Path::new(".")));
        dir.and_then(|d| d.sync_all()).map_err(failed)?;
    }
    Ok(())
}

/// Writes the file at `path` as `records`, atomically.
pub(crate) fn rewrite<T: Serialize>(path: &Path, records: &[T]) -> Result<(), KeyFileError> {
    write_text_atomically(path, &lines_of(path, records)?)
}

/// `records` as the file's lines, each ended by a newline.
fn lines_of<T: Serialize>(path: &Path, records: &[T]) -> Result<String, KeyFileError> {
    let mut text = String::with_capacity(records.len() * 160);
    for record in records {
        let line = serde_json::to_string(record).map_err(|source| KeyFileError::Format {
            path: path.to_owned(),
            source,
        })?;
        text.push_str(&line);
        text.push('\n');
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;
    use crate::auth::keys::tests::scratch_dir;
    use crate::auth::keys::{KeyRecord, KeyStore, Scope};
    use matchbook::{AccountId, HolderId};

    fn scratch(name: &str) -> std::path::PathBuf {
        scratch_dir(&format!("key-file-{name}")).join("keys.json")
    }

    fn record(account: u32) -> KeyRecord {
        let (_, record) = KeyRecord::generate(HolderId(1), AccountId(account), vec![Scope::Trade])
            .expect("a key");
        record
    }

    /// A key issued was written by rewriting the whole file (every key, a temporary file,
    /// a rename): thousands of keys made each issue slower. It is appended now: the file
    /// (created for its owner alone) stays the same file, its earlier bytes untouched.
    #[test]
    fn a_key_issued_is_appended_to_the_file() {
        let file = scratch("append");
        let store = KeyStore::open(Some(file.clone())).expect("open");
        store.insert(record(1), true).expect("first");
        let mode = std::fs::metadata(&file).expect("metadata").mode() & 0o777;
        assert_eq!(mode, 0o600, "the owner's alone");
        let (before, inode) = (std::fs::read(&file).expect("read"), inode_of(&file));
        store.insert(record(2), true).expect("second");
        let after = std::fs::read(&file).expect("read");
        assert_eq!(inode_of(&file), inode, "the file was replaced");
        assert!(after.starts_with(&before) && after.len() > before.len());
        assert_eq!(load::<KeyRecord>(&file).expect("readable").len(), 2);
        let _ = std::fs::remove_dir_all(file.parent().expect("dir"));
    }

    fn inode_of(file: &Path) -> u64 {
        std::fs::metadata(file).expect("metadata").ino()
    }

    /// The list an earlier release wrote is read, and rewritten as lines so that later
    /// keys append to it.
    #[test]
    fn a_list_of_an_earlier_release_is_read_and_rewritten_as_lines() {
        let file = scratch("list");
        let listed = vec![record(1), record(2)];
        let text = serde_json::to_string_pretty(&listed).expect("json");
        std::fs::write(&file, text).expect("written");
        assert_eq!(load::<KeyRecord>(&file).expect("readable"), listed);
        let store = KeyStore::open(Some(file.clone())).expect("open");
        store.insert(record(3), true).expect("appended");
        let lines = std::fs::read_to_string(&file).expect("read");
        assert_eq!(lines.lines().count(), 3, "{lines}");
        assert_eq!(load::<KeyRecord>(&file).expect("readable")[..2], listed[..]);
        let _ = std::fs::remove_dir_all(file.parent().expect("dir"));
    }

    /// A last line cut short (a crash mid-append, before the answer) is dropped and the
    /// file repaired; a whole last line without its newline is kept; an append to a file
    /// left mid-line rewrites it whole. A damaged line before the last, or a file of one
    /// line cut short, is refused as damage.
    #[test]
    fn a_line_cut_short_is_dropped_and_a_damaged_one_refused() {
        let file = scratch("torn");
        let (kept, torn) = (record(1), record(2));
        let whole = serde_json::to_string(&kept).expect("json") + "\n";
        let cut = serde_json::to_string(&torn).expect("json");
        std::fs::write(&file, format!("{whole}{}", &cut[..20])).expect("written");
        assert_eq!(
            load::<KeyRecord>(&file).expect("readable"),
            vec![kept.clone()]
        );
        assert_eq!(std::fs::read_to_string(&file).expect("read"), whole);
        std::fs::write(&file, format!("{whole}{}", &cut[..20])).expect("written");
        append(&file, std::slice::from_ref(&torn), || {
            vec![kept.clone(), torn.clone()]
        })
        .expect("append");
        assert_eq!(
            load::<KeyRecord>(&file).expect("readable"),
            vec![kept.clone(), torn.clone()]
        );
        std::fs::write(&file, format!("{whole}{cut}")).expect("written");
        assert_eq!(
            load::<KeyRecord>(&file).expect("readable"),
            vec![kept.clone(), torn]
        );
        for damage in [format!("{}\n{whole}", &cut[..20]), cut[..20].to_owned()] {
            std::fs::write(&file, damage).expect("written");
            assert!(matches!(
                load::<KeyRecord>(&file),
                Err(KeyFileError::Format { .. })
            ));
        }
        let _ = std::fs::remove_dir_all(file.parent().expect("dir"));
    }

    /// A key file line nested 10,000 deep, read on a small stack: in a field of the record
    /// or as the whole line (listed or not) it is damage; in a field the record does not
    /// have it is skipped, as any unknown field is. Each line is read into the record's
    /// fixed shape, so the parser goes no deeper than that shape, and serde_json skips an
    /// unknown value in a loop, not by recursion (issue 69).
    #[test]
    fn lines_nested_deep_are_read_on_a_small_stack() {
        let file = scratch("nested");
        let whole = serde_json::to_string(&record(1)).expect("json");
        let bomb = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
        let lines = [
            (
                whole.replacen("\"scopes\":", &format!("\"scopes\":{bomb},\"x\":"), 1),
                None,
            ),
            (
                whole.replacen('{', &format!("{{\"unknown\":{bomb},"), 1),
                Some(2),
            ),
            (bomb.clone(), None),
            (format!("[{bomb}]"), None),
        ];
        for (line, records) in lines {
            std::fs::write(&file, format!("{whole}\n{line}\n")).expect("written");
            let path = file.clone();
            let read = std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || load::<KeyRecord>(&path).map(|records| records.len()))
                .expect("thread")
                .join()
                .expect("the reader returned");
            match records {
                Some(n) => assert_eq!(read.ok(), Some(n), "{}", &line[..40]),
                None => assert!(
                    matches!(read, Err(KeyFileError::Format { .. })),
                    "{}",
                    &line[..40]
                ),
            }
        }
        let _ = std::fs::remove_dir_all(file.parent().expect("dir"));
    }
}
