"""The power of skillab's own lift test, computed from the test itself.

A suite at lift ``delta`` is modelled run by run: the two arms of a run differ with probability
``psi``, and when they differ the skill's arm is the passing one with probability
``(1 + delta / psi) / 2``. Without the skill the arms differ ``psi0`` of the time, half each
way; ``psi`` at lift ``delta`` is ``discordance_at`` (``room`` is the baseline's failure rate, the
largest lift possible). A case's score is its with-passes minus
its without-passes over its ``runs``; the decision is the one the reports make, the exact
sign-flip test on the case scores at p < 0.05 in the direction of the lift. Its power is:

- one run per case: exact enumeration (the test is exact McNemar on the discordant cases, so
  the rejection region is a critical count per number of discordant cases);
- several runs, up to ``SIMULATED_MAX_CASES`` cases: a seeded simulation of ``SIMULATION_REPS``
  suites, each decided by ``sign_flip_p`` itself (the same seed for the same question);
- beyond that (where the exact test's distribution is close to normal): the large-sample form
  of the same test, ``|S| - 1/2 >= z * sqrt(sum of squared scores)``.

Every answer is cached: reports and the calibration ask the same few questions many times.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_right
from functools import lru_cache
from statistics import NormalDist

from .inference import ALPHA, sign_flip_p

SIMULATION_REPS = 400
SIMULATED_MAX_CASES = 40
EXACT_MAX_CASES = 400
EXACT_MAX_RUNS = 300
# Discordance is rounded up to this grid, so nearby suites share cached answers.
PSI_GRID = 200


def quantize_up(psi: float) -> float:
    return min(1.0, math.ceil(psi * PSI_GRID - 1e-9) / PSI_GRID)


def smallest_p(n: int) -> float:
    """The smallest p-value the test can give with ``n`` cases (every case moving one way)."""
    return min(1.0, 2.0 ** (1 - n)) if n > 0 else 1.0


def discordance_at(psi0: float, delta: float, room: float) -> float:
    """The discordance at lift ``delta`` of a suite whose arms differ ``psi0`` of the time without it.

    Midway between two ways a skill lifts: by rescuing failing runs on top of the chance
    discordance (``psi0 * (1 - h) + delta``), or by turning chance losses into wins, which keeps
    the discordance (``max(psi0, delta)``). ``benchmarks/calibration.py`` checks the result.
    """
    share = min(1.0, delta / room) if room > 0 else 1.0
    rescue = psi0 * (1 - share) + delta
    return min(1.0, max(delta, (rescue + max(psi0, delta)) / 2))


def chance_discordance(psi: float, delta: float, room: float) -> float:
    """The ``psi0`` whose discordance at lift ``delta`` is ``psi``: ``discordance_at`` inverted.

    A pilot's discordance is read with the skill, at its observed lift; the model grows it
    with the lift from the chance one, so taking the read one as chance counted the growth twice.
    """
    delta = abs(delta)
    if delta <= 0 or discordance_at(0.0, delta, room) >= psi:
        return psi if delta <= 0 else 0.0
    lo, hi = 0.0, psi
    for _ in range(40):  # discordance_at rises with psi0
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if discordance_at(mid, delta, room) < psi else (lo, mid)
    return hi


def power(n: int, runs: int, psi0: float, delta: float, room: float = 1.0) -> float:
    """P(the test says "beyond noise" in the direction of ``delta``) for ``n`` cases."""
    delta = abs(delta)
    psi = quantize_up(discordance_at(psi0, delta, room))
    if n < 1 or psi <= 0 or delta <= 0:
        return _null_side(n)
    return _power(n, max(runs, 1), psi, round(delta, 6))


def _null_side(n: int) -> float:
    return 0.0 if smallest_p(n) >= ALPHA else ALPHA / 2


@lru_cache(maxsize=65536)
def _power(n: int, runs: int, psi: float, delta: float) -> float:
    if runs == 1 and n <= EXACT_MAX_CASES:
        return _mcnemar_power(n, psi, delta)
    if n <= SIMULATED_MAX_CASES:
        return _simulated_power(n, runs, psi, delta)
    return _large_sample_power(n, runs, psi, delta)


@lru_cache(maxsize=4096)
def critical_count(discordant: int) -> int:
    """Smallest count of cases moving up, out of ``discordant``, that exact McNemar calls p < 0.05."""
    total = 2**discordant
    tail = 0
    term = 1  # C(discordant, k), walked down from k = discordant
    for k in range(discordant, -1, -1):
        tail += term
        if 2 * tail >= ALPHA * total or 2 * k <= discordant:
            return k + 1
        term = term * k // (discordant - k + 1)
    return discordant + 1


def _mcnemar_power(n: int, psi: float, delta: float) -> float:
    """Sum over the likely counts of discordant cases of P(enough of them move up)."""
    up = (1 + delta / psi) / 2
    spread = 8 * math.sqrt(n * psi * (1 - psi)) + 2
    first, last = max(0, int(n * psi - spread)), min(n, int(n * psi + spread) + 1)
    total = 0.0
    weight = _binom_pmf(n, first, psi)
    for d in range(first, last + 1):
        k = critical_count(d)
        if k <= d and weight > 1e-16:
            total += weight * _upper_tail(d, k, up)
        if psi < 1:
            weight *= (n - d) / (d + 1) * psi / (1 - psi)
    return min(1.0, total)


def _upper_tail(n: int, k: int, p: float) -> float:
    """P(Binomial(n, p) >= k), by the pmf's ratio recursion from k."""
    if p >= 1:
        return 1.0
    term = _binom_pmf(n, k, p)
    total = 0.0
    ratio = p / (1 - p)
    for j in range(k, n + 1):
        total += term
        term *= (n - j) / (j + 1) * ratio
    return total


