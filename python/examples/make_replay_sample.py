"""Writes the replay sample ``data/btc_eur_replay.csv`` (made by the project, not recorded
from a venue): 30 minutes of a BTC_EUR L2 book, ten levels a side around a random-walk
mid, with level updates every second and takers arriving at random, in the column layout
of :mod:`matchbook.replay`. Seeded, so the file is the same every time.

    python examples/make_replay_sample.py
"""

from __future__ import annotations

import csv
import os

import numpy as np

START = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
SECOND = 1_000_000_000
TICK = 0.01
LEVELS = 10
SPACING = 5.00  # EUR between levels


def level_prices(mid: float, side: str) -> list[float]:
    best = np.floor(mid / SPACING) * SPACING if side == "BUY" else np.ceil(mid / SPACING) * SPACING
    if side == "SELL" and best == np.floor(mid / SPACING) * SPACING:
        best += SPACING
    step = -SPACING if side == "BUY" else SPACING
    return [round(best + i * step, 2) for i in range(LEVELS)]


def main(seconds: int = 1800, seed: int = 7, out: str | None = None) -> str:
    rng = np.random.default_rng(seed)
    out = out or os.path.join(os.path.dirname(__file__), "data", "btc_eur_replay.csv")
    mid = 60_000.0
    book: dict[tuple[str, float], float] = {}
    rows: list[tuple[int, str, str, str, str]] = []

    def amount() -> float:
        return round(float(rng.exponential(0.05)) + 0.002, 5)

    for side in ("BUY", "SELL"):
        for p in level_prices(mid, side):
            book[(side, p)] = amount()
    rows += [(START, "snapshot", s, f"{p:.2f}", f"{a:.5f}") for (s, p), a in sorted(book.items())]
    for second in range(1, seconds):
        t = START + second * SECOND
        mid *= float(np.exp(rng.normal(0, 0.0002)))
        wanted = {(s, p) for s in ("BUY", "SELL") for p in level_prices(mid, s)}
        for key in sorted(set(book) - wanted):  # levels the mid moved away from
            del book[key]
            rows.append((t, "update", key[0], f"{key[1]:.2f}", "0.00000"))
        for key in sorted(wanted - set(book)):
            book[key] = amount()
            rows.append((t, "update", key[0], f"{key[1]:.2f}", f"{book[key]:.5f}"))
        for key in sorted(wanted):
            if rng.random() < 0.15:  # size changes at existing levels
                book[key] = amount()
                rows.append((t, "update", key[0], f"{key[1]:.2f}", f"{book[key]:.5f}"))
        if rng.random() < 0.4:  # a taker: takes from the best level of the other side
            taker = "BUY" if rng.random() < 0.5 else "SELL"
            side = "SELL" if taker == "BUY" else "BUY"
            prices = sorted(p for s, p in book if s == side)
            best = prices[0] if side == "SELL" else prices[-1]
            size = round(min(book[(side, best)], float(rng.exponential(0.02)) + 0.001), 5)
            t_trade = t + SECOND // 2
            rows.append((t_trade, "trade", taker, f"{best:.2f}", f"{size:.5f}"))
            left = round(book[(side, best)] - size, 5)
            book[(side, best)] = left
            rows.append((t_trade, "update", side, f"{best:.2f}", f"{left:.5f}"))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time_ns", "kind", "side", "price", "amount"])
        w.writerows(rows)
    return out


if __name__ == "__main__":
    print(main())
