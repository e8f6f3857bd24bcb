"""Columns: named numpy arrays of one length (trades, candles, batch answers) that turn
into a pandas or polars frame on request, with ticks and lots as decimals if asked;
neither library is imported before."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any, Literal

import numpy as np


class Columns(Mapping[str, np.ndarray]):
    """Named numpy columns of one length; a read-only mapping from name to array."""

    def __init__(self, data: Mapping[str, np.ndarray],
                 scales: Mapping[str, int | np.ndarray] | None = None) -> None:
        self._data = dict(data)
        # Decimal places of the fixed-point columns (ticks, lots): one for the column, or
        # one per row (trades of several instruments).
        self._scales = dict(scales or {})

    def __getitem__(self, name: str) -> np.ndarray:
        return self._data[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Columns({self.rows} rows: {', '.join(self._data)})"

    @property
    def rows(self) -> int:
        """Number of rows."""
        return len(next(iter(self._data.values()))) if self._data else 0

    @property
    def scaled(self) -> dict[str, int | np.ndarray]:
        """The fixed-point columns and their decimal places (ticks and lots)."""
        return dict(self._scales)

    def converted(self, decimals: bool | Literal["float"] = True) -> dict[str, np.ndarray]:
        """The columns with ticks and lots as values: ``Decimal`` objects (``True``, exact)
        or ``float64`` (``"float"``, fast); ``False`` leaves them as integers."""
        if decimals is False:
            return dict(self._data)
        out = dict(self._data)
        for name, scale in self._scales.items():
            raw = self._data[name]
            places = np.broadcast_to(np.asarray(scale), raw.shape)
            if decimals == "float":
                out[name] = raw / np.power(10.0, places)
            else:
                out[name] = np.array([Decimal(int(v)).scaleb(-int(p)) for v, p in zip(raw, places)],
                                     dtype=object)
        return out

    def to_pandas(self, decimals: bool | Literal["float"] = False) -> Any:
        """A ``pandas.DataFrame`` (pandas is imported here, on first use); ``decimals``
        as in :meth:`converted`."""
        import pandas as pd

        return pd.DataFrame(self.converted(decimals))

    def to_polars(self, decimals: bool | Literal["float"] = False) -> Any:
        """A ``polars.DataFrame`` (polars is imported here, on first use); ``decimals``
        as in :meth:`converted`."""
        import polars as pl

        return pl.DataFrame(self.converted(decimals))
