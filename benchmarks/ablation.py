"""How often ``skillab ablate`` calls a part load-bearing or harmful when it is not, and how often
it finds the part that is.

Each repetition draws a suite of cases of varied difficulty (pass logit ~ N(0, 1.5^2)), runs the
full skill and each leave-one-out variant ``runs`` times per case, and hands the per-case pass
counts to skillab's own ``scoring.ablation.classify`` (what ``skillab ablate`` calls on the runs'
records). Parts: ``null`` parts change nothing (the variant passes as often as the full skill);
with ``--effect PTS`` the first part carries a real contribution (removing it lowers every case's
pass probability by a logit shift worth about PTS points at 50%).

Printed per scenario (cases x runs x parts):

- false claims: share of repetitions with any null part called load-bearing or harmful (the
  family-wise rate Holm controls; target <= 0.05, i.e. no claim in >= 95% of repetitions);
- found: share of repetitions where the effective part is called load-bearing (its power);
- agent arms per ablation: what a real run of that size would start, with and without the
  baseline cache (the variants' baselines come from the full run's).

Usage: ``python benchmarks/ablation.py [--reps N] [--seed S] [--effect PTS]``. Standard library
and numpy (the test extra's scipy brings it); a default run takes about 10 s on one core.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from skillab.scoring.ablation import Contrast, classify
from skillab.scoring.inference import CasePair

BASELINE_SD = 1.5
SCENARIOS = ((10, 1, 3), (20, 1, 3), (20, 3, 3), (50, 1, 5), (50, 3, 5))


def _logit_shift(pts: float) -> float:
    p = 0.5 + pts / 200
    return math.log(p / (1 - p)) if 0 < p < 1 else 0.0


def one(rng: np.random.Generator, cases: int, runs: int, parts: int, effect: float) -> tuple[bool, bool]:
    logits = rng.normal(0.0, BASELINE_SD, cases)
    full_p = 1 / (1 + np.exp(-logits))
    full = rng.binomial(runs, full_p)
    contrasts = []
    for index in range(parts):
        shift = _logit_shift(effect) if (effect and index == 0) else 0.0
        variant_p = 1 / (1 + np.exp(-(logits - shift)))
        variant = rng.binomial(runs, variant_p)
        pairs = [CasePair(int(a), int(b), runs) for a, b in zip(full, variant)]
        contrasts.append(Contrast(pairs, [str(i) for i in range(cases)], 0, cases * runs))
    roles = [r["role"] for r in classify(contrasts)]
    nulls = roles[1:] if effect else roles
    return any(r in ("load-bearing", "harmful") for r in nulls), bool(effect) and roles[0] == "load-bearing"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--seed", type=int, default=20261127)
    parser.add_argument("--effect", type=float, default=30.0, help="the effective part's contribution (pts)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    found_title = f"found (shift ~{args.effect:g} pts at 50%)"
    print(f"{'cases':>5} {'runs':>4} {'parts':>5}  {'false claims (null)':>20}  {'false claims (1 real)':>22}"
          f"  {found_title:>26}  {'agent arms (cached / not)':>26}")
    started = time.perf_counter()
    worst = 0.0
    for cases, runs, parts in SCENARIOS:
        null = sum(one(rng, cases, runs, parts, 0.0)[0] for _ in range(args.reps)) / args.reps
        mixed = [one(rng, cases, runs, parts, args.effect) for _ in range(args.reps)]
        false_mixed = sum(f for f, _ in mixed) / args.reps
        found = sum(g for _, g in mixed) / args.reps
        worst = max(worst, null, false_mixed)
        se = math.sqrt(max(null * (1 - null), 1e-9) / args.reps)
        cached = cases * runs * (2 + parts)
        uncached = cases * runs * 2 * (1 + parts)
        print(f"{cases:>5} {runs:>4} {parts:>5}  {null:>14.3f} ±{se:.3f}  {false_mixed:>22.3f}  {found:>26.2f}"
              f"  {cached:>12} / {uncached:<12}")
    print(f"\nworst false-claim rate {worst:.3f} (target <= 0.05); {args.reps} repetitions per cell, "
          f"seed {args.seed}, {time.perf_counter() - started:.1f}s")
    return 0 if worst <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / args.reps) else 1


if __name__ == "__main__":
    raise SystemExit(main())
