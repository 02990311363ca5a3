"""``--adaptive-runs``: a case whose arms agreed on its first runs gets no more runs, unless they
could still change the verdict.

The rule: with ``--runs R``, every case runs its first ``settle_after(R) = R // 2 + 1`` runs;
a case whose arms all agreed on each of them (every arm passed, or every arm failed, and none
errored) is settled and its later runs are held; any other case runs all R. Only ``R >= 3``
cuts anything. Once nothing but held runs is left, they run (case by case) while
``held_runs_settled`` says some ending of them could still change the lift sentence's claim.

Why the verdict is the fixed design's: a settled case's difference so far is 0, and only its
held runs can move it, by one of a few magnitudes (``held_endings``, errored runs included). For
a given set of magnitudes the sign-flip p (``inference``) depends on the sum alone and falls as
its size grows, so the claim is "hurts" below one sum, "helps" above another and "noise" between:
the two extreme signs bound every ending with those magnitudes. When all of them give the claim
already made, running the held runs could not change it. The claim, so its error rates and its
power, are those of every run, in every suite; ``benchmarks/adaptive_runs.py`` asserts it on
each simulated suite and measures the calls saved.

The lift of a case whose held runs never ran is its runs' mean, 0, so the point estimate is
pulled toward 0 by the discordance its missing runs would have had; the benchmark prints the
interval's coverage (without the release) beside the fixed design's.

Standard library only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

from .aggregate import arm_passed
from .inference import ALPHA, CasePair
from .stopping import claim

_ARMS = ("with_skill", "without_skill", "original", "placebo")
# Above this many ways the held runs could end, they are run rather than enumerated.
_MAX_ENDINGS = 5_000


def settle_after(runs: int) -> int:
    """The runs every case gets before agreement may stop it (``runs`` itself: nothing is cut)."""
    return min(runs, runs // 2 + 1)


def agrees(record: Any) -> bool:
    """Whether a (case, run) record's arms agreed: none errored, and all passed or all failed."""
    if getattr(record, "outcome", None) == "error":
        return False
    arms = [getattr(record, name, None) for name in _ARMS]
    passed = {arm_passed(arm) for arm in arms if arm is not None}
    return len(passed) == 1 and not any(getattr(arm, "errored", False) for arm in arms if arm is not None)


def settled(first_runs: Iterable[bool], runs: int) -> bool:
    """Whether a case whose first ``settle_after(runs)`` runs agreed as ``first_runs`` says
    (one bool per run, in order) runs no more."""
    seen = list(first_runs)
    needed = settle_after(runs)
    return needed < runs and len(seen) >= needed and all(seen[:needed])


def first_runs_settled(records: Iterable[Any], runs: int) -> bool | None:
    """For one case's records so far: True when its first ``settle_after(runs)`` runs agreed
    (it runs no more), False when one of them did not (it runs all), None while one of them has
    not finished."""
    needed = settle_after(runs)
    by_run = {getattr(r, "run_index", 0): r for r in records}
    if needed >= runs:
        return False
    if any(i not in by_run for i in range(needed)):
        return None
    return settled((agrees(by_run[i]) for i in range(needed)), runs)


def runs_given(agreement: Iterable[bool], runs: int) -> int:
    """How many of a case's ``runs`` runs the rule gives it, for its runs' agreement in order."""
    return settle_after(runs) if settled(agreement, runs) else runs


def held_endings(held: int, runs: int, first: int | None = None) -> Iterable[list[CasePair]] | None:
    """Every way the held runs of ``held`` settled cases could end, each as the pairs those
    cases would then count, up to sign: the magnitudes of each case's difference (its first
    ``first`` runs, ``settle_after(runs)`` unless given, agreed, so only its later runs, graded
    or errored, can move it). None when there are more than ``_MAX_ENDINGS`` of them."""
    first = settle_after(runs) if first is None else first
    shapes: dict[Fraction, CasePair] = {}
    for graded in range(first + 1, runs + 1):
        for moved in range(1, graded - first + 1):
            shapes.setdefault(Fraction(moved, graded), CasePair(moved, 0, graded))
    kinds = list(shapes.values())
    if math.comb(held + len(kinds), len(kinds)) > _MAX_ENDINGS:
        return None
    return ([pair for pair, count in zip(kinds, counts, strict=True) for _ in range(count)]
            for counts in _compositions(held, len(kinds)))


def _compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    """Counts for ``parts`` kinds adding up to at most ``total``, the largest sums first (the
    endings likeliest to change a claim, so an unsettled run is found at once)."""
    found = [c for c in itertools.product(range(total + 1), repeat=parts) if sum(c) <= total]
    return sorted(found, key=sum, reverse=True)


def held_runs_settled(pairs: Sequence[CasePair], held: int, runs: int, alpha: float = ALPHA, *,
                      first: int | None = None) -> bool:
    """Whether no ending of the held runs of ``held`` settled cases could change the lift
    sentence's claim over ``pairs`` (which count those cases with their agreeing first runs,
    a difference of 0): then they need not run, and the claim is the one every run would give.

    For a given set of magnitudes the sign-flip p falls as the sum's size grows, so the claim
    is "hurts" below one sum, "helps" above another and "noise" between: the two extreme signs
    of each set of magnitudes bound every ending with those magnitudes.
    """
    if held <= 0:
        return True
    said = claim(pairs, alpha)
    endings = held_endings(held, runs, first)
    if endings is None:
        return False
    for ending in endings:
        if not ending:
            continue
        up = [*pairs, *ending]
        down = [*pairs, *(CasePair(p.without_passes, p.with_passes, p.runs) for p in ending)]
        if claim(up, alpha) != said or claim(down, alpha) != said:
            return False
    return True


def held_gate_settled(pairs: Sequence[CasePair], held: int, runs: int, threshold: float, gate_on: str) -> bool:
    """Whether no ending of the held runs could change the ``--min-delta-pts`` gate: each held
    case's difference can move by at most ``(runs - settle_after(runs)) / runs``. A lower-bound
    gate settles only when not even the largest lift reaches the threshold."""
    if held <= 0 or not pairs:
        return True
    move = held * (runs - settle_after(runs)) / runs
    done = sum(p.diff for p in pairs if p.runs)
    n = sum(1 for p in pairs if p.runs)
    low, high = 100 * (done - move) / n, 100 * (done + move) / n
    return high < threshold or (gate_on == "point" and low >= threshold)
