"""The lookups a notebook needs instead of reading events: accounts, instrument
descriptions, the fee account, order history page by page, and an order's trades, each
against what the test did."""

from __future__ import annotations

from decimal import Decimal

import pytest

import matchbook

from conftest import START


def test_accounts_list_every_account_with_its_holder_name_and_kind(
    engine: matchbook.Engine,
) -> None:
    rows = [(a["account"], a["holder"], a["name"], a["kind"], a["state"])
            for a in engine.accounts()]
    assert rows == [
        (engine.account("maker"), engine.holder("maker"), "main", "regular", "ACTIVE"),
        (engine.account("maker", "hedge"), engine.holder("maker"), "hedge", "blp", "ACTIVE"),
        (engine.account("taker"), engine.holder("taker"), "main", "regular", "ACTIVE"),
    ]


def test_instruments_carry_price_range_and_futures_terms(engine: matchbook.Engine) -> None:
    btc_eur = engine.instruments["BTC_EUR"]
    assert Decimal(btc_eur["min_price"]) < Decimal(btc_eur["max_price"])
    assert btc_eur["futures"] is None
    perp = engine.instruments["BTC_USD_PERP"]["futures"]
    assert Decimal(perp["initial_margin_percentage"]) > Decimal(perp["maintenance_margin_percentage"])
    assert perp["funding_period"] == 240
    dated = [i for i in engine.instruments.values() if i["type"] == "DATED_FUTURE"]
    assert dated and dated[0]["futures"]["funding_period"] is None
    assert dated[0]["futures"]["contract_expiry_date"]


def test_order_pages_visit_every_order_once_and_trades_by_order(
    engine: matchbook.Engine, maker: int, taker: int
) -> None:
    for i in range(3):
        engine.place_order(START, maker, "BTC_EUR", "SELL", "0.01", price=60100 + 100 * i)
    placed = []
    for i in range(7):
        t = START + i
        if i % 3 == 0:
            placed.append(("FILLED_FULLY", engine.place_order(
                t, taker, "BTC_EUR", "BUY", "0.005", price="60300",
                time_in_force="IMMEDIATE_OR_CANCELLED")))
        elif i % 3 == 1:
            placed.append(("OPEN", engine.place_order(t, taker, "BTC_EUR", "BUY", "0.01",
                                                       price=50000 + i)))
        else:
            order = engine.place_order(t, taker, "BTC_EUR", "BUY", "0.01", price=40000 + i)
            engine.cancel_order(t, taker, order)
            placed.append(("CANCELLED", order))
    seen, before, pages = [], None, 0
    while True:
        records, before = engine.order_page(taker, before, limit=3)
        pages += 1
        seen += [(r["status"], r["handle"]) for r in records]
        if before is None:
            break
    assert seen == list(reversed(placed)), "newest first, each once"
    assert pages == 3
    first_fill = placed[0][1]
    trades = engine.order_trades(taker, first_fill)
    assert [(t["price"], t["amount"]) for t in trades] == [(Decimal("60100.00"), Decimal("0.00500"))]
    assert trades[0]["taker_order"] == first_fill and trades[0]["maker_account"] == maker
    assert engine.order_history(taker, first_fill)["trades"] == [trades[0]["trade"]]
    with pytest.raises(matchbook.OrderNotFound):
        engine.order_trades(maker, first_fill)
    with pytest.raises(matchbook.InvalidArgument):
        engine.order_page(taker, limit=0)


def test_the_fee_account_holds_what_both_sides_paid(
    engine: matchbook.Engine, maker: int, taker: int
) -> None:
    engine.place_order(START, maker, "BTC_EUR", "SELL", "0.01", price="60100")
    engine.place_order(START, taker, "BTC_EUR", "BUY", "0.01", price="60100")
    fees = engine.fees_collected()
    assert fees["BTC"] > 0, "the taker paid in BTC"
    assert fees["EUR"] > 0, "the maker paid in EUR"


def test_order_records_and_trades_carry_fees_as_decimals_in_their_currency(
    engine: matchbook.Engine, maker: int, taker: int
) -> None:
    sell = engine.place_order(START, maker, "BTC_EUR", "SELL", "0.01", price="60100")
    buy = engine.place_order(START, taker, "BTC_EUR", "BUY", "0.01", price="60100")
    paid = engine.fees_collected()
    taker_record = engine.order_history(taker, buy)
    maker_record = engine.order_history(maker, sell)
    assert (taker_record["total_fee"], taker_record["fee_currency"]) == (paid["BTC"], "BTC")
    assert (maker_record["total_fee"], maker_record["fee_currency"]) == (paid["EUR"], "EUR")
    [trade] = engine.order_trades(taker, buy)
    assert (trade["taker_fee"], trade["taker_fee_currency"]) == (paid["BTC"], "BTC")
    assert (trade["maker_fee"], trade["maker_fee_currency"]) == (paid["EUR"], "EUR")
    assert all(isinstance(v, Decimal) for v in (trade["taker_fee"], taker_record["total_fee"]))
    # A future's fees are charged in the quote, on both sides.
    engine.set_index_price(START, "BTC_USD_PERP", "60000")
    engine.place_order(START, maker, "BTC_USD_PERP", "SELL", "0.1", "60000")
    perp = engine.place_order(START, taker, "BTC_USD_PERP", "BUY", "0.1", type="MARKET")
    usd = engine.fees_collected()["USD"]
    [trade] = engine.order_trades(taker, perp)
    assert (trade["taker_fee_currency"], trade["maker_fee_currency"]) == ("USD", "USD")
    assert trade["taker_fee"] + trade["maker_fee"] == usd > 0
    assert engine.order_history(taker, perp)["fee_currency"] == "USD"


def test_history_limits_keep_the_newest_orders_and_trades_and_the_open_ones(
    engine: matchbook.Engine, maker: int, taker: int
) -> None:
    engine.set_history_limits(orders=5, trades=3)
    resting = engine.place_order(START, taker, "BTC_EUR", "BUY", "0.01", price="50000")
    ended = []
    for i in range(20):
        order = engine.place_order(START + i, taker, "BTC_EUR", "BUY", "0.01", price=40000 + i)
        engine.cancel_order(START + i, taker, order)
        ended.append(order)
    for i in range(6):
        engine.place_order(START + 30, maker, "BTC_EUR", "SELL", "0.001", price="60000")
        engine.place_order(START + 30, taker, "BTC_EUR", "BUY", "0.001", price="60000",
                           time_in_force="IMMEDIATE_OR_CANCELLED")
    records, _ = engine.order_page(taker, None, limit=100)
    kept = [r["handle"] for r in records]
    assert resting in kept, "the open order stays"
    assert ended[0] not in kept and len(kept) <= 6
    with pytest.raises(matchbook.OrderNotFound):
        engine.order_history(taker, ended[0])
    trades = [t for r in records for t in engine.order_trades(taker, r["handle"])]
    assert len(trades) == 3, "the newest three trades"
    for bad in (0, -1, 1.5, True, "5"):
        with pytest.raises(matchbook.InvalidArgument):
            engine.set_history_limits(orders=bad)  # type: ignore[arg-type]
    engine.set_history_limits()  # no limit again
