"""A bracket from Python: buy 0.10 BTC with an immediate-or-cancel entry that only half
fills; once the entry is done its exits appear for what was bought (a take-profit limit and
a stop-loss, linked one-cancels-the-other). The price then falls to the stop: the stop-loss
fires, the take-profit is cancelled, and the position is sold.

Run: python python/examples/bracket.py
"""

from __future__ import annotations

import matchbook

START = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z

EXCHANGE = {
    "holders": [
        {"name": "market", "accounts": [{"name": "main", "deposits": {"BTC": "10", "EUR": "1000000"}}]},
        {"name": "trader", "accounts": [{"name": "main", "deposits": {"EUR": "100000"}}]},
    ]
}


def run() -> list[str]:
    """Runs the story; returns what it printed, line by line."""
    lines: list[str] = []
    say = lines.append
    with matchbook.Engine(EXCHANGE, start_time=START) as engine:
        market, trader = engine.account("market"), engine.account("trader")
        t = START + 1
        engine.place_order(t, market, "BTC_EUR", "SELL", "0.05", "60000")
        entry = engine.place_bracket(t, trader, "BTC_EUR", "BUY", "0.10", "60000",
                                     take_profit="63000", stop_loss="58000",
                                     time_in_force="IMMEDIATE_OR_CANCELLED")
        record = engine.order_history(trader, entry & (2**64 - 1))
        say(f"entry {record['status']}: filled {record['filled']} of {record['amount']}")
        for o in sorted(engine.open_orders(trader), key=lambda o: o["id"]):
            say(f"exit {o['order_type']}: {o['amount']} BTC, price {o['price']}, "
                f"trigger {o['trigger_price']}, {o['state']}")
        engine.place_order(t, market, "BTC_EUR", "BUY", "0.20", "58000")
        engine.place_order(t, market, "BTC_EUR", "SELL", "0.01", "58000")
        page, _ = engine.order_page(trader)
        for o in sorted((o for o in page if o["id"] != record["id"]), key=lambda o: o["id"]):
            say(f"after the fall, {o['order_type']}: {o['status']}, filled {o['filled']}")
        say(f"trader BTC left: {engine.balances(trader)['BTC'].available}")
    for line in lines:
        print(line)
    return lines


if __name__ == "__main__":
    run()
