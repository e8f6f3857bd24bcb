"""ccxt's streaming client (`ccxt.pro.onetrading`), unchanged but for its URL, against
matchbook's WebSocket streams: watch_ticker, watch_tickers, watch_ohlcv, watch_order_book,
watch_order_book with a limit (the subscription's depth), watch_balance, watch_orders and
watch_my_trades, each checked
against what the REST client reads at the same moment."""

import asyncio
import uuid

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


def test_watch_order_book_with_a_limit(exchange_server, client):
    """ccxt sends a limit as the subscription's depth. The snapshot held the best bid
    only, so when that level was taken the client's book had no bid at all while bids
    rested; the next bid must come into it."""
    def levels(side):
        return [level[:2] for level in side]

    async def body(ex):
        book = await asyncio.wait_for(ex.watch_order_book("BTC/EUR", 1), TIMEOUT)
        rest = client.fetch_order_book("BTC/EUR")
        assert levels(book["bids"]) == levels(rest["bids"])[:1]
        (price, amount), second = rest["bids"][0][:2], rest["bids"][1][:2]
        other_trader(exchange_server).create_order("BTC/EUR", "limit", "sell", amount, price)

        async def until_second():
            while True:
                book = await ex.watch_order_book("BTC/EUR", 1)
                if levels(book["bids"]) == [second]:
                    return book

        await asyncio.wait_for(until_second(), TIMEOUT)
        assert levels(client.fetch_order_book("BTC/EUR")["bids"])[:1] == [second]

    run(exchange_server, body)


def admin(server, path, body):
    import json
    import urllib.request

    root = next(k for k in server["keys"] if "ADMIN" in k["scopes"])
    request = urllib.request.Request(
        server["admin"] + path, data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": "Bearer " + root["key"], "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        return json.load(answer)


def other_trader(server):
    """A REST client for a new, funded holder: the other side of our fills."""
    account = admin(server, "/admin/holders", {})["account_id"]
    for currency, amount in [("BTC", "10"), ("EUR", "1000000")]:
        admin(server, "/admin/deposits",
              {"account_id": account, "currency": currency, "amount": amount})
    key = admin(server, "/admin/keys", {"account_id": account, "scopes": ["TRADE"]})["key"]
    ex = ccxt.onetrading({"apiKey": key, "enableRateLimit": False})
    ex.urls["api"] = {"public": server["base"], "private": server["base"]}
    return ex


def test_watch_balance_orders_and_my_trades(exchange_server, client):
    async def until(watch, done):
        while True:
            value = await watch()
            if done(value):
                return value

    async def during(action, watch, done):
        """Watches from before `action` (run off the loop) until `done`: an update that
        arrives while the action's answer is on its way is not missed."""
        watcher = asyncio.ensure_future(until(watch, done))
        await asyncio.to_thread(action)
        return await asyncio.wait_for(watcher, TIMEOUT)

    def same_balance(cached, code):
        fetched = client.fetch_balance()[code]
        return (cached[code]["free"], cached[code]["used"]) == (fetched["free"], fetched["used"])

    async def body(ex):
        ex.apiKey = client.apiKey
        await asyncio.wait_for(ex.watch_balance(), TIMEOUT)
        assert same_balance(ex.balance, "EUR")

        # A bid inside the spread, known by its client id before it is placed.
        price = client.fetch_order_book("BTC/EUR")["bids"][0][0] + 0.01
        client_id = str(uuid.uuid4())
        placed = {}

        def place():
            placed.update(client.create_order(
                "BTC/EUR", "limit", "buy", 0.2, price, {"clientOrderId": client_id}))

        orders = await during(place, lambda: ex.watch_orders("BTC/EUR"),
                              lambda os: any(o["clientOrderId"] == client_id for o in os))
        mine = next(o for o in orders if o["clientOrderId"] == client_id)
        assert mine["id"] == placed["id"]
        assert (mine["status"], mine["amount"], mine["price"]) == ("open", 0.2, price)
        assert same_balance(ex.balance, "EUR"), "the update carried what the order locked"

        # Another holder sells half of it into the bid.
        seller = other_trader(exchange_server)
        trades = await during(
            lambda: seller.create_order("BTC/EUR", "limit", "sell", 0.1, price),
            lambda: ex.watch_my_trades("BTC/EUR"),
            lambda ts: any(t["order"] == placed["id"] for t in ts))
        fill = next(t for t in trades if t["order"] == placed["id"])
        rest_fill = next(t for t in client.fetch_my_trades("BTC/EUR") if t["id"] == fill["id"])
        assert (fill["price"], fill["amount"], fill["side"]) == (price, 0.1, "buy")
        assert (rest_fill["price"], rest_fill["amount"]) == (price, 0.1)
        assert fill["fee"]["cost"] == rest_fill["fee"]["cost"]
        assert same_balance(ex.balance, "EUR") and same_balance(ex.balance, "BTC")

        orders = await during(
            lambda: client.cancel_order(placed["id"], "BTC/EUR"),
            lambda: ex.watch_orders("BTC/EUR"),
            lambda os: any(o["id"] == placed["id"] and o["status"] != "open" for o in os))
        assert next(o for o in orders if o["id"] == placed["id"])["status"] == "closed"
        assert same_balance(ex.balance, "EUR"), "the update carried what the order released"

    run(exchange_server, body)


def test_watch_orders_on_the_trading_channel(exchange_server, client):
    async def seen(ex, client_id):
        while True:
            orders = await ex.watch_orders("BTC/EUR", params={"channel": "TRADING"})
            mine = [o for o in orders if o["clientOrderId"] == client_id]
            if mine:
                return mine[-1]

    async def body(ex):
        ex.apiKey = client.apiKey
        # The first order may come before the subscription is in place: a few tries, each
        # watching from before its order is placed.
        for _ in range(5):
            client_id = str(uuid.uuid4())
            watcher = asyncio.ensure_future(seen(ex, client_id))
            placed = await asyncio.to_thread(
                client.create_order, "BTC/EUR", "limit", "buy", 0.3, 100.0,
                {"clientOrderId": client_id})
            try:
                order = await asyncio.wait_for(watcher, 2)
                break
            except asyncio.TimeoutError:
                continue
        else:
            raise AssertionError("no TRADING event for any of five orders")
        assert order["id"] == placed["id"]
        assert (order["side"], order["amount"], order["price"]) == ("buy", 0.3, 100.0)
        assert order["status"] == "OPEN"

    run(exchange_server, body)
