"""Backtest of a simple market maker on BTC_EUR against a replayed order flow.

The flow is a seeded random walk of the fair price with takers arriving at random times
(or a CSV of ``time_ns,side,amount`` given with ``--flow``). Every second the maker
cancels its quotes and quotes both sides around the last fair price, skewed against its
inventory. At the end it prints the PnL (marked at the last trade) and writes a PNG with
the one-minute candles, the book's depth at the end, and the maker's inventory over time.

    python examples/backtest.py --seconds 3600 --out backtest.png
"""

from __future__ import annotations

import argparse
import csv
from decimal import Decimal

import numpy as np

import matchbook

START = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
SECOND = 1_000_000_000


def synthetic_flow(seconds: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fair price per second (EUR) and takers: times, sides (0 buy, 1 sell), amounts (BTC)."""
    rng = np.random.default_rng(seed)
    fair = 60_000 * np.exp(np.cumsum(rng.normal(0, 0.0004, seconds)))
    count = seconds * 2
    times = np.sort(rng.integers(0, seconds * SECOND, count)) + START
    sides = rng.integers(0, 2, count)
    amounts = np.round(rng.exponential(0.01, count) + 0.001, 5)
    return fair, times, sides, amounts


def read_flow(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    with open(path, newline="") as f:
        rows = [(int(r[0]), int(r[1]), float(r[2])) for r in csv.reader(f)]
    times, sides, amounts = (np.array(c) for c in zip(*rows))
    return times, sides, amounts


def run(seconds: int, seed: int, out: str, flow: str | None = None) -> Decimal:
    engine = matchbook.Engine({"holders": [
        {"name": "maker", "accounts": [{"name": "main", "deposits": {"BTC": "5", "EUR": "300000"}}]},
        {"name": "flow", "accounts": [{"name": "main", "deposits": {"BTC": "1000", "EUR": "100000000"}}]},
    ]}, start_time=START, keep_events=False)
    maker, taker = engine.account("maker"), engine.account("flow")
    fair, times, sides, amounts = synthetic_flow(seconds, seed)
    if flow:
        times, sides, amounts = read_flow(flow)
    start_value = None
    inventory = []
    quotes: list[int] = []
    next_taker = 0
    for second in range(seconds):
        now = START + second * SECOND
        # Requote around fair, skewed against inventory (20 EUR per 0.01 BTC held), and
        # only on the side that reduces it once it passes 0.5 BTC either way.
        held = engine.balances(maker)["BTC"]
        position = held.available + held.locked - 5
        if quotes:
            engine.cancel_all(now, maker, orders=quotes)
        mid = Decimal(str(round(fair[min(second, len(fair) - 1)], 2))) - position * 2000
        quotes = []
        for side, offset in (("BUY", -Decimal("15")), ("SELL", Decimal("15"))):
            if (side == "BUY" and position > Decimal("0.5")) or (side == "SELL" and position < Decimal("-0.5")):
                continue
            try:
                quotes.append(engine.place_order(now, maker, "BTC_EUR", side, "0.05",
                                                 (mid + offset).quantize(Decimal("0.01")),
                                                 time_in_force="POST_ONLY"))
            except matchbook.MatchbookError:
                pass  # a quote that would cross is simply skipped
        if start_value is None:
            start_value = held.available + held.locked, engine.balances(maker)["EUR"]
        # Takers of this second, as one batch of immediate-or-cancel orders far through.
        end = now + SECOND
        stop = next_taker + int(np.searchsorted(times[next_taker:], end))
        if stop > next_taker:
            chunk = slice(next_taker, stop)
            side = sides[chunk].astype(np.uint8)
            # Limits 5 % through fair: takers sweep what is there (an order's value at its
            # limit must still meet the market's minimum size, so no "price 0.01" sells).
            ticks = int(fair[min(second, len(fair) - 1)] * 100)
            price = np.where(side == 0, ticks * 105 // 100, ticks * 95 // 100)
            engine.submit_orders(times[chunk], taker, "BTC_EUR", side, price,
                                 np.round(amounts[chunk] * 100_000).astype(np.int64),
                                 "IMMEDIATE_OR_CANCELLED")
            next_taker = stop
        inventory.append(float(position))
    trades = engine.trades(instrument="BTC_EUR")
    last = Decimal(int(trades["price"][-1])) / 100 if trades.rows else Decimal(60_000)
    btc = sum(engine.balances(maker)["BTC"])
    eur = sum(engine.balances(maker)["EUR"])
    pnl = (eur - 300_000) + (btc - 5) * last
    maker_trades = int(((trades["maker_account"] == maker) | (trades["taker_account"] == maker)).sum())
    print(f"{trades.rows} trades, {maker_trades} with the maker; last price {last}; "
          f"inventory {btc - 5:+} BTC; PnL {pnl:.2f} EUR")
    chart(engine, inventory, out, seconds)
    return pnl


def chart(engine: matchbook.Engine, inventory: list[float], out: str, seconds: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    candles = engine.candles("BTC_EUR", "MINUTES", 1, START, START + seconds * SECOND)
    traded = candles["total_amount"] > 0
    fig, (price, depth, held) = plt.subplots(3, 1, figsize=(10, 10))
    minutes = (candles["start"][traded] - START) / 60e9
    for i, m in enumerate(minutes):
        o, c = candles["open"][traded][i] / 100, candles["close"][traded][i] / 100
        lo, hi = candles["low"][traded][i] / 100, candles["high"][traded][i] / 100
        colour = "tab:green" if c >= o else "tab:red"
        price.vlines(m, lo, hi, color=colour, linewidth=0.8)
        price.vlines(m, min(o, c), max(o, c), color=colour, linewidth=4)
    price.set_title("BTC_EUR one-minute candles")
    price.set_xlabel("minute")
    book = engine.book("BTC_EUR", depth=50)
    for rows, colour, away in ((book["bids"], "tab:green", -1), (book["asks"], "tab:red", 1)):
        if rows:
            # Cumulative size from the touch outwards, drawn as a filled staircase.
            prices = [float(r[0]) for r in rows]
            sizes = list(np.cumsum([float(r[1]) for r in rows]))
            xs = [prices[0]] + prices + [prices[-1] + away * 20]
            ys = [0.0] + sizes + [sizes[-1]]
            depth.fill_between(xs, ys, step="post", color=colour, alpha=0.4)
    depth.set_title("book depth at the end (cumulative BTC)")
    held.plot(np.arange(len(inventory)), inventory, color="tab:blue")
    held.set_title("maker inventory (BTC)")
    held.set_xlabel("second")
    fig.tight_layout()
    fig.savefig(out, dpi=80)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=3600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--flow", help="CSV of time_ns,side,amount to replay instead")
    parser.add_argument("--out", default="backtest.png")
    args = parser.parse_args()
    run(args.seconds, args.seed, args.out, args.flow)


if __name__ == "__main__":
    main()
