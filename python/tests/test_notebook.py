"""A notebook's ergonomics: an engine as a context manager that releases its directory,
errors that name what they refer to, informative reprs, and columns of ticks and lots
turned into decimals or floats on request."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

import matchbook

from conftest import DEFINITION, START


def test_a_durable_engine_closes_and_releases_its_directory(tmp_path) -> None:
    with matchbook.Engine.open(tmp_path / "data", DEFINITION, start_time=START) as engine:
        maker = engine.account("maker")
        engine.place_order(START, maker, "BTC_EUR", "SELL", "0.01", price="60100")
        state = engine.state_hash()
        assert "data" in repr(engine) and "instruments" in repr(engine)
    with pytest.raises(matchbook.InvalidArgument, match="closed"):
        engine.place_order(START, maker, "BTC_EUR", "SELL", "0.01", price="60100")
    assert repr(engine) == "Engine(closed)"
    engine.close()  # twice is harmless
    again = matchbook.Engine.open(tmp_path / "data", DEFINITION, start_time=START)
    assert again.state_hash() == state, "the directory was released with everything in it"
    again.close()


def test_errors_name_what_they_refer_to(engine: matchbook.Engine, taker: int) -> None:
    with pytest.raises(matchbook.UnknownReference, match='"BTCX_EUR"') as unknown:
        engine.place_order(START, taker, "BTCX_EUR", "BUY", "1", price="1")
    assert "UnknownReference(code=1009" in repr(unknown.value)
    with pytest.raises(matchbook.UnknownReference, match="'BTCX_EUR'"):
        engine.tick("BTCX_EUR")
    with pytest.raises(matchbook.UnknownReference, match='"XYZ"'):
        engine.deposit(START, taker, "XYZ", "1")
    with pytest.raises(matchbook.UnknownReference, match='"nobody"'):
        engine.account("nobody")
    with pytest.raises(matchbook.OrderNotFound, match=f"order 12345 of account {taker}"):
        engine.cancel_order(START, taker, 12345)
    with pytest.raises(matchbook.InsufficientFunds, match=f"account {taker} on BTC_EUR"):
        engine.place_order(START, taker, "BTC_EUR", "BUY", "1000", price="60000")


def test_columns_of_ticks_and_lots_as_decimals_or_floats(
    engine: matchbook.Engine, maker: int, taker: int
) -> None:
    engine.place_order(START, maker, "BTC_EUR", "SELL", "0.01", price="60100")
    engine.place_order(START, taker, "BTC_EUR", "BUY", "0.01", price="60100")
    trades = engine.trades()
    exact = trades.converted(True)
    assert exact["price"][0] == Decimal("60100.00") and exact["amount"][0] == Decimal("0.01000")
    assert trades["price"][0] == 6_010_000, "the integers are kept"
    floats = trades.converted("float")
    assert floats["price"].dtype == np.float64 and floats["price"][0] == pytest.approx(60100.0)
    candles = engine.candles("BTC_EUR", "MINUTES", 1, START, START)
    assert candles.converted(True)["close"][0] == Decimal("60100.00")
    assert candles.converted(True)["volume"][0] == Decimal("601.0000000"), "quote: 0.01 x 60100"
    book = engine.book_columns("BTC_EUR")
    assert set(book.scaled) == {"price", "amount"}


def test_one_order_id_everywhere_the_handle_or_its_number(
    engine: matchbook.Engine, maker: int, taker: int
) -> None:
    handles = [engine.place_order(START, maker, "BTC_EUR", "SELL", "0.01", price=60100 + i)
               for i in range(3)]
    assert handles[2] >> 64 != 0, "a handle carries its slot above the number"
    engine.place_order(START, taker, "BTC_EUR", "BUY", "0.005", price="60100")
    number = int(engine.trades()["maker_order"][0])  # trade columns carry numbers
    assert number == handles[0] & (2**64 - 1)
    assert engine.order_history(maker, number)["filled"] == Decimal("0.00500")
    last = handles[2] & (2**64 - 1)
    assert engine.order(maker, last)["handle"] == handles[2]
    engine.amend_order(START, maker, last, amount="0.02")
    engine.cancel_order(START, maker, last)
    assert engine.order_history(maker, handles[2])["status"] == "CANCELLED"
    engine.cancel_all(START, maker, orders=[handles[1] & (2**64 - 1)])
    assert [o["handle"] for o in engine.open_orders(maker)] == [handles[0]]
