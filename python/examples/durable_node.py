"""A durable node with a dead-man switch.

The exchange runs on a data directory (journal, snapshots, recovery) with its own deadline
keeper: a trading system arms its dead-man switch and stops sending anything; the node
cancels its orders on time by itself. Closed and reopened, the node has the cancel in its
journal.

    python durable_node.py [DIR]   (default: a fresh temporary directory)
"""

from __future__ import annotations

import sys
import tempfile
import time

import matchbook

DEFINITION = {
    "holders": [{"name": "trader", "accounts": [{"name": "main", "deposits": {"EUR": "100000"}}]}],
}


def run(directory: str) -> None:
    with matchbook.Node.open(directory, DEFINITION) as node:
        trader = node.account("trader")
        order = node.place_order(trader, "BTC_EUR", "BUY", "0.01", "50000")
        print(f"placed a bid; open orders {len(node.open_orders(trader))}")
        events = node.events(timeout=0.1)
        next(events)  # subscribed before the switch is armed: its cancel is not missed
        armed = time.monotonic()
        node.set_cancel_all_after(trader, 300_000_000)  # 300 ms, then silence
        cancelled = None
        for batch in events:
            cancelled = next((e for e in batch if e["type"] == "OrderCancelled"
                              and e["order"] == order), None)
            if cancelled or time.monotonic() - armed > 10:
                break
        if cancelled is None:
            raise SystemExit("the dead-man switch did not fire within 10 s")
        waited = time.monotonic() - armed
        print(f"dead-man switch fired: {cancelled['reason']} "
              f"{'after' if waited >= 0.3 else 'before'} its 300 ms, with no other traffic")
    with matchbook.Node.open(directory, DEFINITION) as node:
        trader = node.account("trader")
        print(f"reopened: open orders {len(node.open_orders(trader))}, "
              f"EUR locked {node.balances(trader)['EUR'].locked}")


def main() -> None:
    if len(sys.argv) > 1:
        run(sys.argv[1])
        return
    with tempfile.TemporaryDirectory() as directory:
        run(directory)


if __name__ == "__main__":
    main()
