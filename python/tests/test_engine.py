"""Every public function of matchbook.Engine against what the engine must do, and its
error cases mapped to the exception classes."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pytest

import matchbook
from matchbook import errors

from conftest import DEFINITION, START


def test_construction_from_mapping_text_and_file(tmp_path) -> None:
    toml = '[[holders]]\nname = "a"\n[[holders.accounts]]\nname = "main"\ndeposits = { EUR = "5" }\n'
    e = matchbook.Engine.from_toml(toml, start_time=START)
    assert e.balances(e.account("a"))["EUR"].available == Decimal("5")
    j = matchbook.Engine.from_json('{"holders": [{"name": "b"}]}')
    assert j.holder("b") == 0
    path = tmp_path / "exchange.toml"
    path.write_text(toml)
    assert matchbook.Engine.from_file(path).account("a") == 0
    (tmp_path / "x.json").write_text('{"holders": []}')
    assert matchbook.Engine.from_file(tmp_path / "x.json").instruments
    assert "BTC_EUR" in matchbook.Engine().instruments
    exact = matchbook.Engine({"holders": [{"name": "d", "accounts": [
        {"name": "main", "deposits": {"EUR": Decimal("0.10")}}]}]})
    assert exact.balances(exact.account("d"))["EUR"].available == Decimal("0.1")
    with pytest.raises(matchbook.InvalidArgument):
        matchbook.Engine({"holderz": []})
    with pytest.raises(matchbook.InvalidArgument):
        matchbook.Engine.from_toml("[[holders]]\nname = 3")


def test_reference_data(engine: matchbook.Engine) -> None:
    btc_eur = engine.instruments["BTC_EUR"]
    assert (btc_eur["base"], btc_eur["quote"], btc_eur["type"]) == ("BTC", "EUR", "SPOT")
    assert engine.instruments["BTC_USD_PERP"]["type"] == "PERP"
    assert engine.currencies["EUR"]["scale"] >= 2
    assert engine.tick("BTC_EUR") == Decimal("0.01")
    assert engine.lot("BTC_EUR") == Decimal("0.00001")
    assert engine.holder("taker") == 1
    with pytest.raises(matchbook.UnknownReference) as info:
        engine.account("nobody")
    assert info.value.code == 4002
    with pytest.raises(matchbook.UnknownReference):
        engine.account("maker", "nothing")
    with pytest.raises(matchbook.UnknownReference):
        engine.tick("NOPE")


def test_accounts_funds_and_transfers(engine: matchbook.Engine, maker: int) -> None:
    holder, main = engine.create_holder(START)
    sub = engine.create_subaccount(START, holder, "savings")
    engine.deposit(START, main, "EUR", "100.5")
    engine.withdraw(START, main, "EUR", Decimal("0.5"))
    engine.transfer(START, holder, main, sub, "EUR", 40)
    assert engine.balances(main)["EUR"] == (Decimal("60"), Decimal("0"))
    assert engine.balances(sub)["EUR"].available == Decimal("40")
    with pytest.raises(matchbook.InsufficientFunds) as info:
        engine.transfer(START, holder, main, sub, "EUR", "1000")
    assert info.value.name == "INSUFFICIENT_BALANCE"
    with pytest.raises(matchbook.PermissionDenied):
        engine.transfer(START, holder, main, maker, "EUR", "1")
    with pytest.raises(matchbook.InvalidArgument):
        engine.deposit(START, main, "EUR", "1.123456789123")
    with pytest.raises(matchbook.UnknownReference):
        engine.deposit(START, main, "XYZ", "1")
    engine.set_derisk(START, sub, True)
    with pytest.raises(matchbook.AccountInDerisk):
        engine.transfer(START, holder, sub, main, "EUR", "1")
    engine.set_derisk(START, sub, False)
    engine.transfer(START, holder, sub, main, "EUR", "1")
    engine.close_subaccount(START, sub)
    with pytest.raises(matchbook.AccountError):
        engine.transfer(START, holder, main, sub, "EUR", "1")
    with pytest.raises(matchbook.AccountError):
        engine.close_subaccount(START, main)
    hedge = engine.account("maker", "hedge")
    engine.set_blp_threshold(START, hedge, "EUR", "90")
    with pytest.raises(matchbook.InsufficientFunds) as blp:
        engine.transfer(START, engine.holder("maker"), hedge, maker, "EUR", "20")
    assert blp.value.code == 2003
    with pytest.raises(matchbook.AccountError):
        engine.set_blp_threshold(START, main, "EUR", "1")
    with pytest.raises(matchbook.InvalidArgument):
        engine.create_subaccount(START, holder, "x", kind="gold")


def test_orders_of_every_type_and_time_in_force(engine: matchbook.Engine, maker: int, taker: int) -> None:
    t = START + 1
    bid = engine.place_order(t, maker, "BTC_EUR", "BUY", "0.1", "59900", client_id="00000000-0000-0000-0000-000000000001")
    ask = engine.place_order(t, maker, "BTC_EUR", "SELL", "0.1", "60100", time_in_force="POST_ONLY")
    gtt = engine.place_order(t, maker, "BTC_EUR", "BUY", "0.1", "59000", time_in_force="GOOD_TILL_TIME",
                             expire_at=t + 60_000_000_000)
    stop = engine.place_order(t, maker, "BTC_EUR", "SELL", "0.01", "59000", type="STOP", trigger_price="59500")
    assert {o["handle"] for o in engine.open_orders(maker)} == {bid, ask, gtt, stop}
    with pytest.raises(matchbook.OrderRejected) as post:
        engine.place_order(t, taker, "BTC_EUR", "BUY", "0.01", "60100", time_in_force="POST_ONLY")
    assert post.value.code == 3002
    with pytest.raises(matchbook.OrderRejected) as fok:
        engine.place_order(t, taker, "BTC_EUR", "BUY", "1", "60100", time_in_force="FILL_OR_KILL")
    assert fok.value.name == "INSUFFICIENT_LIQUIDITY"
    # Both were accepted and ended at once: history keeps them with their rejection.
    fok_record = engine.order_history(taker, fok.value.order & (2**64 - 1))
    assert (fok_record["status"], fok_record["reason"]) == ("FILLED_REJECTED", "INSUFFICIENT_LIQUIDITY")
    post_record = engine.order_history(taker, post.value.order & (2**64 - 1))
    assert (post_record["status"], post_record["reason"]) == ("FILLED_REJECTED", "POST_ONLY_WOULD_TAKE")
    ioc = engine.place_order(t, taker, "BTC_EUR", "BUY", "0.04", "60100", time_in_force="IMMEDIATE_OR_CANCELLED")
    market = engine.place_order(t, taker, "BTC_EUR", "BUY", "0.01", type="MARKET")
    assert engine.balances(taker)["BTC"].available > 0
    with pytest.raises(matchbook.OrderNotFound):
        engine.cancel_order(t, taker, ioc)
    assert engine.order_history(taker, ioc & (2**64 - 1))["status"] == "FILLED_FULLY"
    assert engine.order_history(taker, market & (2**64 - 1))["filled"] == Decimal("0.01")
    assert engine.order(maker, client_id="00000000-0000-0000-0000-000000000001")["handle"] == bid
    engine.amend_order(t, maker, bid, amount="0.2", price="59950")
    amended = engine.order(maker, bid)
    assert (amended["amount"], amended["price"]) == (Decimal("0.2"), Decimal("59950"))
    with pytest.raises(matchbook.InvalidOrder):
        engine.amend_order(t, maker, bid)
    with pytest.raises(matchbook.OrderNotFound):
        engine.order(taker, bid)
    listed = engine.place_order(t, maker, "BTC_EUR", "BUY", "0.1", "58000",
                                client_id="00000000-0000-0000-0000-0000000000aa")
    engine.cancel_all(t, maker, client_ids=["00000000-0000-0000-0000-0000000000aa"])
    with pytest.raises(matchbook.OrderNotFound):
        engine.order(maker, listed)
    with pytest.raises(matchbook.InvalidArgument):
        engine.cancel_all(t, maker, client_ids=["nope"])
    engine.cancel_by_client_id(t, maker, "00000000-0000-0000-0000-000000000001")
    engine.cancel_all(t, maker, orders=[gtt])
    engine.cancel_all(t, maker, instrument="BTC_EUR")
    assert engine.open_orders(maker) == []
    engine.place_order(t, maker, "ETH_EUR", "BUY", "1", "100")
    engine.cancel_all(t, maker)
    assert engine.open_orders(maker) == []
    with pytest.raises(matchbook.InvalidOrder):
        engine.place_order(t, maker, "BTC_EUR", "BUY", "0", "100")
    with pytest.raises(matchbook.InvalidArgument):
        engine.place_order(t, maker, "BTC_EUR", "SIDEWAYS", "1", "100")
    with pytest.raises(matchbook.InvalidArgument):
        engine.place_order(t, maker, "BTC_EUR", "BUY", "1", "100.001")
    with pytest.raises(matchbook.InvalidArgument):
        engine.place_order(t, maker, "BTC_EUR", "BUY", "1", "100", client_id="not-a-uuid")
    with pytest.raises(matchbook.InvalidArgument):
        engine.place_order("yesterday", maker, "BTC_EUR", "BUY", "1", "100")  # type: ignore[arg-type]
    with pytest.raises(matchbook.InvalidArgument):
        engine.cancel_all(t, maker, instrument="BTC_EUR", orders=[1])


def test_self_trade_prevention_and_instrument_state(engine: matchbook.Engine, maker: int) -> None:
    t = START + 2
    engine.set_stp_mode(t, maker, "CANCEL_NEWEST")
    engine.place_order(t, maker, "BTC_EUR", "SELL", "0.1", "60000")
    engine.place_order(t, maker, "BTC_EUR", "BUY", "0.1", "60000")
    assert len(engine.open_orders(maker)) == 1, "the newest side of a self trade is cancelled"
    engine.place_order(t, maker, "BTC_EUR", "BUY", "0.1", "60000", stp="NONE")
    assert engine.open_orders(maker) == []
    with pytest.raises(matchbook.InvalidArgument):
        engine.set_stp_mode(t, maker, "SOMETIMES")
    engine.set_instrument_state(t, "BTC_EUR", "SUSPENDED")
    with pytest.raises(matchbook.OrderRejected):
        engine.place_order(t, maker, "BTC_EUR", "BUY", "0.1", "60000")
    engine.set_instrument_state(t, "BTC_EUR", "ACTIVE")
    assert engine.instruments["BTC_EUR"]["state"] == "ACTIVE"
    with pytest.raises(matchbook.InvalidArgument):
        engine.set_instrument_state(t, "BTC_EUR", "ASLEEP")


def test_market_data_views(engine: matchbook.Engine, maker: int, taker: int) -> None:
    t = START + 60_000_000_000
    engine.place_order(t, maker, "BTC_EUR", "BUY", "0.1", "59900")
    engine.place_order(t, maker, "BTC_EUR", "BUY", "0.2", "59900")
    engine.place_order(t, maker, "BTC_EUR", "SELL", "0.1", "60100")
    engine.place_order(t + 1, taker, "BTC_EUR", "BUY", "0.04", "60100")
    l1 = engine.book("BTC_EUR", level=1)
    assert l1["bids"] == [(Decimal("59900"), Decimal("0.3"), 2)]
    l2 = engine.book("BTC_EUR", depth=5)
    assert l2["asks"] == [(Decimal("60100"), Decimal("0.06"), 1)]
    l3 = engine.book("BTC_EUR", level=3)
    assert [row[1] for row in l3["bids"]] == [Decimal("0.1"), Decimal("0.2")]
    assert all(row[3] == maker for row in l3["bids"])
    with pytest.raises(matchbook.InvalidArgument):
        engine.book("BTC_EUR", level=4)
    columns = engine.book_columns("BTC_EUR", depth=5)
    assert columns["side"].tolist() == [0, 1]
    assert columns["price"].tolist() == [5_990_000, 6_010_000]
    assert columns["amount"].tolist() == [30_000, 6_000]
    assert columns["orders"].tolist() == [2, 1]
    ticker = engine.ticker("BTC_EUR")
    assert (ticker["last"], ticker["trades"], ticker["bid"]) == (Decimal("60100"), 1, Decimal("59900"))
    candles = engine.candles("BTC_EUR", "MINUTES", 1, t - 60_000_000_000, t + 60_000_000_000)
    traded = candles["total_amount"] > 0
    assert candles["close"][traded].tolist() == [6_010_000]
    assert candles["total_amount"][traded].tolist() == [4_000]
    with pytest.raises(matchbook.InvalidArgument):
        engine.candles("BTC_EUR", "MINUTES", 7, t, t)
    trades = engine.trades()
    assert trades.rows == 1 and trades["price"].tolist() == [6_010_000]
    assert trades["taker_account"].tolist() == [taker]
    assert engine.trades(after=int(trades["id"][0])).rows == 0
    assert engine.trades(instrument="ETH_EUR").rows == 0
    frame = trades.to_pandas()
    assert list(frame["amount"]) == [4_000]
    assert trades.to_polars()["amount"].to_list() == [4_000]
    assert "Columns(1 rows" in repr(trades)
    kinds = [e["type"] for e in engine.events()]
    assert "Trade" in kinds and "OrderBooked" in kinds
    assert list(engine.events()) == [], "events are delivered once"


def test_futures_funding_and_liquidation(engine: matchbook.Engine, maker: int, taker: int) -> None:
    t = START + 10
    engine.set_index_price(t, "BTC_USD_PERP", "60000")
    engine.place_order(t, maker, "BTC_USD_PERP", "SELL", "0.1", "60000")
    engine.place_order(t, taker, "BTC_USD_PERP", "BUY", "0.1", type="MARKET")
    [position] = engine.positions(taker)
    assert (position["size"], position["entry_price"]) == (Decimal("0.1"), Decimal("60000"))
    assert engine.positions(maker)[0]["size"] == Decimal("-0.1")
    with pytest.raises(matchbook.InvalidOrder) as reduce:
        engine.place_order(t, taker, "BTC_USD_PERP", "BUY", "0.1", "60000", reduce_only=True)
    assert reduce.value.code == 2005
    funding = engine.funding("BTC_USD_PERP")
    assert funding["index_price"] == Decimal("60000") and funding["open_interest"] == 1000
    engine.advance_time(t + 9 * 3_600_000_000_000)
    assert engine.now == t + 9 * 3_600_000_000_000
    assert engine.funding("BTC_USD_PERP")["next_settlement"] > engine.now
    engine.place_order(engine.now, maker, "BTC_USD_PERP", "BUY", "0.5", "60000")
    engine.liquidate(engine.now, taker)
    assert engine.positions(taker) == []
    with pytest.raises(matchbook.InvalidOrder) as not_futures:
        engine.funding("BTC_EUR")
    assert not_futures.value.code == 1013


def test_dead_man_switch(engine: matchbook.Engine, maker: int, taker: int) -> None:
    t = START + 10
    engine.place_order(t, maker, "BTC_EUR", "BUY", "0.1", "50000")
    engine.place_order(t, taker, "BTC_EUR", "BUY", "0.1", "50000")
    engine.set_cancel_all_after(t, maker, 5_000_000_000)
    engine.advance_time(t + 4_000_000_000)
    assert len(engine.open_orders(maker)) == 1
    engine.advance_time(t + 5_000_000_000)
    assert engine.open_orders(maker) == [] and len(engine.open_orders(taker)) == 1
    with pytest.raises(matchbook.UnknownReference):
        engine.set_cancel_all_after(engine.now, 99, 1)


def test_time_as_datetime_and_state_hash_replays() -> None:
    when = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    a = matchbook.Engine(DEFINITION, start_time=when)
    b = matchbook.Engine(DEFINITION, start_time=START)
    assert a.state_hash() == b.state_hash()
    for e in (a, b):
        e.place_order(START + 5, e.account("maker"), "BTC_EUR", "BUY", "0.1", "59000")
    assert a.state_hash() == b.state_hash()
    b.place_order(START + 6, b.account("maker"), "BTC_EUR", "BUY", "0.1", "59000")
    assert a.state_hash() != b.state_hash()
    with pytest.raises(matchbook.InvalidArgument):
        matchbook.Engine(DEFINITION, start_time=dt.datetime(2026, 1, 1))


def test_batch_matches_the_per_order_path() -> None:
    rng = np.random.default_rng(7)
    n = 2_000
    side = rng.integers(0, 2, n).astype(np.uint8)
    price = 6_000_000 + rng.integers(-300, 300, n)
    amount = rng.integers(1, 5_000, n)
    tif = rng.choice([0, 1, 2, 3], n).astype(np.uint8)
    times = START + np.arange(n, dtype=np.int64)
    batch = matchbook.Engine(DEFINITION, start_time=START)
    single = matchbook.Engine(DEFINITION, start_time=START)
    account = np.where(side == 0, batch.account("taker"), batch.account("maker")).astype(np.uint32)
    answers = batch.submit_orders(times, account, "BTC_EUR", side, price, amount, tif)
    tifs = ["GOOD_TILL_CANCELLED", "IMMEDIATE_OR_CANCELLED", "FILL_OR_KILL", "POST_ONLY"]
    statuses = []
    for i in range(n):
        try:
            single.place_order(int(times[i]), int(account[i]), "BTC_EUR", "BUY" if side[i] == 0 else "SELL",
                               Decimal(int(amount[i])).scaleb(-5), Decimal(int(price[i])).scaleb(-2),
                               time_in_force=tifs[tif[i]])
            statuses.append(0)
        except matchbook.MatchbookError as e:
            statuses.append(e.code)
    assert answers["status"].tolist() == statuses
    assert batch.state_hash() == single.state_hash()
    for column in ("id", "price", "amount", "taker_account", "maker_fee"):
        assert batch.trades()[column].tolist() == single.trades()[column].tolist()
    assert batch.trades().rows > 100, "the flow trades"
    assert (answers["status"] != 0).any(), "and some orders are refused"


def test_batch_argument_errors(engine: matchbook.Engine) -> None:
    side = np.zeros(3, dtype=np.uint8)
    with pytest.raises(matchbook.InvalidArgument):
        engine.submit_orders(START, 0, "BTC_EUR", side, np.ones(2), np.ones(3))
    with pytest.raises(matchbook.InvalidArgument):
        engine.submit_orders(START, 0, "BTC_EUR", side, np.ones(3), np.ones(3), time_in_force="SOON")
    bad = engine.submit_orders(START, 0, "BTC_EUR", np.array([7], dtype=np.uint8), 100, 100)
    assert bad["status"].tolist() == [9003]
    assert engine.submit_orders(START, 0, "BTC_EUR", np.array([], dtype=np.uint8), 1, 1).rows == 0


def test_every_error_class_is_chosen_from_the_code() -> None:
    cases = {
        1001: errors.InvalidOrder, 1009: errors.UnknownReference, 2001: errors.InsufficientFunds,
        2004: errors.AccountInDerisk, 3001: errors.OrderRejected, 3005: errors.OrderNotFound,
        4004: errors.PermissionDenied, 4006: errors.AccountError, 9003: errors.InvalidArgument,
        9999: errors.MatchbookError,
    }
    for code, cls in cases.items():
        e = errors.error_for(code, "NAME", "message")
        assert type(e) is cls and e.code == code and "NAME (%d): message" % code == str(e)
