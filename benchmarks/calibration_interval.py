"""The interval's and the error account's parts of ``benchmarks/calibration.py``.

- width: the lift's interval (``scoring.interval``) beside the alternatives a reader could
  use instead, each with its coverage and mean width (Monte Carlo SE of the width beside it);
  the interval must cover >= 0.94 and be at most 1.2x the narrowest valid alternative, one
  that covers >= 0.95 in that cell;
- errors: a skill with no effect whose arm errors on its own failures (the with-skill arm
  times out when stuck, 10% and 20% of the runs it fails), through ``paired_statistics`` on
  real records: how often "helps" / "hurts" beyond noise is claimed (<= 0.05), beside the rate
  with errored records simply dropped.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import t as student_t

from skillab.core.records import ArmRecord, CaseRecord
from skillab.scoring import classify_outcome, paired_statistics
from skillab.scoring.inference import ALPHA, CasePair, integer_scores, sign_flip_p
from skillab.scoring.interval import infer_lift

WIDTH_RATIO = 1.2


def _t(diffs: np.ndarray, pseudo: bool) -> tuple[float, float]:
    """The t interval on the per-case differences; ``pseudo``: with Agresti-Min's pseudo-cases
    (half a case at +1 and at -1, one at 0), the adjustment for paired proportions."""
    n = len(diffs)
    values, weights = diffs, np.ones(n)
    if pseudo:
        values = np.concatenate([diffs, [1.0, -1.0, 0.0]])
        weights = np.concatenate([weights, [0.5, 0.5, 1.0]])
    total = weights.sum()
    centre = float((values * weights).sum() / total)
    variance = float((weights * (values - centre) ** 2).sum() / (total - 1))
    half = float(student_t.ppf(0.975, n - 1)) * math.sqrt(variance / total)
    return 100 * max(-1.0, centre - half), 100 * min(1.0, centre + half)


def _wilson_difference(diffs: np.ndarray) -> tuple[float, float]:
    """Newcombe's hybrid score interval for paired proportions (method 10), on the shares of
    cases up and down (a case counts as its fraction, as ``scoring.interval`` counts it)."""
    n = len(diffs)
    up, down = float(np.clip(diffs, 0, None).sum()) / n, float(np.clip(-diffs, 0, None).sum()) / n
    z = 1.959963984540054

    def wilson(p: float) -> tuple[float, float]:
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return centre - half, centre + half

    (l1, u1), (l2, u2) = wilson(up), wilson(down)
    d = up - down
    return (100 * (d - math.sqrt((up - l1) ** 2 + (u2 - down) ** 2)),
            100 * (d + math.sqrt((u1 - up) ** 2 + (down - l2) ** 2)))


ALTERNATIVES = {
    "t": lambda d: _t(d, False),
    "adjusted t": lambda d: _t(d, True),
    "Newcombe": _wilson_difference,
}


def interval_widths(draw, scenario, reps: int, rng: np.random.Generator) -> dict:
    """Coverage and width of skillab's interval and of each alternative over ``reps`` suites."""
    truth = scenario.truth()
    rows: dict[str, tuple[list[bool], list[float]]] = {name: ([], []) for name in ("skillab", *ALTERNATIVES)}
    for _ in range(reps):
        pairs = draw(scenario, rng, scenario.n)
        if len(pairs) < 2:
            continue
        inference = infer_lift(pairs)
        assert inference is not None and inference.ci95 is not None
        diffs = np.array([p.diff for p in pairs])
        for name, (lo, hi) in (("skillab", inference.ci95),
                               *((k, f(diffs)) for k, f in ALTERNATIVES.items())):
            rows[name][0].append(lo - 1e-9 <= truth <= hi + 1e-9)
            rows[name][1].append(hi - lo)
    out = {}
    for name, (covered, widths) in rows.items():
        judged = max(len(covered), 1)
        out[name] = (sum(covered) / judged, float(np.mean(widths)), float(np.std(widths) / math.sqrt(judged)))
    return out


def _records(with_passes: np.ndarray, without_passes: np.ndarray, errored: np.ndarray) -> list[CaseRecord]:
    records = []
    n, runs = with_passes.shape
    for i in range(n):
        for r in range(runs):
            w, o, e = bool(with_passes[i, r]), bool(without_passes[i, r]), bool(errored[i, r])
            outcome = classify_outcome(with_passed=w, without_passed=o, errored=e)
            arm = ArmRecord(passed=w and not e, errored=e, error="agent timed out" if e else None)
            records.append(CaseRecord(f"c{i}", outcome, arm, ArmRecord(passed=o, errored=False), run_index=r))
    return records


def arm_dependent_errors(n: int, runs: int, rate: float, reps: int, rng: np.random.Generator,
                         arm: str = "with") -> dict:
    """A skill with no effect (both arms pass at each case's own rate) whose ``arm`` errors on
    ``rate`` of the runs it fails: false claims through ``paired_statistics``, and with the
    errored records dropped and nothing else (the test alone on what is left)."""
    claimed = dropped = judged = 0
    for _ in range(reps):
        p = 1 / (1 + np.exp(-rng.normal(0.0, 1.5, n)))
        w = rng.random((n, runs)) < p[:, None]
        o = rng.random((n, runs)) < p[:, None]
        failing = ~w if arm == "with" else ~o
        errored = failing & (rng.random((n, runs)) < rate)
        if arm == "with":
            records = _records(w, o, errored)
        else:  # the mirror: the without-skill arm errors on its failures
            records = [CaseRecord(r.case_name, "error" if e else r.outcome, r.with_skill,
                                  ArmRecord(passed=r.without_skill.passed and not e, errored=e,
                                            error="agent timed out" if e else None), run_index=r.run_index)
                       for r, e in zip(_records(w, o, np.zeros_like(errored)), errored.ravel())]
        stats = paired_statistics(records)
        if stats.withheld:
            continue
        judged += 1
        claimed += stats.distinguishable
        pairs = [CasePair(int((w[i] & ~errored[i]).sum()), int((o[i] & ~errored[i]).sum()),
                          int((~errored[i]).sum())) for i in range(n) if (~errored[i]).any()]
        scores = integer_scores(pairs)
        dropped += sign_flip_p(scores)[0] < ALPHA
    return {"judged": judged, "claims": claimed / max(judged, 1), "dropped": dropped / max(judged, 1)}
