"""The held-out grid's simulated truths are the truths it says: a het-null mix's population lift
is 0, a negative lift is the one asked for, and correlated runs keep each arm's pass rate."""

from __future__ import annotations

import numpy as np
import pytest

from . import benchmark_scripts


@pytest.fixture(scope="module")
def cal():
    with benchmark_scripts("calibration", "calibration_heldout") as modules:
        yield modules


def _lift(cal, scenario, suites: int = 400) -> float:
    rng = np.random.default_rng(7)
    diffs = [p.diff for _ in range(suites) for p in cal.draw(scenario, rng, scenario.n)]
    return float(np.mean(diffs))


@pytest.mark.parametrize(("baseline", "share", "pts"), [(-0.5, 0.3, 40), (1.0, 0.1, 60)])
def test_a_het_null_mix_has_no_population_lift(cal, baseline, share, pts):
    cal = cal[0]
    s = cal.Scenario(50, 2, 0, baseline=baseline, het_null=True, het_up_share=share, het_up_pts=pts)
    assert abs(_lift(cal, s)) < 0.01
    assert s.truth() == 0


def test_a_negative_lift_is_the_one_asked_for(cal):
    cal = cal[0]
    assert _lift(cal, cal.Scenario(50, 2, -15, baseline=1.0, spread=0.5)) == pytest.approx(-0.15, abs=0.01)


def test_correlated_runs_keep_each_arms_pass_rate_and_clump_a_cases_runs(cal):
    cal = cal[0]
    rng = np.random.default_rng(3)
    plain, clumped = (cal.draw(cal.Scenario(2000, 4, 0, icc=icc), rng, 2000) for icc in (0.0, 0.9))
    rate = [np.mean([p.without_passes / p.runs for p in pairs]) for pairs in (plain, clumped)]
    assert rate[0] == pytest.approx(rate[1], abs=0.02)
    # A case's runs agree more often when they are one draw repeated.
    agree = [np.mean([p.without_passes in (0, p.runs) for p in pairs]) for pairs in (plain, clumped)]
    assert agree[1] > agree[0] + 0.15


def test_every_held_out_cell_asks_a_lift_its_baseline_leaves_room_for(cal):
    heldout = cal[1]
    assert all(heldout.possible(s) for s in heldout.sentence_cells(False))
