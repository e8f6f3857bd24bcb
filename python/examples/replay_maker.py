"""A market maker backtested on recorded market data (``matchbook.replay``): it joins the
best bid and the best ask of the replayed BTC_EUR book with 0.01 BTC each, requotes when
the touch moves away from its quote, and stops quoting the side that would grow its
inventory past 0.05 BTC. Its orders queue behind the liquidity already at the level and
are filled by the recorded takers. Prints PnL (marked at the last trade), fills and
inventory; with ``--out`` and matplotlib, plots PnL, inventory and fills. On the sample
it loses: the demo's 0.1% maker fee (about 0.60 EUR a fill) is more than the 5 EUR
spread between levels earns on 0.01 BTC; change the fee schedule in the engine's
definition to study other venues.

    python examples/replay_maker.py [--data examples/data/btc_eur_replay.csv] [--out replay.png]
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

import matchbook
from matchbook.replay import Replay, Row, read_csv

SAMPLE = os.path.join(os.path.dirname(__file__), "data", "btc_eur_replay.csv")
SIZE = Decimal("0.01")
LIMIT = Decimal("0.05")


@dataclass
class Result:
    """What the maker ended with."""

    pnl: Decimal
    fills: int
    inventory: Decimal
    series: list[tuple[int, Decimal, Decimal]] = field(default_factory=list)  # time, pnl, inventory
    engine: matchbook.Engine | None = None  # the replayed exchange, to inspect


class Maker:
    """Joins the touch on each side it may trade, one order a side."""

    def __init__(self, engine: matchbook.Engine, account: int) -> None:
        self.engine, self.account = engine, account
        self.quotes: dict[str, tuple[int, Decimal]] = {}  # side -> (handle, price)

    def inventory(self) -> Decimal:
        return self.engine.balances(self.account)["BTC"].available + \
            self.engine.balances(self.account)["BTC"].locked - START_BTC

    def step(self, engine: matchbook.Engine, time: int) -> None:
        book = engine.book("BTC_EUR", depth=1)
        held = self.inventory()
        touch = {"BUY": book["bids"][0][0] if book["bids"] else None,
                 "SELL": book["asks"][0][0] if book["asks"] else None}
        open_handles = {o["handle"] for o in engine.open_orders(self.account)}
        for side in ("BUY", "SELL"):
            quote = self.quotes.get(side)
            if quote and quote[0] not in open_handles:
                del self.quotes[side]  # filled
                quote = None
            allowed = held < LIMIT if side == "BUY" else held > -LIMIT
            price = touch[side]
            if quote and (not allowed or price is None or quote[1] != price):
                engine.cancel_order(time, self.account, quote[0])
                del self.quotes[side]
                quote = None
            if quote is None and allowed and price is not None:
                handle = engine.place_order(time, self.account, "BTC_EUR", side, SIZE,
                                            price=price, time_in_force="POST_ONLY")
                self.quotes[side] = (handle, price)


START_BTC = Decimal("1")
START_EUR = Decimal("100000")


def run(rows: Iterable[Row], start_time: int) -> Result:
    """Replays ``rows`` with the maker quoting; its result, marked at the last trade."""
    engine = matchbook.Engine({"holders": [{"name": "maker", "accounts": [
        {"name": "main", "deposits": {"BTC": str(START_BTC), "EUR": str(START_EUR)}}]}]},
        start_time=start_time, keep_events=False)
    account = engine.account("maker")
    replay = Replay(engine, "BTC_EUR", start_time)
    maker = Maker(engine, account)
    series: list[tuple[int, Decimal, Decimal]] = []

    def step(e: matchbook.Engine, time: int) -> None:
        try:
            maker.step(e, time)
        except matchbook.OrderRejected:
            pass  # a post-only quote the touch moved into: retried next step
        series.append((time, value(e) - START_EUR - START_BTC * last_price(e), maker.inventory()))

    def last_price(e: matchbook.Engine) -> Decimal:
        return e.ticker("BTC_EUR")["last"] or Decimal(0)

    def value(e: matchbook.Engine) -> Decimal:
        b = e.balances(account)
        btc = b["BTC"].available + b["BTC"].locked
        eur = b["EUR"].available + b["EUR"].locked
        return eur + btc * last_price(e)

    replay.run(rows, step)
    fills = sum(len(o["trades"]) for o in _all_orders(engine, account))
    pnl = value(engine) - START_EUR - START_BTC * last_price(engine)
    return Result(pnl=pnl, fills=fills, inventory=maker.inventory(), series=series,
                  engine=engine)


def _all_orders(engine: matchbook.Engine, account: int) -> list[dict]:
    records, before = [], None
    while True:
        page, before = engine.order_page(account, before, limit=500)
        records += page
        if before is None:
            return records


def plot(result: Result, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    start = result.series[0][0]
    minutes = [(t - start) / 60e9 for t, _, _ in result.series]
    fig, (pnl, held, fills) = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    pnl.plot(minutes, [float(p) for _, p, _ in result.series])
    pnl.set_ylabel("PnL (EUR)")
    held.step(minutes, [float(i) for _, _, i in result.series])
    held.set_ylabel("inventory (BTC)")
    if result.engine is not None:
        account = result.engine.account("maker")
        trades = [t for o in _all_orders(result.engine, account)
                  for t in result.engine.order_trades(account, o["handle"])]
        fills.scatter([(t["time"] - start) / 60e9 for t in trades],
                      [float(t["price"]) for t in trades], s=4)
    fills.set_ylabel("fill price (EUR)")
    fills.set_xlabel("minutes")
    fig.savefig(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=SAMPLE)
    parser.add_argument("--out")
    args = parser.parse_args()
    rows = list(read_csv(args.data))
    result = run(rows, rows[0].time_ns)
    print(f"pnl {result.pnl:.2f} EUR, fills {result.fills}, inventory {result.inventory} BTC")
    if args.out:
        plot(result, args.out)


if __name__ == "__main__":
    main()
