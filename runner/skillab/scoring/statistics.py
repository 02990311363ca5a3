"""Is the lift real? Case-level paired statistics over the records the aggregate keeps.

The case is the unit: each case contributes the mean of its runs per arm, and the lift's test
and interval come from the per-case differences (``inference``, ``interval``). With one run per case the
sign-flip test is exact McNemar on the discordant cases, which is reported under that name too;
with more runs there is no per-record McNemar, because runs of one case are not independent.
An error-dominated run (more than 25% of records errored) gets no statistic and no sentence.
Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from ..core.runlog import DEFAULT_TARGET_LIFT_PTS, RunLog
from ..core.statistics import ErrorAccount, LiftStatistics
from .aggregate import ERROR_DOMINATED_FLOOR, arm_passed, is_comparable
from .error_account import claim_survives, error_account, errors_sentence, failed_by_its_own_hand
from .inference import ALPHA, CasePair
from .interval import LiftInference, infer_lift
from .power import power_statement
from .rounding import round_half_away
from .sentences import lift_sentence

# Below this many discordant pairs the binomial tail is summed exactly in integers.
_EXACT_TAIL_MAX_N = 2000
# The false-discovery rate the cases named broken are held to.
_REGRESSION_FDR = ALPHA


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar: binomial test of ``b`` successes in ``b + c`` trials at p = 0.5."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    n, k = b + c, min(b, c)
    if n == 0 or 2 * k >= n:
        return 1.0
    if n <= _EXACT_TAIL_MAX_N:
        tail = sum(math.comb(n, i) for i in range(k + 1))
        return min(1.0, 2 * tail / 2**n)  # int / int is correctly rounded, even for huge ints
    return min(1.0, 2 * math.exp(_log_lower_tail_half(n, k)))


def _log_lower_tail_half(n: int, k: int) -> float:
    """log P(X <= k) for X ~ Binomial(n, 1/2), k < n/2, summed downward from the largest term."""
    log_top = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2)
    total = term = 1.0
    for i in range(k, 0, -1):
        term *= i / (n - i + 1)  # pmf(i - 1) / pmf(i)
        total += term
        if term < 1e-17 * total:
            break
    return log_top + math.log(total)


@dataclass
class _Case:
    name: str
    with_passes: int = 0
    without_passes: int = 0
    runs: int = 0

    def pair(self) -> CasePair:
        return CasePair(self.with_passes, self.without_passes, self.runs)


def case_pairs(records: Sequence[Any]) -> tuple[list[str], list[CasePair], int, int]:
    """Per case (suite order): names, pass counts per arm; and the record-level flip counts."""
    cases: dict[Any, _Case] = {}
    b = c = 0
    for index, record in enumerate(records):
        if not (is_comparable(record) or failed_by_its_own_hand(record)):
            continue
        with_passed = arm_passed(getattr(record, "with_skill", None))
        without_passed = arm_passed(getattr(record, "without_skill", None))
        b += int(with_passed and not without_passed)
        c += int(without_passed and not with_passed)
        name = getattr(record, "case_name", None) or str(index)
        case = cases.setdefault(name, _Case(name))
        case.with_passes += with_passed
        case.without_passes += without_passed
        case.runs += 1
    names = [c.name for c in cases.values()]
    return names, [c.pair() for c in cases.values()], b, c


def paired_statistics(
    records: Sequence[Any], *, subject: str = "the skill",
    target_lift_pts: float = DEFAULT_TARGET_LIFT_PTS, withheld: str | None = None, alpha: float = ALPHA,
) -> LiftStatistics:
    """Case-level statistics of the records, their sentence, and the power statement.

    ``withheld`` (a reason) nulls every statistic, as an error-dominated run does.
    """
    names, pairs, b, c = case_pairs(records)
    errors = sum(1 for r in records if r.outcome == "error" and not failed_by_its_own_hand(r))
    if bool(records) and errors / len(records) > ERROR_DOMINATED_FLOOR:
        withheld = f"more than {ERROR_DOMINATED_FLOOR:.0%} of records errored: no statistic is reported"
    return case_statistics(
        pairs, names=names, flips=(b, c), subject=subject, target_lift_pts=target_lift_pts,
        withheld=withheld, alpha=alpha, errored=errors, account=error_account(records, alpha=alpha),
    )


def case_statistics(
    pairs: Sequence[CasePair], *, names: Sequence[str] | None = None,
    flips: tuple[int, int] | None = None, subject: str = "the skill",
    target_lift_pts: float = DEFAULT_TARGET_LIFT_PTS, withheld: str | None = None, alpha: float = ALPHA,
    errored: int = 0, account: ErrorAccount | None = None,
) -> LiftStatistics:
    """The statistics of per-case pass counts (what ``paired_statistics`` builds from records);
    ``errored`` is how many records errored (not in ``pairs``), for the power statement;
    ``account`` the errored records' account, which a claim must survive (``error_account``)."""
    names = list(names) if names is not None else [f"case {i + 1}" for i in range(len(pairs))]
    n_records = sum(p.runs for p in pairs)
    b, c = flips if flips is not None else (0, 0)
    single_runs = all(p.runs == 1 for p in pairs)
    method = _method(single_runs)
    up = sum(1 for p in pairs if p.diff > 0)
    down = sum(1 for p in pairs if p.diff < 0)
    if withheld:
        return LiftStatistics(len(pairs), n_records, b, c, None, None, None, None, None, method, False,
                              None, up, down, withheld=withheld, errors=account)
    inference = infer_lift(pairs, alpha=alpha)
    if inference is None:
        empty = LiftStatistics(0, 0, 0, 0, None, None, None, None, None, method, False, None, errors=account)
        return replace(empty, summary=lift_sentence(empty, subject))
    with_total = sum(p.with_passes for p in pairs)
    without_total = sum(p.without_passes for p in pairs)
    delta = round_half_away(100 * (with_total - without_total) / n_records, 2)
    baseline = without_total / n_records
    runs = max(round(n_records / len(pairs)), 1)
    regressed = tuple(regression_cases(pairs, names))
    stats = LiftStatistics(
        n_cases=inference.n_cases,
        n_records=n_records,
        flip_to_pass=b,
        flip_to_fail=c,
        delta_pts=delta,
        lift_pts=round_half_away(inference.lift_pts, 2),
        ci95=_rounded(inference),
        p_value=inference.p_value,
        mcnemar_p=inference.p_value if single_runs else None,
        method=method,
        distinguishable=inference.beyond_noise,
        summary=None,
        cases_up=up,
        cases_down=down,
        power=power_statement([p.diff for p in pairs], baseline_rate=baseline, runs=runs,
                              target_lift_pts=target_lift_pts,
                              errored_share=errored / (n_records + errored) if errored else 0.0,
                              baselines=[p.without_passes / p.runs for p in pairs]),
        regression=bool(regressed),
        regressed_cases=regressed,
    )
    if account is not None:
        holds = claim_survives(account, stats.lift_pts or 0.0, alpha=alpha) if stats.distinguishable else None
        account = replace(account, claim_holds=holds)
        stats = replace(stats, errors=account, distinguishable=stats.distinguishable and holds is not False)
    runs_range = (min(p.runs for p in pairs), max(p.runs for p in pairs))
    summary = lift_sentence(stats, subject, runs_range=runs_range)
    if account is not None:
        summary += " " + errors_sentence(account)
    return replace(stats, summary=summary)


