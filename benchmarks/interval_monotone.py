"""Does the lift's interval move with the evidence at several runs per case? A search wider
than the test suite's (``tests/scoring/test_interval.py``), through ``infer_lift`` itself.

``python benchmarks/interval_monotone.py [--runs 2,3,5,10] [--cases 6,10,20,30,50,200] [--differing 3]``:
every suite of ``--cases`` cases in which up to ``--differing`` cases differ between the arms (any
per-case difference at ``--runs`` runs; the rest kept), every one-run rescue of each distinct
difference; and every suite of 2 to 4 cases at 2 and 3 runs. Prints, per runs, how many rescues
moved a bound against the evidence and by how much at worst (must be 0).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Iterator, Sequence

from skillab.scoring.inference import CasePair
from skillab.scoring.interval import infer_lift

Bounds = tuple[float, float]


def bounds(diffs: Sequence[int], runs: int) -> Bounds:
    inference = infer_lift([CasePair(max(d, 0), max(-d, 0), runs) for d in diffs])
    assert inference is not None and inference.ci95 is not None
    return inference.ci95


def suites(runs: int, cases: Sequence[int], differing: int) -> Iterator[list[int]]:
    values = range(-runs, runs + 1)
    for n in (2, 3, 4):
        if runs <= 3:
            yield from (list(s) for s in itertools.combinations_with_replacement(values, n))
    nonzero = [v for v in values if v]
    for n in cases:
        for k in range(1, min(differing, n) + 1):
            for moved in itertools.combinations_with_replacement(nonzero, k):
                yield [0] * (n - k) + list(moved)


def worst_move(runs: int, cases: Sequence[int], differing: int) -> tuple[int, int, float, tuple]:
    """(rescues tried, rescues that moved a bound back, the largest move in points, its suite)."""
    tried = against = 0
    worst, where = 0.0, ()
    for diffs in suites(runs, cases, differing):
        lo, hi = bounds(diffs, runs)
        for value in sorted(set(diffs)):
            if value == runs:
                continue
            stronger = list(diffs)
            stronger[stronger.index(value)] += 1
            lo2, hi2 = bounds(stronger, runs)
            tried += 1
            back = max(lo - lo2, hi - hi2)
            if back > 1e-9:
                against += 1
                if back > worst:
                    worst, where = back, (len(diffs), sorted(d for d in diffs if d), value)
    return tried, against, worst, where


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", default="2,3,5,10")
    parser.add_argument("--cases", default="6,10,20,30,50,200")
    parser.add_argument("--differing", type=int, default=3)
    args = parser.parse_args(argv)
    cases = [int(c) for c in args.cases.split(",")]
    started, bad = time.monotonic(), 0
    for runs in (int(r) for r in args.runs.split(",")):
        tried, against, worst, where = worst_move(runs, cases, args.differing)
        bad += against
        print(f"{runs:>2} runs: {tried} rescues, {against} moved a bound back (worst {worst:.4f} pts"
              f"{f', {where}' if where else ''})", flush=True)
    print(f"{'monotone' if not bad else 'NOT monotone'}; elapsed {time.monotonic() - started:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
