"""Backtesting on recorded market data: replays a venue's L2 book and trade tape through an
:class:`~matchbook.Engine`, so a strategy's own orders rest in the same book with a queue
position and are filled by the recorded takers.

The data is one table, rows in time order (CSV with a header, or Parquet with pyarrow):

============  ==========================================================================
column        meaning
============  ==========================================================================
``time_ns``   nanoseconds since the epoch (int)
``kind``      ``snapshot`` (the whole book: rows of one snapshot share a time),
              ``update`` (one level's new total amount; 0 removes it) or ``trade``
``side``      ``BUY``/``SELL``: the level's side, or a trade's aggressor (taker)
``price``     decimal text
``amount``    decimal text: the level's total, or the traded amount
============  ==========================================================================

How it maps onto the engine: the recorded liquidity rests as orders of a ``venue`` holder,
one per increase of a level, in arrival order; a recorded trade is an immediate-or-cancel
order of a ``flow`` holder at the trade's price and amount, so it takes from the book in
price-time priority, the strategy's orders included where they stand. Afterwards a
level's recorded total is restored by adding the missing amount at the back of its queue
or by taking the excess from its newest venue orders first (cancellations are assumed to
come from the back of the queue, so the strategy's place improves only through trades).
An increase below the instrument's minimum order value joins the newest venue order of
the level, and a trade below it (or of nothing) is left out; any other row the book cannot
take (out of time order, a price finer than the tick, a negative price or amount) raises,
so a backtest never runs on other data than its table. Both holders are created by
:class:`Replay` with ample funds; their fills are theirs, and the strategy's account is
whatever it trades with. The strategy's own orders may take the venue's liquidity too (a
recorded level then refills from what is left). The venue holds one open order per
increase still resting: a deep book needs the definition's ``max_open_orders`` (200 a
holder by default) raised.

With market data on (the default), the venue's queues follow the trades since the last
look, so a row costs the same however many orders the venue holds; without, every open
venue order is read after each step.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from . import Engine
from ._values import _NUMBER
from .errors import MatchbookError

#: The refusal a recorded level or trade gets when its value is below the market's minimum
#: order value: such a row is not represented (every other refusal is an error of the data).
_BELOW_MINIMUM = "MIN_SIZE_NOT_SATISFIED"

#: The columns of a replay table, in this order.
COLUMNS = ("time_ns", "kind", "side", "price", "amount")


@dataclass(frozen=True)
class Row:
    """One recorded book level change or trade."""

    time_ns: int
    kind: str
    side: str
    price: Decimal
    amount: Decimal


def _row(values: dict[str, Any]) -> Row:
    # A Parquet column of lists or records gives nested values: refused by name before
    # anything prints them (the text of one nested deep enough is a RecursionError).
    nested = [c for c in COLUMNS if isinstance(values.get(c), (list, tuple, dict))]
    if nested:
        raise ValueError(f"row: {', '.join(nested)} holds a list or a record, not a value")
    missing = [c for c in COLUMNS if values.get(c) is None]
    if missing:
        raise ValueError(f"row {_short(values)}: no {', '.join(missing)}")
    kind, side = str(values["kind"]), str(values["side"]).upper()
    if kind not in ("snapshot", "update", "trade") or side not in ("BUY", "SELL"):
        raise ValueError(f"row {values}: kind snapshot/update/trade, side BUY/SELL")
    return Row(_number(values, "time_ns", int), kind, side, _number(values, "price", Decimal),
               _number(values, "amount", Decimal))


def _number(values: dict[str, Any], column: str, kind: Callable[[str], Any]) -> Any:
    """The column's value as an int (``time_ns``) or a ``Decimal``, or a ValueError that
    names it."""
    text = str(values[column]).strip()
    try:
        return kind(text)
    except (ArithmeticError, ValueError):
        raise ValueError(f"{column} {text!r} is not {'an int' if kind is int else 'a number'}") \
            from None


def _check(row: Row) -> None:
    """A row's numbers are what a book can hold: a positive price, an amount of at least 0."""
    finite = row.price.is_finite() and row.amount.is_finite()
    if not (finite and row.price > 0 and row.amount >= 0):
        raise ValueError(f"row {row}: a price above 0 and an amount of at least 0")


