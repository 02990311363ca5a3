"""The power of skillab's own lift test, computed from the test itself.

A suite at lift ``delta`` is modelled run by run: the two arms of a run differ with probability
``psi``, and when they differ the skill's arm is the passing one with probability
``(1 + delta / psi) / 2``. Without the skill the arms differ ``psi0`` of the time, half each
way; ``psi`` at lift ``delta`` is ``discordance_at`` (``room`` is the baseline's failure rate, the
largest lift possible). With several runs per case, cases are of two kinds: without the skill
an ``inert`` share never differs (an agent that always or never passes them), and the rest
carry the whole chance discordance; the lift is on every case alike, an inert case's runs
turning up ``delta`` of the time (``case_score_pmf``). At ten cases the inert ones make the
test coarser than a suite of like cases. A lift may instead come as whole cases (a share of the
cases passing every run with the skill, ``whole_case_pmf``): at several runs per case such a
lift decides through fewer cases, each moving by all its runs, and the power at the same lift
is lower (real power 0.68 at the X the smooth model gave, 20 near-deterministic cases x 3
runs). Which shape a suite's lift has is read from its own case scores (``whole_cases``), and
the power is the test's on the mixture of the two. A case's score is its with-passes minus
its without-passes over its ``runs``; the decision is the one the reports make, the exact
sign-flip test on the case scores at p < 0.05 in the direction of the lift. Its power is:

- one run per case: exact enumeration (the test is exact McNemar on the discordant cases, so
  the rejection region is a critical count per number of discordant cases);
- several runs, up to ``SIMULATED_MAX_CASES`` cases: a seeded simulation of ``SIMULATION_REPS``
  suites, each decided by ``sign_flip_p`` itself (the same seed for the same question);
- beyond that (where the exact test's distribution is close to normal): the large-sample form
  of the same test, ``|S| - 1/2 >= z * sqrt(sum of squared scores)``, from the moments of a
  case's score.

Every answer is cached: reports and the calibration ask the same few questions many times.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

from .inference import ALPHA, sign_flip_p

SIMULATION_REPS = 400
SIMULATED_MAX_CASES = 40
EXACT_MAX_CASES = 400
EXACT_MAX_RUNS = 300
# Discordance is rounded up to this grid, so nearby suites share cached answers.
PSI_GRID = 200
# The inert share is rounded to this grid (the nearest), for the same reason.
INERT_GRID = 40
# The whole-case share is rounded to this grid (the nearest), for the same reason.
WHOLE_GRID = 10


@dataclass(frozen=True)
class WholeCases:
    """How much of a lift comes as whole cases: ``share`` of the cases carry theirs whole, and
    the suite as read under that shape (its chance discordance ``psi0`` and the ``inert`` share
    of its cases that never differ without the skill)."""

    share: float
    psi0: float
    inert: float


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


def power(n: int, runs: int, psi0: float, delta: float, room: float = 1.0, inert: float = 0.0,
          alpha: float = ALPHA, whole: WholeCases | None = None) -> float:
    """P(the test says "beyond noise" at two-sided level ``alpha`` in the direction of ``delta``)
    for ``n`` cases, of which an ``inert`` share never differ without the skill (it matters only
    with several runs per case). The others' chance discordance is ``psi0 / (1 - inert)``, grown
    by the lift as ``discordance_at``. With ``whole`` (several runs per case), its share of the
    cases carry the lift whole instead (``whole_case_pmf``, on the suite as read that way)."""
    delta = abs(delta)
    if n < 1 or delta <= 0 or discordance_at(psi0, delta, room) <= 0:
        return _null_side(n, alpha)
    runs = max(runs, 1)
    # The cases that never differ make a small suite's test coarser; with one run per case, or
    # beyond the simulated sizes (where the test is close to normal), the like-cases model holds.
    inert = _inert_at(psi0, delta, inert) if 1 < runs and n <= SIMULATED_MAX_CASES else 0.0
    psi = quantize_up(discordance_at(psi0 / (1 - inert), delta, room))
    share = 0.0 if whole is None or runs < 2 else round(min(max(whole.share, 0.0), 1.0) * WHOLE_GRID) / WHOLE_GRID
    if share <= 0 or whole is None:
        return _power(n, runs, psi, round(delta, 6), inert, alpha)
    whole_inert = _inert_at(whole.psi0, 0.0, whole.inert)
    whole_psi = quantize_up(whole.psi0 / (1 - whole_inert))
    return _mixed_power(n, runs, psi, round(min(delta, 1.0), 6), inert, share, whole_psi, whole_inert, alpha)


def _inert_at(psi0: float, delta: float, inert: float) -> float:
    """The inert share on its grid, at most ``1 - max(psi0, delta)``: the other cases' chance
    discordance stays at most 1, and a lift never rests on fewer cases than it moves."""
    cap = max(0.0, 1 - max(psi0, delta))
    return min(round(min(max(inert, 0.0), 1.0) * INERT_GRID) / INERT_GRID, math.floor(cap * INERT_GRID) / INERT_GRID)


def _null_side(n: int, alpha: float = ALPHA) -> float:
    return 0.0 if smallest_p(n) >= alpha else alpha / 2


@lru_cache(maxsize=65536)
def _power(n: int, runs: int, psi: float, delta: float, inert: float = 0.0, alpha: float = ALPHA) -> float:
    """``psi`` is the discordance of the cases that are not inert, at lift ``delta``."""
    if runs == 1 and n <= EXACT_MAX_CASES:
        return _mcnemar_power(n, psi * (1 - inert) + delta * inert, delta, alpha)
    pmf = case_score_pmf(runs, psi, delta, inert)
    if n <= SIMULATED_MAX_CASES:
        return _simulated_power(n, runs, pmf, f"{psi}/{delta}" + (f"/{inert}" if inert else ""), alpha)
    return _large_sample_power(n, pmf, alpha)


@lru_cache(maxsize=65536)
def _mixed_power(n: int, runs: int, psi: float, delta: float, inert: float, share: float,
                 whole_psi: float, whole_inert: float, alpha: float = ALPHA) -> float:
    """A case's lift is whole with probability ``share``, else smooth (``_power``'s model)."""
    smooth = case_score_pmf(runs, psi, delta, inert)
    whole = whole_case_pmf(runs, whole_psi, delta, whole_inert)
    pmf = [(1 - share) * a + share * b for a, b in zip(smooth, whole)]
    if n <= SIMULATED_MAX_CASES:
        key = f"{psi}/{delta}/{inert}/whole {share}/{whole_psi}/{whole_inert}"
        return _simulated_power(n, runs, pmf, key, alpha)
    return _large_sample_power(n, pmf, alpha)


def whole_case_pmf(runs: int, psi: float, delta: float, inert: float = 0.0) -> list[float]:
    """One case's score when the lift comes as whole cases: with probability ``delta`` every run
    passes with the skill and fails without it (``+runs``), else the case as chance has it
    (inert, or its runs differing ``psi`` of the time, half each way)."""
    delta = min(max(delta, 0.0), 1.0)
    pmf = [(1 - delta) * mass for mass in case_score_pmf(runs, psi, 0.0, inert)]
    pmf[-1] += delta
    return pmf


def whole_cases(scores: Sequence[int], runs: int, read: float, lift: float, room: float,
                psi0: float, inert: float, floor: float) -> WholeCases:
    """How much of a lift comes as whole cases, read from a suite's case scores (with-passes
    minus without-passes) at its observed ``lift``; ``read`` is its discordance as read,
    ``psi0`` and ``inert`` the smooth model's reading of it.

    Under whole-case lifts a rescued case adds ``runs * lift (1 - lift)`` to ``runs * Var(d)``,
    so the chance discordance is ``(read - runs lift + (runs - 1) lift^2) / (1 - lift)`` (at
    least ``floor``), and the inert share is fitted to the cases that never differed as in
    ``inert_share``. The share is the posterior mean of the mixing weight of the two models'
    case-score distributions at the observed lift, under a uniform prior: a 20-case pilot tells
    the shapes apart only by a case or two moving by all its runs, so a suite that shows neither
    gets about half of each."""
    delta = min(max(lift, 0.0), 1.0)
    zero_share = sum(1 for x in scores if x == 0) / max(len(scores), 1)
    whole_psi0 = floor if delta >= 1 else max(floor, (read - runs * delta + (runs - 1) * delta * delta) / (1 - delta))
    whole_inert = _whole_inert(zero_share, runs, whole_psi0, delta)
    smooth_inert = _inert_at(psi0, delta, inert)
    smooth_psi = min(1.0, max(discordance_at(psi0 / (1 - smooth_inert), delta, room), delta))
    smooth = case_score_pmf(runs, smooth_psi, delta, smooth_inert)
    whole = whole_case_pmf(runs, min(1.0, whole_psi0 / (1 - whole_inert)), delta, whole_inert)
    grid = [i / (2 * WHOLE_GRID) for i in range(2 * WHOLE_GRID + 1)]
    logs = [sum(math.log(max((1 - w) * smooth[x + runs] + w * whole[x + runs], 1e-12)) for x in scores)
            for w in grid]
    top = max(logs)
    weights = [math.exp(v - top) for v in logs]
    share = sum(w * p for w, p in zip(grid, weights)) / sum(weights)
    # A suite with no lift beyond noise shows no shape of one: the share is scaled by how sure
    # the lift is there (the test's own statistic as a normal z), so a suite showing none takes
    # a quarter of its cases as whole, not half, and one with a clear lift the posterior's share.
    squares = sum(x * x for x in scores)
    real = NormalDist().cdf(sum(scores) / math.sqrt(squares)) if squares else 0.5
    return WholeCases(share * real, whole_psi0, whole_inert)


def _whole_inert(zero_share: float, runs: int, psi0: float, delta: float) -> float:
    """The inert share whose whole-case model gives ``zero_share`` of cases a score of 0."""

    def zeros(inert: float) -> float:
        active = 1 - inert
        return (1 - delta) * (inert + active * score_pmf(runs, min(1.0, psi0 / active), 0.0)[runs])

    return 0.0 if runs < 2 else _fit_inert(zeros, zero_share, max(0.0, 1 - psi0))


def case_score_pmf(runs: int, psi: float, delta: float, inert: float = 0.0) -> list[float]:
    """One case's score over ``-runs .. runs``: with probability ``inert`` an inert case, whose
    runs differ only when the skill turns them up (``delta`` of the time: 0 without a lift), else
    one whose runs differ ``psi`` of the time with lift ``delta``."""
    rescued = score_pmf(runs, delta, delta)
    return [(1 - inert) * a + inert * b for a, b in zip(score_pmf(runs, psi, delta), rescued)]


@lru_cache(maxsize=4096)
def critical_count(discordant: int, alpha: float = ALPHA) -> int:
    """Smallest count of cases moving up, out of ``discordant``, that exact McNemar calls p < ``alpha``."""
    total = 2**discordant
    tail = 0
    term = 1  # C(discordant, k), walked down from k = discordant
    for k in range(discordant, -1, -1):
        tail += term
        if 2 * tail >= alpha * total or 2 * k <= discordant:
            return k + 1
        term = term * k // (discordant - k + 1)
    return discordant + 1


def _mcnemar_power(n: int, psi: float, delta: float, alpha: float = ALPHA) -> float:
    """Sum over the likely counts of discordant cases of P(enough of them move up)."""
    up = (1 + delta / psi) / 2
    if psi >= 1:  # every case differs: the count of discordant cases is n itself
        k = critical_count(n, alpha)
        return _upper_tail(n, k, up) if k <= n else 0.0
    spread = 8 * math.sqrt(n * psi * (1 - psi)) + 2
    first, last = max(0, int(n * psi - spread)), min(n, int(n * psi + spread) + 1)
    total = 0.0
    weight = _binom_pmf(n, first, psi)
    for d in range(first, last + 1):
        k = critical_count(d, alpha)
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


def _simulated_power(n: int, runs: int, pmf: list[float], key: str, alpha: float = ALPHA) -> float:
    """The share of ``SIMULATION_REPS`` suites of ``n`` cases drawn from ``pmf`` (the same seed
    for the same question) that ``sign_flip_p`` calls beyond noise, upward."""
    cdf = list(_accumulate(pmf))
    rng = random.Random(f"skillab-power/{n}/{runs}/{key}")
    hits = 0
    for _ in range(SIMULATION_REPS):
        counts = [0] * len(pmf)
        for _ in range(n):
            counts[min(bisect_right(cdf, rng.random()), len(pmf) - 1)] += 1
        hits += _rejects_up(tuple(counts), runs, alpha)
    return hits / SIMULATION_REPS


def _accumulate(values: list[float]):
    total = 0.0
    for value in values:
        total += value
        yield total


@lru_cache(maxsize=200_000)
def _rejects_up(counts: tuple[int, ...], runs: int, alpha: float = ALPHA) -> bool:
    scores = [score - runs for score, count in enumerate(counts) for _ in range(count)]
    return sum(scores) > 0 and sign_flip_p(scores)[0] < alpha


def _large_sample_power(n: int, pmf: list[float], alpha: float = ALPHA) -> float:
    runs = (len(pmf) - 1) // 2
    mean = sum(p * (i - runs) for i, p in enumerate(pmf))
    second = sum(p * (i - runs) ** 2 for i, p in enumerate(pmf))
    variance = max(second - mean * mean, 0.0)
    z = NormalDist().inv_cdf(1 - alpha / 2)
    threshold = z * math.sqrt(n * second) + 0.5
    if variance <= 1e-15:
        return 1.0 if n * mean >= threshold else 0.0
    return 1 - NormalDist(n * mean, math.sqrt(n * variance)).cdf(threshold)


def detectable_lift(n: int, runs: int, psi0: float, room: float, target_power: float,
                    inert: float = 0.0, alpha: float = ALPHA, whole: WholeCases | None = None) -> float | None:
    """Smallest lift (0..room) the test at level ``alpha`` detects with ``target_power`` at ``n``
    cases; None if none."""
    room = min(max(room, 0.0), 1.0)
    if room <= 0 or power(n, runs, psi0, room, room, inert, alpha, whole) < target_power:
        return None
    lo, hi = 0.0, room
    while hi - lo > 0.002:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if power(n, runs, psi0, mid, room, inert, alpha, whole) < target_power else (lo, mid)
    return hi


def cases_needed(runs: int, psi0: float, delta: float, room: float, target_power: float,
                 limit: int, inert: float = 0.0) -> int | None:
    """Smallest ``n`` (doubling, then bisection) whose power at ``delta`` reaches ``target_power``."""
    n = 6
    while power(n, runs, psi0, delta, room, inert) < target_power:
        if n >= limit:
            return None
        n = min(2 * n, limit)
    lo = n // 2
    while n - lo > 1:
        mid = (lo + n) // 2
        lo, n = (mid, n) if power(mid, runs, psi0, delta, room, inert) < target_power else (lo, mid)
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


def inert_share(zero_share: float, runs: int, psi: float, delta: float) -> float:
    """The inert share whose model gives ``zero_share`` of cases a score of 0, at discordance
    ``psi`` and lift ``delta`` over all cases: 0 when like cases already give that many."""
    delta = abs(delta)

    def zeros(inert: float) -> float:
        active = 1 - inert
        psi_a = min(1.0, max(psi / active, delta / active))
        return inert + active * score_pmf(runs, psi_a, min(delta / active, psi_a))[runs]

    return 0.0 if runs < 2 else _fit_inert(zeros, zero_share, max(0.0, 1 - max(psi, delta)))


def _fit_inert(zeros: Callable[[float], float], zero_share: float, cap: float) -> float:
    """The inert share (0..cap) at which ``zeros`` (rising with it) gives ``zero_share``."""
    if zero_share <= zeros(0.0):
        return 0.0
    if zero_share >= zeros(cap):
        return cap
    lo, hi = 0.0, cap
    for _ in range(30):  # more inert cases, more zeros
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if zeros(mid) < zero_share else (lo, mid)
    return lo
