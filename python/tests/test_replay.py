"""Backtesting on recorded data (``matchbook.replay``): queue position against a small
case computed by hand, the column layout's readers, and the example maker run on the
shipped sample with its books balancing."""

from __future__ import annotations

import csv
import importlib.util
import os
import sys
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import matchbook
from matchbook.replay import Replay, Row, read_csv

from conftest import START

D = Decimal
SECOND = 1_000_000_000
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def rows(*items: tuple[int, str, str, str, str]) -> list[Row]:
    return [Row(START + t * SECOND, kind, side, D(price), D(amount))
            for t, kind, side, price, amount in items]


def replay_with_a_bid(table: list[Row]) -> tuple[matchbook.Engine, int, int]:
    """The user bids 0.05 at 60,000.00 once the first snapshot is in."""
    engine = matchbook.Engine({"holders": [{"name": "me", "accounts": [
        {"name": "main", "deposits": {"EUR": "100000"}}]}]}, start_time=START)
    me = engine.account("me")
    placed: list[int] = []

    def strategy(e: matchbook.Engine, time: int) -> None:
        if not placed:
            placed.append(e.place_order(time, me, "BTC_EUR", "BUY", "0.05", price="60000.00"))

    Replay(engine, "BTC_EUR", START).run(table, strategy)
    return engine, me, placed[0]


def test_a_recorded_taker_fills_the_bid_after_the_liquidity_ahead_of_it() -> None:
    engine, me, bid = replay_with_a_bid(rows(
        (0, "snapshot", "BUY", "60000.00", "0.10"),
        (0, "snapshot", "SELL", "60010.00", "0.10"),
        # 0.12 sold into the bid: the 0.10 resting before the user's order first.
        (1, "trade", "SELL", "60000.00", "0.12"),
        (1, "update", "BUY", "60000.00", "0"),
        (2, "trade", "BUY", "60010.00", "0.05"),
    ))
    record = engine.order_history(me, bid)
    assert (record["status"], record["filled"]) == ("OPEN", D("0.02000"))
    assert record["average_price"] == D("60000.00")
    balances = engine.balances(me)
    # Bought 0.02 BTC at 60,000 less the 0.1% maker fee in BTC; 0.03 x 60,000 still locked.
    assert balances["BTC"].available == D("0.02") - D("0.00002")
    assert balances["EUR"].available == D("100000") - D("1200") - D("1800")
    assert balances["EUR"].locked == D("1800")
    assert engine.ticker("BTC_EUR")["last"] == D("60010.00")


def test_liquidity_added_later_queues_behind_and_cancellations_leave_from_the_back() -> None:
    engine, me, bid = replay_with_a_bid(rows(
        (0, "snapshot", "BUY", "60000.00", "0.10"),
        (1, "update", "BUY", "60000.00", "0.30"),  # 0.20 joins behind the user
        (2, "update", "BUY", "60000.00", "0.15"),  # 0.15 leaves from the back
        (3, "trade", "SELL", "60000.00", "0.12"),  # 0.10 ahead, then 0.02 of the user's
    ))
    assert engine.order_history(me, bid)["filled"] == D("0.02000")
    book = engine.book("BTC_EUR", level=3)
    assert [row[1] for row in book["bids"]] == [D("0.03000"), D("0.05000")], \
        "the user's remainder, then the 0.05 left of the later liquidity"


def test_rows_are_read_from_csv_in_the_documented_layout(tmp_path) -> None:
    path = tmp_path / "rows.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time_ns", "kind", "side", "price", "amount"])
        w.writerow([START, "snapshot", "buy", "60000.00", "0.1"])
        w.writerow([START + 1, "trade", "SELL", "60000.00", "0.05"])
    assert list(read_csv(str(path))) == [
        Row(START, "snapshot", "BUY", D("60000.00"), D("0.1")),
        Row(START + 1, "trade", "SELL", D("60000.00"), D("0.05")),
    ]
    with open(path, "a", newline="") as f:
        csv.writer(f).writerow([START + 2, "quote", "BUY", "1", "1"])
    with pytest.raises(ValueError, match="kind"):
        list(read_csv(str(path)))


