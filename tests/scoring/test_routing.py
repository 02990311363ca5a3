"""The routing diff's statistics: the exact stratified test of a drop in right routes, and the
Benjamini-Hochberg adjustment, checked against scipy and brute force."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from scipy import stats

from skillab.core.routing import MULTIPLE, NONE, NOT_CANDIDATE
from skillab.scoring.routing import RoutedQuery, agent_routes, benjamini_hochberg, stratified_lower_p
from skillab.suite.trigger_plan import TriggerTrial


@pytest.mark.parametrize("stratum", [(3, 3, 0, 3), (5, 6, 2, 6), (0, 4, 0, 4), (4, 4, 4, 4), (2, 10, 7, 3)])
def test_one_stratum_is_the_hypergeometric_lower_tail(stratum):
    r0, n0, r1, n1 = stratum
    expected = stats.hypergeom(n0 + n1, r0 + r1, n1).cdf(r1)
    assert stratified_lower_p([stratum]) == pytest.approx(expected, abs=1e-12)


def test_several_strata_match_brute_force_enumeration_of_the_conditional_law():
    rng = random.Random(7)
    for _ in range(30):
        strata = []
        for _ in range(rng.randint(1, 4)):
            n0, n1 = rng.randint(1, 4), rng.randint(1, 4)
            strata.append((rng.randint(0, n0), n0, rng.randint(0, n1), n1))
        observed = sum(s[2] for s in strata)
        laws = [stats.hypergeom(n0 + n1, r0 + r1, n1) for r0, n0, r1, n1 in strata]
        supports = [range(0, n1 + 1) for _, _, _, n1 in strata]
        brute = sum(
            float(math.prod(law.pmf(k) for law, k in zip(laws, combo)))
            for combo in itertools.product(*supports) if sum(combo) <= observed
        )
        assert stratified_lower_p(strata) == pytest.approx(min(1.0, brute), abs=1e-9)


def test_a_null_stratified_test_is_not_anticonservative():
    # Both conditions route right with the same chance per query: claims at most 5%.
    rng = random.Random(11)
    claims = 0
    reps = 2000
    for _ in range(reps):
        strata = []
        for _ in range(5):
            p = rng.choice([0.5, 0.8, 0.95])
            strata.append((sum(rng.random() < p for _ in range(3)), 3, sum(rng.random() < p for _ in range(3)), 3))
        claims += stratified_lower_p(strata) <= 0.05
    assert claims / reps <= 0.05


def test_benjamini_hochberg_matches_scipy():
    rng = random.Random(3)
    for _ in range(20):
        ps = [rng.random() ** 3 for _ in range(rng.randint(1, 12))]
        assert benjamini_hochberg(ps) == pytest.approx(list(stats.false_discovery_control(ps)), abs=1e-12)


def _trial(query: str, arm: str, *loaded: str, error: str | None = None) -> TriggerTrial:
    return TriggerTrial(query, 0, arm, "x", loaded=tuple(loaded), error=error)


def test_a_steal_is_named_and_a_query_the_candidate_never_took_is_not():
    queries = [RoutedQuery(f"cl/{i}", f"q{i}", "t", "changelog", "changelog", "changelog") for i in range(4)]
    queries += [RoutedQuery(n, n, "t", "notes", NOT_CANDIDATE, None) for n in ("own", "own2")]
    trials = []
    for q in queries[:4]:
        for _ in range(4):
            trials.append(_trial(q.name, "baseline", "changelog"))
            trials.append(_trial(q.name, "candidate", "notes" if q.name in ("cl/0", "cl/1") else "changelog"))
    trials += [_trial("own", "baseline"), _trial("own", "candidate", "notes", "changelog"),
               _trial("own2", "baseline", "changelog"), _trial("own2", "candidate", "changelog")]
    routes = agent_routes(agent="mock", model=None, candidate="notes", catalogue=["changelog"], original=None,
                          queries=queries, trials=trials)
    [steal] = routes.steals
    assert steal.significant and steal.taken_queries == ("cl/0", "cl/1")
    assert routes.stolen_queries == ("cl/0", "cl/1")
    assert steal.catalogue_right == 16 and steal.candidate_right == 8
    # The candidate's own query loaded two skills: counted as several, not as right.
    assert routes.several_loaded_queries == ("own",) and routes.own_accuracy.value == 0.0
    # Lost: an own query that went to a catalogue skill alone (not one loaded beside the candidate).
    assert [(t.skill, t.queries) for t in routes.lost_to] == [("changelog", ("own2",))]
    cells = {(c.expected, c.routed): c.trials for c in routes.candidate.matrix}
    assert cells[("changelog", "notes")] == 8 and cells[("notes", MULTIPLE)] == 1
    assert {(c.expected, c.routed) for c in routes.catalogue.matrix} >= {(NOT_CANDIDATE, NONE)}


def test_trials_that_errored_before_loading_are_left_out_not_counted_as_wrong():
    queries = [RoutedQuery(f"cl/{i}", f"q{i}", "t", "changelog", "changelog", "changelog") for i in range(3)]
    trials = []
    for q in queries:
        for _ in range(3):
            trials.append(_trial(q.name, "baseline", "changelog"))
            trials.append(_trial(q.name, "candidate", error="provider: 529 overloaded"))
    routes = agent_routes(agent="mock", model=None, candidate="notes", catalogue=["changelog"], original=None,
                          queries=queries, trials=trials)
    assert routes.candidate.errors == 9 and routes.steals == () and routes.stolen_queries == ()
    assert routes.candidate.accuracy.value is None
