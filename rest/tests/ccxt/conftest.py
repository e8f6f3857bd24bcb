"""Starts the matchbook-rest binary on free loopback ports with a fresh data directory and
hands the tests a ccxt `onetrading` client pointed at it; stops it with SIGTERM after."""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile

import ccxt
import pytest

BINARY = os.environ.get("MATCHBOOK_REST_BIN", "target/release/matchbook-rest")


@pytest.fixture(scope="session")
def exchange_server():
    data_dir = tempfile.mkdtemp(prefix="matchbook-ccxt-")
    keys_file = os.path.join(data_dir, "keys-out.json")
    log_path = os.path.join(data_dir, "server.log")
    log = open(log_path, "w")
    process = subprocess.Popen(
        [BINARY, "--bind", "127.0.0.1:0", "--admin-bind", "127.0.0.1:0",
         "--data-dir", data_dir, "--keys-out", keys_file],
        stdout=subprocess.PIPE, stderr=log, text=True,
        env={**os.environ, "RUST_LOG": "debug"},
    )
    base = None
    for line in process.stdout:
        found = re.search(r"exchange on (http://\S+) \(admin (http://\S+)\)", line)
        if found:
            base, admin = found.group(1), found.group(2)
            break
    assert base, "the server printed its address"
    with open(keys_file) as f:
        keys = json.load(f)
    yield {"base": base, "admin": admin, "keys": keys}
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0, "graceful stop exits 0"
    log.close()
    with open(log_path) as f:
        text = f.read()
    assert "matchbook exchange stopped" in text
    assert "request" in text, "requests are logged at debug level"
    for k in keys:
        assert k["key"] not in text, "logs never contain keys"
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture()
def client(exchange_server):
    trader = next(k for k in exchange_server["keys"] if "TRADE" in k["scopes"]
                  and k["account"] == "main")
    ex = ccxt.onetrading({"apiKey": trader["key"], "enableRateLimit": False})
    ex.urls["api"] = {"public": exchange_server["base"], "private": exchange_server["base"]}
    return ex
