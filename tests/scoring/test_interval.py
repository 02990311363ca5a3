"""The lift's interval is the test inverted: monotone in the evidence, never zero width, and in
agreement with the sign-flip p at 0 (the numbers are those of issue #34)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence

import pytest

from skillab.scoring.exact import binom_cdf, clopper_pearson_upper
from skillab.scoring.inference import CasePair
from skillab.scoring.interval import infer_lift
from skillab.scoring.statistics import case_statistics


def single_runs(up: int, kept: int, down: int = 0) -> list[CasePair]:
    """One run per case: ``up`` rescued, ``kept`` failing in both arms, ``down`` broken."""
    return [CasePair(1, 0, 1)] * up + [CasePair(0, 0, 1)] * kept + [CasePair(0, 1, 1)] * down


def interval(pairs: list[CasePair]) -> tuple[float, float]:
    inference = infer_lift(pairs)
    assert inference is not None and inference.ci95 is not None
    return inference.ci95


def test_more_rescued_cases_never_lower_the_lower_bound():
    lows = [interval(single_runs(up, 4))[0] for up in (6, 7, 8, 9)]
    assert lows == sorted(lows) and len(set(lows)) == 4, lows


def test_every_case_flipping_is_monotone_and_never_zero_width():
    bounds = [interval(single_runs(n, 0)) for n in (5, 6, 7)]
    lows = [lo for lo, _ in bounds]
    assert lows == sorted(lows) and len(set(lows)) == 3, bounds
    assert all(hi - lo >= 50 for lo, hi in bounds), bounds
    assert bounds[1][0] > 0 and bounds[0][0] <= 0  # p = 0.031 at 6 cases, 0.0625 at 5


@pytest.mark.parametrize("up,kept,down", [(1, 1, 0), (3, 2, 1), (2, 5, 2), (5, 0, 0), (0, 3, 4)])
def test_more_cases_with_the_same_shares_never_widen_it(up, kept, down):
    widths = []
    for k in (1, 2, 4, 8, 16):
        lo, hi = interval(single_runs(up * k, kept * k, down * k))
        widths.append(hi - lo)
    assert widths == sorted(widths, reverse=True), widths
    assert widths[-1] > 0


def test_bounds_move_with_the_evidence_over_every_small_suite():
    """Turning a kept case into a rescued one, or a broken case into a kept one, never lowers a bound."""
    for n in range(2, 13):
        for up, down in itertools.product(range(n + 1), repeat=2):
            if up + down > n:
                continue
            lo, hi = interval(single_runs(up, n - up - down, down))
            assert hi - lo > 0
            if up + down < n:
                lo2, hi2 = interval(single_runs(up + 1, n - up - down - 1, down))
                assert lo2 >= lo - 1e-9 and hi2 >= hi - 1e-9, (n, up, down)
            if down:
                lo3, hi3 = interval(single_runs(up, n - up - down + 1, down - 1))
                assert lo3 >= lo - 1e-9 and hi3 >= hi - 1e-9, (n, up, down)


def test_it_excludes_zero_exactly_when_the_test_rejects():
    for n in range(2, 15):
        for up, down in itertools.product(range(n + 1), repeat=2):
            if up + down > n:
                continue
            inference = infer_lift(single_runs(up, n - up - down, down))
            lo, hi = inference.ci95
            assert (lo > 0 or hi < 0) == (inference.p_value < 0.05), (n, up, down, lo, hi)
    several = [CasePair(3, 0, 3)] * 3 + [CasePair(2, 1, 3)] * 2 + [CasePair(1, 1, 3)] * 5
    inference = infer_lift(several)
    assert (inference.ci95[0] > 0) == (inference.p_value < 0.05)


def test_the_lower_bound_gate_is_monotone_in_the_evidence():
    def passes(up: int, kept: int) -> bool:  # --gate-on lower-bound --min-delta-pts 50
        stats = case_statistics(single_runs(up, kept))
        return stats.ci95 is not None and stats.ci95[0] >= 50

    # The same result at more cases, and a stronger result, never fail where a weaker one passes.
    verdicts = [passes(n, 0) for n in range(5, 12)]
    assert verdicts == sorted(verdicts), verdicts
    rescued = [passes(up, 4) for up in range(4, 20)]
    assert rescued == sorted(rescued), rescued


def test_the_power_model_never_reads_no_discordance_from_a_suite_that_flips():
    stats = case_statistics(single_runs(6, 0))
    assert stats.power is not None and stats.power.discordance is not None
    assert stats.power.discordance > 0


def test_binomial_tail_holds_at_any_size():
    assert binom_cdf(2400, 5000, 0.5) == pytest.approx(0.0024418248687631, rel=1e-9)
    assert binom_cdf(0, 3000, 0.001) == pytest.approx(0.999 ** 3000, rel=1e-9)
    assert 0 < clopper_pearson_upper(10, 5000, 0.025) < 0.01
    big = infer_lift([CasePair(1, 0, 1)] * 40 + [CasePair(0, 0, 1)] * 4960)
    assert big is not None and 0 < big.ci95[0] < big.lift_pts < big.ci95[1]


def test_a_suite_of_thousands_of_cases_with_one_that_differs_reports():
    from ..runlogs import case, run_log

    for size in (1_100, 5_000):
        half = (size - 1) // 2
        records = [case("up", "flip_to_pass")]
        records += [case(f"p{i}", "pass_kept") for i in range(half)]
        records += [case(f"f{i}", "fail_kept") for i in range(size - 1 - half)]
        stats = run_log(records).summary.statistics
        assert stats is not None and stats.n_cases == size and "cannot be told from noise" in stats.summary
        assert stats.power is not None and stats.ci95[0] < 0 < stats.ci95[1]


# Several runs per case: the bounds must move with the evidence exactly, not nearly (issue #34).
# A suite is a list of (with-skill passes, without-skill passes) over ``runs`` runs; its interval
# depends only on the per-case differences, so intervals are cached by their sorted multiset.


def _runs_interval(suite: Sequence[tuple[int, int]], runs: int, cache: dict) -> tuple[float, float]:
    key = (runs, tuple(sorted(w - o for w, o in suite)))
    if key not in cache:
        cache[key] = interval([CasePair(w, o, runs) for w, o in suite])
    return cache[key]


def _better(suite: list[tuple[int, int]], runs: int) -> Iterator[tuple[str, list[tuple[int, int]]]]:
    """Every suite one piece of evidence stronger: one run rescued (the with-skill arm passes a run it
    failed, or the without-skill arm fails one it passed) and one whole case rescued."""
    for i, (w, o) in enumerate(suite):
        moves = [("run", (w + 1, o)), ("run", (w, o - 1)), ("case", (runs, o)), ("case", (w, 0))]
        for kind, (w2, o2) in moves:
            if (w2, o2) != (w, o) and 0 <= w2 <= runs and 0 <= o2 <= runs:
                yield kind, [*suite[:i], (w2, o2), *suite[i + 1:]]


def _assert_moves_with_the_evidence(suite: list[tuple[int, int]], runs: int, cache: dict) -> None:
    lo, hi = _runs_interval(suite, runs, cache)
    assert hi - lo > 0, (runs, suite)
    for kind, stronger in _better(suite, runs):
        lo2, hi2 = _runs_interval(stronger, runs, cache)
        # The lower bound gate (--gate-on lower-bound) passes the stronger suite wherever it passes this one.
        assert lo2 >= lo - 1e-9 and hi2 >= hi - 1e-9, (kind, runs, suite, stronger, (lo, hi), (lo2, hi2))
    lo2, hi2 = _runs_interval(suite * 2, runs, cache)
    # The same result over twice the cases never widens it, nor lowers its lower bound.
    assert hi2 - lo2 <= hi - lo + 1e-9 and lo2 >= lo - 1e-9, (runs, suite, (lo, hi), (lo2, hi2))


@pytest.mark.parametrize("runs", [2, 3])
def test_with_several_runs_every_rescue_moves_the_bounds_with_it_over_every_small_suite(runs):
    """Exhaustive: every suite of 2 to 4 cases, every run or whole case rescued in it."""
    states = [(w, o) for w in range(runs + 1) for o in range(runs + 1)]
    cache: dict = {}
    for n in (2, 3, 4):
        for suite in itertools.combinations_with_replacement(states, n):
            _assert_moves_with_the_evidence(list(suite), runs, cache)


def test_with_several_runs_every_rescue_moves_the_bounds_with_it_over_random_suites():
    """Seeded search up to 30 cases of 2, 3 and 5 runs: spread suites, and sparse ones (a few cases
    differing among many kept), where a near-whole case is rescued (the hardest to keep monotone)."""
    rng = random.Random(34)
    cache: dict = {}
    for _ in range(120):
        runs, n = rng.choice((2, 3, 5)), rng.randint(2, 30)
        if rng.random() < 0.5:
            suite = [(rng.randint(0, runs), rng.randint(0, runs)) for _ in range(n)]
        else:
            differing = rng.randint(1, min(n, 3))
            suite = [(0, 0)] * (n - differing) + [(rng.randint(0, runs), rng.randint(0, runs))
                                                   for _ in range(differing)]
        _assert_moves_with_the_evidence(suite, runs, cache)


def test_with_several_runs_it_excludes_zero_exactly_when_the_test_rejects():
    for runs in (2, 3):
        for diffs in itertools.combinations_with_replacement(range(-runs, runs + 1), 6):
            inference = infer_lift([CasePair(max(d, 0), max(-d, 0), runs) for d in diffs])
            lo, hi = inference.ci95
            assert (lo > 0 or hi < 0) == (inference.p_value < 0.05), (runs, diffs, lo, hi)
