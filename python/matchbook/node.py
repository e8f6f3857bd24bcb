"""The exchange node: a durable, thread-safe exchange on a data directory, the same one
the REST server and C's ``mb_node_open`` run (see :class:`Node`)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

from ._native import NativeFeed, NativeNode
from ._values import Balance, MovedBalance, Number, _decimals, _definition, _ns, _text, Time
from .errors import InvalidArgument


class Node:
    """A running exchange on the data directory ``path`` (created if missing).

    A new directory starts from ``config`` (a definition mapping, as :class:`Engine` takes)
    with its holders created as journalled commands; an existing one is recovered (newest
    intact snapshot, then the journal) and must have been written under the same
    definition, else :class:`StorageError`, as is a directory another process has open.
    Every command is journalled, and with ``fsync`` on stable storage, before its call
    returns; snapshots are written every ``snapshot_every`` commands and at :meth:`close`.
    A deadline keeper fires good-till-time expiries and dead-man switches
    (:meth:`set_cancel_all_after`) within 100 ms of their time with no other traffic.

    Unlike :class:`Engine`, a node runs on its own threads and its own clock (system time,
    never behind its journal): commands take no time argument, and any number of Python
    threads may call one node at once (each call releases the GIL while it waits). With
    ``log_servers`` (``"nats://HOST:PORT[,...]"``) and ``node_name`` the node joins a
    replicated group on NATS JetStream instead of journalling locally. The directory is
    the one ``matchbook-rest`` keeps: the server can serve what a node wrote (given the
    definition with ``--config``) and the other way round.

    ``with Node.open(path, config) as node:`` closes the node on exit.
    """

    def __init__(self, native: NativeNode) -> None:
        self._native: NativeNode | None = native
        self._directory = native.directory()

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        config: Mapping[str, Any] | None = None,
        *,
        snapshot_every: int = 100_000,
        keep_snapshots: int = 2,
        fsync: bool = True,
        queue_capacity: int = 0,
        log_servers: str | None = None,
        node_name: str | None = None,
        lease_ms: int = 0,
    ) -> Node:
        """Opens (or recovers) the node on ``path``; see the class for what it keeps."""
        native = NativeNode.open(
            os.fspath(path), _definition(config), "json", snapshot_every, keep_snapshots,
            fsync, queue_capacity, log_servers, node_name, lease_ms,
        )
        return cls(native)

    @property
    def _live(self) -> NativeNode:
        if self._native is None:
            raise InvalidArgument(9003, "INVALID_ARGUMENT", "node is closed")
        return self._native

    def close(self) -> None:
        """Stops the node: every queued command answered, the last snapshot written, a
        group's lease resigned, the directory released. Later calls raise
        :class:`InvalidArgument`; closing twice is harmless."""
        native, self._native = self._native, None
        if native is not None:
            native.close()

    def __enter__(self) -> Node:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def account(self, holder: str, name: str = "main") -> int:
        """The id of a holder's account of the definition, by names."""
        try:
            return self._directory[holder][name]
        except KeyError:
            raise InvalidArgument(9003, "INVALID_ARGUMENT",
                                  f"no account {holder}/{name} in the definition") from None

    def place_order(
        self,
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
        """Places an order (arguments as :meth:`Engine.place_order`); returns its handle."""
        return self._live.place_order(
            account, instrument, side, _text(amount), _text(price), type, time_in_force,
            _text(trigger_price), None if expire_at is None else _ns(expire_at), client_id,
            stp, reduce_only, trigger_reference, _text(trailing_offset), trailing_offset_bps,
            _text(limit_offset), _text(display))

    def amend_order(self, account: int, order: int, *, amount: Number | None = None,
                    price: Number | None = None) -> None:
        """Changes an open order's total amount and/or price (as :meth:`Engine.amend_order`)."""
        self._live.amend_order(account, order, _text(amount), _text(price))

    def cancel_order(self, account: int, order: int) -> None:
        """Cancels one open order by the handle :meth:`place_order` returned."""
        self._live.cancel_order(account, order)

    def cancel_all(self, account: int, *, instrument: str | None = None) -> None:
        """Cancels every open order of the account, or those in ``instrument``."""
        self._live.cancel_all(account, instrument)

    def deposit(self, account: int, currency: str, amount: Number) -> None:
        """Credits an account (admin)."""
        self._live.deposit(account, currency, _text(amount))

    def set_cancel_all_after(self, account: int, timeout_ns: int) -> None:
        """Arms the account's dead-man switch: unless it is set again first, every open
        order of the account is cancelled ``timeout_ns`` nanoseconds from now, by the
        node's deadline keeper; 0 turns it off."""
        self._live.set_cancel_all_after(account, timeout_ns)

    def open_orders(self, account: int) -> list[dict[str, Any]]:
        """The account's open orders, oldest first (decimals as ``Decimal``)."""
        return [_decimals(o) for o in self._live.open_orders(account)]

    def balances(self, account: int) -> dict[str, Balance]:
        """Every currency balance of an account."""
        return {code: Balance(Decimal(a), Decimal(l))
                for code, (a, l) in self._live.balances(account).items()}

    def state_hash(self) -> int:
        """The engine's state hash (equal across replays and across a group's nodes)."""
        return self._live.state_hash()

    def now(self) -> int:
        """Engine time: nanoseconds since the epoch of the latest command applied."""
        return self._live.now()

    def book(self, instrument: str) -> dict[str, Any]:
        """The whole book of ``instrument`` now: ``sequence`` (commands that changed it)
        and ``bids`` / ``asks``, best first, as ``(price, amount, orders)``."""
        return _market_message(self._live.book(instrument))

    def market(self, timeout: float = 1.0) -> Iterator[list[dict[str, Any]]]:
        """The market feed, in lists: first every book as a ``snapshot`` message (as
        :meth:`book` gives it), then, per command, a ``book`` message for each book it
        changed (``levels``: ``(side, price, amount, orders)`` as they are after it, amount
        0 for a level gone; ``sequence``: the book's, one more than its previous message;
        ``top``: the best ``(price, amount)`` of each side when it moved, else None) and a
        ``trade`` message per trade. Each list waits up to ``timeout`` seconds and is
        empty when nothing happened meanwhile. It is the ``ORDER_BOOK`` stream's contract:
        snapshot plus updates is the book :meth:`book` shows at that sequence."""
        feed = self._live.subscribe_market()
        while True:
            yield [_market_message(m) for m in feed.poll(timeout)]

    def accounts(self, accounts: list[int],
                 timeout: float = 1.0) -> Iterator[list[dict[str, Any]]]:
        """The account feed of ``accounts``, in lists: first a ``snapshot`` message per
        account (``orders``: its open orders as :meth:`Engine.order_record` gives them;
        ``balances`` as :meth:`balances`), then a message per update of one of their
        orders, in event order: ``order_created``, ``order_booked``, ``order_amended``,
        ``trade_settled`` (with ``trade``, ``price``, ``amount``, ``fee``,
        ``fee_currency``, ``maker``), ``order_closed`` (with ``reason``, the streams'
        spelling such as ``CANCELLED_BY_USER``), ``stop_triggered``, ``trigger_moved`` and
        ``funding_paid``; each with ``order``, the record as it stands after the event,
        and ``moves``: the balances it moved, ``{"locked" | "unlocked" | "spent" |
        "credited" | "deducted": MovedBalance(currency, available, locked)}``. From
        the snapshot, the records and moves keep the accounts' open orders and balances
        exact (deposits and transfers excepted). Each list waits up to ``timeout`` seconds
        and is empty when nothing happened meanwhile."""
        feed = self._live.subscribe_accounts(list(accounts))
        while True:
            yield [_account_message(m) for m in feed.poll(timeout)]

    def events(self, timeout: float = 1.0) -> Iterator[list[dict[str, Any]]]:
        """Every event from now on, in command order (as :meth:`Engine.events` gives
        them), in lists: each waits up to ``timeout`` seconds and is empty when nothing
        happened meanwhile. A reader that falls 65,536 batches behind loses the feed
        (:class:`MatchbookError` ``STOPPED``)."""
        feed: NativeFeed = self._live.subscribe()
        while True:
            yield feed.poll(timeout)


def _market_message(message: dict[str, Any]) -> dict[str, Any]:
    """A market-feed message with its prices and amounts as ``Decimal``."""
    kind = message["type"]
    if kind == "snapshot":
        for side in ("bids", "asks"):
            message[side] = [(Decimal(p), Decimal(a), n) for p, a, n in message[side]]
    elif kind == "book":
        message["levels"] = [(s, Decimal(p), Decimal(a), n) for s, p, a, n in message["levels"]]
        top = message["top"]
        if top is not None:
            message["top"] = tuple(None if t is None else (Decimal(t[0]), Decimal(t[1]))
                                   for t in top)
    elif kind == "trade":
        message["price"] = Decimal(message["price"])
        message["amount"] = Decimal(message["amount"])
    return message


def _account_message(message: dict[str, Any]) -> dict[str, Any]:
    """An account-feed message with its decimals as ``Decimal`` and its balances as
    ``Balance``."""
    if message["type"] == "snapshot":
        message["orders"] = [_decimals(o) for o in message["orders"]]
        message["balances"] = {code: Balance(Decimal(a), Decimal(l))
                               for code, (a, l) in message["balances"].items()}
        return message
    if message.get("order") is not None:
        message["order"] = _decimals(message["order"])
    for key in ("price", "amount", "fee", "mark_price", "payment", "funding_rate"):
        if key in message:
            message[key] = Decimal(message[key])
    message["moves"] = {name: MovedBalance(code, Decimal(a), Decimal(l))
                        for name, (code, a, l) in message["moves"].items()}
    return message
