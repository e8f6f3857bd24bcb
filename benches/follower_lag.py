"""Samples the followers' replication lag during a load run: GET /v1/health on each
follower every INTERVAL seconds for SECONDS seconds, then prints the lag (commands in the
log not yet applied) at the median, p99 and maximum over all samples.

Usage: python3 benches/follower_lag.py SECONDS BASE_URL [BASE_URL...]
"""

import json
import sys
import time
import urllib.request

INTERVAL = 0.02


def lag(base):
    with urllib.request.urlopen(base + "/v1/health", timeout=2) as answer:
        health = json.load(answer)
    return health["lag"] if health["role"] == "follower" else None


def main():
    seconds = float(sys.argv[1])
    bases = sys.argv[2:]
    samples = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for base in bases:
            try:
                value = lag(base)
            except OSError:
                continue
            if value is not None:
                samples.append(value)
        time.sleep(INTERVAL)
    if not samples:
        print("follower lag: no samples")
        return
    samples.sort()
    pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
    print(
        f"follower lag (commands, {len(samples)} samples): "
        f"p50 {pick(0.5)}  p99 {pick(0.99)}  max {samples[-1]}"
    )


if __name__ == "__main__":
    main()
