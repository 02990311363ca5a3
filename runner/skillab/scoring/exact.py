"""Exact binomial arithmetic at any size: tails summed in log space, and Clopper-Pearson bounds.

``math.comb(n, i) * p**i`` overflows a float past about a thousand trials; every term here is a
logarithm until the sum, which is taken relative to its largest term.
"""

from __future__ import annotations

import math


def log_binom_pmf(i: int, n: int, p: float) -> float:
    """log P(X = i) for X ~ Binomial(n, p); ``-inf`` where it is 0."""
    if p <= 0.0:
        return 0.0 if i == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if i == n else -math.inf
    return (math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
            + i * math.log(p) + (n - i) * math.log1p(-p))


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), at any ``n``."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    logs = [log_binom_pmf(i, n, p) for i in range(k + 1)]
    top = max(logs)
    if top == -math.inf:
        return 0.0
    return min(1.0, math.exp(top) * sum(math.exp(v - top) for v in logs))


def clopper_pearson_upper(successes: int, n: int, tail: float) -> float:
    """Exact one-sided upper bound on a share: the p with P(Binomial(n, p) <= successes) = tail."""
    if successes >= n:
        return 1.0
    lo, hi = successes / n, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if binom_cdf(successes, n, mid) > tail else (lo, mid)
    return hi


def clopper_pearson_lower(successes: int, n: int, tail: float) -> float:
    """Exact one-sided lower bound on a share (the upper bound of the failures, mirrored)."""
    return 1.0 - clopper_pearson_upper(n - successes, n, tail)
