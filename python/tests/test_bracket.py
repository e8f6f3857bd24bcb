"""The bracket example: its exits appear for what the entry bought (less the fee, in whole
lots), the stop-loss fires and cancels the take-profit; and an OCO pair from Python."""

from __future__ import annotations

import runpy
from decimal import Decimal
from pathlib import Path

import pytest

import matchbook

from conftest import START

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "bracket.py"


def test_the_bracket_example_places_and_fires_its_exits() -> None:
    lines = runpy.run_path(str(EXAMPLE))["run"]()
    assert lines[0] == "entry FILLED_CLOSED: filled 0.05000 of 0.10000"
    # 0.05 bought, 0.15 % fee in BTC: 0.049925 held, exits for 0.04992.
    assert lines[1] == "exit LIMIT: 0.04992 BTC, price 63000.00, trigger None, RESTING"
    assert lines[2] == "exit STOP_MARKET: 0.04992 BTC, price None, trigger 58000.00, HELD"
    assert "after the fall, LIMIT: CANCELLED, filled 0.00000" in lines
    assert "after the fall, STOP_MARKET: FILLED_FULLY, filled 0.04992" in lines
    assert lines[-1] == "trader BTC left: 0.00000500"


def test_an_oco_pair_from_python(engine: matchbook.Engine, maker: int) -> None:
    t = START + 1
    limit, stop = engine.place_oco(t, maker, "BTC_EUR", "SELL", "0.1", "65000", stop_trigger="55000")
    assert {o["handle"] for o in engine.open_orders(maker)} >= {limit, stop}
    engine.cancel_order(t, maker, stop)
    assert engine.order_history(maker, limit & (2**64 - 1))["status"] == "CANCELLED"
    assert engine.open_orders(maker) == []
    with pytest.raises(matchbook.InvalidOrder) as refused:
        engine.place_oco(t, maker, "BTC_EUR", "SELL", "0.0001", "65000", stop_trigger="55000")
    assert refused.value.name == "MIN_SIZE_NOT_SATISFIED"
    assert engine.open_orders(maker) == [], "a refused pair places neither leg"


def test_order_history_shows_the_terms_beyond_the_plain_fields(
        engine: matchbook.Engine, maker: int) -> None:
    t = START + 1
    limit, stop = engine.place_oco(t, maker, "BTC_EUR", "SELL", "0.1", "65000", stop_trigger="55000")
    record = engine.order_history(maker, limit)
    assert (record["linked_order"], record["parent_order"]) == (stop, None)
    assert engine.order_history(maker, stop)["linked_order"] == limit
    assert engine.order_history(maker, stop)["trigger_reference"] == "LAST_PRICE"
    assert record["trigger_reference"] is None, "a limit order watches no price"
    iceberg = engine.place_order(t, maker, "BTC_EUR", "SELL", "0.1", "66000", display="0.02")
    assert engine.order_history(maker, iceberg)["display"] == Decimal("0.02")
    bracket = engine.place_bracket(t, maker, "BTC_EUR", "SELL", "0.1", "67000",
                                   take_profit="60000", stop_loss="70000", stop_limit="70100")
    record = engine.order_history(maker, bracket)
    assert (record["take_profit_price"], record["stop_loss_price"],
            record["stop_loss_limit_price"]) == (Decimal("60000"), Decimal("70000"),
                                                 Decimal("70100"))
    assert record["linked_order"] is None and record["display"] is None
