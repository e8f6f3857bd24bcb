"""One test per defect the Python binding had (issue: bindings that notebooks can live in):
numbers in exponent form, time going backwards, candles after the engine's time, what a
candle's volume means, and an int wider than an order handle."""

from __future__ import annotations

import copy
import multiprocessing
import pickle
from decimal import Decimal

import numpy as np
import pytest

import matchbook

from conftest import START

SECOND = 1_000_000_000
MINUTE = 60 * SECOND


def test_decimals_and_floats_in_exponent_form_are_read_by_value(
    engine: matchbook.Engine, taker: int
) -> None:
    cases = [
        (Decimal("0.00000050"), Decimal("0.0000005")),  # str() gives '5.0E-7'
        (Decimal(2).scaleb(3), Decimal("2000")),  # str() gives '2E+3'
        (1e-07, Decimal("0.0000001")),  # repr() gives '1e-07'
        (Decimal("1.000000000000"), Decimal("1")),  # finer spelling, coarse value
    ]
    for given, worth in cases:
        before = engine.balances(taker).get("BTC", matchbook.Balance(Decimal(0), Decimal(0)))
        engine.deposit(START, taker, "BTC", given)
        after = engine.balances(taker)["BTC"]
        assert after.available - before.available == worth, given
    with pytest.raises(matchbook.InvalidArgument, match="decimal places"):
        engine.deposit(START, taker, "BTC", Decimal("0.000000001"))  # finer than BTC's 8
    with pytest.raises(matchbook.InvalidArgument):
        engine.deposit(START, taker, "BTC", float("nan"))
    # An order amount spelled finer than the lot but worth whole lots is fine.
    engine.place_order(START, taker, "BTC_EUR", "BUY", "0.0100000", price=Decimal("5E+4"))


def test_an_earlier_time_is_refused_and_changes_nothing(
    engine: matchbook.Engine, taker: int
) -> None:
    engine.place_order(START + 10 * MINUTE, taker, "BTC_EUR", "BUY", "0.01", price="50000")
    open_before = len(engine.open_orders(taker))
    with pytest.raises(matchbook.InvalidArgument, match="before the engine's time"):
        engine.place_order(START + 5 * MINUTE, taker, "BTC_EUR", "BUY", "0.01", price="50000")
    assert len(engine.open_orders(taker)) == open_before
    assert engine.now == START + 10 * MINUTE
    answers = engine.submit_orders(
        np.array([START + 10 * MINUTE, START + MINUTE]), taker, "BTC_EUR",
        np.array([0, 0]), np.array([5_000_000, 5_000_000]), np.array([1000, 1000]))
    assert answers["status"].tolist()[0] == 0
    assert answers["status"].tolist()[1] == 9003, "the row with an earlier time is refused"


def test_candles_stop_at_the_engine_time_and_volume_means_quote(
    engine: matchbook.Engine, maker: int, taker: int
) -> None:
    t = START + 90 * SECOND
    engine.place_order(t, maker, "BTC_EUR", "SELL", "0.01", price="60100")
    engine.place_order(t, taker, "BTC_EUR", "BUY", "0.01", price="60100")
    candles = engine.candles("BTC_EUR", "MINUTES", 1, START, t + 30 * MINUTE)
    assert candles.rows > 0
    assert (candles["start"] <= t).all(), "no candle for a minute after the engine's time"
    assert candles["total_amount"].sum() == 1_000, "lots"
    assert candles["volume"].sum() == 6_010_000 * 1_000, "quote, ticks x lots, as in C"


def test_an_int_wider_than_a_handle_is_refused_not_read_as_another_handle(
    engine: matchbook.Engine, maker: int
) -> None:
    order = engine.place_order(START, maker, "BTC_EUR", "BUY", "0.01", price="50000")
    wider = order + (1 << 96)  # the same low 96 bits: it used to name the same order
    with pytest.raises(matchbook.InvalidArgument, match="not an order handle"):
        engine.cancel_order(START, maker, wider)
    with pytest.raises(matchbook.InvalidArgument, match="not an order handle"):
        engine.amend_order(START, maker, wider, price="49000")
    with pytest.raises(matchbook.InvalidArgument, match="not an order handle"):
        engine.order(maker, wider)
    with pytest.raises(matchbook.InvalidArgument, match="not an order handle"):
        engine.cancel_all(START, maker, orders=[order, wider])
    assert engine.order(maker, order)["price"] == Decimal("50000"), "untouched"
    engine.cancel_order(START, maker, order)
    assert engine.open_orders(maker) == []


