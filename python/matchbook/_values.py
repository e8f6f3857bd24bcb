"""Values across the binding: times (ints, datetimes, numpy datetimes), numbers (as decimal
text) and batch columns (checked to hold their values as they are) on the way in; the
decimal fields of records (as ``Decimal``) and balances on the way out; the time-in-force
codes of batches."""

from __future__ import annotations

import datetime as _dt
import json
import numbers as _numbers
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, NamedTuple

import numpy as np

from .errors import InvalidArgument

_TIFS = {
    "GOOD_TILL_CANCELLED": 0,
    "IMMEDIATE_OR_CANCELLED": 1,
    "FILL_OR_KILL": 2,
    "POST_ONLY": 3,
}


def _definition(config: Mapping[str, Any] | None) -> str:
    """A definition mapping as the JSON text the native side reads (decimals and anything
    else with an exact text form as their text). A mapping nested past what the encoder
    can walk, or holding itself, is InvalidArgument, as text nested past the native
    side's bound is; the native side then bounds the text (size and nesting) again."""
    try:
        return json.dumps(dict(config or {}), default=str)
    except (RecursionError, ValueError) as e:
        raise InvalidArgument(9003, "INVALID_ARGUMENT",
                              f"definition not readable: {type(e).__name__}: {e}") from None


class Balance(NamedTuple):
    """One currency balance of an account."""

    available: Decimal
    locked: Decimal


class MovedBalance(NamedTuple):
    """A balance an account-feed update moved, as it stands after the update."""

    currency: str
    available: Decimal
    locked: Decimal


# numpy's scalars (np.float64, np.int64, ...) are taken as the numbers they hold.
Number = Decimal | str | int | float | np.integer | np.floating
Time = int | np.integer | _dt.datetime | np.datetime64


def _ns(t: Time) -> int:
    if type(t) is int:  # the common case first: this runs on every command
        return t
    if isinstance(t, _dt.datetime):
        if t.tzinfo is None:
            raise InvalidArgument(9003, "INVALID_ARGUMENT", "datetime without a timezone")
        delta = t - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        # A pandas.Timestamp's difference keeps the nanoseconds a datetime has no room for.
        nanos = getattr(delta, "nanoseconds", 0)
        return ((delta.days * 86_400 + delta.seconds) * 1_000_000_000
                + delta.microseconds * 1_000 + nanos)
    if isinstance(t, np.datetime64):
        return int(_datetime64_ns(t, f"time {t!r}"))
    # An int subclass, or a numpy integer (a time read from an array).
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, _numbers.Integral):
        raise InvalidArgument(9003, "INVALID_ARGUMENT",
                              f"time {t!r}: int nanoseconds, zone-aware datetime or datetime64")
    return int(t)


def _datetime64_ns(value: np.ndarray | np.datetime64, what: str) -> np.ndarray:
    """numpy datetimes (zoneless, counted from the epoch in UTC by numpy's convention) as
    int64 nanoseconds, refused if NaT or if nanoseconds cannot hold them as they are (a
    year past 2262 wraps in numpy's own cast; a picosecond is cut)."""
    array = np.asarray(value)
    if np.any(np.isnat(array)):
        raise InvalidArgument(9003, "INVALID_ARGUMENT", f"{what}: NaT is not a time")
    nanos = array.astype("datetime64[ns]")
    if not np.all(nanos.astype(array.dtype) == array):
        raise InvalidArgument(9003, "INVALID_ARGUMENT",
                              f"{what}: not a whole number of int64 nanoseconds")
    return nanos.view(np.int64)


def _times(value: Any) -> Any:
    """A batch's times: one time (repeated later), or a column of int nanoseconds, numpy
    datetimes, or objects that are times (a zone-aware pandas column)."""
    if np.ndim(value) == 0:
        return _ns(value)
    array = np.asarray(value)
    if array.dtype.kind == "M":
        return _datetime64_ns(array, "column time")
    if array.dtype.kind == "O":
        return np.fromiter((_ns(t) for t in array), dtype=np.int64, count=len(array))
    return array


def _text(value: Number | None) -> str | None:
    if value is None or type(value) is str:  # the common cases first
        return value
    if isinstance(value, (bool, np.bool_)):
        raise InvalidArgument(9003, "INVALID_ARGUMENT", f"{value!r} is not a number")
    if isinstance(value, float):
        # float's repr is the shortest text that reads back as the same float ("1e-07"
        # too; np.float64's own repr is "np.float64(...)"); through Decimal it is written
        # out in full, never with an exponent.
        value = Decimal(float.__repr__(value))
    elif isinstance(value, np.floating):
        # The shortest text of a float32 or float16 at its own precision (0.01, not
        # 0.009999999776482582).
        value = Decimal(np.format_float_positional(value, unique=True, trim="-"))
    elif isinstance(value, np.integer):
        value = int(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InvalidArgument(9003, "INVALID_ARGUMENT", f"{value!r} is not a finite number")
        return format(value, "f")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    raise InvalidArgument(9003, "INVALID_ARGUMENT", f"{value!r} is not a number")


def _column(name: str, value: Any, dtype: Any, floats: bool = True) -> np.ndarray:
    """``value`` as a contiguous array of ``dtype``, refused if a value would change on the
    way (numpy's cast wraps ints and cuts floats: an account past 2**32 would name another
    account, a price of 100.5 ticks become 100); floats that are whole numbers are taken
    unless ``floats`` is false (times: a float has no nanoseconds to give)."""
    if np.ma.is_masked(value):
        raise InvalidArgument(9003, "INVALID_ARGUMENT",
                              f"column {name}: masked (missing) values")
    array = np.asarray(value)
    if array.ndim > 1:
        raise InvalidArgument(9003, "INVALID_ARGUMENT",
                              f"column {name}: 1-d, not {array.ndim}-d")
    if np.can_cast(array.dtype, dtype, casting="safe"):
        return np.ascontiguousarray(array, dtype=dtype)
    kinds = "iuf" if floats else "iu"
    kept = False
    if array.dtype.kind in kinds:
        with np.errstate(invalid="ignore", over="ignore"):
            cast = np.ascontiguousarray(array.astype(dtype, casting="unsafe"))
            kept = bool(np.all(cast == array))
    if not kept:
        raise InvalidArgument(
            9003, "INVALID_ARGUMENT",
            f"column {name}: values {np.dtype(dtype).name} cannot hold as they are")
    return cast


def _dec(text: str | None) -> Decimal | None:
    return None if text is None else Decimal(text)


# The order number inside a handle (``slot << 64 | number``).
_NUMBER = 2**64 - 1

_DECIMAL_KEYS = {
    "price", "trigger_price", "amount", "filled", "average_price", "open", "high", "low",
    "last", "base_volume", "quote_volume", "bid", "ask", "size", "entry_price", "mark_price",
    "unrealised", "realised", "initial_margin", "maintenance_margin", "index_price",
    "trailing_offset", "limit_offset", "display", "take_profit_price", "stop_loss_price",
    "stop_loss_limit_price", "total_fee", "maker_fee", "taker_fee",
}


def _decimals(record: dict[str, Any]) -> dict[str, Any]:
    return {k: (_dec(v) if k in _DECIMAL_KEYS and isinstance(v, str) else v)
            for k, v in record.items()}
