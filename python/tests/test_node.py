"""The exchange node from Python: every acknowledged command survives a SIGKILL, a
dead-man switch fires with no other traffic, threads share one node, a directory of
another definition or in use is refused, the market feed rebuilds the book it shows and
the account feed the open orders and balances, and the example runs."""

from __future__ import annotations

import random
import runpy
import signal
import subprocess
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path

import pytest

import matchbook
from matchbook.errors import StorageError

DEFINITION = {
    "max_open_orders": 1_000_000,
    "holders": [
        {"name": "alice", "accounts": [{"name": "main", "deposits": {"EUR": "1000000000"}}]},
    ],
}

# Places bids forever on a node in DIR, appending each acknowledged order's handle to ACKS.
LOAD = """
import sys
import matchbook
definition = {definition!r}
node = matchbook.Node.open(sys.argv[1], definition, snapshot_every=300)
alice = node.account("alice")
with open(sys.argv[2], "a") as acks:
    i = 0
    while True:
        handle = node.place_order(alice, "BTC_EUR", "BUY", "0.01", f"{{50000 + i % 100000 / 100:.2f}}")
        acks.write(f"{{handle}}\\n")
        acks.flush()
        i += 1
"""


def acknowledged(path: Path) -> list[int]:
    if not path.exists():
        return []
    # The last line may be cut off by the kill: only whole lines count.
    return [int(line) for line in path.read_text().split("\n")[:-1]]


def test_a_node_killed_mid_load_keeps_every_acknowledged_order(tmp_path: Path) -> None:
    data, acks = tmp_path / "data", tmp_path / "acks"
    load = subprocess.Popen([sys.executable, "-c", LOAD.format(definition=DEFINITION),
                             str(data), str(acks)], stderr=subprocess.PIPE)
    give_up = time.monotonic() + 120
    while len(acknowledged(acks)) < 1_000:
        assert load.poll() is None, load.stderr.read().decode() if load.stderr else ""
        assert time.monotonic() < give_up, "no 1,000 acknowledgements in 120 s"
        time.sleep(0.02)
    load.send_signal(signal.SIGKILL)
    load.wait()
    handles = acknowledged(acks)
    with matchbook.Node.open(data, DEFINITION) as node:
        open_handles = {o["handle"] for o in node.open_orders(node.account("alice"))}
    missing = [h for h in handles if h not in open_handles]
    assert not missing, f"{len(missing)} of {len(handles)} acknowledged orders lost"
    # At most the order in flight when it was killed was journalled without its line.
    assert len(open_handles) - len(handles) in (0, 1)


def test_a_dead_man_switch_fires_with_no_other_traffic(tmp_path: Path) -> None:
    with matchbook.Node.open(tmp_path, DEFINITION) as node:
        alice = node.account("alice")
        order = node.place_order(alice, "BTC_EUR", "BUY", "0.01", "50000")
        events = node.events(timeout=0.05)
        next(events)
        node.set_cancel_all_after(alice, 200_000_000)
        give_up = time.monotonic() + 20
        reason = None
        for batch in events:
            reason = next((e["reason"] for e in batch
                           if e["type"] == "OrderCancelled" and e["order"] == order), None)
            if reason or time.monotonic() > give_up:
                break
        assert reason == "CancelAllAfter"
        assert node.open_orders(alice) == []


