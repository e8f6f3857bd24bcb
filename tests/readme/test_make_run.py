"""The README's first command as a newcomer runs it: `make run` on a fresh data directory
builds and starts the exchange, prints its keys, answers the README's curl lines (the
ticker, the balances with a printed key, an order), and stops cleanly on SIGTERM. Until
2026-12 `make run` stopped at once: `cargo run` could not choose between the crate's two
binaries. The exchange binds free loopback ports (`RUN_ARGS`), so the test never meets
another server; everything else is the command as the README gives it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def call(url: str, key: str | None = None, body: str | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=None if body is None else body.encode())
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as refused:
        return refused.code, json.load(refused)


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (the server, once `cargo run` has exec'd it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def test_make_run_serves_the_readme_and_stops_on_sigterm(tmp_path: Path) -> None:
    data = tmp_path / "data"
    log = open(tmp_path / "make-run.log", "w")
    args = f"--bind 127.0.0.1:0 --admin-bind 127.0.0.1:0 --data-dir {data}"
    make = subprocess.Popen(["make", "--no-print-directory", "run", f"RUN_ARGS={args}"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        keys, base = [], None
        assert make.stdout is not None
        for line in make.stdout:
            keys += re.findall(r"^\s+(mb_\S+)\s+account", line)
            found = re.search(r"exchange on (http://\S+) ", line)
            if found:
                base = found.group(1)
                break
        assert base, f"make run printed no address: {(tmp_path / 'make-run.log').read_text()[-2000:]}"
        assert len(keys) == 4, f"the four first-start keys are printed: {keys}"
        key = keys[0]
        status, ticker = call(f"{base}/v1/market-ticker/BTC_EUR")
        assert (status, ticker["instrument_code"]) == (200, "BTC_EUR")
        status, balances = call(f"{base}/v1/account/balances", key)
        assert status == 200 and balances["balances"], balances
        order = ('{"instrument_code":"BTC_EUR","type":"LIMIT","side":"BUY",'
                 '"amount":"0.01","price":"59000.00"}')
        status, placed = call(f"{base}/v1/account/orders", key, order)
        assert status == 200 and placed["order_id"], placed
        server = children(make.pid)
        assert len(server) == 1, f"one server under make: {server}"
        os.kill(server[0], signal.SIGTERM)
        assert make.wait(timeout=60) == 0, "a clean stop exits 0"
    finally:
        if make.poll() is None:
            for pid in children(make.pid):
                os.kill(pid, signal.SIGKILL)
            make.kill()
        log.close()
    text = (tmp_path / "make-run.log").read_text()
    assert "matchbook exchange stopped" in text, text[-2000:]
    assert (data / "keys.json").exists(), "the keys are kept in the data directory"
