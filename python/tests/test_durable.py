"""Durable engines: what was acknowledged before the engine went away is there after
``Engine.open`` recovers the directory (with and without snapshots), the recovered engine
goes on like one that never stopped, batches are journalled too, and a directory written
under another definition is refused with StorageError."""

from __future__ import annotations

import os
from decimal import Decimal
import shutil

import numpy as np
import pytest

import matchbook

from conftest import DEFINITION, START


def drive(engine: matchbook.Engine, start: int, stop: int) -> None:
    """A deterministic flow: maker quotes, taker crosses, cancels and a transfer."""
    maker, taker = engine.account("maker"), engine.account("taker")
    for i in range(start, stop):
        t = START + 1_000 + i * 1_000_000
        price = 60_000 + (i % 9 - 4) * 10
        try:
            if i % 4 == 0:
                engine.place_order(t, maker, "BTC_EUR", "BUY", "0.02", price)
            elif i % 4 == 1:
                engine.place_order(t, maker, "BTC_EUR", "SELL", "0.02", price + 50)
            elif i % 4 == 2:
                side = "BUY" if i // 4 % 2 else "SELL"
                engine.place_order(t, taker, "BTC_EUR", side, "0.01", price,
                                   time_in_force="IMMEDIATE_OR_CANCELLED")
            elif i % 8 == 7:
                engine.cancel_all(t, maker)
            else:
                engine.deposit(t, taker, "EUR", "1")
        except matchbook.MatchbookError:
            pass  # refusals are part of the flow; they are journalled like the rest


def test_a_reopened_engine_has_every_call_and_goes_on_like_one_that_never_stopped(tmp_path) -> None:
    reference = matchbook.Engine(DEFINITION, start_time=START)
    drive(reference, 0, 160)
    durable = matchbook.Engine.open(tmp_path, DEFINITION, start_time=START, snapshot_every=30)
    assert durable.data_dir == str(tmp_path)
    drive(durable, 0, 100)
    del durable  # no explicit snapshot or close: the journal holds everything
    snapshots = sorted(f for f in os.listdir(tmp_path) if f.endswith(".snap"))
    assert len(snapshots) == 2, snapshots
    reopened = matchbook.Engine.open(tmp_path, DEFINITION, start_time=START, snapshot_every=30)
    partial = matchbook.Engine(DEFINITION, start_time=START)
    drive(partial, 0, 100)
    assert reopened.state_hash() == partial.state_hash()
    assert reopened.trades().to_pandas().equals(partial.trades().to_pandas())
    drive(reopened, 100, 160)
    path = reopened.snapshot()
    assert os.path.exists(path)
    del reopened
    again = matchbook.Engine.open(tmp_path, DEFINITION, start_time=START)
    assert again.state_hash() == reference.state_hash()
    assert again.ticker("BTC_EUR") == reference.ticker("BTC_EUR")


def test_batches_are_journalled(tmp_path) -> None:
    def batch(engine: matchbook.Engine) -> None:
        n = 500
        rng = np.random.default_rng(3)
        maker, taker = engine.account("maker"), engine.account("taker")
        answers = engine.submit_orders(
            time=START + np.arange(n, dtype=np.int64) * 1_000,
            account=np.where(rng.integers(0, 2, n) == 0, maker, taker),
            instrument="BTC_EUR",
            side=rng.integers(0, 2, n),
            price=5_990_000 + rng.integers(0, 20_000, n),
            amount=np.full(n, 1_000),
        )
        assert (answers["status"] == 0).sum() > n // 2

    durable = matchbook.Engine.open(tmp_path, DEFINITION, start_time=START)
    batch(durable)
    live = durable.state_hash()
    del durable
    reference = matchbook.Engine(DEFINITION, start_time=START)
    batch(reference)
    assert live == reference.state_hash()
    assert matchbook.Engine.open(tmp_path, DEFINITION, start_time=START).state_hash() == live


def test_another_definition_or_start_is_refused(tmp_path) -> None:
    engine = matchbook.Engine.open(tmp_path, DEFINITION, start_time=START)
    drive(engine, 0, 10)
    del engine
    with pytest.raises(matchbook.StorageError) as raised:
        matchbook.Engine.open(tmp_path, DEFINITION, start_time=START + 1)
    assert raised.value.code == 9009
    assert "another configuration" in str(raised.value)
    with pytest.raises(matchbook.StorageError):
        matchbook.Engine.open(tmp_path, {"holders": []}, start_time=START)
    with pytest.raises(matchbook.InvalidArgument):
        matchbook.Engine.open(tmp_path / "other", DEFINITION, keep_snapshots=0)
    with pytest.raises(matchbook.InvalidArgument):
        matchbook.Engine(DEFINITION).snapshot()
    assert matchbook.Engine(DEFINITION).data_dir is None


def test_a_directory_a_live_engine_holds_is_refused_to_a_second_opener(tmp_path) -> None:
    first = matchbook.Engine.open(tmp_path, DEFINITION, start_time=START)
    drive(first, 0, 3)
    with pytest.raises(matchbook.StorageError) as raised:
        matchbook.Engine.open(tmp_path, DEFINITION, start_time=START)
    message = str(raised.value)
    assert "in use by another engine" in message
    assert str(tmp_path) in message and f"process {os.getpid()}" in message
    before = first.state_hash()
    del first
    reopened = matchbook.Engine.open(tmp_path, DEFINITION, start_time=START)
    assert reopened.state_hash() == before


