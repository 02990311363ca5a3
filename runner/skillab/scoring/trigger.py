"""Trigger metrics: per-query rates, and recall, false-trigger rate, precision and F1 over a set.

A trial is one query posed once; it triggered when the agent loaded the skill. With ``--runs N``
a query's N trials are not independent evidence about the set (a query the model always takes
says little more after ten runs than after one), so every interval is exact (Clopper-Pearson,
its counts rounded outward: a Wilson interval covers only about 0.90 at 10-20 queries) over an
effective sample size, the trials divided by the design effect ``1 + (m - 1) * rho``,
``m`` the mean trials per query and ``rho`` the intra-query correlation (one-way ANOVA
estimator, clipped to [0, 1]). A deterministic model has ``rho = 1``: the effective size is the
number of queries. F1's interval combines 97.5 % intervals of precision and recall (F1 rises
with both, so the box they span holds the truth with at least 95 %).

A change between two descriptions (``--against``) is tested per query: the exact paired
sign-flip test of ``scoring.inference`` on the differences of the query rates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from ..core.triggers import RateChange, RateInterval
from ..core.triggers import TriggerMetrics as RoundedMetrics
from .exact import clopper_pearson_lower, clopper_pearson_upper
from .inference import sign_flip_p as case_sign_flip_p

Z95 = 1.959963984540054
Z975 = 2.241402727604947


@dataclass(frozen=True)
class Interval:
    """A rate with its 95 % interval; ``n`` is the effective sample size behind it."""

    value: float | None
    low: float | None
    high: float | None
    n: float
    trials: int

    def rounded(self) -> RateInterval:
        """As the results document holds it: rates to 4 places, the effective size to 2."""
        return RateInterval(_r(self.value), _r(self.low), _r(self.high), round(self.n, 2), self.trials)


EMPTY = Interval(None, None, None, 0.0, 0)


def clustered_rate(clusters: Sequence[tuple[int, int]], z: float = Z95) -> Interval:
    """The pooled rate of ``(hits, trials)`` clusters with its exact interval over the effective size."""
    clusters = [(h, t) for h, t in clusters if t > 0]
    trials = sum(t for _, t in clusters)
    if not trials:
        return EMPTY
    hits = sum(h for h, _ in clusters)
    p = hits / trials
    n_eff = trials / design_effect(clusters)
    low, high = exact_interval(p * n_eff, n_eff, z)
    return Interval(p, low, high, n_eff, trials)


def exact_interval(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Clopper-Pearson bounds at the two-sided level ``z`` stands for; fractional counts are
    rounded outward (fewer successes and more trials for the lower bound, the reverse above)."""
    if n <= 0:
        return 0.0, 1.0
    tail = 1 - NormalDist().cdf(z)
    trials_up, trials_down = math.ceil(n - 1e-9), max(1, math.floor(n + 1e-9))
    low = clopper_pearson_lower(math.floor(successes + 1e-9), trials_up, tail) if successes > 1e-9 else 0.0
    high = clopper_pearson_upper(min(math.ceil(successes - 1e-9), trials_down), trials_down, tail)
    return max(0.0, low), min(1.0, high)


def design_effect(clusters: Sequence[tuple[int, int]]) -> float:
    """``1 + (m - 1) * rho`` for binary outcomes grouped in clusters (see the module doc)."""
    k = len(clusters)
    trials = sum(t for _, t in clusters)
    m = trials / k if k else 0.0
    if k < 2 or m <= 1:
        return max(1.0, m) if k == 1 else 1.0
    p = sum(h for h, _ in clusters) / trials
    between = sum(t * (h / t - p) ** 2 for h, t in clusters) / (k - 1)
    within = sum(h - h * h / t for h, t in clusters) / (trials - k)
    denom = between + (m - 1) * within
    rho = 1.0 if denom <= 0 else (between - within) / denom
    return 1 + (m - 1) * min(1.0, max(0.0, rho))


@dataclass(frozen=True)
class QueryCounts:
    """One query's trials: how many triggered, how many ran without error."""

    should_trigger: bool
    triggered: int
    trials: int

    @property
    def rate(self) -> float | None:
        return self.triggered / self.trials if self.trials else None


@dataclass(frozen=True)
class TriggerMetrics:
    recall: Interval
    false_trigger_rate: Interval
    precision: Interval
    f1: Interval

    def rounded(self) -> RoundedMetrics:
        return RoundedMetrics(self.recall.rounded(), self.false_trigger_rate.rounded(), self.precision.rounded(),
                              self.f1.rounded())


def trigger_metrics(queries: Sequence[QueryCounts]) -> TriggerMetrics:
    positives = [(q.triggered, q.trials) for q in queries if q.should_trigger]
    negatives = [(q.triggered, q.trials) for q in queries if not q.should_trigger]
    # Precision: of the trials that triggered, those on a should-trigger query.
    taken = [(q.triggered if q.should_trigger else 0, q.triggered) for q in queries]
    recall, false_rate = clustered_rate(positives), clustered_rate(negatives)
    if recall.value is None or false_rate.value is None:
        # Without measured queries of both kinds precision is fixed by the set, not the agent:
        # 1 when nothing could trigger falsely, 0 when nothing could trigger rightly.
        return TriggerMetrics(recall, false_rate, EMPTY, EMPTY)
    return TriggerMetrics(recall, false_rate, clustered_rate(taken), _f1(positives, taken))


def _f1(positives: list[tuple[int, int]], taken: list[tuple[int, int]]) -> Interval:
    recall, precision = clustered_rate(positives, Z975), clustered_rate(taken, Z975)
    if recall.value is None:
        return EMPTY
    value = f1_score(precision.value or 0.0, recall.value)
    if precision.value is None:
        # Nothing triggered: precision is undefined, F1 is 0 by convention.
        return Interval(0.0, 0.0, f1_score(1.0, recall.high or 0.0), recall.n, recall.trials)
    low = f1_score(precision.low or 0.0, recall.low or 0.0)
    high = f1_score(precision.high or 0.0, recall.high or 0.0)
    return Interval(value, low, high, min(recall.n, precision.n), recall.trials + precision.trials)


def f1_score(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def rate_change(pairs: Sequence[tuple[QueryCounts, QueryCounts]]) -> RateChange:
    """Per-query (candidate, original) counts of one label: the pooled rates and the test,
    candidate minus original (rates to 4 places, the change to 2)."""
    usable = [(c, o) for c, o in pairs if c.trials and o.trials]
    if not usable:
        return RateChange(None, None, None, None, 0, False)
    cand = sum(c.triggered for c, _ in usable) / sum(c.trials for c, _ in usable)
    orig = sum(o.triggered for _, o in usable) / sum(o.trials for _, o in usable)
    changed = sum(c.rate != o.rate for c, o in usable)
    p = sign_flip_p(usable)
    return RateChange(_r(cand), _r(orig), _r((cand - orig) * 100, 2), _r(p), changed, p < 0.05)


def sign_flip_p(pairs: Sequence[tuple[QueryCounts, QueryCounts]]) -> float:
    """Two-sided p of the paired sign-flip test on the per-query rate differences (the case-level
    test of ``scoring.inference``, with the query as the case)."""
    scale = math.lcm(*(n for c, o in pairs for n in (c.trials, o.trials)))
    scores = [c.triggered * (scale // c.trials) - o.triggered * (scale // o.trials) for c, o in pairs]
    return case_sign_flip_p(scores)[0]


def _r(value: float | None, places: int = 4) -> float | None:
    return None if value is None else round(value, places)
