"""Backtest replay cost per recorded row (BENCHMARKS.md): `matchbook.replay.Replay` on a
synthetic table, a book of L levels a side, then alternating trades at the touch, each
followed by the update that refills the level (as recorded books do: every refill is a
venue order of its own, so the venue's open orders grow with the replay). Microseconds a
row, median of 3 runs, for each book depth, with market data (the default: the queues
follow the trades) and without (every open venue order read after each step).

    python python/bench/replay.py [TRADES] [DEPTHS...]   (default 2,000; 10 100 400)

`beside [HISTORY] [STEPS] [BETWEEN]` (default 1,000,000 200 200) times instead a replay
whose engine's other market (ETH_EUR) trades: HISTORY trades before it, BETWEEN more
before each of its STEPS steps; microseconds of `Replay.run` a step (the other market's
orders not counted), median of 3 runs.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Iterator
from decimal import Decimal

import numpy as np

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


def micros_a_step_beside_another_market(history: int, steps: int, between: int) -> float:
    """A replay of BTC_EUR (one level update a step, no trade of its own) on an engine
    whose ETH_EUR has `history` trades before the replay and `between` more before each
    step: what reading the trades since the last look costs when other markets trade."""
    engine = matchbook.Engine({**DEFINITION, "holders": [{"name": h, "accounts": [
        {"name": "main", "deposits": {"ETH": "1000000", "EUR": "10000000000"}}]}
        for h in ("a", "b")]}, start_time=START, keep_events=False)
    a, b = engine.account("a"), engine.account("b")

    def eth_trades(n: int, t: int) -> None:
        sides = np.tile(np.array([1, 0], dtype=np.int64), n)
        accounts = np.tile(np.array([a, b], dtype=np.int64), n)
        engine.submit_orders(t, accounts, "ETH_EUR", sides, 300_000, 1_000)

    eth_trades(history, START)
    replay = Replay(engine, "BTC_EUR", START)
    spent = 0.0
    for k in range(steps):
        t = START + (k + 1) * 1_000_000
        eth_trades(between, t)
        started = time.perf_counter()
        replay.run([Row(t, "update", "BUY", Decimal(50_000), Decimal("0.5") + k % 3)])
        spent += time.perf_counter() - started
    return spent / steps * 1e6


def main() -> None:
    if sys.argv[1:2] == ["beside"]:
        history, steps, between = (int(v) for v in (sys.argv[2:] + ["1000000", "200", "200"])[:3])
        runs = [micros_a_step_beside_another_market(history, steps, between) for _ in range(3)]
        print(f"beside {history} ETH_EUR trades, {between} more a step, {steps} steps: "
              f"{statistics.median(runs):10.1f} us a step "
              f"(runs {', '.join(f'{r:.1f}' for r in runs)})")
        return
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