def test_numpy_scalars_are_numbers_and_times(engine: matchbook.Engine, taker: int) -> None:
    """What a DataFrame or an array hands out: ``df.price.iloc[0]`` is an ``np.float64``
    (whose repr is ``np.float64(0.1)`` under numpy 2, which ``Decimal`` cannot read: the
    call raised ``decimal.InvalidOperation``), a column of ints gives ``np.int64`` (refused
    as "not a number", also as a time)."""
    amounts = [np.float64(0.01), np.float32(0.01), np.int64(1), np.uint32(1)]
    for amount in amounts:
        before = engine.balances(taker)["BTC"].available
        engine.deposit(np.int64(START), taker, "BTC", amount)
        assert engine.balances(taker)["BTC"].available - before == Decimal(str(amount)), amount
    engine.place_order(np.int64(START), taker, "BTC_EUR", "BUY", np.float64(0.01),
                       price=np.int64(50_000))
    assert [o["price"] for o in engine.open_orders(taker)] == [Decimal(50_000)]
    for bad in [np.float64("nan"), np.float32("inf"), np.bool_(True)]:
        with pytest.raises(matchbook.InvalidArgument):
            engine.deposit(START, taker, "BTC", bad)
    with pytest.raises(matchbook.InvalidArgument, match="time"):
        engine.deposit(np.float64(START), taker, "BTC", "1")


def test_batch_columns_that_do_not_fit_their_type_are_refused_not_wrapped(
    engine: matchbook.Engine, maker: int, taker: int
) -> None:
    """``submit_orders`` cast each column with numpy's unsafe casting: an account id past
    2**32 wrapped onto another account (the order was placed for it), a float price of
    5,000,000.5 ticks was cut to 5,000,000, and a side of 257 became a sell."""
    ok = dict(side=np.array([0]), price=np.array([5_000_000]), amount=np.array([1_000]))
    wrong = [
        dict(ok, account=np.array([2**32 + taker], dtype=np.int64)),
        dict(ok, account=np.array([-1])),
        dict(ok, price=np.array([5_000_000.5])),
        dict(ok, price=np.array([np.nan])),
        dict(ok, amount=np.array([1e30])),
        dict(ok, side=np.array([257])),
        dict(ok, time=np.array([float(START)])),
    ]
    for columns in wrong:
        args = dict(dict(time=START, account=maker), **columns)
        with pytest.raises(matchbook.InvalidArgument, match="column"):
            engine.submit_orders(args["time"], args["account"], "BTC_EUR", args["side"],
                                 args["price"], args["amount"])
    assert engine.open_orders(taker) == [] and engine.open_orders(maker) == []
    # Values that fit are taken whatever their dtype: float prices that are whole ticks,
    # int8 sides, int64 accounts.
    answers = engine.submit_orders(np.array([START]), np.array([taker], dtype=np.int64),
                                   "BTC_EUR", np.array([0], dtype=np.int8),
                                   np.array([5_000_000.0]), np.array([1_000]))
    assert answers["status"].tolist() == [0]
    assert len(engine.open_orders(taker)) == 1


def test_batch_columns_with_missing_values_or_two_dimensions_are_refused(
    engine: matchbook.Engine, taker: int
) -> None:
    """A masked array's masked rows (missing values) were placed as orders at whatever
    value sat under the mask, and a 2-d column raised numpy's ``TypeError`` rather than
    the binding's ``InvalidArgument``."""
    price = np.ma.array([5_000_000, 4_000_000], mask=[False, True])
    with pytest.raises(matchbook.InvalidArgument, match="column price: masked"):
        engine.submit_orders(START, taker, "BTC_EUR", np.array([0, 0]), price, 1_000)
    assert engine.open_orders(taker) == []
    with pytest.raises(matchbook.InvalidArgument, match="column amount: 1-d"):
        engine.submit_orders(START, taker, "BTC_EUR", np.array([0]), np.array([5_000_000]),
                             np.array([[1_000]]))
    # A masked array with nothing masked is its values.
    unmasked = np.ma.array([5_000_000], mask=[False])
    answers = engine.submit_orders(START, taker, "BTC_EUR", np.array([0]), unmasked, 1_000)
    assert answers["status"].tolist() == [0]


