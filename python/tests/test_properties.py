"""Property test (hypothesis): random order flow from three accounts, checked after every
step against invariants the engine must keep whatever happens: funds are conserved (what
the accounts hold plus the fees collected equals what was deposited), no balance goes
negative, the book never stays crossed, the book holds exactly the open orders, and a
replay of the same flow gives the same state."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

import matchbook

from conftest import START

DEFINITION = {
    "holders": [
        {"name": f"t{i}", "accounts": [{"name": "main", "deposits": {"BTC": "5", "EUR": "300000"}}]}
        for i in range(3)
    ]
}
DEPOSITED = {"BTC": Decimal(15), "EUR": Decimal(900000)}
TIFS = ["GOOD_TILL_CANCELLED", "IMMEDIATE_OR_CANCELLED", "FILL_OR_KILL", "POST_ONLY"]

place = st.tuples(
    st.just("place"),
    st.integers(0, 2),
    st.sampled_from(["BUY", "SELL"]),
    st.integers(59_900, 60_100),
    st.integers(1, 300),
    st.sampled_from(TIFS),
)
cancel = st.tuples(st.just("cancel"), st.integers(0, 2), st.integers(0, 50))
amend = st.tuples(st.just("amend"), st.integers(0, 2), st.integers(0, 50), st.integers(1, 300))
flow = st.lists(st.one_of(place, place, place, cancel, amend), min_size=1, max_size=60)


def run(ops: list[tuple], check: bool) -> matchbook.Engine:
    engine = matchbook.Engine(DEFINITION, start_time=START)
    accounts = [engine.account(f"t{i}") for i in range(3)]
    for step, op in enumerate(ops):
        t = START + step
        account = accounts[op[1]]
        try:
            if op[0] == "place":
                _, _, side, price, amount, tif = op
                engine.place_order(t, account, "BTC_EUR", side, Decimal(amount).scaleb(-3), price,
                                   time_in_force=tif)
            else:
                open_orders = engine.open_orders(account)
                if not open_orders:
                    continue
                target = open_orders[op[2] % len(open_orders)]["handle"]
                if op[0] == "cancel":
                    engine.cancel_order(t, account, target)
                else:
                    engine.amend_order(t, account, target, amount=Decimal(op[3]).scaleb(-3))
        except matchbook.MatchbookError:
            pass  # refusals are fine; the invariants must hold either way
        if check:
            invariants(engine, accounts)
    return engine


def invariants(engine: matchbook.Engine, accounts: list[int]) -> None:
    fees = engine.fees_collected()
    for code, deposited in DEPOSITED.items():
        held = Decimal(0)
        for a in accounts:
            b = engine.balances(a)[code]
            assert b.available >= 0 and b.locked >= 0, (code, a, b)
            held += b.available + b.locked
        assert held + fees[code] == deposited, (code, held, fees[code])
    book = engine.book("BTC_EUR", depth=1000, level=3)
    if book["bids"] and book["asks"]:
        assert book["bids"][0][0] < book["asks"][0][0], "crossed book"
    resting = {row[2] for row in book["bids"] + book["asks"]}
    listed = {o["handle"] for a in accounts for o in engine.open_orders(a)}
    assert resting == listed


@settings(max_examples=60, deadline=None)
@given(flow)
def test_random_flow_keeps_the_invariants_and_replays(ops: list[tuple]) -> None:
    first = run(ops, check=True)
    assert run(ops, check=False).state_hash() == first.state_hash()
