//! `mb_engine_submit_batch` against `mb_engine_submit` one command at a time: the same
//! commands (places that rest and trade, moves, cancels, refusals, a malformed command, a
//! time that goes back) on two engines built alike give the same status and result for
//! every command and the same state hash after every batch.

#![warn(clippy::too_many_lines)]
// Calling the C ABI from Rust needs `unsafe`, as a C caller would.
#![allow(unsafe_code)]

mod common;

use std::ptr::{null, null_mut};

use common::START;
use matchbook_ffi::batch::mb_engine_submit_batch;
use matchbook_ffi::constructors::*;
use matchbook_ffi::engine::*;
use matchbook_ffi::types::MbOrderRef;
use matchbook_ffi::{MbCommand, MbEngine, MbResult, MbStatus};

const MAKER: u32 = 0;
const TAKER: u32 = 1;

/// An engine of the shared definition, started at `START`.
fn engine() -> *mut MbEngine {
    common::engine_with(|_| {})
}

fn state_hash(engine: *const MbEngine) -> u64 {
    let mut hash = 0;
    // SAFETY: a live engine and a writable hash.
    assert_eq!(
        unsafe { mb_engine_state_hash(engine, &mut hash) },
        MbStatus::Ok
    );
    hash
}

/// A small deterministic sequence, so the mix is varied but the same every run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (self.0 >> 33) % n
    }
}

/// Buys of both holders and sells of the maker around one price, so some rest and some
/// trade; every tenth a malformed command (an unknown side).
fn places(btc_eur: u16, n: usize, rng: &mut Lcg) -> Vec<MbCommand> {
    (0..n)
        .map(|k| {
            let sell = rng.below(2) == 0;
            let account = if sell { MAKER } else { [MAKER, TAKER][k % 2] };
            let price = 5_000_000 + rng.below(40) as i64 * 100 - 2_000;
            let side = if k % 10 == 9 { 7 } else { u32::from(sell) };
            mb_cmd_place_limit(account, btc_eur, side, price, 1_000, 0)
        })
        .collect()
}

/// Moves and cancels of the orders `placed` named (refused for those no longer open).
fn moves_and_cancels(placed: &[(u32, MbOrderRef)], rng: &mut Lcg) -> Vec<MbCommand> {
    placed
        .iter()
        .map(|&(account, order)| match rng.below(3) {
            0 => mb_cmd_cancel(account, order),
            _ => mb_cmd_amend(account, order, 0, 5_000_000 + rng.below(40) as i64 * 100),
        })
        .collect()
}

/// Applies `commands` to `one` call by call and to `batched` in one batch; asserts they
/// agree command by command. Returns the results.
fn both(
    one: *mut MbEngine,
    batched: *mut MbEngine,
    times: &[i64],
    commands: &[MbCommand],
) -> Vec<(MbStatus, MbResult)> {
    let expected: Vec<(MbStatus, MbResult)> = (commands.iter().zip(times))
        .map(|(command, &time)| {
            let mut result = MbResult::default();
            // SAFETY: a live engine, a valid command and a writable result.
            let status = unsafe { mb_engine_submit(one, time, command, &mut result) };
            (status, result)
        })
        .collect();
    let n = commands.len();
    let mut results = vec![MbResult::default(); n];
    let mut statuses = vec![MbStatus::Panic; n];
    let mut submitted = usize::MAX;
    // SAFETY: arrays of `n` elements each, a writable count.
    let status = unsafe {
        mb_engine_submit_batch(
            batched,
            times.as_ptr(),
            commands.as_ptr(),
            n,
            results.as_mut_ptr(),
            statuses.as_mut_ptr(),
            &mut submitted,
        )
    };
    assert_eq!(status, MbStatus::Ok);
    assert_eq!(submitted, n);
    for (i, (status, result)) in expected.iter().enumerate() {
        assert_eq!(statuses[i], *status, "command {i}");
        assert_eq!(results[i], *result, "command {i}");
    }
    assert_eq!(state_hash(one), state_hash(batched));
    expected
}

#[test]
fn a_batch_answers_as_its_commands_one_by_one() {
    let (one, batched) = (engine(), engine());
    // SAFETY: a live engine; the reference data outlives the call.
    let btc_eur = unsafe {
        let refdata = mb_engine_refdata(one);
        let mut id = 0;
        let code = c"BTC_EUR";
        assert_eq!(
            matchbook_ffi::refdata::mb_refdata_instrument(refdata, code.as_ptr(), &mut id),
            MbStatus::Ok
        );
        id
    };
    let mut rng = Lcg(7);
    let placing = places(btc_eur, 300, &mut rng);
    let mut times: Vec<i64> = (0..placing.len() as i64).map(|k| START + k).collect();
    // One time that goes back: refused on its own, the batch goes on.
    times[150] = START - 1;
    let answers = both(one, batched, &times, &placing);
    let mut seen: Vec<MbStatus> = answers.iter().map(|a| a.0).collect();
    seen.dedup();
    assert!(seen.contains(&MbStatus::InvalidArgument), "{seen:?}");
    let placed: Vec<(u32, MbOrderRef)> = (answers.iter().zip(&placing))
        .filter(|(answer, _)| answer.0 == MbStatus::Ok)
        .map(|(answer, command)| (command.account, answer.1.order))
        .collect();
    assert!(placed.len() > 200, "most places were accepted");
    let later = moves_and_cancels(&placed, &mut rng);
    let times: Vec<i64> = (0..later.len() as i64).map(|k| START + 1_000 + k).collect();
    let answers = both(one, batched, &times, &later);
    assert!(
        answers.iter().any(|a| a.0 == MbStatus::OrderNotFound),
        "orders filled in the first batch are refused"
    );
    // SAFETY: handles made above, freed once.
    unsafe {
        mb_engine_free(one);
        mb_engine_free(batched);
    }
}

#[test]
fn a_batch_refuses_missing_arrays_and_takes_an_empty_one() {
    let engine = engine();
    let commands = [mb_cmd_advance_time()];
    let times = [START];
    let mut results = [MbResult::default()];
    let mut statuses = [MbStatus::Panic];
    let mut submitted = usize::MAX;
    // SAFETY: a live engine; NULL arrays are what is checked.
    unsafe {
        let missing = mb_engine_submit_batch(
            engine,
            times.as_ptr(),
            null(),
            1,
            results.as_mut_ptr(),
            statuses.as_mut_ptr(),
            &mut submitted,
        );
        assert_eq!(missing, MbStatus::NullArgument);
        assert_eq!(submitted, 0);
        let empty = mb_engine_submit_batch(
            engine,
            null(),
            null(),
            0,
            null_mut(),
            null_mut(),
            &mut submitted,
        );
        assert_eq!(empty, MbStatus::Ok);
        assert_eq!(submitted, 0);
        let one = mb_engine_submit_batch(
            engine,
            times.as_ptr(),
            commands.as_ptr(),
            1,
            results.as_mut_ptr(),
            statuses.as_mut_ptr(),
            &mut submitted,
        );
        assert_eq!(
            (one, statuses[0], submitted),
            (MbStatus::Ok, MbStatus::Ok, 1)
        );
        mb_engine_free(engine);
    }
}