def test_a_damaged_journal_is_refused_with_its_file(tmp_path) -> None:
    live, crashed = tmp_path / "live", tmp_path / "crashed"
    engine = matchbook.Engine.open(live, DEFINITION, start_time=START, snapshot_every=0)
    drive(engine, 0, 40)
    # A copy taken while the engine runs is what a crash leaves: the journal, no snapshot
    # (a closing engine would snapshot and drop the covered journal).
    shutil.copytree(live, crashed)
    del engine
    (segment,) = [f for f in os.listdir(crashed) if f.startswith("journal-")]
    data = bytearray((crashed / segment).read_bytes())
    data[40] ^= 0xFF  # inside the first record, with more records after it
    (crashed / segment).write_bytes(bytes(data))
    with pytest.raises(matchbook.StorageError) as raised:
        matchbook.Engine.open(crashed, DEFINITION, start_time=START)
    assert segment in str(raised.value)


def test_a_durable_engine_reads_its_own_calls_at_once(tmp_path) -> None:
    """Read-your-writes: a query right after a call sees it (by id, among open orders, in
    the locked balance and in history), because a call returns only once its command is
    journalled and applied; and a reopened engine still sees them all."""
    engine = matchbook.Engine.open(tmp_path, DEFINITION, start_time=START)
    maker = engine.account("maker")
    kept = []
    for i in range(40):
        t = START + 1_000 + i
        order = engine.place_order(t, maker, "BTC_EUR", "BUY", "0.01", str(50_000 + i))
        assert engine.order(maker, order)["amount"] == Decimal("0.01")
        ids = {o["handle"]: o["id"] for o in engine.open_orders(maker)}
        assert order in ids
        assert engine.balances(maker)["EUR"].locked > 0
        if i % 2:
            engine.cancel_order(t, maker, order)
            with pytest.raises(matchbook.MatchbookError):
                engine.order(maker, order)
            assert engine.order_history(maker, ids[order])["status"] == "CANCELLED"
        else:
            kept.append(order)
    del engine
    reopened = matchbook.Engine.open(tmp_path, DEFINITION, start_time=START)
    assert sorted(o["handle"] for o in reopened.open_orders(maker)) == sorted(kept)


# Run in a child process: the file-size limit that makes the journal write fail (as a full
# disk does) must not reach pytest's own files.
_FAILED_WRITE = r"""
import json, os, resource, signal, sys
import matchbook
sys.path.insert(0, sys.argv[2])
from conftest import DEFINITION, START

engine = matchbook.Engine.open(sys.argv[1], DEFINITION, start_time=START, fsync=False)
maker = engine.account("maker")
journal = os.path.join(sys.argv[1], "journal-00000000000000000001.log")
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(journal) + 2000, hard))
acknowledged, failed = 0, None
for i in range(150):
    try:
        engine.place_order(START + i, maker, "BTC_EUR", "BUY", "0.01", 50_000 - i)
        acknowledged += 1
    except matchbook.StorageError as e:
        failed = str(e)
        break
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
reads = {}
for name, read in [("open_orders", lambda: engine.open_orders(maker)),
                   ("balances", lambda: engine.balances(maker)),
                   ("book", lambda: engine.book("BTC_EUR")),
                   ("events", lambda: list(engine.events()))]:
    try:
        reads[name] = repr(read())[:80]
    except matchbook.StorageError:
        reads[name] = "StorageError"
print(json.dumps({"acknowledged": acknowledged, "failed": failed, "reads": reads}))
"""


def test_reads_after_a_failed_journal_write_are_refused(tmp_path) -> None:
    """A failed journal write raised StorageError, but reads of the handle then answered
    from memory holding the command the journal does not (the order showed as open, its
    funds locked); they raise StorageError too now, and the reopened directory has every
    order acknowledged before the failure."""
    import json
    import subprocess
    import sys

    here = os.path.dirname(__file__)
    child = subprocess.run([sys.executable, "-c", _FAILED_WRITE, str(tmp_path), here],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    outcome = json.loads(child.stdout)
    assert outcome["failed"] is not None and outcome["acknowledged"] > 0, outcome
    assert set(outcome["reads"].values()) == {"StorageError"}, outcome
    again = matchbook.Engine.open(str(tmp_path), DEFINITION, start_time=START, fsync=False)
    assert len(again.open_orders(again.account("maker"))) == outcome["acknowledged"]


def test_a_forked_child_cannot_write_its_parents_directory(tmp_path) -> None:
    """A child made by ``fork`` (multiprocessing's default here) shares the parent's open
    journal; both appended to it, interleaving their records, and the directory was then
    refused on every open ("sequence gap"): everything either had acknowledged was lost.
    The child's commands (and then its reads) are refused now, and the parent's all come
    back."""
    engine = matchbook.Engine.open(str(tmp_path), DEFINITION, start_time=START, fsync=False)
    maker = engine.account("maker")
    engine.place_order(START + 1, maker, "BTC_EUR", "BUY", "0.01", 50_000)
    child = os.fork()
    if child == 0:  # the child reports by its exit status and never returns to pytest
        try:
            engine.place_order(START + 2, maker, "BTC_EUR", "BUY", "0.01", 50_001)
            os._exit(1)
        except matchbook.StorageError as e:
            if "forked" not in str(e):
                os._exit(2)
        except BaseException:
            os._exit(3)
        try:  # its memory holds the refused order: nothing of it is shown either
            engine.open_orders(maker)
            os._exit(4)
        except matchbook.StorageError:
            os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child's command was not refused"
    engine.place_order(START + 3, maker, "BTC_EUR", "BUY", "0.01", 50_002)
    engine.close()
    again = matchbook.Engine.open(str(tmp_path), DEFINITION, start_time=START, fsync=False)
    prices = sorted(o["price"] for o in again.open_orders(maker))
    assert prices == [Decimal(50_000), Decimal(50_002)]