def test_a_csv_saved_with_a_bom_reads_and_a_bad_one_names_its_line(tmp_path) -> None:
    """A CSV saved by a spreadsheet (UTF-8 with a byte-order mark) was refused with
    ``KeyError: 'time_ns'``; so was one with a misspelt header; a short row and a price
    that is not a number raised ``decimal.InvalidOperation`` naming nothing."""
    path = tmp_path / "rows.csv"
    path.write_bytes(b"\xef\xbb\xbftime_ns,kind,side,price,amount\r\n"
                     + f"{START},update,BUY,60000.00,0.1\r\n".encode())
    assert list(read_csv(str(path))) == [Row(START, "update", "BUY", D("60000.00"), D("0.1"))]
    bad = [
        ("time,kind,side,price,amount\n1,update,BUY,1,1\n", "time_ns"),
        (f"time_ns,kind,side,price,amount\n{START},update,BUY,60000.00\n", "line 2.*amount"),
        (f"time_ns,kind,side,price,amount\n{START},update,BUY,abc,1\n", "line 2.*price 'abc'"),
        ("time_ns,kind,side,price,amount\n1.5,update,BUY,1,1\n", "line 2.*time_ns '1.5'"),
    ]
    for text, message in bad:
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            list(read_csv(str(path)))


def _example() -> Any:
    """examples/replay_maker.py as a module."""
    spec = importlib.util.spec_from_file_location("replay_maker",
                                                  os.path.join(EXAMPLES, "replay_maker.py"))
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = example  # its dataclasses look their module up
    spec.loader.exec_module(example)
    return example


def test_the_example_maker_runs_on_the_sample_and_the_books_balance() -> None:
    example = _example()
    table = list(read_csv(example.SAMPLE))
    assert len(table) > 10_000, "the shipped sample"
    result = example.run(table, table[0].time_ns)
    assert result.fills > 0
    assert abs(result.inventory) <= D("0.06"), "the limit, and one fill past it at most"
    engine = result.engine
    held = sum(b["BTC"].available + b["BTC"].locked
               for b in (engine.balances(a["account"]) for a in engine.accounts()))
    deposited = example.START_BTC + 2 * D(1_000_000)  # the maker, the venue, the flow
    assert held + engine.fees_collected()["BTC"] == deposited, "no BTC made or lost"
    again = example.run(table, table[0].time_ns)
    assert (again.pnl, again.fills) == (result.pnl, result.fills), "a replay is deterministic"


def test_the_example_maker_earns_what_is_computed_by_hand_on_a_small_table() -> None:
    example = _example()
    table = rows(
        (0, "snapshot", "BUY", "60000.00", "0.01"),
        (0, "snapshot", "SELL", "60010.00", "0.01"),
        # The maker joins both sides behind the 0.01 resting there; each taker takes the
        # 0.01 ahead of it, then its 0.01.
        (1, "trade", "SELL", "60000.00", "0.02"),
        (2, "trade", "BUY", "60010.00", "0.02"),
    )
    result = example.run(table, START)
    assert result.fills == 2
    assert result.inventory == D("-0.00001"), "bought 0.01 less the 0.1% fee, sold 0.01"
    # EUR: -600.00 + 600.10 - 0.6001 fee (0.1% of 600.10); BTC: -0.00001 at 60,010.
    assert result.pnl == D("-600.00") + D("600.10") - D("0.6001") - D("0.00001") * D("60010")


