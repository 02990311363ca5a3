"""Planted filler skills: does ``--placebo`` keep a skill whose text does nothing from being
credited with the lift its mere presence gives?

A filler skill changes what the agent does by being offered (a listing the agent feels bound to
use), not by what it says: its placebo (same name, same lengths, neutral text) does exactly as
well. Simulated at the scoring level: cases of varied difficulty (baseline logit ~ N(0, 1.5^2)),
each arm run ``runs`` times per case; the filler skill and its placebo share one pass
probability, the presence effect's logit shift above the baseline. A content skill adds a
further shift that only the skill's own arm gets. Each suite's records go through skillab's own
``scoring.summary`` pairs (``versus_placebo``, ``placebo_versus_none``) and
``scoring.statistics.case_pairs`` with the lift sentence's claim (``scoring.stopping.claim``,
the paired test every report's sentence is decided by).

Printed per scenario, each a share of suites with its Monte Carlo SE:

- lift claimed: the main lift (skill vs none) called "helps" beyond noise, what a run without
  ``--placebo`` says;
- content claimed: skill vs placebo called "helps" (target <= 0.05 for a filler skill);
- presence claimed: placebo vs none called "helps".

``python benchmarks/placebo.py [--reps N] [--cases N] [--runs N] [--seed S]``
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from skillab.core.records import ArmRecord, CaseRecord
from skillab.scoring.outcomes import classify_outcome
from skillab.scoring.statistics import case_pairs
from skillab.scoring.stopping import claim
from skillab.scoring.summary import placebo_versus_none, versus_placebo

SCENARIOS = (
    # label, presence shift, content shift (logits)
    ("filler, no presence effect", 0.0, 0.0),
    ("filler, presence +0.8 logit", 0.8, 0.0),
    ("filler, presence +1.5 logit", 1.5, 0.0),
    ("content +1.0 logit, no presence", 0.0, 1.0),
    ("content +1.0, presence +0.8", 0.8, 1.0),
)


def suite(rng: np.random.Generator, cases: int, runs: int, presence: float, content: float) -> list[CaseRecord]:
    logits = rng.normal(0.0, 1.5, cases)
    records = []
    for i, a in enumerate(logits):
        p = [1 / (1 + math.exp(-x)) for x in (a + presence + content, a, a + presence)]
        for r in range(runs):
            w, o, pl = (ArmRecord(passed=bool(rng.random() < q), errored=False) for q in p)
            outcome = classify_outcome(with_passed=w.passed, without_passed=o.passed, errored=False)
            records.append(CaseRecord(f"c{i}", outcome, w, o, run_index=r, placebo=pl,
                                      placebo_outcome=classify_outcome(with_passed=w.passed,
                                                                       without_passed=pl.passed, errored=False)))
    return records


def helps(records: list[CaseRecord]) -> bool:
    """The lift sentence's claim over the records' case pairs (the test every report prints)."""
    return claim(case_pairs(records)[1]) == "helps"


def rate(hits: int, reps: int) -> str:
    p = hits / reps
    return f"{p:.3f} ± {math.sqrt(max(p * (1 - p), 1e-9) / reps):.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"{args.reps} suites per scenario · {args.cases} cases x {args.runs} runs · claims at 5% (two-sided)")
    print(f"{'scenario':<34}{'lift claimed':>16}{'content claimed':>18}{'presence claimed':>19}")
    ok = True
    for label, presence, content in SCENARIOS:
        lift = content_hits = presence_hits = 0
        for _ in range(args.reps):
            records = suite(rng, args.cases, args.runs, presence, content)
            lift += helps(records)
            content_hits += helps([versus_placebo(r) for r in records])
            presence_hits += helps([placebo_versus_none(r) for r in records])
        print(f"{label:<34}{rate(lift, args.reps):>16}{rate(content_hits, args.reps):>18}"
              f"{rate(presence_hits, args.reps):>19}")
        if content == 0.0:
            ok = ok and content_hits / args.reps <= 0.05
    print(f"\nfiller skills' content lift claimed <= 0.05 in every filler scenario: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