def test_threads_share_one_node(tmp_path: Path) -> None:
    with matchbook.Node.open(tmp_path, DEFINITION, fsync=False) as node:
        alice = node.account("alice")

        def place(first: int) -> None:
            for i in range(50):
                node.place_order(alice, "BTC_EUR", "BUY", "0.01", f"{50000 + first + i}")

        threads = [threading.Thread(target=place, args=(k * 100,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(node.open_orders(alice)) == 200
        assert node.balances(alice)["EUR"].locked > 0


def test_reopening_keeps_the_state_and_refuses_another_definition(tmp_path: Path) -> None:
    with matchbook.Node.open(tmp_path, DEFINITION) as node:
        alice = node.account("alice")
        node.deposit(alice, "EUR", "5")
        bid = node.place_order(alice, "BTC_EUR", "BUY", "0.01", "50000")
        node.amend_order(alice, bid, amount="0.005", price="49000")
        [amended] = node.open_orders(alice)
        assert (amended["amount"], amended["price"]) == (Decimal("0.005"), Decimal("49000"))
        node.cancel_order(alice, bid)
        with pytest.raises(matchbook.OrderNotFound):
            node.amend_order(alice, bid, amount="0.001")
        before = node.state_hash()
    with matchbook.Node.open(tmp_path, DEFINITION) as node:
        assert node.state_hash() == before
        assert node.balances(alice)["EUR"].available == 1_000_000_005
        with pytest.raises(StorageError):
            matchbook.Node.open(tmp_path, DEFINITION)
    other = {**DEFINITION, "max_open_orders": 7}
    with pytest.raises(StorageError):
        matchbook.Node.open(tmp_path, other)


def test_bad_input_raises_and_a_closed_node_refuses(tmp_path: Path) -> None:
    node = matchbook.Node.open(tmp_path, DEFINITION)
    alice = node.account("alice")
    with pytest.raises(matchbook.InvalidArgument):
        node.place_order(alice, "BTC_EUR", "BUY", "a lot", "50000")
    with pytest.raises(matchbook.UnknownReference):
        node.place_order(alice, "NOPE", "BUY", "0.01", "50000")
    with pytest.raises(matchbook.InvalidArgument):
        node.account("nobody")
    node.close()
    node.close()
    with pytest.raises(matchbook.InvalidArgument):
        node.open_orders(alice)


def test_the_durable_node_example_runs(capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    example = Path(__file__).resolve().parents[1] / "examples" / "durable_node.py"
    monkeypatch.setattr(sys, "argv", ["durable_node.py"])
    runpy.run_path(str(example))["main"]()
    out = capsys.readouterr().out
    assert "placed a bid; open orders 1" in out
    assert "dead-man switch fired: CancelAllAfter after its 300 ms, with no other traffic" in out
    assert "reopened: open orders 0, EUR locked 0" in out


def apply(book: dict[tuple[str, Decimal], tuple[Decimal, int]], sequences: dict[str, int],
          message: dict) -> None:
    """One market-feed message applied to a copy of the books."""
    code = message["instrument"]
    if message["type"] == "snapshot":
        for key in [k for k in book if k[0] == code]:
            del book[key]
        for side, levels in (("BUY", message["bids"]), ("SELL", message["asks"])):
            for price, amount, orders in levels:
                book[(code, side, price)] = (amount, orders)
        sequences[code] = message["sequence"]
    elif message["type"] == "book":
        assert message["sequence"] == sequences[code] + 1, "no gap, no repeat"
        sequences[code] = message["sequence"]
        for side, price, amount, orders in message["levels"]:
            if amount == 0:
                book.pop((code, side, price), None)
            else:
                book[(code, side, price)] = (amount, orders)


def test_a_market_feed_from_its_snapshot_holds_the_book(tmp_path: Path) -> None:
    definition = {**DEFINITION, "holders": DEFINITION["holders"] + [
        {"name": "bob", "accounts": [{"name": "main", "deposits": {"BTC": "1000"}}]}]}
    with matchbook.Node.open(tmp_path, definition, fsync=False) as node:
        alice, bob = node.account("alice"), node.account("bob")
        rng = random.Random(5)
        resting: list[tuple[int, int]] = []
        book: dict = {}
        sequences: dict[str, int] = {}
        feed = None
        trades = 0
        for i in range(1_500):
            if i == 400:
                feed = node.market(timeout=0.0)
            if rng.random() < 0.7 or not resting:
                account, side = rng.choice([(alice, "BUY"), (bob, "SELL")])
                price = 59_900 + rng.randrange(20) * 10
                handle = node.place_order(account, "BTC_EUR", side, "0.01", str(price))
                resting.append((account, handle))
            else:
                account, handle = resting.pop(rng.randrange(len(resting)))
                try:
                    node.cancel_order(account, handle)
                except matchbook.OrderNotFound:
                    pass  # filled meanwhile
            if feed is not None and i % 100 == 0:
                for message in next(feed):
                    apply(book, sequences, message)
                    trades += message["type"] == "trade"
        assert feed is not None
        want = node.book("BTC_EUR")
        give_up = time.monotonic() + 30
        while sequences.get("BTC_EUR") != want["sequence"]:
            assert time.monotonic() < give_up, "the feed stalled"
            for message in next(feed):
                apply(book, sequences, message)
                trades += message["type"] == "trade"
        mirrored = sorted((s, p, a, n) for (c, s, p), (a, n) in book.items() if c == "BTC_EUR")
        shown = sorted([("BUY", p, a, n) for p, a, n in want["bids"]]
                       + [("SELL", p, a, n) for p, a, n in want["asks"]])
        assert mirrored == shown
        assert trades > 10


def test_an_account_feed_from_its_snapshot_holds_the_orders_and_balances(tmp_path: Path) -> None:
    definition = {**DEFINITION, "holders": DEFINITION["holders"] + [
        {"name": "bob", "accounts": [{"name": "main", "deposits": {"BTC": "1000"}}]}]}
    with matchbook.Node.open(tmp_path, definition, fsync=False) as node:
        alice, bob = node.account("alice"), node.account("bob")
        rng = random.Random(9)
        resting: list[tuple[int, int]] = []
        orders: dict[int, dict] = {}
        balances: dict[tuple[int, str], matchbook.Balance] = {}
        kinds: set[str] = set()
        feed = None

        def follow(messages: list[dict]) -> None:
            for m in messages:
                kinds.add(m["type"])
                if m["type"] == "snapshot":
                    orders.update({o["id"]: o for o in m["orders"]})
                    balances.update({(m["account"], c): b for c, b in m["balances"].items()})
                    continue
                record = m["order"]
                if record is not None and record["status"] == "OPEN":
                    orders[record["id"]] = record
                elif record is not None:
                    orders.pop(record["id"], None)
                for moved in m["moves"].values():
                    balances[(m["account"], moved.currency)] = matchbook.Balance(
                        moved.available, moved.locked)

        for i in range(1_500):
            if i == 400:
                feed = node.accounts([alice, bob], timeout=0.0)
            roll = rng.random()
            if roll < 0.6 or not resting:
                account, side = rng.choice([(alice, "BUY"), (bob, "SELL")])
                price = 59_900 + rng.randrange(20) * 10
                handle = node.place_order(account, "BTC_EUR", side, "0.01", str(price))
                resting.append((account, handle))
            else:
                account, handle = resting.pop(rng.randrange(len(resting)))
                try:
                    if roll < 0.8:
                        node.amend_order(account, handle, amount="0.02")
                        resting.append((account, handle))
                    else:
                        node.cancel_order(account, handle)
                except matchbook.OrderNotFound:
                    pass  # filled meanwhile
            if feed is not None and i % 100 == 0:
                follow(next(feed))
        assert feed is not None
        # An order at a price nothing else uses marks the end of the flow in the feed.
        marker = node.place_order(alice, "BTC_EUR", "BUY", "0.01", "40000")
        give_up = time.monotonic() + 30
        while marker not in {o["handle"] for o in orders.values()}:
            assert time.monotonic() < give_up, "the feed stalled"
            follow(next(feed))
        for account in (alice, bob):
            shown = {o["id"]: (o["price"], o["amount"], o["filled"])
                     for o in node.open_orders(account)}
            mirrored = {i: (o["price"], o["amount"], o["filled"])
                        for i, o in orders.items() if o["account"] == account}
            assert mirrored == shown
            held = {c: b for (a, c), b in balances.items() if a == account}
            assert held == node.balances(account)
        assert {"order_created", "trade_settled", "order_closed", "order_amended"} <= kinds
