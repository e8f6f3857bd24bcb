"""ccxt's streaming client (`ccxt.pro.onetrading`), unchanged but for its URL, against
matchbook's WebSocket streams: watch_ticker, watch_tickers and watch_ohlcv, each checked
against what the REST client reads at the same moment."""

import asyncio

import ccxt.pro

TIMEOUT = 10


def streaming_client(server):
    ex = ccxt.pro.onetrading({"enableRateLimit": False})
    base = server["base"]
    ex.urls["api"] = {"public": base, "private": base, "ws": base.replace("http://", "ws://")}
    return ex


def run(server, body):
    async def main():
        ex = streaming_client(server)
        try:
            await ex.load_markets()
            await body(ex)
        finally:
            await ex.close()

    asyncio.run(main())


def test_watch_ticker_and_tickers(exchange_server, client):
    async def body(ex):
        ticker = await asyncio.wait_for(ex.watch_ticker("BTC/EUR"), TIMEOUT)
        rest = client.fetch_ticker("BTC/EUR")
        assert ticker["symbol"] == "BTC/EUR"
        assert ticker["last"] == rest["last"] and ticker["high"] == rest["high"]
        # A second market on the same socket: ccxt sends UPDATE_SUBSCRIPTION.
        tickers = await asyncio.wait_for(ex.watch_tickers(["BTC/EUR", "ETH/EUR"]), TIMEOUT)
        assert set(tickers) == {"BTC/EUR", "ETH/EUR"}
        assert tickers["ETH/EUR"]["last"] == client.fetch_ticker("ETH/EUR")["last"]

    run(exchange_server, body)


def test_watch_ohlcv(exchange_server, client):
    async def body(ex):
        candles = await asyncio.wait_for(ex.watch_ohlcv("BTC/EUR", "1m"), TIMEOUT)
        rest = client.fetch_ohlcv("BTC/EUR", "1m", limit=1)
        assert candles, "the current candle"
        stream, fetched = candles[-1], rest[-1]
        # The same candle: ccxt keeps the stream's time (the period's last millisecond) and
        # aligns the REST one to the period's start; it reads the stream's quote volume and
        # REST's base amount, so only open, high, low and close compare directly.
        assert stream[0] == fetched[0] + 60_000 - 1
        assert stream[1:5] == fetched[1:5]

    run(exchange_server, body)
