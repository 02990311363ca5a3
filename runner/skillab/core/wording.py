"""Counts in sentences: "1 graded case", "3 graded cases"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, singular for exactly one (``plural`` when not noun + "s")."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"
