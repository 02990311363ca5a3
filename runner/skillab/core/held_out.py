"""Held-out cases: the author's cases and the cases kept from the author (``held_out: true``, or
the tag ``held-out``), each with its own lift, and the gap between them. A skill tuned to its
own suite shows a large author lift and a small held-out one."""

from __future__ import annotations

from dataclasses import dataclass

# The tag that marks a held-out case in every format (``held_out: true`` in eval.yaml sets it).
HELD_OUT_TAG = "held-out"


@dataclass(frozen=True)
class SplitLift:
    """One side: its graded cases, the mean per-case lift (points) and its 95% interval."""

    cases: int
    lift_pts: float | None
    ci95: tuple[float, float] | None


@dataclass(frozen=True)
class HeldOutLift:
    """The author lift beside the held-out lift; ``gap_pts`` is author minus held-out."""

    author: SplitLift
    held_out: SplitLift
    gap_pts: float | None
    gap_ci95: tuple[float, float] | None
