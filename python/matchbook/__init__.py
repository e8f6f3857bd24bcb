"""matchbook: a deterministic exchange engine (order book, matching, balances, fees,
futures funding) for research and backtests.

Every command takes the time it happens at (``int`` or numpy integer nanoseconds since
the epoch, a timezone-aware ``datetime`` or a ``numpy.datetime64``), so replaying the
same commands gives the same state (``Engine.state_hash``). Prices and amounts go in as
``Decimal``, ``str``, ``int``, ``float`` or a numpy integer or float scalar (a float by its
shortest text: ``0.1`` is 0.1) and come out as ``Decimal``; bulk data comes out as numpy
:class:`Columns`.
Refusals raise :class:`MatchbookError` subclasses (see :mod:`matchbook.errors`).

>>> import matchbook
>>> engine = matchbook.Engine({"holders": [{"name": "alice", "accounts": [
...     {"name": "main", "deposits": {"EUR": "1000"}}]}]})
>>> account = engine.account("alice")
>>> order = engine.place_order(1, account, "BTC_EUR", "BUY", "0.01", "50000")
>>> engine.balances(account)["EUR"].locked
Decimal('500.00000000')
"""

from __future__ import annotations

import numbers as _numbers
import os
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

import numpy as np

from . import errors
from ._native import NativeEngine
from ._values import (
    _NUMBER, _TIFS, Balance, Number, Time, _column, _decimals, _definition, _ns, _text, _times,
)
from .columns import Columns
from .node import Node
from .errors import (
    AccountError,
    AccountInDerisk,
    InsufficientFunds,
    InvalidArgument,
    InvalidOrder,
    MatchbookError,
    OrderNotFound,
    OrderRejected,
    PermissionDenied,
    StorageError,
    UnknownReference,
    _Closed,
)

__all__ = [
    "AccountError",
    "AccountInDerisk",
    "Balance",
    "Columns",
    "Engine",
    "InsufficientFunds",
    "InvalidArgument",
    "InvalidOrder",
    "MatchbookError",
    "Node",
    "OrderNotFound",
    "OrderRejected",
    "PermissionDenied",
    "StorageError",
    "UnknownReference",
    "errors",
]