def read_csv(path: str) -> Iterator[Row]:
    """The rows of a CSV file with a ``time_ns,kind,side,price,amount`` header (UTF-8, with
    or without the byte-order mark spreadsheets write). A row that cannot be read raises
    ValueError naming its line: one with a field longer than the csv module's limit
    (128 KiB) too, which the module itself raises as its own error."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        try:
            header = reader.fieldnames or []
        except csv.Error as e:
            raise ValueError(f"{path} header: {_short(e)}") from None
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            raise ValueError(f"{path}: no column {', '.join(missing)} in the header "
                             f"{_short(header)}")
        try:
            for values in reader:
                yield _row(values)
        except (ValueError, csv.Error) as e:
            # The csv reader's own count: DictReader's is only updated after a whole row.
            raise ValueError(f"{path} line {reader.reader.line_num}: {_short(e)}") from None


def _short(value: object) -> str:
    """A value's or an error's text cut to a line: a refused row may hold a field of any
    size."""
    text = str(value)
    return text if len(text) <= 200 else f"{text[:200]}... ({len(text)} characters)"


def read_parquet(path: str) -> Iterator[Row]:
    """The rows of a Parquet file with the same columns (needs pyarrow)."""
    import pyarrow.parquet as pq  # optional: imported on use

    table = pq.read_table(path, columns=list(COLUMNS))
    for values in table.to_pylist():
        yield _row(values)


class Replay:
    """Drives ``engine``'s ``instrument`` with recorded rows (see the module's text)."""

    def __init__(self, engine: Engine, instrument: str, start_time: int) -> None:
        self.engine = engine
        self.instrument = instrument
        info = engine.instruments[instrument]
        self._min_value = Decimal(info["min_size"])
        base, quote = info["base"], info["quote"]
        self.venue = self._funded(start_time, base, quote)
        self.flow = self._funded(start_time, base, quote)
        # Per (side, price): the venue's orders at that level, oldest first, with amounts.
        self._levels: dict[tuple[str, Decimal], list[list[Any]]] = {}
        # The level of each venue order in `_levels`, by order number.
        self._level_of: dict[int, tuple[str, Decimal]] = {}
        # With market data the trades since the last look name the venue orders they
        # filled, whoever's order took them (a recorded taker, a crossing level, the
        # strategy's own); without, every open venue order is read after each step.
        self._fills_named = engine.market_data
        self._lot = Decimal(1).scaleb(-int(info["amount_precision"]))
        # Trades up to this number are taken into account (those before the replay are
        # not the venue's).
        self._last_trade = engine.last_trade_id

    def _funded(self, time: int, base: str, quote: str) -> int:
        _, account = self.engine.create_holder(time)
        # Ample for any recorded book, within the engine's balance range (i64 units).
        self.engine.deposit(time, account, base, "1000000")
        self.engine.deposit(time, account, quote, "10000000000")
        return account

    def run(self, rows: Iterable[Row],
            on_step: Callable[[Engine, int], None] | None = None) -> int:
        """Applies ``rows`` in order; after the rows of each time, calls
        ``on_step(engine, time_ns)`` (the strategy acts then, at that time). Returns the
        number of rows applied."""
        self._take_fills()  # what the strategy did since the last run
        applied, current, batch = 0, None, []
        for row in rows:
            _check(row)
            if current is not None and row.time_ns != current:
                applied += self._apply(batch, on_step)
                batch = []
            current = row.time_ns
            batch.append(row)
        if batch:
            applied += self._apply(batch, on_step)
        return applied

    def _apply(self, rows: list[Row], on_step: Callable[[Engine, int], None] | None) -> int:
        time = rows[0].time_ns
        snapshot = {(r.side, r.price): r.amount for r in rows if r.kind == "snapshot"}
        if snapshot:
            for key in list(self._levels):
                snapshot.setdefault(key, Decimal(0))
            for (side, price), amount in snapshot.items():
                self._set_level(time, side, price, amount)
        for r in rows:
            if r.kind == "update":
                self._set_level(time, r.side, r.price, r.amount)
            elif r.kind == "trade":
                self._trade(time, r)
        if on_step is not None:
            on_step(self.engine, time)
            self._take_fills()  # the strategy's orders may take the venue's
        return len(rows)

    def _trade(self, time: int, r: Row) -> None:
        if r.amount == 0:
            return  # a recorded trade of nothing (a venue's rounding) takes nothing
        try:
            self.engine.place_order(time, self.flow, self.instrument, r.side, r.amount,
                                    price=r.price, time_in_force="IMMEDIATE_OR_CANCELLED")
        except MatchbookError as e:
            if e.name != _BELOW_MINIMUM:
                raise
            return
        self._take_fills()

    def _take_fills(self) -> None:
        """Takes what was filled since the last look off the venue's queues."""
        if not self._fills_named:
            self._forget_filled()
            return
        # The newest number first: a look reads past the other instruments' trades once,
        # not again at every look until this one trades.
        newest = self.engine.last_trade_id
        if self.engine.oldest_trade_id > self._last_trade + 1:
            # Trades since the last look went past the history limits: what they filled
            # is read from the venue's open orders instead.
            self._forget_filled()
            self._last_trade = newest
            return
        trades = self.engine.trades(self._last_trade, self.instrument)
        self._last_trade = max(newest, int(trades["id"][-1]) if len(trades["id"]) else 0)
        for side in ("maker", "taker"):
            venue = trades[f"{side}_account"] == self.venue
            for number, lots in zip(trades[f"{side}_order"][venue], trades["amount"][venue]):
                self._filled(int(number), self._lot * int(lots))

    def _filled(self, number: int, amount: Decimal) -> None:
        """Takes ``amount`` off the venue's order ``number`` in its queue (dropped once
        filled)."""
        key = self._level_of.get(number)
        if key is None:
            return
        queue = self._levels[key]
        for i, entry in enumerate(queue):
            if entry[0] & _NUMBER == number:
                entry[1] -= amount
                if entry[1] <= 0:
                    del queue[i]
                    del self._level_of[number]
                break
        if not queue:
            del self._levels[key]

    def _forget_filled(self) -> None:
        """Drops the venue orders takers filled (they are no longer open), reading every
        open venue order."""
        open_amounts = {o["handle"]: o["amount"] - o["filled"]
                        for o in self.engine.open_orders(self.venue)}
        for key, queue in list(self._levels.items()):
            queue[:] = [[h, open_amounts[h]] for h, _ in queue if h in open_amounts]
            if not queue:
                del self._levels[key]
        self._level_of = {h & _NUMBER: key for key, queue in self._levels.items() for h, _ in queue}

    def _set_level(self, time: int, side: str, price: Decimal, total: Decimal) -> None:
        queue = self._levels.setdefault((side, price), [])
        have = sum((a for _, a in queue), Decimal(0))
        if total > have:
            self._add(time, side, price, total - have, queue)
        while have > total and queue:
            handle, amount = queue[-1]
            excess = have - total
            if excess >= amount or not self._amend(time, handle, amount - excess):
                self.engine.cancel_order(time, self.venue, handle)
                queue.pop()
                del self._level_of[handle & _NUMBER]
                have -= amount
            else:
                queue[-1][1] = amount - excess
                have = total
        if queue:
            self._levels[(side, price)] = queue
        else:
            self._levels.pop((side, price), None)

    def _add(self, time: int, side: str, price: Decimal, amount: Decimal,
             queue: list[list[Any]]) -> None:
        if amount * price < self._min_value and queue:
            handle, held = queue[-1]
            if self._amend(time, handle, held + amount):
                queue[-1][1] = held + amount
            return
        try:
            handle = self.engine.place_order(time, self.venue, self.instrument, side, amount,
                                             price=price)
        except MatchbookError as e:
            if e.name == "MAX_OPEN_ORDERS_EXCEEDED":
                raise type(e)(e.code, e.name, (
                    f"{e.message}: the recorded book needs more open orders (one per increase "
                    "of a level) than the exchange lets its venue holder have; set "
                    "max_open_orders in the engine's definition")) from e
            if e.name != _BELOW_MINIMUM:
                raise
            return  # below the minimum with nothing to join: not represented
        queue.append([handle, amount])
        self._level_of[handle & _NUMBER] = (side, price)
        self._take_fills()  # a crossing level may have traded at once

    def _amend(self, time: int, handle: int, amount: Decimal) -> bool:
        order = self.engine.order(self.venue, handle)
        try:
            self.engine.amend_order(time, self.venue, handle, amount=amount + order["filled"])
        except MatchbookError as e:
            if e.name != _BELOW_MINIMUM:
                raise
            return False
        return True
