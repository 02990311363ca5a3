"""Anytime-valid evidence over cases that differ: the e-process the evidence ledger multiplies.

Each case of each run of the suite is one vote (``evidence_ledger.case_votes``): up when its pairs'
net difference favours the skill's arm, down when it favours the other (below, "flips to pass"
and "to fail"). For a skill whose content changes nothing, a case's two arms are exchangeable
draws, so each vote goes either way with probability 1/2 whatever the case, its difficulty, how
alike its runs are or the votes before it. "Helps" is the hypothesis that votes up are likelier
(q > 1/2).

The e-value for "helps" is the likelihood ratio of the flips under q against q = 1/2, mixed over
q uniform on [1/2, 1]. For every q <= 1/2 each factor has expectation <= 1, so the running
product is a test supermartingale: by Ville's inequality it ever reaches 1/a with probability
<= a, however many pairs, runs, re-runs or shards it accumulates and whenever one stops to look.
"Hurts" is the mirror image. Each direction is claimed at 2/alpha (alpha split over the two,
as the two-sided paired test does), so a skill that does nothing is ever called "helps" with
probability <= alpha/2 <= alpha.

The mixture depends on the counts only, so the ledger keeps counts; everything is computed in
log space, exact at any size.

The confidence sequence is Robbins' mixture one (uniform prior on q over [0, 1]): the q whose
own likelihood ratio stays below 1/alpha, reported as the net share of differing cases the skill
decides, 2q - 1, in points. It holds at every look at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .inference import ALPHA

_LOG2 = math.log(2.0)
# How far "how many more flips" looks before saying "more than that".
MAX_NEEDED = 100_000


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in values))


def _log_binom(n: int, j: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _log_half_binom_cdf(n: int, k: int) -> float:
    """log P(Binomial(n, 1/2) <= k)."""
    if k < 0:
        return -math.inf
    if k >= n:
        return 0.0
    # The smaller tail is summed, so the terms stay few and the sum exact in log space.
    if k < n / 2:
        return _logsumexp([_log_binom(n, j) for j in range(k + 1)]) - n * _LOG2
    upper = _logsumexp([_log_binom(n, j) for j in range(k + 1, n + 1)]) - n * _LOG2
    return math.log1p(-math.exp(upper)) if upper < 0 else -math.inf


def log_e_helps(flips_to_pass: int, flips_to_fail: int) -> float:
    """log of the mixture e-value for "helps" (see the module docstring)."""
    k, n = flips_to_pass, flips_to_pass + flips_to_fail
    # 2 (the prior's density) * 2^n * integral over [1/2, 1] of q^k (1-q)^(n-k) dq, and that
    # integral is B(k+1, n-k+1) * P(Beta(k+1, n-k+1) > 1/2) = B(...) * P(Bin(n+1, 1/2) <= k).
    return (n + 1) * _LOG2 + _log_beta(k + 1, n - k + 1) + _log_half_binom_cdf(n + 1, k)


def log_e_hurts(flips_to_pass: int, flips_to_fail: int) -> float:
    return log_e_helps(flips_to_fail, flips_to_pass)


def log_threshold(alpha: float = ALPHA) -> float:
    """The log e-value either direction is claimed at: 2/alpha."""
    return math.log(2.0 / alpha)


def more_needed(flips_to_pass: int, flips_to_fail: int, *, helps: bool, alpha: float = ALPHA) -> int | None:
    """How many more flips in the claimed direction, with none the other way, the claim needs
    (0: it has it); None when more than ``MAX_NEEDED``."""
    bar = log_threshold(alpha)

    def enough(extra: int) -> bool:
        k, m = (flips_to_pass + extra, flips_to_fail) if helps else (flips_to_pass, flips_to_fail + extra)
        return (log_e_helps(k, m) if helps else log_e_hurts(k, m)) >= bar

    if enough(0):
        return 0
    low, high = 0, 1
    while not enough(high):
        low, high = high, high * 2
        if high > MAX_NEEDED:
            return None if not enough(MAX_NEEDED) else _search(enough, low, MAX_NEEDED)
    return _search(enough, low, high)


def _search(enough: Callable[[int], bool], low: int, high: int) -> int:
    """The least n in (low, high] that is enough, ``enough(high)`` being true."""
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


def confidence_sequence(flips_to_pass: int, flips_to_fail: int, alpha: float = ALPHA) -> tuple[float, float]:
    """The net share of differing pairs the skill decides (2q - 1, in points): its (1 - alpha)
    confidence sequence, valid at every look at once."""
    k, n = flips_to_pass, flips_to_pass + flips_to_fail
    if n == 0:
        return -100.0, 100.0
    log_mix = _log_beta(k + 1, n - k + 1)
    bar = math.log(1.0 / alpha)

    def inside(q: float) -> bool:
        ll = (k * math.log(q) if k else 0.0) + ((n - k) * math.log1p(-q) if n - k else 0.0)
        return log_mix - ll < bar

    centre = k / n
    centre = min(max(centre, 1e-12), 1 - 1e-12)
    low = 0.0 if inside(1e-12) else _edge(inside, 1e-12, centre)
    high = 1.0 if inside(1 - 1e-12) else _edge(inside, 1 - 1e-12, centre)
    return round((2 * low - 1) * 100, 1), round((2 * high - 1) * 100, 1)


def _edge(inside: Callable[[float], bool], outside_q: float, inside_q: float) -> float:
    for _ in range(60):
        mid = (outside_q + inside_q) / 2
        outside_q, inside_q = (outside_q, mid) if inside(mid) else (mid, inside_q)
    return inside_q
