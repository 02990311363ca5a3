"""The interval's and the error account's parts of ``benchmarks/calibration.py``.

- width: the lift's interval (``scoring.interval``) beside the alternatives a reader could
  use instead, each with its coverage and mean width (Monte Carlo SE of the width beside it);
  the interval must cover >= 0.94 and be at most 1.2x the narrowest valid alternative.
  A confidence procedure is valid when it covers at every truth (the user does not know the
  lift): an alternative counts for a cell only when it covers >= 0.95, less 2 Monte Carlo SE of
  a rate at 0.95 over the suites it was read on, in every lift cell of the cell's family (same
  cases x runs, same spread). Judged in one cell alone, the interval {0} would be valid, with
  width 0, in every cell whose true lift is 0; the per-cell ratio is printed beside, so nothing
  is hidden;
- errors: a skill with no effect whose arm errors on its own failures (the with-skill arm
  times out when stuck, 10% and 20% of the runs it fails), through ``paired_statistics`` on
  real records: how often "helps" / "hurts" beyond noise is claimed (<= 0.05), beside the rate
  with errored records simply dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from skillab.core.records import ArmRecord, CaseRecord
from skillab.scoring import classify_outcome, paired_statistics
from skillab.scoring.inference import ALPHA, CasePair, integer_scores, sign_flip_p
from skillab.scoring.interval import infer_lift

WIDTH_RATIO = 1.2
# The coverage an alternative must reach to be one to be as narrow as (issue #34).
VALID_COVER = 0.95
COVER_TARGET = 0.94
# The procedures skillab's interval is compared with, and the degenerate one no rule may count.
POINT_ZERO = "{0}"


@dataclass(frozen=True)
class Reading:
    """One procedure in one cell: its coverage and mean width over ``judged`` suites."""

    cover: float
    width: float
    width_se: float
    judged: int


def cover_se(judged: int) -> float:
    """The Monte Carlo SE of a coverage rate at VALID_COVER, over ``judged`` suites."""
    return math.sqrt(VALID_COVER * (1 - VALID_COVER) / max(judged, 1))


def valid_in_cell(reading: Reading) -> bool:
    """The per-cell rule: it covers VALID_COVER in this cell (whatever it does at other lifts)."""
    return reading.cover >= VALID_COVER


def valid_procedure(readings: Sequence[Reading]) -> bool:
    """The per-procedure rule: it covers VALID_COVER, less 2 Monte Carlo SE, at every truth tried
    (``readings``: its cells of one family, one per true lift)."""
    return all(r.cover >= VALID_COVER - 2 * cover_se(r.judged) for r in readings)


def narrowest_valid(cell: dict[str, Reading], valid: Callable[[str], bool]) -> float | None:
    """The narrowest mean width among the alternatives ``valid`` accepts; None if none is."""
    widths = [r.width for name, r in cell.items() if name != "skillab" and valid(name)]
    return min(widths) if widths else None


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


ALTERNATIVES: dict[str, Callable[[np.ndarray], tuple[float, float]]] = {
    "t": lambda d: _t(d, False),
    "adjusted t": lambda d: _t(d, True),
    "Newcombe": _wilson_difference,
    POINT_ZERO: lambda d: (0.0, 0.0),
}


def interval_widths(draw, scenario, reps: int, rng: np.random.Generator) -> dict[str, Reading]:
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
        out[name] = Reading(sum(covered) / judged, float(np.mean(widths)),
                            float(np.std(widths) / math.sqrt(judged)), judged)
    return out


def width_ratios(cell: dict[str, Reading], family: Sequence[dict[str, Reading]]) -> tuple[float | None, float | None]:
    """skillab's width in ``cell`` over the narrowest alternative valid per procedure (read over
    ``family``, the cell's family at every lift), and over the narrowest covering VALID_COVER in
    ``cell`` alone, as the table read before; {0} never counts in the latter (it would make
    every lift-0 ratio infinite). None where no alternative is valid."""
    per_procedure = narrowest_valid(cell, lambda name: valid_procedure([c[name] for c in family]))
    per_cell = narrowest_valid(cell, lambda name: name != POINT_ZERO and valid_in_cell(cell[name]))
    width = cell["skillab"].width
    return (width / per_procedure if per_procedure else None, width / per_cell if per_cell else None)


def _ratio_text(ratio: float | None) -> str:
    return "—" if ratio is None else f"{ratio:.2f}"


def width_table(draw, cells: Sequence, reps: int, rng: np.random.Generator) -> int:
    """Print the interval's width against the alternatives in ``cells`` (scenarios); the number of
    cells off target: skillab's coverage below COVER_TARGET by more than 2 Monte Carlo SE, or its
    width over WIDTH_RATIO x the narrowest alternative valid per procedure."""
    read = [(s, interval_widths(draw, s, reps, rng)) for s in cells]
    families: dict[tuple, list[dict[str, Reading]]] = {}
    for s, cell in read:
        families.setdefault((s.n, s.runs, s.spread), []).append(cell)
    shown = [name for name in ("skillab", *ALTERNATIVES) if name != POINT_ZERO]
    print(f"the lift's 95% interval beside the alternatives, {reps} suites per cell: coverage / mean width (pts) "
          f"± its Monte Carlo SE. An alternative is valid per procedure when it covers >= {VALID_COVER} less 2 "
          f"Monte Carlo SE of a rate at {VALID_COVER} (±{2 * cover_se(reps):.4f} here) in every lift cell of the "
          f"same cases x runs and spread; 'ratio' is skillab's width over the narrowest such (target <= "
          f"{WIDTH_RATIO}); 'per cell' over the narrowest covering >= {VALID_COVER} in that cell alone; "
          f"'family min' each one's lowest coverage over its family; '—': none valid")
    print(f"{'scenario':<22} {'n':>4} {'runs':>4}  " + "  ".join(f"{name:>22}" for name in shown)
          + f"  {'ratio':>5} {'per cell':>8}  family min: " + " / ".join(shown))
    off = 0
    for s, cell in read:
        family = families[(s.n, s.runs, s.spread)]
        ratio, ratio_in_cell = width_ratios(cell, family)
        low_cover = cell["skillab"].cover < COVER_TARGET - 2 * cover_se(cell["skillab"].judged)
        bad = low_cover or (ratio is not None and ratio > WIDTH_RATIO)
        off += bad
        lowest = " / ".join(f"{min(c[name].cover for c in family):.3f}" for name in shown)
        print(f"{s.label:<22} {s.n:>4} {s.runs:>4}  " + "  ".join(
            f"{cell[name].cover:>6.3f} / {cell[name].width:>5.1f} ± {cell[name].width_se:>4.2f}" for name in shown)
            + f"  {_ratio_text(ratio):>5} {_ratio_text(ratio_in_cell):>8}"
            + f"  {lowest}{'  <- off' if bad else ''}", flush=True)
    zero = [cell[POINT_ZERO] for s, cell in read if s.truth() == 0]
    zero_valid = sum(valid_procedure([c[POINT_ZERO] for c in f]) for f in families.values())
    off += zero_valid
    print(f"sanity: the interval {POINT_ZERO} (always [0, 0], width 0) is valid per cell in "
          f"{sum(valid_in_cell(r) for r in zero)} of {len(zero)} lift-0 cells, and per procedure in "
          f"{zero_valid} of "
          f"{len(families)} families (it must be 0)")
    return off


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
