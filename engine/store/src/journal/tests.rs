//! Journal tests: every command kind round-trips the codec; records survive a reopen; a
//! torn tail is cut off; a damaged record or a sequence gap elsewhere refuses recovery;
//! memory storage loses exactly what was not committed.

use super::*;
use matchbook_core::CancelScope;
use matchbook_core::InstrumentState;
use matchbook_core::account::AccountKind;
use matchbook_core::fixed::{Price, Qty};
use matchbook_core::{AccountId, CurrencyId, HolderId, InstrumentId, OrderRef, Uuid};
use matchbook_core::{NewOrder, Side, StpMode, TimeInForce};

fn every_command() -> Vec<Command> {
    let mut commands = account_commands();
    commands.extend(order_commands());
    commands.extend([
        Command::SetIndexPrice {
            instrument: InstrumentId(5),
            price: Price(600_000),
        },
        Command::Liquidate {
            account: AccountId(7),
        },
        Command::AdvanceTime,
    ]);
    commands
}

/// One command of each kind on holders, accounts, funds and instruments.
fn account_commands() -> Vec<Command> {
    let a = AccountId(7);
    vec![
        Command::CreateHolder,
        Command::CreateSubaccount {
            holder: HolderId(2),
            name: "bots ü".into(),
            kind: AccountKind::Blp,
        },
        Command::CloseSubaccount { account: a },
        Command::Deposit {
            account: a,
            currency: CurrencyId(3),
            amount: 5,
        },
        Command::Withdraw {
            account: a,
            currency: CurrencyId(1),
            amount: -1,
        },
        Command::SetDerisk {
            account: a,
            on: true,
        },
        Command::SetBlpThreshold {
            account: a,
            currency: CurrencyId(2),
            amount: 9,
        },
        Command::Transfer {
            holder: HolderId(1),
            source: a,
            destination: AccountId(8),
            currency: CurrencyId(0),
            amount: i64::MAX,
        },
        Command::SetStpMode {
            account: a,
            mode: StpMode::CancelBoth,
        },
        Command::SetInstrumentState {
            instrument: InstrumentId(4),
            state: InstrumentState::Closed,
        },
    ]
}

/// One command of each kind on orders (format 1's tags).
fn order_commands() -> Vec<Command> {
    let a = AccountId(7);
    let o = OrderRef { id: 99, slot: 3 };
    vec![
        Command::PlaceOrder(NewOrder {
            client_id: Some(Uuid(u128::MAX - 5)),
            stp: Some(StpMode::CancelOldest),
            expire_at: Some(Timestamp(-3)),
            trigger_price: Some(Price(11)),
            reduce_only: true,
            ..NewOrder::limit(a, InstrumentId(5), Side::Sell, Price(10), Qty(3))
                .with_tif(TimeInForce::GoodTillTime)
        }),
        Command::PlaceOrder(NewOrder {
            price: None,
            ..NewOrder::limit(a, InstrumentId(0), Side::Buy, Price(1), Qty(1))
        }),
        Command::AmendOrder {
            account: a,
            order: o,
            amount: Some(Qty(4)),
            price: None,
        },
        Command::CancelOrder {
            account: a,
            order: o,
        },
        Command::CancelByClientId {
            account: a,
            client_id: Uuid(42),
        },
        Command::CancelAll {
            account: a,
            scope: CancelScope::All,
        },
        Command::CancelAll {
            account: a,
            scope: CancelScope::Instrument(InstrumentId(2)),
        },
        Command::CancelAll {
            account: a,
            scope: CancelScope::Orders(vec![o, o]),
        },
        Command::CancelAll {
            account: a,
            scope: CancelScope::ClientIds(vec![Uuid(1)]),
        },
    ]
}

/// Orders with the extensions of tag 20 (not in the committed format-1 journal): each kind
/// of trail, a mark-price reference, a limit offset and an iceberg display; an OCO pair and
/// brackets (tags 21 and 22).
fn extended_orders() -> Vec<Command> {
    let a = AccountId(7);
    let limit = NewOrder::limit(a, InstrumentId(0), Side::Sell, Price(9), Qty(2));
    vec![
        Command::PlaceOco {
            first: limit,
            second: Box::new(NewOrder {
                order_type: matchbook_core::OrderType::StopMarket,
                price: None,
                trigger_price: Some(Price(5)),
                ..limit
            }),
        },
        Command::PlaceBracket {
            entry: NewOrder {
                display: Some(Qty(1)),
                ..limit
            },
            exits: matchbook_core::BracketExits {
                take_profit: Price(3),
                stop_loss: Price(12),
                stop_limit: Some(Price(13)),
            },
        },
        Command::PlaceBracket {
            entry: limit,
            exits: matchbook_core::BracketExits {
                take_profit: Price(3),
                stop_loss: Price(12),
                stop_limit: None,
            },
        },
        Command::PlaceOrder(NewOrder {
            order_type: matchbook_core::OrderType::TrailingStopLimit,
            price: None,
            trigger_ref: matchbook_core::TriggerRef::MarkPrice,
            trail: Some(matchbook_core::Trail::Bps(9_999)),
            limit_offset: Some(Price(0)),
            ..NewOrder::limit(a, InstrumentId(5), Side::Sell, Price(1), Qty(2))
        }),
        Command::PlaceOrder(NewOrder {
            order_type: matchbook_core::OrderType::TrailingStop,
            trail: Some(matchbook_core::Trail::Price(Price(i64::MAX))),
            ..NewOrder::limit(a, InstrumentId(0), Side::Buy, Price(1), Qty(1))
        }),
        Command::PlaceOrder(NewOrder {
            display: Some(Qty(i64::MIN)),
            ..NewOrder::limit(a, InstrumentId(0), Side::Buy, Price(1), Qty(1))
        }),
    ]
}

