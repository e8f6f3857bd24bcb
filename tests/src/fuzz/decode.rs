//! `journal_decode` and `snapshot_decode`: arbitrary bytes as a command payload, as a whole
//! journal file and as a snapshot file. Decoding refuses or succeeds, never panics; a
//! command that decodes encodes back to bytes that decode to the same command; a journal
//! that opens hands back records that are consecutive; a decoded state re-encodes stably.

use matchbook::journal::{Journal, MemoryStorage, SyncPolicy, codec};
use matchbook::snapshot::Snapshot;

use super::Input;

/// Decodes a command payload, a journal file and (without its framing checks) a snapshot
/// body from one input.
pub fn journal_decode(data: &[u8]) {
    if let Ok(command) = codec::decode(data) {
        let mut bytes = Vec::new();
        codec::encode(&command, &mut bytes);
        assert_eq!(
            codec::decode(&bytes).ok(),
            Some(command),
            "codec round trip"
        );
    }
    let storage = MemoryStorage::default();
    let mut file = matchbook::journal::MAGIC.to_vec();
    file.extend_from_slice(data);
    storage.set_durable(file);
    if let Ok((_, recovered)) = Journal::open(storage, SyncPolicy::Never) {
        for (i, entry) in recovered.entries.iter().enumerate() {
            assert_eq!(entry.seq, i as u64 + 1, "records are consecutive");
        }
    }
}

/// Reads an input as a snapshot file, and as the two state encodings inside a valid frame
/// (so the fuzzer reaches the decoders past the checksum).
pub fn snapshot_decode(data: &[u8]) {
    if let Ok(snapshot) = Snapshot::from_bytes(data) {
        let _ = snapshot.engine();
        let _ = snapshot.market();
    }
    let mut input = Input::new(data);
    let split = usize::from(input.u16());
    let body = input.rest();
    let (engine, market) = body.split_at(split.min(body.len()));
    let framed = Snapshot {
        seq: 1,
        time: matchbook::Timestamp(0),
        engine: engine.to_vec(),
        market: market.to_vec(),
    };
    let read = Snapshot::from_bytes(&framed.to_bytes()).expect("a valid frame reads back");
    assert_eq!(read, framed);
    if let Ok(engine) = read.engine() {
        // A decoded engine encodes to bytes that decode and encode to themselves. (It is
        // not used: a checksummed snapshot is the engine's own output, and a decodable but
        // inconsistent one, which only a writer of the data directory can make, is not
        // checked for consistency on load; see SECURITY.md.)
        let once = matchbook::snapshot::encode_engine(&engine).expect("encode");
        let again: matchbook::Engine = Snapshot {
            engine: once.clone(),
            ..framed.clone()
        }
        .engine()
        .expect("re-decode");
        let twice = matchbook::snapshot::encode_engine(&again).expect("encode");
        assert!(once == twice, "encoding is stable");
    }
    let _ = read.market();
}