def test_a_row_the_book_cannot_take_is_refused_not_skipped() -> None:
    """The replay skipped every refusal of the engine, meant for a level or trade below the
    market's minimum order value: rows out of time order, prices finer than the tick and
    negative prices or amounts were dropped silently (a backtest of other data than the
    table), and a NaN amount raised ``decimal.InvalidOperation``."""
    book = [(1, "snapshot", "BUY", "59000.00", "1"), (1, "snapshot", "SELL", "60100.00", "1")]
    bad = [
        ((0, "update", "BUY", "59000.00", "2"), matchbook.InvalidArgument),  # earlier time
        ((2, "update", "BUY", "59000.001", "2"), matchbook.InvalidArgument),  # finer than 0.01
        ((2, "trade", "SELL", "59000.001", "0.1"), matchbook.InvalidArgument),
        ((2, "update", "BUY", "-5", "2"), ValueError),
        ((2, "update", "BUY", "59000.00", "-2"), ValueError),
        ((2, "update", "BUY", "59000.00", "NaN"), ValueError),
    ]
    for row, error in bad:
        engine = matchbook.Engine(start_time=START)
        with pytest.raises(error):
            Replay(engine, "BTC_EUR", START).run(rows(*book, row))
    # Below the minimum order value (10 EUR) is still left out quietly, as documented.
    engine = matchbook.Engine(start_time=START)
    replay = Replay(engine, "BTC_EUR", START)
    assert replay.run(rows(*book, (2, "update", "BUY", "58000.00", "0.0001"),
                           (2, "trade", "SELL", "59000.00", "0.0001"))) == 4
    assert len(engine.open_orders(replay.venue)) == 2


def test_a_book_past_the_open_order_limit_names_the_setting_to_raise() -> None:
    """The venue holds one order per increase of a level: a recorded book deeper than the
    exchange's open-order limit (200 a holder by default) stopped the replay with a bare
    MAX_OPEN_ORDERS_EXCEEDED about "account 0", which names neither the venue nor the
    definition's ``max_open_orders`` that lifts it."""
    deep = [(0, "snapshot", "BUY", f"{50_000 - i}.00", "0.01") for i in range(201)]
    with pytest.raises(matchbook.OrderRejected, match="max_open_orders"):
        Replay(matchbook.Engine(start_time=START), "BTC_EUR", START).run(rows(*deep))
    engine = matchbook.Engine({"max_open_orders": 1_000}, start_time=START)
    replay = Replay(engine, "BTC_EUR", START)
    assert replay.run(rows(*deep)) == 201
    assert len(engine.open_orders(replay.venue)) == 201


prices = st.sampled_from(["59990.00", "59995.00", "60000.00", "60005.00", "60010.00"])
recorded = st.tuples(st.sampled_from(["update", "update", "trade"]),
                     st.sampled_from(["BUY", "SELL"]), prices,
                     st.sampled_from(["0", "0.01", "0.05", "0.2", "0.35"]))
strategy_orders = st.lists(st.tuples(st.integers(0, 30), st.sampled_from(["BUY", "SELL"]), prices),
                           max_size=6)


@settings(max_examples=60, deadline=None)
@given(st.lists(recorded, min_size=1, max_size=30), strategy_orders)
def test_the_venue_queues_follow_the_book_with_market_data_or_without(
    table: list[tuple[str, str, str, str]], mine: list[tuple[int, str, str]]
) -> None:
    """The venue's queues are kept from the fills of each order placed when market data
    names them, and by reading every open venue order when it is off: both ways end in
    the same state, and each queue holds what the engine holds open for the venue at
    that level, oldest first (crossing levels, trades into the user's orders and partial
    fills included)."""
    outcomes = []
    for market_data in (True, False):
        engine = matchbook.Engine({"holders": [{"name": "me", "accounts": [
            {"name": "main", "deposits": {"EUR": "100000", "BTC": "10"}}]}]},
            start_time=START, market_data=market_data)
        me = engine.account("me")

        def strategy(e: matchbook.Engine, time: int) -> None:
            for step, side, price in mine:
                if time == START + step * SECOND:
                    e.place_order(time, me, "BTC_EUR", side, "0.03", price=price)

        replay = Replay(engine, "BTC_EUR", START)
        replay.run(rows(*[(i, kind, side, price, amount)
                          for i, (kind, side, price, amount) in enumerate(table)]), strategy)
        held: dict[tuple[str, Decimal], list[list[Any]]] = {}
        for o in sorted(engine.open_orders(replay.venue), key=lambda o: o["id"]):
            held.setdefault((o["side"], o["price"]), []).append(
                [o["handle"], o["amount"] - o["filled"]])
        queues = {key: [[h, a] for h, a in queue] for key, queue in replay._levels.items()}
        assert queues == held, (market_data, table, mine)
        outcomes.append((engine.state_hash(), queues))
    assert outcomes[0] == outcomes[1]


