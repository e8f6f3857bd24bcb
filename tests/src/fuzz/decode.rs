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
/// (so the fuzzer reaches the decoders past the checksum). An engine the load check
/// accepts re-encodes stably and then runs commands (read from the same input) with every
/// invariant of `engine_commands` audited: the check must refuse whatever it cannot run.
pub fn snapshot_decode(data: &[u8]) {
    let reference = matchbook::Engine::new(matchbook::demo::config()).expect("demo config");
    if let Ok(snapshot) = Snapshot::from_bytes(data) {
        let _ = snapshot.engine(&reference);
        if let Ok(Some(market)) = snapshot.market(reference.instruments().len()) {
            query_everything(&market, snapshot.time);
        }
    }
    let mut input = Input::new(data);
    // The top bit of the split picks the format the engine bytes are read as: the legacy
    // decoder (format 6) stays under the fuzzer as long as it is shipped.
    let split = input.u16();
    let version = if split & 0x8000 == 0 {
        matchbook::snapshot::VERSION
    } else {
        matchbook::snapshot::LEGACY_VERSION
    };
    let split = usize::from(split & 0x7fff);
    let body = input.rest();
    let (engine, market) = body.split_at(split.min(body.len()));
    let framed = Snapshot {
        version,
        seq: 1,
        time: matchbook::Timestamp(0),
        engine: engine.to_vec(),
        market: market.to_vec(),
    };
    let read = Snapshot::from_bytes(&framed.to_bytes()).expect("a valid frame reads back");
    assert_eq!(read, framed);
    if let Ok(Some(market)) = read.market(reference.instruments().len()) {
        query_everything(&market, matchbook::Timestamp(0));
        query_everything(&market, matchbook::Timestamp(T_QUERY));
    }
    if let Ok(engine) = read.engine(&reference) {
        let once = matchbook::snapshot::encode_engine(&engine).expect("encode");
        let again = Snapshot {
            version: matchbook::snapshot::VERSION,
            engine: once.clone(),
            ..framed.clone()
        }
        .engine(&reference)
        .expect("a re-encoded engine passes the check again");
        let twice = matchbook::snapshot::encode_engine(&again).expect("encode");
        assert!(once == twice, "encoding is stable");
        super::commands::run_restored(engine, market);
    }
}

/// 2026-06-01 00:00 UTC: a query time inside the seeds' history.
const T_QUERY: i64 = 1_780_272_000_000_000_000;

/// Runs every market-data query on restored data: candles of each granularity with and
/// without a count back, tickers, and trade pages, none of which may panic.
fn query_everything(market: &matchbook::market::MarketData, now: matchbook::Timestamp) {
    use matchbook::market::period::GRANULARITIES;
    use matchbook::market::trades::TradeFilter;
    let day = 86_400_000_000_000;
    for i in 0..8u16 {
        let instrument = matchbook::InstrumentId(i);
        for &g in GRANULARITIES.iter() {
            let from = matchbook::Timestamp(now.0.saturating_sub(30 * day));
            let _ = market.candles(instrument, g, from, now, None);
            let _ = market.candles(instrument, g, from, now, Some(100));
        }
        let _ = market.ticker(instrument, now);
        let filter = TradeFilter {
            from: matchbook::Timestamp(now.0.saturating_sub(30 * day)),
            to: now,
            instruments: None,
            max_page_size: 100,
            cursor: None,
        };
        let _ = market.trades().instrument_page(instrument, &filter);
        let _ = market
            .trades()
            .account_page(matchbook::AccountId(u32::from(i)), &filter);
    }
}
