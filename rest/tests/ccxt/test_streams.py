"""ccxt's streaming client (`ccxt.pro.onetrading`), unchanged but for its URL, against
matchbook's WebSocket streams: watch_ticker, watch_tickers, watch_ohlcv and watch_order_book, each checked
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


def test_watch_order_book(exchange_server, client):
    def levels(side):
        # ccxt stores an update's level with a third element; price and amount compare.
        return [level[:2] for level in side]

    async def body(ex):
        book = await asyncio.wait_for(ex.watch_order_book("BTC/EUR"), TIMEOUT)
        rest = client.fetch_order_book("BTC/EUR")
        assert levels(book["bids"]) == levels(rest["bids"])
        assert levels(book["asks"]) == levels(rest["asks"])
        # A bid below the book arrives as an update; its cancellation removes the level.
        order = client.create_order("BTC/EUR", "limit", "buy", 0.5, 100.0)

        async def until(present):
            while True:
                book = await ex.watch_order_book("BTC/EUR")
                if ([100.0, 0.5] in levels(book["bids"])) == present:
                    return book

        book = await asyncio.wait_for(until(True), TIMEOUT)
        assert levels(book["bids"]) == levels(client.fetch_order_book("BTC/EUR")["bids"])
        client.cancel_order(order["id"], "BTC/EUR")
        book = await asyncio.wait_for(until(False), TIMEOUT)
        assert levels(book["bids"]) == levels(client.fetch_order_book("BTC/EUR")["bids"])

    run(exchange_server, body)