def test_each_look_at_the_trades_starts_after_the_newest_the_last_one_saw() -> None:
    """A replay reads the trades since its last look to follow its queues. It counted from
    its own instrument's newest trade, so while the other instruments of the engine traded
    and its own did not, every look read all of their trades again (27 ms a step after a
    million ETH_EUR trades, and growing): each look now starts after the newest trade of
    the exchange the previous one saw, and the first after those made before the replay."""
    engine = matchbook.Engine({"holders": [{"name": h, "accounts": [
        {"name": "main", "deposits": {"EUR": "1000000", "ETH": "100"}}]} for h in ("a", "b")]},
        start_time=START)
    a, b = engine.account("a"), engine.account("b")

    def eth_trade(e: matchbook.Engine, time: int) -> None:
        e.place_order(time, a, "ETH_EUR", "SELL", "0.1", price="3000.00")
        e.place_order(time, b, "ETH_EUR", "BUY", "0.1", price="3000.00",
                      time_in_force="IMMEDIATE_OR_CANCELLED")

    for _ in range(3):
        eth_trade(engine, START)
    replay = Replay(engine, "BTC_EUR", START)
    newest_seen = [engine.last_trade_id]
    assert newest_seen == [3]
    afters: list[int] = []
    read = engine.trades

    def trades(after: int = 0, instrument: str | None = None) -> Any:
        afters.append(after)
        newest_seen.append(engine.last_trade_id)
        return read(after, instrument)

    engine.trades = trades  # type: ignore[method-assign]
    replay.run(rows(*[(t, "update", "BUY", "60000.00", f"0.{t + 1}") for t in range(5)]),
               eth_trade)
    assert len(afters) >= 5
    assert all(after >= seen for after, seen in zip(afters, newest_seen)), (afters, newest_seen)


def test_the_venue_queues_follow_a_sweep_past_the_trade_history_limit() -> None:
    """A look at the trades reads those made since the last one; with a trade history
    limit smaller than one step's trades the oldest of them were already dropped, and the
    venue orders they filled stayed in the queues: the next recorded size of such a level
    was taken as resting already, so the book held less than the table (0.01 of 0.02
    here). The replay now sees the gap and reads the venue's open orders instead."""
    engine = matchbook.Engine({}, start_time=START)
    engine.set_history_limits(trades=5)
    replay = Replay(engine, "BTC_EUR", START)
    levels = [f"{60000 + i}.00" for i in range(30)]
    replay.run(rows(
        *[(0, "snapshot", "SELL", price, "0.01") for price in levels],
        (1, "trade", "BUY", levels[-1], "0.30"),  # 30 venue orders filled in one step
        (2, "update", "SELL", levels[0], "0.02"),
    ))
    held: dict[tuple[str, Decimal], list[list[Any]]] = {}
    for o in sorted(engine.open_orders(replay.venue), key=lambda o: o["id"]):
        held.setdefault((o["side"], o["price"]), []).append(
            [o["handle"], o["amount"] - o["filled"]])
    assert replay._levels == held
    assert engine.oldest_trade_id == engine.last_trade_id - 4 == engine.trades()["id"][0]
    assert engine.book("BTC_EUR")["asks"][0][:2] == (D(levels[0]), D("0.02"))
