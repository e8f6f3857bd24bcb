"""The package as shipped: the stubs describe the native module (mypy's stubtest), the
examples in the docstrings run, and the optional frame libraries are imported lazily."""

from __future__ import annotations

import doctest
import subprocess
import sys

import matchbook


def test_stubs_match_the_native_module() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "matchbook._native", "--ignore-missing-stub"],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_docstring_examples_run() -> None:
    failures, tried = doctest.testmod(matchbook)
    assert tried > 0 and failures == 0


def test_pandas_and_polars_are_not_imported_by_the_package() -> None:
    code = "import sys, matchbook; print('pandas' in sys.modules, 'polars' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
