"""The backtest example runs on a little data, prints its PnL and writes a non-empty PNG
(also with a replayed CSV flow)."""

from __future__ import annotations

import runpy
import sys
from decimal import Decimal
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "backtest.py"


def test_backtest_writes_its_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = runpy.run_path(str(EXAMPLE))
    out = tmp_path / "chart.png"
    pnl = module["run"](120, 3, str(out))
    assert isinstance(pnl, Decimal)
    assert out.stat().st_size > 10_000
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "trades" in printed and "PnL" in printed

    flow = tmp_path / "flow.csv"
    start = module["START"]
    flow.write_text("".join(f"{start + i * 500_000_000},{i % 2},0.01\n" for i in range(100)))
    replayed = tmp_path / "replayed.png"
    sys.argv = ["backtest.py", "--seconds", "60", "--flow", str(flow), "--out", str(replayed)]
    module["main"]()
    assert replayed.stat().st_size > 10_000
    assert "with the maker" in capsys.readouterr().out
