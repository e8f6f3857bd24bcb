"""Order-entry throughput of the Python bindings (BENCHMARKS.md): the same random flow of
limit orders (both sides, four times in force, prices around the touch so that about half
trade) through the per-call API (`Engine.place_order`, decimal strings) and through the
batch API (`Engine.submit_orders`, numpy columns, GIL released). Median of 5 runs each.

    python python/bench/throughput.py [N]       (default 200,000 orders)
"""

from __future__ import annotations

import statistics
import sys
import time
from decimal import Decimal

import numpy as np

import matchbook

START = 1_767_225_600_000_000_000
DEFINITION = {"holders": [
    {"name": n, "accounts": [{"name": "main", "deposits": {"BTC": "1000000", "EUR": "1000000000"}}]}
    for n in ("buyer", "seller")
]}
TIFS = ["GOOD_TILL_CANCELLED", "IMMEDIATE_OR_CANCELLED", "FILL_OR_KILL", "POST_ONLY"]


def flow(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    side = rng.integers(0, 2, n).astype(np.uint8)
    return {
        "time": START + np.arange(n, dtype=np.int64),
        "side": side,
        "price": (6_000_000 + rng.integers(-50, 50, n)).astype(np.int64),
        "amount": rng.integers(100, 10_000, n).astype(np.int64),
        "tif": rng.choice([0, 0, 1, 3], n).astype(np.uint8),
    }


def per_call(f: dict[str, np.ndarray]) -> float:
    engine = matchbook.Engine(DEFINITION, start_time=START, keep_events=False)
    accounts = (engine.account("buyer"), engine.account("seller"))
    # The caller's own values, as a backtest would hold them: text prices and amounts.
    rows = [(int(t), accounts[s], "BUY" if s == 0 else "SELL", str(Decimal(int(a)).scaleb(-5)),
             str(Decimal(int(p)).scaleb(-2)), TIFS[k])
            for t, s, p, a, k in zip(f["time"], f["side"], f["price"], f["amount"], f["tif"])]
    place = engine.place_order
    started = time.perf_counter()
    for t, account, side, amount, price, tif in rows:
        try:
            place(t, account, "BTC_EUR", side, amount, price, time_in_force=tif)
        except matchbook.MatchbookError:
            pass
    return len(rows) / (time.perf_counter() - started)


def batch(f: dict[str, np.ndarray]) -> float:
    engine = matchbook.Engine(DEFINITION, start_time=START, keep_events=False)
    account = np.where(f["side"] == 0, engine.account("buyer"), engine.account("seller")).astype(np.uint32)
    started = time.perf_counter()
    engine.submit_orders(f["time"], account, "BTC_EUR", f["side"], f["price"], f["amount"], f["tif"])
    return len(account) / (time.perf_counter() - started)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    f = flow(n)
    for name, run in (("per call", per_call), ("batch", batch)):
        runs = sorted(run(f) for _ in range(5))
        print(f"{name}: {n} orders, median {statistics.median(runs):,.0f} orders/s "
              f"(min {runs[0]:,.0f}, max {runs[-1]:,.0f})")


if __name__ == "__main__":
    main()
