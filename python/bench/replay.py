"""Backtest replay cost per recorded row (BENCHMARKS.md): `matchbook.replay.Replay` on a
synthetic table, a book of L levels a side, then alternating trades at the touch, each
followed by the update that refills the level (as recorded books do: every refill is a
venue order of its own, so the venue's open orders grow with the replay). Microseconds a
row, median of 3 runs, for each book depth, with market data (the default: the queues
follow the trades) and without (every open venue order read after each step).

    python python/bench/replay.py [TRADES] [DEPTHS...]   (default 2,000; 10 100 400)
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Iterator
from decimal import Decimal

import matchbook
from matchbook.replay import Replay, Row

START = 1_767_225_600_000_000_000
# The venue's refills stay open: room for them beyond the default 200 a holder.
DEFINITION = {"max_open_orders": 1_000_000}


def table(depth: int, trades: int) -> Iterator[Row]:
    t = START
    half = Decimal("0.5")
    for i in range(depth):
        yield Row(t, "snapshot", "BUY", Decimal(50_000 - i), half)
        yield Row(t, "snapshot", "SELL", Decimal(50_001 + i), half)
    for k in range(trades):
        t += 1_000_000
        buy = k % 2 == 1
        price = Decimal(50_001) if buy else Decimal(50_000)
        yield Row(t, "trade", "BUY" if buy else "SELL", price, Decimal("0.01"))
        yield Row(t, "update", "SELL" if buy else "BUY", price, half)


def micros_a_row(depth: int, trades: int, market_data: bool) -> float:
    engine = matchbook.Engine(DEFINITION, start_time=START, keep_events=False,
                              market_data=market_data)
    replay = Replay(engine, "BTC_EUR", START)
    started = time.perf_counter()
    rows = replay.run(table(depth, trades))
    return (time.perf_counter() - started) / rows * 1e6


def main() -> None:
    trades = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000
    depths = [int(d) for d in sys.argv[2:]] or [10, 100, 400]
    for market_data in (True, False):
        for depth in depths:
            runs = [micros_a_row(depth, trades, market_data) for _ in range(3)]
            print(f"market data {'on ' if market_data else 'off'}, depth {depth:>4} a side, "
                  f"{trades} trades: {statistics.median(runs):8.1f} us a row "
                  f"(runs {', '.join(f'{r:.1f}' for r in runs)})")


if __name__ == "__main__":
    main()
