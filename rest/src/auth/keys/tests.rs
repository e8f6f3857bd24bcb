//! The key store: keys kept and found, files written, revocations made.

use super::*;

/// An empty directory of this process's for the test `name`, made afresh.
pub(crate) fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

#[test]
fn keys_survive_a_reopen_and_only_digests_are_written() {
    let dir = scratch_dir("keys");
    let file = dir.join("keys.json");
    let store = KeyStore::open(Some(file.clone())).expect("open");
    assert!(store.is_empty());
    let (key, _) = store
        .create(HolderId(1), AccountId(2), vec![Scope::Trade])
        .expect("create");
    assert!(store.authenticate(&key).is_some());
    assert!(store.authenticate("mb_wrong").is_none());
    let text = std::fs::read_to_string(&file).expect("written");
    assert!(!text.contains(&key), "the key text is never stored");
    let reopened = KeyStore::open(Some(file)).expect("reopen");
    let found = reopened.authenticate(&key).expect("still valid");
    assert_eq!((found.holder, found.account), (HolderId(1), AccountId(2)));
    assert!(found.has_any(&[Scope::Trade]));
    assert!(!found.has_any(&[Scope::Admin]));
    let _ = std::fs::remove_dir_all(dir);
}

/// A key whose file write failed was kept in memory anyway: the operator got an error
/// and never saw the key, yet its digest went into the file with the next key.
#[test]
fn a_key_the_file_could_not_take_is_not_kept() {
    let dir = scratch_dir("keys-failed");
    let file = dir.join("keys.json");
    let store = KeyStore::open(Some(file.clone())).expect("open");
    // A directory stands where the key file goes: the write fails.
    std::fs::create_dir(&file).expect("in the way");
    let refused = store.create(HolderId(1), AccountId(2), vec![Scope::Trade]);
    assert!(refused.is_err(), "{refused:?}");
    assert!(store.is_empty(), "nothing kept");
    std::fs::remove_dir(&file).expect("cleared");
    let (key, _) = store
        .create(HolderId(1), AccountId(3), vec![Scope::Trade])
        .expect("create");
    let written: Vec<KeyRecord> = json_lines::load(&file).expect("readable");
    assert_eq!(written.len(), 1, "only the key that was handed out");
    assert_eq!(written[0].digest, hex(&digest_of(&key)));
    let _ = std::fs::remove_dir_all(dir);
}