def test_a_scalar_side_is_repeated_like_the_other_scalars(
    engine: matchbook.Engine, taker: int
) -> None:
    """The row count came from ``side`` alone: a scalar side with columns of prices was
    refused as columns of different lengths, though the docstring repeats scalars."""
    answers = engine.submit_orders(START, taker, "BTC_EUR", 0,
                                   np.array([5_000_000, 4_900_000]), 1_000)
    assert answers["status"].tolist() == [0, 0]
    assert sorted(o["price"] for o in engine.open_orders(taker)) == [Decimal(49_000),
                                                                      Decimal(50_000)]


def test_a_pandas_timestamp_keeps_its_nanoseconds(engine: matchbook.Engine, taker: int) -> None:
    """A ``pandas.Timestamp`` (what a frame of tick data yields) went through the
    ``datetime`` path, which reads microseconds: its last three digits were dropped, so
    orders of one microsecond got one time and the engine's clock ran up to 999 ns
    behind the data."""
    pd = pytest.importorskip("pandas")
    when = pd.Timestamp(START + 1_000_000_007, unit="ns", tz="UTC")
    engine.place_order(when, taker, "BTC_EUR", "BUY", "0.01", price="50000")
    assert engine.now == START + 1_000_000_007
    with pytest.raises(matchbook.InvalidArgument, match="timezone"):
        engine.place_order(pd.Timestamp(START + 2_000_000_000, unit="ns"), taker, "BTC_EUR",
                           "BUY", "0.01", price="50000")


def test_numpy_datetimes_are_times_in_utc(engine: matchbook.Engine, taker: int) -> None:
    """``numpy.datetime64`` (scalars and columns, and a frame's datetime column) was
    refused as "int nanoseconds or datetime"; numpy's datetimes carry no zone and count
    from the epoch in UTC, as the engine's times do. NaT is refused."""
    pd = pytest.importorskip("pandas")
    engine.place_order(np.datetime64(START + 2_000_000_009, "ns"), taker, "BTC_EUR", "BUY",
                       "0.01", price="50000")
    assert engine.now == START + 2_000_000_009
    times = np.array([START + 3_000_000_000, START + 3_000_000_001], dtype="datetime64[ns]")
    answers = engine.submit_orders(times.astype("datetime64[us]"), taker, "BTC_EUR", 0,
                                   5_000_000, 1_000)
    assert answers["status"].tolist() == [0, 0] and engine.now == START + 3_000_000_000
    frame = pd.DataFrame({"time": pd.to_datetime([START + 4_000_000_005], unit="ns", utc=True)})
    answers = engine.submit_orders(frame["time"], taker, "BTC_EUR", 0, 5_000_000, 1_000)
    assert answers["status"].tolist() == [0] and engine.now == START + 4_000_000_005
    with pytest.raises(matchbook.InvalidArgument, match="NaT"):
        engine.place_order(np.datetime64("NaT"), taker, "BTC_EUR", "BUY", "0.01", price="50000")
    with pytest.raises(matchbook.InvalidArgument, match="NaT"):
        engine.submit_orders(np.array(["NaT"], dtype="datetime64[ns]"), taker, "BTC_EUR", 0,
                             5_000_000, 1_000)


def test_events_of_an_engine_that_drops_them_are_refused_not_empty() -> None:
    """With ``keep_events=False`` the events of every command are dropped; ``events()``
    answered an empty iterator, as if nothing had happened since the last call."""
    engine = matchbook.Engine({"holders": [{"name": "a", "accounts": [
        {"name": "main", "deposits": {"EUR": "1000"}}]}]}, start_time=START, keep_events=False)
    engine.place_order(START, engine.account("a"), "BTC_EUR", "BUY", "0.01", price="50000")
    with pytest.raises(matchbook.InvalidArgument, match="keep_events"):
        engine.events()