class Engine:
    """One exchange: reference data, accounts, books, market data and futures.

    ``config`` is an exchange definition (the format of ``matchbook-config``, as the REST
    server reads it): a mapping, or ``None`` for the demo markets without holders. Use
    :meth:`from_toml`, :meth:`from_json` or :meth:`from_file` for text (at most 16 MiB;
    JSON nested at most 64 levels deep, TOML within its parser's own limit: anything past
    that is :class:`InvalidArgument`, as a mapping too deep to encode is). Holders in it
    are created at ``start_time``. With ``keep_events`` (the default) every command's
    events wait for :meth:`events` (about 1 KB for an order placed and cancelled): a
    backtest that never reads them passes ``keep_events=False``.
    """

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        start_time: Time = 0,
        market_data: bool = True,
        keep_events: bool = True,
    ) -> None:
        text = _definition(config)
        self._native = NativeEngine(text, "json", _ns(start_time), market_data, keep_events)
        self._instruments = {i["code"]: i for i in self._native.instruments()}
        self._currencies = {c["code"]: c for c in self._native.currencies()}

    @classmethod
    def from_toml(cls, text: str, **options: Any) -> Engine:
        """An engine from a TOML definition."""
        return cls._from_text(text, "toml", **options)

    @classmethod
    def from_json(cls, text: str, **options: Any) -> Engine:
        """An engine from a JSON definition."""
        return cls._from_text(text, "json", **options)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **options: Any) -> Engine:
        """An engine from a ``.toml`` or ``.json`` file."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        kind = "json" if str(path).endswith(".json") else "toml"
        return cls._from_text(text, kind, **options)

    @classmethod
    def _from_text(cls, text: str, kind: str, *, start_time: Time = 0, market_data: bool = True,
                   keep_events: bool = True) -> Engine:
        return cls._wrap(NativeEngine(text, kind, _ns(start_time), market_data, keep_events))

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        config: Mapping[str, Any] | None = None,
        *,
        start_time: Time = 0,
        market_data: bool = True,
        keep_events: bool = True,
        snapshot_every: int = 100_000,
        keep_snapshots: int = 2,
        fsync: bool = True,
    ) -> Engine:
        """A durable engine on the data directory ``path`` (created if missing).

        A new directory starts from ``config`` as :class:`Engine` would; an existing one is
        recovered (newest intact snapshot, then its journal) and must have been written
        under the same ``config``, ``start_time`` and ``market_data``, else
        :class:`StorageError`. Every command is then journalled, and with ``fsync`` on
        stable storage, before its call returns (a :meth:`submit_orders` batch commits
        once). A snapshot is written every ``snapshot_every`` commands (0: never on its
        own), by :meth:`snapshot` and at :meth:`close`; ``keep_snapshots`` are kept and
        older journal segments deleted.
        A journal write that fails raises :class:`StorageError`, and so does every later
        call, reads included (memory may hold the command the journal does not), until the
        directory is opened again. The C ABI's ``mb_engine_open`` reads and writes the same
        directories.
        """
        text = _definition(config)
        return cls._wrap(NativeEngine.open(
            os.fspath(path), text, "json", _ns(start_time), market_data, keep_events,
            snapshot_every, keep_snapshots, fsync,
        ))

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        market_data: bool = True,
        keep_events: bool = True,
    ) -> Engine:
        """An engine in memory holding the state of a ``matchbook-rest`` server's data
        directory ``path``: its newest intact snapshot and the journal after it, under the
        definition the server recorded there (``config.exchange.json``). Nothing in the
        directory is written or locked, so the server may be running (a command it is
        still writing is left out). The engine is a branch: commands applied to it change
        only it. Holders and accounts keep the definition's names (``account("demo",
        "main")``); history, candles and tickers come with the state when ``market_data``.
        A directory that is not a server's, or whose definition does not match its pin,
        raises :class:`StorageError`. A node of a replicated group keeps its commands in
        the group's log, not in its directory: its directory gives the state of its newest
        snapshot (``now`` says when that was).
        """
        return cls._wrap(NativeEngine.load(os.fspath(path), market_data, keep_events))

    @classmethod
    def _wrap(cls, native: NativeEngine) -> Engine:
        engine = cls.__new__(cls)
        engine._native = native
        engine._instruments = {i["code"]: i for i in native.instruments()}
        engine._currencies = {c["code"]: c for c in native.currencies()}
        return engine

    def close(self) -> None:
        """Ends the engine: a durable one is snapshotted and its data directory released
        (another engine may open it). Any later call raises :class:`InvalidArgument`;
        closing twice is harmless. ``with Engine.open(...) as engine:`` closes on exit."""
        native = self._native
        if isinstance(native, _Closed):
            return
        native.close()
        self._native = _Closed()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if isinstance(self._native, _Closed):
            return "Engine(closed)"
        where = self._native.data_dir() or "in memory"
        accounts = len(self._native.accounts())
        return (f"Engine({len(self._instruments)} instruments, {accounts} accounts, "
                f"time {self._native.now()}, {where})")

    def copy(self, *_memo: Any) -> Engine:
        """An independent engine in memory with this one's state now, to try other
        commands on (what-if branches of a backtest); ``copy.copy`` and ``copy.deepcopy``
        make the same. A durable engine's copy is not durable; no events wait in it."""
        return self._wrap(self._native.copy())

    __copy__ = __deepcopy__ = copy

    def snapshot(self) -> str:
        """Writes a snapshot of a durable engine now; returns the file's path."""
        return self._native.snapshot()

    def set_history_limits(self, *, orders: int | None = None, trades: int | None = None) -> None:
        """Bounds what market data keeps: at most ``orders`` order records and ``trades``
        trade records (``None``: no limit, the default), the oldest forgotten first whatever
        their age (open orders stay until they end). About 280 bytes an order and 200 a
        trade: a long backtest's history stays within its limits. Not saved with a durable
        engine: set it again after :meth:`open`."""
        for name, value in (("orders", orders), ("trades", trades)):
            whole = isinstance(value, _numbers.Integral) and not isinstance(value, bool)
            if value is not None and not (whole and value >= 1):
                raise InvalidArgument(9003, "INVALID_ARGUMENT",
                                      f"{name} {value!r}: an int of at least 1, or None")
        self._native.set_history_limits(
            None if orders is None else int(orders), None if trades is None else int(trades))

    @property
    def data_dir(self) -> str | None:
        """The data directory of a durable engine (``None``: in memory only)."""
        return self._native.data_dir()

    @property
    def market_data(self) -> bool:
        """Whether the engine keeps market data (order and trade history, candles,
        tickers): ``market_data=False`` at creation leaves it out."""
        return self._native.has_market_data()

    # Reference data -------------------------------------------------------------------

    @property
    def instruments(self) -> dict[str, dict[str, Any]]:
        """Instruments by code: index, base, quote, type, state, precisions, min_size,
        min_price, max_price (decimal text) and ``futures`` (margins, funding period,
        expiry; ``None`` on a spot instrument)."""
        return {k: dict(v) for k, v in self._instruments.items()}

    @property
    def currencies(self) -> dict[str, dict[str, Any]]:
        """Currencies by code: index, precision, balance scale."""
        return {k: dict(v) for k, v in self._currencies.items()}

    def account(self, holder: str, name: str = "main") -> int:
        """The id of a configured holder's account."""
        return self._native.account(holder, name)[1]

    def holder(self, holder: str) -> int:
        """The id of a configured holder."""
        return self._native.account(holder, "main")[0]

    def tick(self, instrument: str) -> Decimal:
        """Price step of an instrument (one tick)."""
        return Decimal(1).scaleb(-self._instrument(instrument)["market_precision"])

    def lot(self, instrument: str) -> Decimal:
        """Amount step of an instrument (one lot)."""
        return Decimal(1).scaleb(-self._instrument(instrument)["amount_precision"])

    def _places(self, instrument: str) -> tuple[int, int]:
        """Decimal places of an instrument's ticks and lots."""
        i = self._instrument(instrument)
        return i["market_precision"], i["amount_precision"]

    def _instrument(self, code: str) -> dict[str, Any]:
        try:
            return self._instruments[code]
        except KeyError:
            raise UnknownReference(1009, "INVALID_INSTRUMENT_CODE", f"unknown instrument: {code!r}") from None

    # Accounts and funds ---------------------------------------------------------------

    def create_holder(self, time: Time) -> tuple[int, int]:
        """Creates a holder with its main account: ``(holder id, account id)``."""
        return self._native.create_holder(_ns(time))

    def create_subaccount(self, time: Time, holder: int, name: str, kind: str = "regular") -> int:
        """Creates a subaccount (``regular``, ``instant-trade`` or ``blp``); its id."""
        return self._native.create_subaccount(_ns(time), holder, name, kind)

    def close_subaccount(self, time: Time, account: int) -> None:
        """Closes a subaccount; its open orders are cancelled."""
        self._native.close_subaccount(_ns(time), account)

    def deposit(self, time: Time, account: int, currency: str, amount: Number) -> None:
        """Credits an account (admin)."""
        self._native.deposit(_ns(time), account, currency, _text(amount))

    def withdraw(self, time: Time, account: int, currency: str, amount: Number) -> None:
        """Debits an account's available balance (admin)."""
        self._native.withdraw(_ns(time), account, currency, _text(amount))

    def transfer(self, time: Time, holder: int, source: int, destination: int, currency: str,
                 amount: Number) -> None:
        """Moves funds between two accounts of one holder."""
        self._native.transfer(_ns(time), holder, source, destination, currency, _text(amount))

    def set_derisk(self, time: Time, account: int, on: bool) -> None:
        """Puts an account in de-risk (transfers out refused) or takes it out (admin)."""
        self._native.set_derisk(_ns(time), account, on)

    def set_blp_threshold(self, time: Time, account: int, currency: str, amount: Number) -> None:
        """Sets the balance a BLP account keeps after transfers out (admin)."""
        self._native.set_blp_threshold(_ns(time), account, currency, _text(amount))

    def set_stp_mode(self, time: Time, account: int, mode: str) -> None:
        """Default self-trade prevention: NONE, CANCEL_NEWEST, CANCEL_OLDEST, CANCEL_BOTH."""
        self._native.set_stp_mode(_ns(time), account, mode)

    def balances(self, account: int) -> dict[str, Balance]:
        """Every currency balance of an account."""
        return {code: Balance(Decimal(a), Decimal(l))
                for code, (a, l) in self._native.balances(account).items()}

    # Orders ---------------------------------------------------------------------------

    def place_order(
        self,
        time: Time,
        account: int,
        instrument: str,
        side: str,
        amount: Number,
        price: Number | None = None,
        *,
        type: str = "LIMIT",
        time_in_force: str = "GOOD_TILL_CANCELLED",
        trigger_price: Number | None = None,
        expire_at: Time | None = None,
        client_id: str | None = None,
        stp: str | None = None,
        reduce_only: bool = False,
        trigger_reference: str = "LAST_PRICE",
        trailing_offset: Number | None = None,
        trailing_offset_bps: int | None = None,
        limit_offset: Number | None = None,
        display: Number | None = None,
    ) -> int:
        """Places an order; returns its handle, which cancels and amends take.

        ``type`` is LIMIT, MARKET, or a held trigger order: STOP (stop-limit), STOP_MARKET,
        TAKE_PROFIT (limit), TAKE_PROFIT_MARKET (each with ``trigger_price``), TRAILING_STOP
        or TRAILING_STOP_LIMIT (with ``trailing_offset``, a price, or
        ``trailing_offset_bps``; the limit variant with ``limit_offset``). A trigger order
        watches the last trade price, or the mark price of a future with
        ``trigger_reference="MARK_PRICE"``. A resting LIMIT order with ``display`` is an
        iceberg: the book shows that much at a time, the next part queued at the back of
        its price each time the shown part fills. Time in force: GOOD_TILL_CANCELLED,
        IMMEDIATE_OR_CANCELLED, FILL_OR_KILL, POST_ONLY or GOOD_TILL_TIME. A FILL_OR_KILL
        order that cannot fill, or a POST_ONLY order that would take, is accepted and ended
        at once: OrderRejected is raised with the order's handle as ``order`` (its history
        record keeps the status)."""
        return self._native.place_order(
            _ns(time), account, instrument, side, _text(amount), _text(price), type,
            time_in_force, None if trigger_price is None else _text(trigger_price),
            None if expire_at is None else _ns(expire_at), client_id, stp, reduce_only,
            trigger_reference, _text(trailing_offset), trailing_offset_bps, _text(limit_offset),
            _text(display))

    def place_oco(self, time: Time, account: int, instrument: str, side: str, amount: Number,
                  price: Number, *, stop_trigger: Number,
                  stop_limit: Number | None = None) -> tuple[int, int]:
        """Places a one-cancels-the-other pair on one side: a limit at ``price`` and a stop
        triggered at ``stop_trigger`` (a stop-limit at ``stop_limit``, else a stop-market).
        The first fill or trigger of one leg cancels the other, and so does cancelling
        either. Returns both handles."""
        return self._native.place_oco(_ns(time), account, instrument, side, _text(amount),
                                      _text(price), _text(stop_trigger), _text(stop_limit))

    def place_bracket(self, time: Time, account: int, instrument: str, side: str,
                      amount: Number, price: Number | None = None, *, take_profit: Number,
                      stop_loss: Number, stop_limit: Number | None = None,
                      time_in_force: str = "GOOD_TILL_CANCELLED") -> int:
        """Places a bracket: an entry (a limit at ``price``, or a market order) whose exits,
        placed once the entry is done (filled, or ended by the market after filling part;
        not when you cancel it), are a take-profit limit at ``take_profit`` and a stop-loss
        triggered at ``stop_loss`` (a stop-limit at ``stop_limit``), for what it filled,
        linked one-cancels-the-other. Returns the entry's handle; the exits appear in
        ``open_orders``."""
        return self._native.place_bracket(_ns(time), account, instrument, side, _text(amount),
                                          _text(price), _text(take_profit), _text(stop_loss),
                                          _text(stop_limit), time_in_force)

    def amend_order(self, time: Time, account: int, order: int, *, amount: Number | None = None,
                    price: Number | None = None) -> None:
        """Changes an open order's total amount and/or price."""
        self._native.amend_order(_ns(time), account, order, _text(amount), _text(price))

    def cancel_order(self, time: Time, account: int, order: int) -> None:
        """Cancels one open order."""
        self._native.cancel_order(_ns(time), account, order)

    def cancel_by_client_id(self, time: Time, account: int, client_id: str) -> None:
        """Cancels the newest open order carrying ``client_id``."""
        self._native.cancel_by_client_id(_ns(time), account, client_id)

    def cancel_all(self, time: Time, account: int, *, instrument: str | None = None,
                   orders: Sequence[int] | None = None,
                   client_ids: Sequence[str] | None = None) -> None:
        """Cancels every open order of the account, or those in ``instrument``, or the
        listed ``orders``, or the newest open order for each of ``client_ids``."""
        self._native.cancel_all(_ns(time), account, instrument,
                                None if orders is None else list(orders),
                                None if client_ids is None else list(client_ids))

    def open_orders(self, account: int) -> list[dict[str, Any]]:
        """The account's open orders, oldest first (decimals as ``Decimal``)."""
        return [_decimals(o) for o in self._native.open_orders(account)]

    def order(self, account: int, order: int | None = None, *,
              client_id: str | None = None) -> dict[str, Any]:
        """One open order by handle or by client id."""
        return _decimals(self._native.order(account, order, client_id))

    def order_history(self, account: int, order: int) -> dict[str, Any]:
        """An order's record, open or done: status (the public exchange's names: OPEN,
        FILLED_FULLY, FILLED_CLOSED, CANCELLED, FILLED_REJECTED), reason (the refusal code
        beside FILLED_REJECTED, else None), filled, average price, ``total_fee``
        (``Decimal``) in ``fee_currency`` (what a spot order receives, a future's quote),
        trades, and the
        terms beyond the plain fields (``None`` where an order has none): trigger_reference,
        trailing_offset or trailing_offset_bps, limit_offset, display, linked_order and
        parent_order (handles), take_profit_price, stop_loss_price, stop_loss_limit_price.
        ``order`` is the handle ``place_order`` returned (or the order's number, its low 64
        bits)."""
        return _decimals(self._native.order_history(account, order & _NUMBER))

    def order_page(self, account: int, before: int | None = None,
                   limit: int = 100) -> tuple[list[dict[str, Any]], int | None]:
        """A page of the account's orders, open and ended, newest first, as
        ``order_history`` records: at most ``limit`` orders below order number ``before``
        (``None``: from the newest), and the ``before`` of the next page (``None``: this
        was the last). A page reads at most 10,000 records, so it can hold fewer than
        ``limit`` orders (even none) with a next ``before``: go on until ``None``. Ended
        orders stay as long as market data keeps them."""
        records, following = self._native.order_page(account, before or 0, limit)
        return [_decimals(r) for r in records], (following or None)

    def order_trades(self, account: int, order: int) -> list[dict[str, Any]]:
        """The trades of one of the account's orders (its handle or number), oldest first:
        trade number, time, price and amount (``Decimal``), taker side, both accounts,
        both order handles and both fees (``maker_fee`` and ``taker_fee``, ``Decimal``, in
        ``maker_fee_currency`` and ``taker_fee_currency``: what each side of a spot trade
        received, a future's quote)."""
        return [_decimals(t) for t in self._native.order_trades(account, order & _NUMBER)]

    def accounts(self) -> list[dict[str, Any]]:
        """Every account of every holder, each main account first then its subaccounts:
        ``account``, ``holder``, ``name``, ``kind``, ``state`` (ACTIVE or CLOSED),
        ``derisk``."""
        return self._native.accounts()

    def submit_orders(
        self,
        time: Time | np.ndarray,
        account: int | np.ndarray,
        instrument: str | int | np.ndarray,
        side: np.ndarray,
        price: np.ndarray,
        amount: np.ndarray,
        time_in_force: str | np.ndarray = "GOOD_TILL_CANCELLED",
    ) -> Columns:
        """Limit orders in one call, in fixed point: ``side`` 0 buy / 1 sell, ``price`` in
        ticks and ``amount`` in lots of the instrument (:meth:`tick`, :meth:`lot`), one row
        each; scalars are repeated. ``time`` is int nanoseconds, zone-aware datetimes, or
        numpy datetimes (UTC, as numpy counts them). A column of any numeric dtype is taken
        if its values fit their field as they are (whole ticks and lots; an account past
        2**32, a price of 100.5 ticks, a float time, a masked value, a 2-d column raise
        :class:`InvalidArgument`). The loop runs in Rust with the GIL released, reading the
        arrays in place: do not write them from another thread during the call (as with
        numpy's own functions). Returns
        columns ``status`` (0 accepted, else the error code; a fill-or-kill or post-only
        order the book refused has its code and still its ``order_id``), ``order_id`` and
        ``slot``;
        ``handle`` of row i is ``slot[i] << 64 | order_id[i]``."""
        # Rows: the first column given as an array (scalars are repeated to it).
        n = next((len(v) for v in (side, price, amount, account, instrument, time,
                                   time_in_force) if np.ndim(v) == 1), 1)

        def col(name: str, value: Any, dtype: Any, floats: bool = True) -> np.ndarray:
            if np.ndim(value) == 0:
                value = np.full(n, value)
            return _column(name, value, dtype, floats)

        if isinstance(instrument, str):
            instrument = self._instrument(instrument)["index"]
        if isinstance(time_in_force, str):
            if time_in_force not in _TIFS:
                raise InvalidArgument(9003, "INVALID_ARGUMENT",
                                      f"time in force {time_in_force!r}: one of {', '.join(_TIFS)}")
            time_in_force = _TIFS[time_in_force]
        times = _times(time)
        answers = self._native.submit_orders(
            col("time", times, np.int64, floats=False), col("account", account, np.uint32),
            col("instrument", instrument, np.uint16), col("side", side, np.uint8),
            col("price", price, np.int64),
            col("amount", amount, np.int64), col("time_in_force", time_in_force, np.uint8))
        return Columns(answers)

    # Futures and time -----------------------------------------------------------------

    def set_instrument_state(self, time: Time, instrument: str, state: str) -> None:
        """ACTIVE, POST_ONLY, SUSPENDED or CLOSED (admin)."""
        self._native.set_instrument_state(_ns(time), instrument, state)

    def set_index_price(self, time: Time, instrument: str, price: Number) -> None:
        """Sets a futures instrument's index price (admin)."""
        self._native.set_index_price(_ns(time), instrument, _text(price))

    def liquidate(self, time: Time, account: int) -> None:
        """Closes an account's futures positions against the book (admin)."""
        self._native.liquidate(_ns(time), account)

    def set_cancel_all_after(self, time: Time, account: int, timeout_ns: int) -> None:
        """Arms the account's dead-man switch: its open orders are cancelled once
        ``timeout_ns`` nanoseconds of engine time have passed, unless it is set again
        first; 0 turns it off."""
        self._native.set_cancel_all_after(_ns(time), account, timeout_ns)

    def advance_time(self, time: Time) -> None:
        """Moves time forward: order expiries, dead-man switches, funding samples and
        settlements."""
        self._native.advance_time(_ns(time))

    def positions(self, account: int) -> list[dict[str, Any]]:
        """The account's futures positions (decimals as ``Decimal``; money in USD)."""
        return [_decimals(p) for p in self._native.positions(account)]

    def funding(self, instrument: str) -> dict[str, Any]:
        """Mark and index price, current and last funding rate (1e-8 per period), next
        settlement, open interest."""
        return _decimals(self._native.funding(instrument))

    @property
    def now(self) -> int:
        """Engine time: the latest time applied (ns)."""
        return self._native.now()

    @property
    def last_trade_id(self) -> int:
        """Number of the newest trade made on any instrument (0 before the first): pass it
        as ``trades(after=...)`` to read only what comes next."""
        return self._native.last_trade_id()

    @property
    def oldest_trade_id(self) -> int:
        """Number of the oldest trade :meth:`trades` can still return (the next trade's when
        none is kept): older ones went past :meth:`set_history_limits` or the 31-day window."""
        return self._native.oldest_trade_id()

    def fees_collected(self) -> dict[str, Decimal]:
        """Fees the exchange collected, by currency."""
        return {code: Decimal(v) for code, v in self._native.fees_collected().items()}

    def state_hash(self) -> int:
        """A hash of the whole state: equal engines, equal hashes."""
        return self._native.state_hash()

    # Market data ----------------------------------------------------------------------

    def book(self, instrument: str, depth: int = 10, level: int = 2) -> dict[str, Any]:
        """Level 1/2: ``bids``/``asks`` as ``(price, amount, orders)``; level 3: as
        ``(price, amount, order handle, account)``; best first."""
        raw = self._native.book(instrument, depth, level)
        side = lambda rows: [(Decimal(r[0]), Decimal(r[1]), *r[2:]) for r in rows]  # noqa: E731
        return {"bids": side(raw["bids"]), "asks": side(raw["asks"]), "sequence": raw["sequence"]}

    def book_columns(self, instrument: str, depth: int = 10) -> Columns:
        """Price levels as columns: ``side`` (0 bid, 1 ask), ``price`` (ticks), ``amount``
        (lots), ``orders``; bids best first, then asks best first."""
        prices, lots = self._places(instrument)
        return Columns(self._native.book_columns(instrument, depth),
                       {"price": prices, "amount": lots})

    def candles(self, instrument: str, unit: str, period: int, start: Time, end: Time) -> Columns:
        """Candles from ``start`` to ``end``, oldest first: ``start``, ``open``, ``high``,
        ``low``, ``close`` (ticks), ``total_amount`` (lots traded) and ``volume`` (quote
        traded, price x amount at ticks x lots scale), as in C and REST. Units: MINUTES
        (1, 5, 15, 30), HOURS (1, 4), DAYS, WEEKS, MONTHS (1). No candle is returned for a
        period that begins after the engine's time."""
        prices, lots = self._places(instrument)
        scales = {"open": prices, "high": prices, "low": prices, "close": prices,
                  "total_amount": lots, "volume": prices + lots}
        return Columns(self._native.candles(instrument, unit, period, _ns(start), _ns(end)),
                       scales)

    def ticker(self, instrument: str) -> dict[str, Any]:
        """The 24-hour ticker at engine time."""
        return _decimals(self._native.ticker(instrument))

    def trades(self, after: int = 0, instrument: str | None = None) -> Columns:
        """Trades numbered after ``after`` as columns: ``id``, ``time``, ``instrument``,
        ``price`` (ticks), ``amount`` (lots), ``taker_side`` (0 buy, 1 sell), accounts,
        order numbers and fees (balance units of what each side received)."""
        data = self._native.trades(after, instrument)
        by_index = sorted(self._instruments.values(), key=lambda i: i["index"])
        prices = np.array([i["market_precision"] for i in by_index], dtype=np.int64)
        lots = np.array([i["amount_precision"] for i in by_index], dtype=np.int64)
        index = np.asarray(data["instrument"], dtype=np.int64)
        return Columns(data, {"price": prices[index], "amount": lots[index]})

    def events(self) -> Iterator[dict[str, Any]]:
        """The events since the last call, oldest first (prices in ticks, amounts in lots);
        :class:`InvalidArgument` for an engine made with ``keep_events=False``."""
        return iter(self._native.poll_events())