#[test]
fn every_command_round_trips_and_damage_is_refused() {
    for command in every_command().into_iter().chain(extended_orders()) {
        let mut bytes = Vec::new();
        codec::encode(&command, &mut bytes);
        assert_eq!(codec::decode(&bytes), Ok(command.clone()));
        assert!(
            codec::decode(&bytes[..bytes.len() - 1]).is_err(),
            "{command:?} cut short"
        );
        bytes.push(0);
        assert_eq!(codec::decode(&bytes), Err(codec::DecodeError::Trailing));
    }
    assert!(matches!(
        codec::decode(&[200]),
        Err(codec::DecodeError::Unknown(200, 0))
    ));
}

fn filled(storage: MemoryStorage, n: usize) -> Vec<Command> {
    let (mut j, recovered) = Journal::open(storage, SyncPolicy::EveryBatch).expect("open");
    assert!(recovered.entries.is_empty());
    let commands: Vec<Command> = every_command().into_iter().cycle().take(n).collect();
    for (i, c) in commands.iter().enumerate() {
        assert_eq!(
            j.append(Timestamp(i as i64 * 10), c).expect("append"),
            i as u64 + 1
        );
        if i % 3 == 2 {
            j.commit().expect("commit");
        }
    }
    j.commit().expect("commit");
    commands
}

#[test]
fn records_survive_a_reopen() {
    let storage = MemoryStorage::default();
    let commands = filled(storage.clone(), 50);
    let (mut j, recovered) =
        Journal::open(storage.clone(), SyncPolicy::EveryBatch).expect("reopen");
    assert_eq!(recovered.truncated, 0);
    let got: Vec<Command> = recovered
        .entries
        .iter()
        .map(|e| e.command.clone())
        .collect();
    assert_eq!(got, commands);
    assert_eq!(recovered.entries[49].seq, 50);
    assert_eq!(recovered.entries[49].time, Timestamp(490));
    assert_eq!(
        j.append(Timestamp(1_000), &Command::AdvanceTime)
            .expect("append"),
        51
    );
}

#[test]
fn a_torn_tail_is_cut_off_and_writing_goes_on() {
    let storage = MemoryStorage::default();
    filled(storage.clone(), 10);
    let bytes = storage.durable();
    for cut in 1..12 {
        storage.set_durable(bytes[..bytes.len() - cut].to_vec());
        let (mut j, recovered) =
            Journal::open(storage.clone(), SyncPolicy::EveryBatch).expect("torn tail");
        assert_eq!(recovered.entries.len(), 9, "cut {cut}");
        assert!(recovered.truncated > 0);
        assert_eq!(
            j.append(Timestamp(5), &Command::CreateHolder)
                .expect("append"),
            10
        );
        j.commit().expect("commit");
        let (_, again) = Journal::open(storage.clone(), SyncPolicy::EveryBatch).expect("reopen");
        assert_eq!(again.entries.len(), 10);
        assert_eq!(again.truncated, 0);
    }
}

#[test]
fn damage_before_the_tail_refuses_recovery_with_the_offset() {
    let storage = MemoryStorage::default();
    filled(storage.clone(), 10);
    let bytes = storage.durable();
    // Flip one bit in every byte position of the first record in turn.
    let first_len = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
    for i in 8..8 + 8 + first_len {
        let mut damaged = bytes.clone();
        damaged[i] ^= 0x10;
        storage.set_durable(damaged);
        match Journal::open(storage.clone(), SyncPolicy::EveryBatch) {
            Err(JournalError::Corrupt { offset, .. }) => assert_eq!(offset, 8, "byte {i}"),
            other => panic!(
                "byte {i}: expected corruption, got {:?}",
                other.map(|r| r.1)
            ),
        }
    }
    // A flip in the magic.
    let mut damaged = bytes.clone();
    damaged[0] ^= 1;
    storage.set_durable(damaged);
    assert!(matches!(
        Journal::open(storage.clone(), SyncPolicy::EveryBatch),
        Err(JournalError::Corrupt { offset: 0, .. })
    ));
}