def test_an_amount_past_the_range_is_refused_with_the_largest_value_not_a_scale(
    engine: matchbook.Engine, taker: int
) -> None:
    """A deposit of 100,000,000,000 EUR was refused "number too large (at most 8
    decimals)": the value has no decimals, and the message did not say what fits."""
    with pytest.raises(matchbook.InvalidArgument) as refused:
        engine.deposit(START, taker, "EUR", "100000000000")
    assert "decimals" not in str(refused.value)
    assert "at most 92233720368.54775807" in str(refused.value)
    with pytest.raises(matchbook.InvalidArgument, match=r"decimal places \(at most 8\)"):
        engine.deposit(START, taker, "EUR", "1.000000001")


def test_a_copy_of_an_engine_is_a_branch_that_leaves_the_original_alone(
    engine: matchbook.Engine, maker: int, taker: int, tmp_path
) -> None:
    """``copy.copy(engine)`` gave a second wrapper of the same native engine: an order
    placed on the "copy" (a what-if branch of a backtest) was placed on the original.
    ``deepcopy`` raised "cannot pickle". Each now gives an independent engine, equal to
    the original when made."""
    engine.place_order(START, maker, "BTC_EUR", "SELL", "0.01", price="50000")
    before = engine.state_hash()
    for branch in (copy.copy(engine), copy.deepcopy(engine), engine.copy()):
        assert branch.state_hash() == before
        branch.place_order(START + SECOND, taker, "BTC_EUR", "BUY", "0.01", price="50000")
        assert len(branch.trades(0)["id"]) == 1
        assert branch.state_hash() != before
        assert engine.state_hash() == before
        assert len(engine.trades(0)["id"]) == 0
        assert len(engine.open_orders(maker)) == 1
    durable = matchbook.Engine.open(tmp_path, {"max_open_orders": 10}, start_time=START)
    branch = durable.copy()
    assert branch.data_dir is None and durable.data_dir == str(tmp_path)
    durable.close()
    assert branch.state_hash() == matchbook.Engine.open(tmp_path, {"max_open_orders": 10},
                                                       start_time=START).state_hash()


def _filled_after_a_buy(engine: matchbook.Engine, taker: int) -> tuple[int, int]:
    """Run in a child process: buys what rests, returns the trades and the state hash."""
    engine.place_order(START + 2 * SECOND, taker, "BTC_EUR", "BUY", "0.01", price="50000")
    return len(engine.trades(0)["id"]), engine.state_hash()


def test_an_engine_pickles_and_goes_to_a_spawned_process(
    engine: matchbook.Engine, maker: int, taker: int, tmp_path
) -> None:
    """``pickle.dumps(engine)`` raised "cannot pickle 'NativeEngine'", so an engine could not
    go to a ``multiprocessing`` worker under the spawn or forkserver start method (the
    default of macOS, Windows and, from Python 3.14, Linux). It now travels as its
    definition and a snapshot of its state, checked on the way back in."""
    engine.place_order(START, maker, "BTC_EUR", "SELL", "0.01", price="50000")
    back = pickle.loads(pickle.dumps(engine))
    assert back.state_hash() == engine.state_hash()
    assert back.account("maker") == maker and back.open_orders(maker) == engine.open_orders(maker)
    assert back.now == engine.now
    here = _filled_after_a_buy(back, taker)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        there = pool.apply(_filled_after_a_buy, (engine, taker))
    assert there == here == (1, back.state_hash())
    assert len(engine.trades(0)["id"]) == 0, "the original stays as it was"
    durable = matchbook.Engine.open(tmp_path, {"max_open_orders": 10}, start_time=START)
    restored = pickle.loads(pickle.dumps(durable))
    assert restored.data_dir is None and restored.state_hash() == durable.state_hash()
    durable.close()
    native, (definition, form, start, market, events, state) = engine._native.__reduce__()
    damaged = state[:-5] + bytes([state[-5] ^ 1]) + state[-4:]
    with pytest.raises(matchbook.InvalidArgument, match="pickled engine state"):
        native(definition, form, start, market, events, damaged)