def _rounded(inference: LiftInference) -> tuple[float, float] | None:
    if inference.ci95 is None:
        return None
    return round_half_away(inference.ci95[0], 2), round_half_away(inference.ci95[1], 2)


def regression_cases(pairs: Sequence[CasePair], names: Sequence[str]) -> list[str]:
    """The cases a "broke N cases" sentence may name: each on its own evidence.

    A case is named when its own runs show the drop: the one-sided Boschloo exact test of its
    pass counts (Fisher's p as the statistic, the nuisance pass rate maximised over, so never
    less powerful than Fisher's), with the Benjamini-Hochberg procedure at 5% across every case of the suite, so
    the expected share of named cases that are not really worse stays at or below 5% (and under
    "nothing changed" a name is printed at most 5% of the time). A case that fell in one run
    has no evidence of its own: with one run per case no case is ever named, however the suite
    as a whole leans (that is the lift sentence's job).
    """
    tested = sorted((boschloo_lower_p(p.with_passes, p.without_passes, p.runs), i)
                    for i, p in enumerate(pairs) if p.diff < 0)
    cases = max(len(pairs), 1)
    keep = 0
    for rank, (p_value, _) in enumerate(tested, start=1):
        if p_value <= _REGRESSION_FDR * rank / cases:
            keep = rank
    named = {i for _, i in tested[:keep]}
    return [name for i, name in enumerate(names) if i in named]


