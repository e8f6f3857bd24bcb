"""Columns: named numpy arrays of one length (trades, candles, batch answers) that turn
into a pandas or polars frame on request; neither library is imported before."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np


class Columns(Mapping[str, np.ndarray]):
    """Named numpy columns of one length; a read-only mapping from name to array."""

    def __init__(self, data: Mapping[str, np.ndarray]) -> None:
        self._data = dict(data)

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

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` (pandas is imported here, on first use)."""
        import pandas as pd

        return pd.DataFrame(self._data)

    def to_polars(self) -> Any:
        """A ``polars.DataFrame`` (polars is imported here, on first use)."""
        import polars as pl

        return pl.DataFrame(self._data)
