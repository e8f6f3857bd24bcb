"""Trigger orders from Python: a trailing stop follows the price and fires, a take-profit
waits for its side of the price, a stop-market short of funds when it fires ends with the
refusal in its history record, and malformed trails raise."""

from __future__ import annotations

from decimal import Decimal

import pytest

import matchbook

from conftest import START


def _trade(engine: matchbook.Engine, maker: int, taker: int, t: int, price: str) -> None:
    engine.place_order(t, maker, "BTC_EUR", "SELL", "0.1", price)
    engine.place_order(t, taker, "BTC_EUR", "BUY", "0.1", price)


def test_a_trailing_stop_follows_the_high_and_fires(engine: matchbook.Engine, maker: int, taker: int) -> None:
    t = START + 1
    _trade(engine, maker, taker, t, "60000")
    stop = engine.place_order(t, maker, "BTC_EUR", "SELL", "0.01", type="TRAILING_STOP",
                              trailing_offset="500")
    assert engine.order(maker, stop)["trigger_price"] == Decimal("59500")
    _trade(engine, maker, taker, t, "61000")
    assert engine.order(maker, stop)["trigger_price"] == Decimal("60500")
    _trade(engine, maker, taker, t, "60800")
    assert engine.order(maker, stop)["trigger_price"] == Decimal("60500"), "never loosens"
    engine.place_order(t, taker, "BTC_EUR", "BUY", "0.01", "60400")
    _trade(engine, maker, taker, t, "60500")
    record = engine.order_history(maker, stop & (2**64 - 1))
    assert (record["status"], record["filled"]) == ("FILLED_FULLY", Decimal("0.01"))
    assert record["average_price"] == Decimal("60400")


def test_a_take_profit_waits_for_its_side_of_the_price(engine: matchbook.Engine, maker: int, taker: int) -> None:
    t = START + 1
    _trade(engine, maker, taker, t, "60000")
    tp = engine.place_order(t, maker, "BTC_EUR", "SELL", "0.01", "61900", type="TAKE_PROFIT",
                            trigger_price="62000")
    _trade(engine, maker, taker, t, "59000")
    assert engine.order(maker, tp)["state"] == "HELD", "a sell take-profit waits for a rise"
    _trade(engine, maker, taker, t, "62000")
    fired = engine.order(maker, tp)
    assert (fired["state"], fired["price"]) == ("RESTING", Decimal("61900")), "no bid to take"


def test_a_stop_market_short_of_funds_when_it_fires_ends_refused() -> None:
    poor = matchbook.Engine({"holders": [
        {"name": "rich", "accounts": [{"name": "main", "deposits": {"BTC": "10", "EUR": "1000000"}}]},
        {"name": "poor", "accounts": [{"name": "main", "deposits": {"EUR": "100"}}]},
    ]}, start_time=START)
    rich, broke = poor.account("rich"), poor.account("poor")
    t = START + 1
    _trade(poor, rich, rich, t, "60000")
    stop = poor.place_order(t, broke, "BTC_EUR", "BUY", "0.01", type="STOP_MARKET", trigger_price="60500")
    assert poor.balances(broke)["EUR"].locked == 0, "nothing reserved while it is held"
    poor.place_order(t, rich, "BTC_EUR", "SELL", "1", "60600")
    _trade(poor, rich, rich, t, "60500")
    record = poor.order_history(broke, stop & (2**64 - 1))
    assert (record["status"], record["reason"]) == ("FILLED_REJECTED", "INSUFFICIENT_FUNDS")
    assert poor.balances(broke)["EUR"].available == Decimal("100")


def test_malformed_trigger_orders_raise(engine: matchbook.Engine, maker: int, taker: int) -> None:
    t = START + 1
    with pytest.raises(matchbook.MatchbookError) as early:
        engine.place_order(t, maker, "BTC_EUR", "SELL", "0.01", type="TRAILING_STOP", trailing_offset="500")
    assert early.value.name == "NO_REFERENCE_PRICE"
    _trade(engine, maker, taker, t, "60000")
    with pytest.raises(matchbook.InvalidOrder) as no_trail:
        engine.place_order(t, maker, "BTC_EUR", "SELL", "0.01", type="TRAILING_STOP")
    assert no_trail.value.name == "INVALID_TRAIL"
    with pytest.raises(matchbook.InvalidArgument):
        engine.place_order(t, maker, "BTC_EUR", "SELL", "0.01", type="TRAILING_STOP",
                           trailing_offset="500", trailing_offset_bps=50)
    with pytest.raises(matchbook.InvalidArgument):
        engine.place_order(t, maker, "BTC_EUR", "SELL", "0.01", type="STOP_MARKET",
                           trigger_price="59000", trigger_reference="INDEX")
    with pytest.raises(matchbook.InvalidOrder) as mark:
        engine.place_order(t, maker, "BTC_EUR", "SELL", "0.01", type="STOP_MARKET",
                           trigger_price="59000", trigger_reference="MARK_PRICE")
    assert mark.value.name == "INVALID_TRIGGER_REFERENCE"
