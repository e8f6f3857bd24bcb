"""Exceptions of matchbook: one base class with the engine's stable ``code`` and ``name``,
subclasses by what went wrong, chosen once from the code by :func:`error_for`."""

from __future__ import annotations

from typing import Any


class MatchbookError(Exception):
    """Any refusal by the engine or the bindings.

    ``code`` is the engine's stable number (1xxx input, 2xxx funds and risk, 3xxx matching,
    4xxx accounts, 9xxx the bindings' own), ``name`` its wire name (``INSUFFICIENT_FUNDS``).
    """

    def __init__(self, code: int, name: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.name = name
        self.message = message

    def __str__(self) -> str:
        return f"{self.name} ({self.code}): {self.message}"

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(code={self.code}, name={self.name!r}, "
                f"message={self.message!r})")


class InvalidOrder(MatchbookError, ValueError):
    """An order or amend that breaks a rule of its instrument (1xxx, reduce-only)."""


class InvalidArgument(MatchbookError, ValueError):
    """An argument the engine never saw: a bad decimal, code, enumeration or definition."""


class UnknownReference(MatchbookError, KeyError):
    """No such instrument, currency, account or holder."""

    def __str__(self) -> str:  # KeyError would quote the message
        return MatchbookError.__str__(self)


class InsufficientFunds(MatchbookError):
    """Not enough available balance, margin or transferable funds."""


class AccountInDerisk(MatchbookError):
    """The account is in de-risk: transfers out are refused."""


class OrderRejected(MatchbookError):
    """The market refused the order as placed (liquidity, post-only, trading state, limits).

    A fill-or-kill or post-only order refused by the book was accepted and ended at once:
    ``order`` then holds its handle, to read its history record."""


class OrderNotFound(MatchbookError, LookupError):
    """No such open order of this account."""


class PermissionDenied(MatchbookError, PermissionError):
    """The account is not the caller's, or the operation is not allowed on it."""


class AccountError(MatchbookError):
    """Any other account rule (closed account, names, instant-trade and BLP rules)."""


class StorageError(MatchbookError, OSError):
    """The data directory of a durable engine could not take a command or a snapshot (a
    failed write, a damaged journal, another definition). A command that failed this way
    was not acknowledged; after a failed journal write the engine takes nothing more until
    it is opened again."""


_BY_CODE: dict[int, type[MatchbookError]] = {
    1009: UnknownReference,
    1011: UnknownReference,
    2001: InsufficientFunds,
    2002: InsufficientFunds,
    2003: InsufficientFunds,
    2004: AccountInDerisk,
    2005: InvalidOrder,
    3005: OrderNotFound,
    4001: UnknownReference,
    4002: UnknownReference,
    4004: PermissionDenied,
    9003: InvalidArgument,
    9009: StorageError,
}

_BY_GROUP: dict[int, type[MatchbookError]] = {
    1: InvalidOrder,
    2: InsufficientFunds,
    3: OrderRejected,
    4: AccountError,
}


def error_for(code: int, name: str, message: str) -> MatchbookError:
    """The exception for an engine code (called by the native module for every error)."""
    cls = _BY_CODE.get(code) or _BY_GROUP.get(code // 1000, MatchbookError)
    return cls(code, name, message)


class _Closed:
    """Stands in for the native engine of a closed ``Engine``: every use refuses."""

    def __getattr__(self, name: str) -> Any:
        raise InvalidArgument(9003, "INVALID_ARGUMENT", f"engine is closed ({name})")