def _binom_pmf(n: int, k: int, p: float) -> float:
    if p <= 0:
        return 1.0 if k == 0 else 0.0
    if p >= 1:
        return 1.0 if k == n else 0.0
    log = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return math.exp(log + k * math.log(p) + (n - k) * math.log1p(-p))


def score_pmf(runs: int, psi: float, delta: float) -> list[float]:
    """The distribution of one case's score over ``-runs .. runs`` under the model."""
    up, down = (psi + delta) / 2, (psi - delta) / 2
    pmf = [1.0]  # offset: index i is score i - (len - 1) // 2
    for _ in range(runs):
        grown = [0.0] * (len(pmf) + 2)
        for i, mass in enumerate(pmf):
            grown[i] += mass * down
            grown[i + 1] += mass * (1 - psi)
            grown[i + 2] += mass * up
        pmf = grown
    return pmf


def _simulated_power(n: int, runs: int, psi: float, delta: float) -> float:
    pmf = score_pmf(runs, psi, delta)
    cdf = list(_accumulate(pmf))
    rng = random.Random(f"skillab-power/{n}/{runs}/{psi}/{delta}")
    hits = 0
    for _ in range(SIMULATION_REPS):
        counts = [0] * len(pmf)
        for _ in range(n):
            counts[min(bisect_right(cdf, rng.random()), len(pmf) - 1)] += 1
        hits += _rejects_up(tuple(counts), runs)
    return hits / SIMULATION_REPS


def _accumulate(values: list[float]):
    total = 0.0
    for value in values:
        total += value
        yield total


@lru_cache(maxsize=200_000)
def _rejects_up(counts: tuple[int, ...], runs: int) -> bool:
    scores = [score - runs for score, count in enumerate(counts) for _ in range(count)]
    return sum(scores) > 0 and sign_flip_p(scores)[0] < ALPHA


def _large_sample_power(n: int, runs: int, psi: float, delta: float) -> float:
    mean = runs * delta
    variance = runs * (psi - delta * delta)
    second = variance + mean * mean
    z = NormalDist().inv_cdf(1 - ALPHA / 2)
    threshold = z * math.sqrt(n * second) + 0.5
    if variance <= 0:
        return 1.0 if n * mean >= threshold else 0.0
    return 1 - NormalDist(n * mean, math.sqrt(n * variance)).cdf(threshold)


def detectable_lift(n: int, runs: int, psi0: float, room: float, target_power: float) -> float | None:
    """Smallest lift (0..room) the test detects with ``target_power`` at ``n`` cases; None if none."""
    room = min(max(room, 0.0), 1.0)
    if room <= 0 or power(n, runs, psi0, room, room) < target_power:
        return None
    lo, hi = 0.0, room
    while hi - lo > 0.002:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if power(n, runs, psi0, mid, room) < target_power else (lo, mid)
    return hi


def cases_needed(runs: int, psi0: float, delta: float, room: float, target_power: float,
                 limit: int) -> int | None:
    """Smallest ``n`` (doubling, then bisection) whose power at ``delta`` reaches ``target_power``."""
    n = 6
    while power(n, runs, psi0, delta, room) < target_power:
        if n >= limit:
            return None
        n = min(2 * n, limit)
    lo = n // 2
    while n - lo > 1:
        mid = (lo + n) // 2
        lo, n = (mid, n) if power(mid, runs, psi0, delta, room) < target_power else (lo, mid)
    return n


def null_point_pass_rate(n: int, runs: int, psi0: float, threshold: float) -> float:
    """P(the point estimate of the lift >= ``threshold``) for a skill with no effect.

    What ``--gate-on point`` lets through: under the same model at lift 0 (each run's arms
    differ ``psi0`` of the time, half each way), the distribution of the suite's summed
    score, by exact convolution of the case scores up to ``EXACT_MAX_RUNS`` graded runs (a
    report pays at most a few hundred thousand steps), or its normal form beyond, where the
    sum of that many small integer scores is close to normal.
    """
    if n < 1:
        return 0.0
    runs = max(runs, 1)
    return _null_point_pass_rate(n, runs, quantize_up(min(max(psi0, 0.0), 1.0)), round(threshold, 6))


@lru_cache(maxsize=4096)
def _null_point_pass_rate(n: int, runs: int, psi: float, threshold: float) -> float:
    # The point estimate is the summed score over n * runs graded runs.
    need = math.ceil(threshold * n * runs - 1e-9)
    if psi <= 0:
        return 1.0 if need <= 0 else 0.0
    if n * runs > EXACT_MAX_RUNS:
        sd = math.sqrt(n * runs * psi)
        return 1 - NormalDist(0, sd).cdf(need - 0.5)
    case = score_pmf(runs, psi, 0.0)
    total = [1.0]
    for _ in range(n):
        grown = [0.0] * (len(total) + len(case) - 1)
        for i, a in enumerate(total):
            if a > 1e-18:
                for j, b in enumerate(case):
                    grown[i + j] += a * b
        total = grown
    offset = (len(total) - 1) // 2  # index i is summed score i - offset
    return min(1.0, sum(total[max(0, need + offset):]))