#[test]
fn a_missing_record_is_a_sequence_gap() {
    let storage = MemoryStorage::default();
    filled(storage.clone(), 5);
    let bytes = storage.durable();
    let len_at =
        |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4")) as usize + 8;
    let second = 8 + len_at(8);
    let third = second + len_at(second);
    let mut gapped = bytes[..second].to_vec();
    gapped.extend_from_slice(&bytes[third..]);
    storage.set_durable(gapped);
    match Journal::open(storage, SyncPolicy::EveryBatch) {
        Err(JournalError::Corrupt { offset, reason, .. }) => {
            assert_eq!(offset, second as u64);
            assert!(reason.contains("sequence gap"), "{reason}");
        }
        other => panic!("expected a gap, got {:?}", other.map(|r| r.1)),
    }
}

#[test]
fn a_crash_loses_exactly_what_was_not_committed() {
    let storage = MemoryStorage::default();
    let (mut j, _) = Journal::open(storage.clone(), SyncPolicy::EveryBatch).expect("open");
    j.append(Timestamp(1), &Command::CreateHolder)
        .expect("append");
    j.commit().expect("commit");
    j.append(Timestamp(2), &Command::CreateHolder)
        .expect("append");
    storage.crash();
    let (_, recovered) = Journal::open(storage.clone(), SyncPolicy::EveryBatch).expect("reopen");
    assert_eq!(recovered.entries.len(), 1);
    // Without fsync, a committed batch is written but not durable.
    let storage = MemoryStorage::default();
    let (mut j, _) = Journal::open(storage.clone(), SyncPolicy::Never).expect("open");
    j.append(Timestamp(1), &Command::CreateHolder)
        .expect("append");
    j.commit().expect("commit");
    storage.crash();
    let (_, recovered) = Journal::open(storage, SyncPolicy::Never).expect("reopen");
    assert!(recovered.entries.is_empty());
}

/// The committed journal of format version 1: every command kind, one record each.
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/journal-v1.log");

/// Today's encoding of `every_command` at fixed times, as one committed batch.
fn golden_bytes() -> Vec<u8> {
    let storage = MemoryStorage::default();
    let (mut journal, _) = Journal::open(storage.clone(), SyncPolicy::EveryBatch).expect("open");
    for (i, command) in every_command().iter().enumerate() {
        journal
            .append(Timestamp(1_767_225_600_000_000_000 + i as i64), command)
            .expect("append");
    }
    journal.commit().expect("commit");
    storage.durable()
}

/// A format change is a deliberate act: the committed file still decodes to the same
/// commands, and today's encoder reproduces it byte for byte. After a deliberate change,
/// `MATCHBOOK_BLESS=1` writes a new file (and the version must have been bumped).
#[test]
fn the_committed_journal_decodes_and_is_reproduced_byte_for_byte() {
    let encoded = golden_bytes();
    if std::env::var_os("MATCHBOOK_BLESS").is_some() {
        std::fs::write(GOLDEN, &encoded).expect("bless");
    }
    let golden = std::fs::read(GOLDEN).expect("the committed journal");
    let storage = MemoryStorage::default();
    storage.set_durable(golden.clone());
    let (_, recovered) = Journal::open(storage, SyncPolicy::EveryBatch).expect("decodes");
    let commands: Vec<Command> = recovered.entries.into_iter().map(|e| e.command).collect();
    assert_eq!(commands, every_command());
    assert!(encoded == golden, "the encoder no longer writes format 1");
}

fn refusal(bytes: Vec<u8>) -> String {
    let storage = MemoryStorage::default();
    storage.set_durable(bytes);
    match Journal::open(storage, SyncPolicy::EveryBatch) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a journal of another format was read"),
    }
}

#[test]
fn another_format_version_is_refused_naming_both_versions() {
    // A record of version 2, intact: its checksum recomputed over the new version byte.
    let mut bytes = golden_bytes();
    let record = MAGIC.len();
    let len = u32::from_le_bytes(bytes[record..record + 4].try_into().expect("word")) as usize;
    let body = record + 8..record + 8 + len - 4;
    bytes[body.start] = 2;
    let crc = crc32c(&bytes[body.clone()]).to_le_bytes();
    bytes[body.end..body.end + 4].copy_from_slice(&crc);
    let message = refusal(bytes);
    assert!(
        message.contains("record version 2: this build reads version 1"),
        "{message}"
    );
    // A file of a later format.
    let mut bytes = golden_bytes();
    bytes[..MAGIC.len()].copy_from_slice(b"MBJRNL02");
    let message = refusal(bytes);
    assert!(
        message.contains("format MBJRNL02: this build reads MBJRNL01"),
        "{message}"
    );
}