@lru_cache(maxsize=4096)
def boschloo_lower_p(with_passes: int, without_passes: int, runs: int) -> float:
    """One-sided Boschloo exact p that a case passes less often with the skill (edit) than without.

    Every pair of counts whose Fisher p is at most the observed one, weighed by two binomials at a
    common pass rate, the largest over the rate (a 2,000-point grid, then a local refinement).
    """
    observed = fisher_lower_p(with_passes, without_passes, runs)
    extreme = [(x, y) for x in range(runs + 1) for y in range(runs + 1)
               if fisher_lower_p(x, y, runs) <= observed * (1 + 1e-9)]
    combs = [math.comb(runs, k) for k in range(runs + 1)]

    def size(rate: float) -> float:
        return sum(combs[x] * combs[y] * rate ** (x + y) * (1 - rate) ** (2 * runs - x - y) for x, y in extreme)

    grid = [i / 2000 for i in range(1, 2000)]
    best = max(grid, key=size)
    lo, hi = max(best - 1 / 2000, 1e-9), min(best + 1 / 2000, 1 - 1e-9)
    for _ in range(40):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        lo, hi = (a, hi) if size(a) < size(b) else (lo, b)
    return min(1.0, max(size(best), size((lo + hi) / 2), observed if runs == 0 else 0.0))


def fisher_lower_p(with_passes: int, without_passes: int, runs: int) -> float:
    """One-sided Fisher exact p that one case passes less often with the skill (edit) than without."""
    total = with_passes + without_passes
    denominator = math.comb(2 * runs, total)
    numerator = sum(
        math.comb(runs, k) * math.comb(runs, total - k)
        for k in range(max(0, total - runs), with_passes + 1)
    )
    return numerator / denominator


def _method(single_runs: bool) -> str:
    text = (
        "case-level: per case the mean of its runs per arm; p from the exact sign-flip permutation "
        "test on the per-case differences"
    )
    if single_runs:
        text += " (with one run per case this is exact McNemar on the discordant cases)"
    return text + (
        "; 95% CI: every shift of the lift the test does not reject (the sign-flip test at 0, the "
        "score test of a paired proportion with its constrained variance elsewhere), so it excludes 0 "
        "exactly when p < 0.05; coverage and width measured by benchmarks/calibration.py"
    )


def pooled_statistics(logs: Sequence[RunLog], *, subject: str = "the skill") -> LiftStatistics | None:
    """Every comparable case of every suite that measured a lift, pooled as one sample of cases."""
    pairs: list[CasePair] = []
    names: list[str] = []
    for log in logs:
        stats = log.summary.statistics
        if log.summary.aggregate.error_dominated or (stats is not None and stats.withheld) or not log.records:
            continue
        skill = log.settings.suite.skill or "?"
        counts: dict[str, list[int]] = {}
        for record in log.records:
            if not is_comparable(record):
                continue
            entry = counts.setdefault(record.case_name, [0, 0, 0])
            entry[0] += record.with_skill.passed
            entry[1] += record.without_skill.passed
            entry[2] += 1
        for name, (w, o, r) in counts.items():
            pairs.append(CasePair(w, o, r))
            names.append(f"{skill}/{name}")
    if not pairs:
        return None
    return case_statistics(pairs, names=names, subject=subject)
