"""Nesting bombs at the Python doors (issue 69): definitions as mappings, JSON and TOML
nested 127, 128, 129, 2,000 and 10,000 levels (objects and arrays, at the top and inside a
field) and past the size bound, and replay tables with fields of the same brackets or
past the csv module's size. Each is a typed error; the interpreter and a new engine go on
working afterwards."""

from __future__ import annotations

import json

import pytest

import matchbook
from matchbook.replay import _row, read_csv

DEPTHS = (127, 128, 129, 2_000, 10_000)
#: matchbook_config::bounds::MAX_DEFINITION_BYTES
MAX_DEFINITION_BYTES = 16 << 20


def nested_text(depth: int, objects: bool) -> str:
    open_, close = ('{"a":', "}") if objects else ("[", "]")
    return f"{open_ * depth}1{close * depth}"


def nested_mapping(depth: int) -> dict:
    inner: dict = {"a": 1}
    for _ in range(depth - 1):
        inner = {"a": inner}
    return inner


def still_works() -> None:
    engine = matchbook.Engine({"holders": [{"name": "alice", "accounts": [
        {"name": "main", "deposits": {"EUR": "10000"}}]}]})
    account = engine.account("alice", "main")
    order = engine.place_order(1, account, "BTC_EUR", "BUY", "0.01", "59000.00")
    assert [o["handle"] for o in engine.open_orders(account)] == [order]


@pytest.mark.parametrize("depth", DEPTHS)
def test_definitions_nested_past_the_bound_are_invalid_arguments(depth: int) -> None:
    for objects in (False, True):
        bomb = nested_text(depth, objects)
        for text in (bomb, f'{{"holders": [{{"name": "x", "accounts": {bomb}}}]}}'):
            with pytest.raises(matchbook.InvalidArgument, match="nested deeper"):
                matchbook.Engine.from_json(text)
    toml_forms = (
        f"currencies = {'[' * depth}{']' * depth}\n",
        f"{'.'.join(['a'] * depth)} = 1\n",
        f"[{'.'.join(['holders'] * depth)}]\nb = 1\n",
    )
    for text in toml_forms:
        with pytest.raises(matchbook.InvalidArgument):
            matchbook.Engine.from_toml(text)
    for config in (nested_mapping(depth), {"holders": [nested_mapping(depth)]}):
        with pytest.raises(matchbook.InvalidArgument):
            matchbook.Engine(config)
    still_works()


def test_a_mapping_that_holds_itself_is_an_invalid_argument() -> None:
    config: dict = {"holders": []}
    config["holders"].append(config)
    with pytest.raises(matchbook.InvalidArgument, match="definition not readable"):
        matchbook.Engine(config)


def test_a_definition_past_the_size_bound_is_refused_unread() -> None:
    padding = " " * (MAX_DEFINITION_BYTES + 1)
    for kind in ("json", "toml"):
        loader = getattr(matchbook.Engine, f"from_{kind}")
        with pytest.raises(matchbook.InvalidArgument, match="more than the limit"):
            loader("{}" + padding if kind == "json" else padding)
    still_works()


@pytest.mark.parametrize("depth", DEPTHS)
def test_replay_rows_of_brackets_are_value_errors_naming_their_line(tmp_path, depth) -> None:
    path = tmp_path / "bomb.csv"
    for objects in (False, True):
        bomb = json.dumps(nested_text(depth, objects))
        path.write_text(f"time_ns,kind,side,price,amount\n1,update,BUY,{bomb},1\n")
        with pytest.raises(ValueError, match="line 2: price"):
            list(read_csv(str(path)))


def test_replay_fields_past_the_csv_limit_are_value_errors(tmp_path) -> None:
    path = tmp_path / "long.csv"
    path.write_text("time_ns,kind,side,price,amount\n1,update,BUY,1," + "9" * 200_000 + "\n")
    with pytest.raises(ValueError, match="line 2: field larger"):
        list(read_csv(str(path)))
    path.write_text("time_ns," + "k" * 200_000 + "\n")
    with pytest.raises(ValueError, match="header: field larger"):
        list(read_csv(str(path)))


@pytest.mark.parametrize("depth", DEPTHS)
def test_nested_values_of_a_parquet_table_are_value_errors(depth: int) -> None:
    """What pyarrow's ``to_pylist`` gives for a column of lists (pyarrow itself is optional
    and not in the test environment): refused by name, never printed."""
    deep: list = [1]
    for _ in range(depth - 1):
        deep = [deep]
    row = {"time_ns": 1, "kind": "update", "side": "BUY", "price": deep, "amount": {"a": deep}}
    with pytest.raises(ValueError, match="price, amount holds a list or a record"):
        _row(row)
