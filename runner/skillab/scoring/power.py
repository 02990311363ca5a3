"""What this suite can detect, and how many cases a target lift needs, for skillab's own test.

Both come from ``power_model``: the power of the exact sign-flip test the reports decide with,
at this suite's runs per case, under a model whose only parameter besides the lift is the
discordance (how often the two arms of a run differ). The discordance is read from the spread
of the per-case differences, not from the observed lift, which at pilot sizes is mostly noise:

- "this suite detects lifts of about X pts": the discordance at its median-unbiased estimate,
  read back from the observed lift to the chance one (``power_model.chance_discordance``), at
  this size, with the share of cases that never differ (``power_model.inert_share``, several
  runs per case), for lifts the baseline leaves room for at its 90% upper bound
  (``baseline_upper``), and as if the errored share of the records had carried the lift;
- "about N cases would detect T pts": the discordance at its one-sided 80% upper confidence
  bound, so the advice from a small pilot reaches 80% power in most pilots, with the range from
  the estimate to the bound beside it;
- "this suite cannot show a lift at p < 0.05 at any size of effect" when even every case moving
  one way gives p >= 0.05 (five cases or fewer).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from ..core.runlog import DEFAULT_TARGET_LIFT_PTS
from ..core.statistics import Power
from . import power_model
from .aggregate import ERROR_DOMINATED_FLOOR
from .exact import clopper_pearson_upper
from .inference import ALPHA

POWER = 0.80
# One-sided confidence that the planning discordance is not below the true one.
_PLANNING_CONFIDENCE = 0.80
# One-sided confidence that the baseline is not above its bound, for the room "detects X" is
# sized within: at 80%, 1% of 10-case pilots whose baseline read far too low promised a lift the
# baseline leaves no room for (real power 0.35-0.40).
_ROOM_CONFIDENCE = 0.90
_MAX_CASES = 5_000
# Pseudo-evidence on the discordance: one discordant run (see ``discordance``).
_PSEUDO_DISCORDANT_RUNS = 1.0


def power_statement(
    diffs: Sequence[float], *, baseline_rate: float | None, runs: int,
    target_lift_pts: float = DEFAULT_TARGET_LIFT_PTS, errored_share: float = 0.0,
    baselines: Sequence[float] | None = None, alpha: float = ALPHA,
) -> Power | None:
    """The statement for a suite whose per-case differences are ``diffs``; None below 2 cases.
    ``alpha``: the two-sided level a claim is held to (``ablate``'s parts: 5% over their count,
    the first step of Holm's correction).

    ``errored_share`` is the share of the suite's records that errored. An error may hide a
    run the skill changed (an agent that fails is also the one that times out), so a lift of
    ``X`` is modelled as ``X * (1 - errored_share)`` on the graded records: a suite with errors
    promises only what it can show if its errors fell on the runs that carried the lift.
    """
    n = len(diffs)
    if n < 2:
        return None
    runs = max(runs, 1)
    seen = 1 - min(max(errored_share, 0.0), ERROR_DOMINATED_FLOOR)
    target = abs(target_lift_pts) / 100
    read, read_upper = discordance(diffs, runs=runs)
    room = 1.0 if baseline_rate is None else max(0.0, 1 - baseline_rate)
    # Read with the skill at its observed lift; the model wants the chance discordance.
    lift = sum(diffs) / n
    # A lift that explains every discordant run still leaves the pseudo one: a suite whose every
    # case flips says nothing of how often a skill that does nothing would.
    floor = _PSEUDO_DISCORDANT_RUNS / (n * runs)
    psi = max(power_model.chance_discordance(read, lift, room), floor)
    psi_upper = max(psi, power_model.chance_discordance(read_upper, lift, room))
    # Fitted at the discordance as read (with the skill, at the observed lift).
    inert = power_model.inert_share(sum(1 for d in diffs if d == 0) / n, runs, read, lift)
    note = ""
    needed: int | None = None
    span: tuple[int, int] | None = None
    if target <= 0:
        note = "a target lift of 0 cannot be detected"
    elif baseline_rate is not None and target > 1 - baseline_rate + 1e-9:
        note = (f"the baseline already passes {baseline_rate * 100:.0f}%, so a lift of "
                f"{abs(target_lift_pts):g} pts is not possible")
    else:
        needed = power_model.cases_needed(runs, psi_upper, target * seen, room, POWER, _MAX_CASES, inert)
        low = power_model.cases_needed(runs, psi, target * seen, room, POWER, _MAX_CASES, inert)
        if needed is not None and low is not None:
            span = (min(low, needed), needed)
        if needed is None:
            note = f"more than {_MAX_CASES} cases would be needed for {abs(target_lift_pts):g} pts"
    never = power_model.smallest_p(n) >= alpha
    # The room a small suite's baseline leaves is uncertain: size "detects X" within its bound.
    sure_room = room if baseline_rate is None else 1 - baseline_upper(
        baseline_rate, n, runs, baselines, _ROOM_CONFIDENCE)
    # With several runs a lift on a few whole cases is harder to show than one spread over runs:
    # the suite's own case scores say how much of each it looks like.
    whole = None if runs < 2 else power_model.whole_cases(
        [round(d * runs) for d in diffs], runs, read, lift, room, psi, inert, floor)
    detectable = None if never else power_model.detectable_lift(
        n, runs, psi, sure_room, POWER, inert, alpha, whole)
    if detectable is not None:
        detectable = detectable / seen if detectable / seen <= sure_room else None
    assumptions = (
        f"the exact sign-flip test at 5% (two-sided), 80% power, {runs} run{'s' if runs != 1 else ''}"
        f" per case, cases like these (the arms of a run differ {psi * 100:.0f}% of the time; "
        f"{psi_upper * 100:.0f}% at its 80% upper bound for the advice"
        + (f"; {inert:.0%} of cases never differ, which makes the test coarser up to "
           f"{power_model.SIMULATED_MAX_CASES} cases" if inert >= 0.005 else "")
        + (f"; for 'detects', {whole.share:.0%} of cases carrying the lift whole" if whole is not None else "")
        + ")"
        + (f"; {1 - seen:.0%} of records errored, and a lift may have been on them" if seen < 1 else "")
    )
    return Power(
        target_lift_pts=abs(target_lift_pts),
        detectable_lift_pts=None if detectable is None else math.ceil(detectable * 1000 - 1e-9) / 10,
        cases_needed=needed,
        planning_sd_pts=round(100 * (psi_upper / runs) ** 0.5, 1),
        baseline_rate=baseline_rate,
        runs=runs,
        note=note,
        assumptions=assumptions,
        cases_needed_range=span,
        never_significant=never,
        discordance=round(psi, 4),
    )


def baseline_upper(rate: float, n: int, runs: int, baselines: Sequence[float] | None,
                   confidence: float) -> float:
    """The baseline's one-sided upper confidence bound: exact Clopper-Pearson on its pass count,
    counted in effective records. Runs of one case share its difficulty, so ``n * runs`` records
    are worth ``n * p (1 - p) / Var(case baselines)`` independent ones (between ``n`` and
    ``n * runs``); without the cases' own baselines, ``n``."""
    size = n
    if baselines is not None and runs > 1 and len(baselines) == n:
        centre = sum(baselines) / n
        spread = sum((b - centre) ** 2 for b in baselines) / (n - 1)
        cap = n * runs
        size = cap if spread <= 0 else int(min(max(n * rate * (1 - rate) / spread, n), cap))
    return clopper_pearson_upper(math.ceil(rate * size - 1e-9), size, 1 - confidence)


def discordance(diffs: Sequence[float], *, runs: int) -> tuple[float, float]:
    """How often the arms of one run differ: the estimate and its one-sided 80% upper bound.

    By moments of the per-case differences ``d`` (each a mean over ``runs``): under the model
    ``Var(d) = (psi - lift^2) / runs``, so ``psi = runs * Var(d) + lift^2`` (at the observed lift,
    which reads the discordance with the skill; the model then takes it as the chance one). A
    suite with no discordant run still gets some: one pseudo discordant run, added on the scale
    of runs (a pseudo-pair of whole-case differences would weigh ``runs`` times as much, and made
    the power of several-run suites too low). Its bound is the chi-square bound on a variance,
    or, when the differences are heavier-tailed than normal (a near-deterministic agent's are
    mostly 0 and now and then a whole case), the larger bound their own kurtosis gives.
    """
    n = len(diffs)
    centre = sum(diffs) / n
    squares = sum((d - centre) ** 2 for d in diffs)
    spread = (runs * squares + _PSEUDO_DISCORDANT_RUNS) / (n - 1)
    upper = spread * max((n - 1) / chi2_quantile(1 - _PLANNING_CONFIDENCE, n - 1),
                         _kurtosis_bound(diffs, centre, squares))
    # Median-unbiased: a small pilot's read is as often above the truth as below it (the mean-
    # unbiased one is below it more often, and the suites that print "detects X" are those).
    median = spread * (n - 1) / chi2_quantile(0.5, n - 1)
    lift2 = centre * centre
    return min(1.0, median + lift2), min(1.0, upper + lift2)


def _kurtosis_bound(diffs: Sequence[float], centre: float, squares: float) -> float:
    """The one-sided 80% upper bound on a variance over its estimate, for any shape: the sample
    variance's spread ``(kurtosis - (n - 3) / (n - 1)) / n`` matched by a chi-square's over its
    degrees of freedom, ``2 / df`` (Satterthwaite's effective degrees of freedom). A heavy tail
    leaves few of them, and a chi-square with few is skewed right: its bound is the wider one
    the normal form of that spread would miss (advice from near-deterministic pilots reached
    80% power in only 78% of them)."""
    n = len(diffs)
    if squares <= 0:
        return 1.0
    m2 = squares / n
    kurtosis = sum((d - centre) ** 4 for d in diffs) / n / (m2 * m2)
    spread = max(kurtosis - (n - 3) / (n - 1), 1e-9) / n
    df = min(2 / spread, n - 1.0)
    return df / chi2_quantile(1 - _PLANNING_CONFIDENCE, df)


def chi2_quantile(q: float, df: float) -> float:
    """Chi-square quantile by the Wilson-Hilferty cube approximation (good to ~1% at df >= 2)."""
    z = NormalDist().inv_cdf(q)
    k = max(df, 1)
    value = k * (1 - 2 / (9 * k) + z * (2 / (9 * k)) ** 0.5) ** 3
    return max(value, 1e-9)
