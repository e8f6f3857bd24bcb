"""Shared fixtures: a small exchange with a maker and a taker on the demo markets."""

from __future__ import annotations

import pytest

import matchbook

START = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z

DEFINITION = {
    "holders": [
        {"name": "maker", "accounts": [
            {"name": "main", "deposits": {"BTC": "10", "EUR": "1000000", "USD": "1000000"}},
            {"name": "hedge", "kind": "blp", "deposits": {"EUR": "100"}},
        ]},
        {"name": "taker", "accounts": [
            {"name": "main", "deposits": {"EUR": "1000000", "USD": "1000000"}},
        ]},
    ]
}


@pytest.fixture
def engine() -> matchbook.Engine:
    return matchbook.Engine(DEFINITION, start_time=START)


@pytest.fixture
def maker(engine: matchbook.Engine) -> int:
    return engine.account("maker")


@pytest.fixture
def taker(engine: matchbook.Engine) -> int:
    return engine.account("taker")