/// A revocation the revoked keys' file cannot take changes nothing: the key stays
/// valid, and the operator is told. Once that file takes it, the key is refused (also
/// when inserted again, and after a reopen), whether the key file can be rewritten
/// at the reopen or not.
#[test]
fn a_revocation_is_made_once_the_revoked_keys_file_takes_it() {
    let dir = scratch_dir("keys-revoke");
    let file = dir.join("keys.json");
    let store = KeyStore::open(Some(file.clone())).expect("open");
    let create = || (store.create(HolderId(1), AccountId(2), vec![Scope::Trade])).expect("key");
    let (key, record) = create();
    let digest = digest_of(&key);
    // A directory stands where the revoked keys' file goes: the append fails.
    std::fs::create_dir(file.with_file_name(REVOKED_KEYS)).expect("in the way");
    let refused = store.revoke(&digest);
    assert!(matches!(refused, Err(RevokeError::File(_))), "{refused:?}");
    let found = store.authenticate(&key).expect("still valid");
    assert!(!found.is_revoked() && !store.was_revoked(&key));
    std::fs::remove_dir(file.with_file_name(REVOKED_KEYS)).expect("cleared");
    let revoked = store.revoke(&digest).expect("revoked");
    assert!(revoked.key.is_revoked() && found.is_revoked() && !revoked.configured);
    assert!(store.authenticate(&key).is_none() && store.was_revoked(&key));
    assert!(matches!(store.revoke(&digest), Err(RevokeError::NotFound)));
    store.insert(record, true).expect("nothing to insert");
    assert!(
        store.authenticate(&key).is_none(),
        "a revoked key is not taken back"
    );
    // The key file cannot be rewritten at the reopen: the revocation stands all the same.
    let (other, _) = create();
    store.revoke(&digest_of(&other)).expect("revoked");
    std::fs::create_dir(file.with_file_name("keys.json.tmp")).expect("in the way");
    let reopened = KeyStore::open(Some(file.clone())).expect("reopen");
    let text = std::fs::read_to_string(&file).expect("key file");
    assert!(text.contains(&hex(&digest_of(&other))), "the file kept it");
    for gone in [&key, &other] {
        assert!(reopened.authenticate(gone).is_none() && reopened.was_revoked(gone));
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A revocation rewrote the whole key file and the whole revoked keys' file (every
/// record, a temporary file, fsync, rename): its time grew with the keys held. It is
/// one line appended to the revoked keys' file now; the key file is left as it was
/// and rewritten without the revoked keys at the next start.
#[test]
fn a_revocation_appends_one_line_and_leaves_the_key_file_alone() {
    use std::os::unix::fs::MetadataExt;
    let dir = scratch_dir("keys-append");
    let file = dir.join("keys.json");
    let revoked_file = dir.join(REVOKED_KEYS);
    let store = KeyStore::open(Some(file.clone())).expect("open");
    let keys: Vec<String> = (0..20)
        .map(|a| {
            (store.create(HolderId(1), AccountId(a), vec![Scope::Trade]))
                .expect("key")
                .0
        })
        .collect();
    let snapshot = |path: &Path| {
        let bytes = std::fs::read(path).expect("read");
        (bytes, std::fs::metadata(path).expect("metadata").ino())
    };
    store.revoke(&digest_of(&keys[3])).expect("revoked");
    let (key_file, revoked_first) = (snapshot(&file), snapshot(&revoked_file));
    store.revoke(&digest_of(&keys[7])).expect("revoked");
    assert_eq!(snapshot(&file), key_file, "the key file was written");
    let (bytes, inode) = snapshot(&revoked_file);
    assert_eq!(
        inode, revoked_first.1,
        "the revoked keys' file was replaced"
    );
    assert!(
        bytes.starts_with(&revoked_first.0),
        "its earlier lines were rewritten"
    );
    let added = String::from_utf8_lossy(&bytes[revoked_first.0.len()..]).into_owned();
    assert_eq!(added, format!("\"{}\"\n", hex(&digest_of(&keys[7]))));
    let reopened = KeyStore::open(Some(file.clone())).expect("reopen");
    for (k, key) in keys.iter().enumerate() {
        let gone = k == 3 || k == 7;
        assert_eq!(reopened.authenticate(key).is_none(), gone, "key {k}");
        assert_eq!(reopened.was_revoked(key), gone, "key {k}");
    }
    let lines = std::fs::read_to_string(&file)
        .expect("read")
        .lines()
        .count();
    assert_eq!(lines, 18, "the next start leaves the revoked keys out");
    let _ = std::fs::remove_dir_all(dir);
}

/// A poisoned lock made `insert` answer Ok and keep nothing: the operator was handed a
/// key that never authenticated (and `is_empty` said true, so a restart would issue
/// the demo keys again).
#[test]
fn a_poisoned_lock_still_keeps_and_finds_keys() {
    let store = Arc::new(KeyStore::open(None).expect("open"));
    let (first, _) = store
        .create(HolderId(1), AccountId(2), vec![Scope::Trade])
        .expect("create");
    let poisoner = store.clone();
    let poisoned = std::thread::spawn(move || {
        let _records = poisoner.records.write();
        let _keys = poisoner.keys.write();
        let _limits = poisoner.holder_limits.write();
        panic!("poison the locks");
    })
    .join();
    assert!(poisoned.is_err() && store.records.is_poisoned() && store.keys.is_poisoned());
    let (second, _) = store
        .create(HolderId(1), AccountId(3), vec![Scope::Trade])
        .expect("create");
    assert!(!store.is_empty());
    for key in [&first, &second] {
        assert!(store.authenticate(key).is_some(), "{key} authenticates");
    }
    let window = store.holder_window(HolderId(1));
    assert!(
        Arc::ptr_eq(&window, &store.holder_window(HolderId(1))),
        "one window"
    );
}
