"""The ccxt `onetrading` client, unchanged, against matchbook: markets, ticker, order book,
candles, balance, create / fetch / cancel orders, and trades."""

import json
import urllib.request
import uuid

import ccxt
import pytest


def test_markets_and_public_data(client):
    markets = client.load_markets()
    btc = markets["BTC/EUR"]
    assert btc["id"] == "BTC_EUR" and btc["spot"] and btc["active"]
    assert "BTC/USD:USD" in markets, "the perpetual"
    assert any(m["future"] for m in markets.values()), "the dated future"

    ticker = client.fetch_ticker("BTC/EUR")
    assert ticker["bid"] == 59940.0 and ticker["ask"] == 60120.0
    assert ticker["last"] == 60060.0
    tickers = client.fetch_tickers()
    assert "BTC/EUR" in tickers

    book = client.fetch_order_book("BTC/EUR")
    assert book["bids"][0][0] == 59940.0 and book["asks"][0][0] == 60120.0
    assert book["bids"][0][0] > book["bids"][1][0]

    candles = client.fetch_ohlcv("BTC/EUR", "1m", limit=5)
    assert candles, "at least the current minute"
    assert candles[-1][4] == 60060.0, "close of the demo trade's minute"

    assert client.fetch_time() > 1_700_000_000_000
    currencies = client.fetch_currencies()
    assert "BTC" in currencies and "SHIB" in currencies


def test_balance(client):
    balance = client.fetch_balance()
    assert balance["BTC"]["free"] == 10.0
    assert balance["EUR"]["used"] == 0.0


def test_order_lifecycle_and_trades(client):
    client.load_markets()
    client_id = str(uuid.uuid4())
    order = client.create_order("BTC/EUR", "limit", "buy", 0.01, 59000.0,
                                {"client_id": client_id})
    assert order["id"]
    assert order["status"] == "open"

    fetched = client.fetch_order(order["id"], "BTC/EUR")
    assert fetched["id"] == order["id"]
    assert fetched["price"] == 59000.0 and fetched["amount"] == 0.01
    assert fetched["status"] == "open"

    open_orders = client.fetch_open_orders("BTC/EUR")
    assert order["id"] in [o["id"] for o in open_orders]
    assert client.fetch_balance()["EUR"]["used"] == pytest.approx(590.0)

    cancelled = client.cancel_order(order["id"], "BTC/EUR")
    assert cancelled["id"] == order["id"]
    assert client.fetch_order(order["id"], "BTC/EUR")["status"] == "canceled"

    taker = client.create_order("BTC/EUR", "limit", "buy", 0.02, 60200.0)
    filled = client.fetch_order(taker["id"], "BTC/EUR")
    assert filled["status"] == "closed"
    assert filled["filled"] == 0.02
    assert filled["average"] == pytest.approx(60150.0)

    trades = client.fetch_my_trades("BTC/EUR")
    mine = [t for t in trades if t["order"] == taker["id"]]
    assert len(mine) == 2
    assert {t["price"] for t in mine} == {60120.0, 60180.0}
    assert all(t["side"] == "buy" and t["takerOrMaker"] == "taker" for t in mine)
    assert all(t["fee"]["currency"] == "BTC" for t in mine)
    order_trades = client.fetch_order_trades(taker["id"], "BTC/EUR")
    assert len(order_trades) == 2


def test_errors_map_to_ccxt_exceptions(client):
    client.load_markets()
    with pytest.raises(ccxt.InsufficientFunds):
        client.create_order("BTC/EUR", "limit", "buy", 100, 50000.0)
    with pytest.raises(ccxt.OrderNotFound):
        client.cancel_order("00000040-0000-8180-8000-0000000fffff", "BTC/EUR")
    bad = ccxt.onetrading({"apiKey": "mb_nonsense", "enableRateLimit": False})
    bad.urls["api"] = client.urls["api"]
    with pytest.raises(ccxt.AuthenticationError):
        bad.fetch_balance()


def test_a_revoked_key_is_an_authentication_error(client, exchange_server):
    """A key revoked through the admin listener: ccxt raises its AuthenticationError, with
    the public exchange's APIKEY_REVOKED in the message (INVALID_APIKEY before)."""
    keys = exchange_server["keys"]
    admin = next(k["key"] for k in keys if "ADMIN" in k["scopes"])
    trader = next(k for k in keys if "TRADE" in k["scopes"] and k["account"] == "main")

    def post(path, body):
        request = urllib.request.Request(
            exchange_server["admin"] + path, data=json.dumps(body).encode(), method="POST",
            headers={"Authorization": f"Bearer {admin}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request) as answer:
            return json.load(answer)

    issued = post("/admin/keys", {"account_id": trader["account_id"], "scopes": ["READ_ONLY"]})
    reader = ccxt.onetrading({"apiKey": issued["key"], "enableRateLimit": False})
    reader.urls["api"] = client.urls["api"]
    assert "EUR" in reader.fetch_balance()["total"]
    post("/admin/keys/revoke", {"key": issued["key"]})
    with pytest.raises(ccxt.AuthenticationError, match="APIKEY_REVOKED"):
        reader.fetch_balance()


def test_fills_closed_orders_and_candle_times(client, exchange_server):
    """What a ccxt user reads: a crossing order's fill in the create answer, IOC by its
    short name, filled orders among the closed ones, candles at the starts ccxt computes."""
    client.load_markets()
    book = client.fetch_order_book("ETH/EUR")
    (first_price, first_amount), (second_price, second_amount) = book["asks"][:2]

    taker = client.create_order("ETH/EUR", "limit", "buy", first_amount, first_price)
    assert taker["filled"] == first_amount, "the create answer reports the fill"
    assert taker["price"] == first_price

    ioc = client.create_order("ETH/EUR", "limit", "buy", second_amount, second_price,
                              {"timeInForce": "IOC"})
    assert ioc["filled"] == second_amount
    assert client.fetch_order(ioc["id"], "ETH/EUR")["status"] == "closed"

    closed = {o["id"]: o for o in client.fetch_closed_orders("ETH/EUR")}
    assert taker["id"] in closed and ioc["id"] in closed, "filled orders are closed orders"
    assert closed[taker["id"]]["status"] == "closed"
    assert closed[taker["id"]]["filled"] == first_amount

    candles = client.fetch_ohlcv("ETH/EUR", "1m", limit=5)
    raw = client.publicGetCandlesticksInstrumentCode({
        "instrument_code": "ETH_EUR", "unit": "MINUTES", "period": 1, "countBack": 50})
    starts = {client.parse8601(c["start_time"]): float(c["close"])
              for c in raw["candlesticks"]}
    assert candles, "at least the minute of the trades above"
    for timestamp, _, _, _, close, _ in candles:
        assert starts.get(timestamp) == close, "ccxt keys each candle by its start"
    assert candles[-1][0] <= client.milliseconds(), "no candle for a minute not begun"