def test_ints_out_of_range_are_invalid_arguments_not_bare_overflow_errors(
    engine: matchbook.Engine, maker: int
) -> None:
    """An int outside what an argument holds (a negative account, a time past ``i64``, a
    handle of 200 bits) raised pyo3's bare ``OverflowError`` ("out of range integral type
    conversion attempted"), which ``except matchbook.MatchbookError`` lets through."""
    order = engine.place_order(START, maker, "BTC_EUR", "BUY", "0.01", price="50000")
    calls = {
        "negative account": lambda: engine.place_order(START, -1, "BTC_EUR", "BUY", "0.01",
                                                      price="50000"),
        "account past u32": lambda: engine.balances(2**40),
        "time past i64": lambda: engine.deposit(2**70, maker, "EUR", "1"),
        "time before i64": lambda: engine.advance_time(-(2**70)),
        "handle of 200 bits": lambda: engine.cancel_order(START, maker, 2**200),
        "negative handle": lambda: engine.amend_order(START, maker, -5, price="49000"),
        "holder past u32": lambda: engine.create_subaccount(START, 2**33, "x"),
        "history limit past u64": lambda: engine.set_history_limits(orders=2**80),
        "negative depth": lambda: engine.book("BTC_EUR", depth=-1),
        "candle period past u32": lambda: engine.candles("BTC_EUR", "MINUTES", 2**40, START,
                                                        START + MINUTE),
        "timeout past u64": lambda: engine.set_cancel_all_after(START, maker, 2**64),
    }
    for what, call in calls.items():
        with pytest.raises(matchbook.InvalidArgument, match="out of range") as refused:
            call()
        assert isinstance(refused.value, ValueError), what
    with pytest.raises(TypeError):  # not an int at all: Python's own TypeError
        engine.balances("main")
    with pytest.raises(matchbook.InvalidArgument, match="an int of 16610 bits"):
        engine.balances(10**5000)  # too long for Python to print: its size instead
    assert [o["price"] for o in engine.open_orders(maker)] == [Decimal("50000")], "untouched"
    with pytest.raises(matchbook.InvalidArgument, match="out of range"):
        engine.cancel_all(START, maker, orders=[order, -1])
    assert len(engine.open_orders(maker)) == 1, "a refused cancel_all cancels none of its list"


def test_calls_from_another_thread_wait_while_a_batch_runs(
    engine: matchbook.Engine, maker: int, taker: int
) -> None:
    """``submit_orders`` runs with the GIL released; any call on the same engine from
    another thread meanwhile (a dashboard reading balances beside a backtest) raised pyo3's
    ``RuntimeError: Already mutably borrowed``. Such a call now waits for the batch and
    answers as it would before or after it, never with the batch half done."""
    import threading

    n = 400_000
    side = (np.arange(n) % 2).astype(np.uint8)  # a buy, then a sell that takes it
    account = np.where(side == 0, taker, maker).astype(np.uint32)
    price = np.full(n, 6_000_000, np.int64)
    engine.deposit(START, maker, "BTC", "100000")
    engine.deposit(START, taker, "EUR", "200000000")
    started, errors, reads = threading.Event(), [], []

    def reader() -> None:
        started.set()
        while not finished.is_set():
            try:
                # Mid-batch the taker has a buy resting; before and after it has none.
                reads.append((len(engine.open_orders(taker)), engine.now))
            except Exception as e:  # the defect: pyo3's RuntimeError
                errors.append(f"{type(e).__name__}: {e}")

    finished = threading.Event()
    thread = threading.Thread(target=reader)
    thread.start()
    started.wait()
    answers = engine.submit_orders(START, account, "BTC_EUR", side, price, 1_000)
    finished.set()
    thread.join()
    assert errors == [], f"{len(errors)} of {len(errors) + len(reads)} calls: {errors[:2]}"
    assert reads, "the reader ran"
    assert set(reads) == {(0, START)}, "each read saw the engine before or after the batch"
    assert (answers["status"] == 0).all(), "every order placed, each sell taking a buy"
    assert engine.open_orders(maker) == [] and engine.open_orders(taker) == []
