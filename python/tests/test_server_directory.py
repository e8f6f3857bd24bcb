"""A notebook on the exchange's own data: ``Engine.load`` reads a running
``matchbook-rest`` server's data directory (its snapshot and journal, under the definition
the server recorded there) into an engine in memory that holds the server's state, names
its accounts as the server's definition does, branches without touching the directory,
and refuses directories that are not a server's."""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import pickle
import re
import signal
import subprocess
import urllib.request
from decimal import Decimal

import pytest

import matchbook

REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("MATCHBOOK_REST_BIN", str(REPO / "target/debug/matchbook-rest"))


def call(base: str, method: str, path: str, key: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {key}")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read() or b"null")


@pytest.fixture
def server(tmp_path: pathlib.Path):
    data_dir, keys_file = tmp_path / "data", tmp_path / "keys.json"
    process = subprocess.Popen(
        [BINARY, "--bind", "127.0.0.1:0", "--admin-bind", "127.0.0.1:0",
         "--data-dir", str(data_dir), "--keys-out", str(keys_file)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        addresses = None
        assert process.stdout is not None
        for line in process.stdout:
            addresses = re.search(r"exchange on (http://\S+) \(admin (http://\S+)\)", line)
            if addresses:
                break
        assert addresses, "the server printed its addresses"
        keys = json.loads(keys_file.read_text())
        trader = next(k["key"] for k in keys if "TRADE" in k["scopes"] and k["account"] == "main")
        admin = next(k["key"] for k in keys if "ADMIN" in k["scopes"])
        yield {"base": addresses.group(1), "admin": addresses.group(2), "dir": data_dir,
               "trader": trader, "root": admin}
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def files(directory: pathlib.Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def test_a_running_servers_directory_loads_with_its_state_and_names(server) -> None:
    base, trader = server["base"], server["trader"]
    placed = [call(base, "POST", "/v1/account/orders", trader,
                   {"instrument_code": "BTC_EUR", "type": "LIMIT", "side": "BUY",
                    "amount": "0.1", "price": str(1000 + i)}) for i in range(3)]
    call(base, "DELETE", f"/v1/account/orders/{placed[0]['order_id']}", trader)
    state = call(server["admin"], "GET", "/admin/state", server["root"])
    before = files(server["dir"])

    engine = matchbook.Engine.load(server["dir"])

    assert files(server["dir"]) == before, "the directory is left as it was"
    assert format(engine.state_hash(), "016x") == state["state_hash"]
    assert engine.data_dir is None, "in memory"
    assert pickle.loads(pickle.dumps(engine)).state_hash() == engine.state_hash()
    main = engine.account("demo", "main")
    rest_orders = call(base, "GET", "/v1/account/orders", trader)["order_history"]
    open_prices = sorted(Decimal(o["order"]["price"]) for o in rest_orders
                         if o["order"]["status"] == "OPEN")
    assert sorted(o["price"] for o in engine.open_orders(main)) == open_prices
    assert len(open_prices) == 2
    balances = {b["currency_code"]: b for b in
                call(base, "GET", "/v1/account/balances", trader)["balances"]}
    loaded = engine.balances(main)
    assert loaded["EUR"].locked == Decimal(balances["EUR"]["locked"]) > 0
    assert loaded["EUR"].available == Decimal(balances["EUR"]["available"])

    # A branch: what-if orders change the loaded engine only.
    engine.place_order(state_time(state), main, "BTC_EUR", "BUY", "0.1", 999)
    assert len(engine.open_orders(main)) == 3
    assert files(server["dir"]) == before
    again = matchbook.Engine.load(server["dir"])
    assert format(again.state_hash(), "016x") == state["state_hash"]


def state_time(state: dict) -> datetime.datetime:
    """A moment after the engine's clock as the server reported it."""
    now = datetime.datetime.fromisoformat(state["time"].replace("Z", "+00:00"))
    return now + datetime.timedelta(seconds=1)


def test_directories_that_are_not_a_servers_are_refused(tmp_path: pathlib.Path) -> None:
    with pytest.raises(matchbook.StorageError, match="not a matchbook data directory"):
        matchbook.Engine.load(tmp_path / "nothing-here")
    assert not (tmp_path / "nothing-here").exists()
    own = tmp_path / "own"
    matchbook.Engine.open(own, {"holders": []}).close()
    with pytest.raises(matchbook.StorageError, match="records no exchange definition"):
        matchbook.Engine.load(own)
