"""Tests of the benchmarks' own rules (benchmarks/): what a table counts, not what it measures."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@contextmanager
def benchmark_scripts(*names: str) -> Iterator[tuple[ModuleType, ...]]:
    """The benchmark scripts ``names``, imported as a script imports its siblings."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield tuple(importlib.import_module(name) for name in names)
    finally:
        sys.path.remove(str(BENCHMARKS))
