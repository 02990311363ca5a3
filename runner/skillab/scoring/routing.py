"""The routing diff of one agent: where each labelled query went with the catalogue alone and with
the candidate added, and what the candidate steals and loses, with error control.

A trial's *route* is the one skill the agent loaded, ``(none)``, or ``(several)``. A query is
routed right when the agent loaded exactly the skill it is labelled for (or, for a query labelled
"should not load the candidate" naming no other skill, anything but the candidate).

**Steals.** Two exact one-sided tests look at a catalogue skill's own queries, and the pair's
p-value is twice the smaller (Bonferroni over the two, so valid whichever fires):

- *the drop*: are its queries routed right less often once the candidate is listed? Within each
  query (a stratum) the right routes among its trials with the candidate are hypergeometric given
  the query's right routes in both conditions, under the null that listing the candidate changes
  nothing for it; the sum over the skill's queries is the statistic and its exact lower tail the
  p-value (the exact, stratified form of the Cochran-Mantel-Haenszel test). Strong with several
  runs per query, whatever the catalogue's size;
- *the taking*: does the candidate take its queries more often than the rest of the catalogue's?
  The one-sided Fisher test of the skill's queries against every other catalogue query, a query
  counting as taken when the candidate was loaded in any of its trials. The query is the unit: an
  ambiguous query taken in every run is one taken query, not N. Strong in a large catalogue, where
  the rest shows what the agent's noise alone gives the candidate.

A query posed N times is N trials of the same request: both tests keep queries apart. The p-values
of every pair of one agent are adjusted by Benjamini-Hochberg; a pair is named when its adjusted p
is at most 5% and the candidate took some of its queries.

**Loses** (``--against``): the candidate's own queries, routed to the original with the original
listed and to the candidate with the candidate listed, by the drop test above. It joins the
steals in the adjustment.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.routing import (
    MULTIPLE,
    NONE,
    NOT_CANDIDATE,
    AgentRoutes,
    ConditionSummary,
    PairTest,
    QueryRoute,
    RouteCell,
    Taken,
)
from ..core.usage import Usage, sum_usage
from ..suite.trigger_plan import TriggerTrial
from .trigger import clustered_rate

FDR = 0.05


@dataclass(frozen=True)
class RoutedQuery:
    """A query of the routing design and the skill it should go to in each condition."""

    name: str
    query: str
    source: str
    # The skill it is labelled for with the candidate listed (NOT_CANDIDATE: anything else).
    expected: str
    # The same with the catalogue alone (the original's name for the candidate's own queries
    # under ``--against``; NOT_CANDIDATE where the candidate is meant and nothing stands in).
    expected_before: str
    # The catalogue skill it belongs to, or None for the candidate's own queries.
    owner: str | None


def route_of(loaded: Sequence[str]) -> str:
    if not loaded:
        return NONE
    return loaded[0] if len(set(loaded)) == 1 else MULTIPLE


def is_right(trial: TriggerTrial, expected: str, candidate: str) -> bool:
    if expected == NOT_CANDIDATE:
        return candidate not in trial.loaded
    return set(trial.loaded) == {expected}


def measured(trial: TriggerTrial) -> bool:
    """A trial that failed before loading anything says nothing about where the query goes."""
    return not (trial.error and not trial.loaded)


def stratified_lower_p(strata: Sequence[tuple[int, int, int, int]]) -> float:
    """Exact one-sided p that the second condition routes right less often: strata of
    ``(right_before, trials_before, right_after, trials_after)``; the lower tail of the sum of
    the strata's conditional hypergeometric counts (see the module doc)."""
    dist = [1.0]
    observed = 0
    for r0, n0, r1, n1 in strata:
        if n0 == 0 or n1 == 0:
            continue
        observed += r1
        dist = _convolve(dist, _hypergeometric(n0 + n1, r0 + r1, n1))
    return min(1.0, sum(dist[: observed + 1]))


def _hypergeometric(total: int, right: int, draws: int) -> list[float]:
    """P(k right among ``draws`` of ``total`` trials, ``right`` of them right), k = 0..draws."""
    log_all = _log_comb(total, draws)
    return [math.exp(_log_comb(right, k) + _log_comb(total - right, draws - k) - log_all)
            if 0 <= draws - k <= total - right and k <= right else 0.0
            for k in range(draws + 1)]


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _convolve(a: Sequence[float], b: Sequence[float]) -> list[float]:
    out = [0.0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values, in the order given."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p_values[i] * m / rank)
        adjusted[i] = min(1.0, running)
    return adjusted


def taken_upper_p(taken: int, queries: int, taken_total: int, queries_total: int) -> float:
    """One-sided Fisher p that one skill's queries are taken more often than the catalogue's
    (the upper tail of the hypergeometric count of its taken queries)."""
    law = _hypergeometric(queries_total, taken_total, queries)
    return min(1.0, sum(law[taken:]))


@dataclass(frozen=True)
class _Pair:
    skill: str
    direction: str
    strata: tuple[tuple[int, int, int, int], ...]
    taken: int
    taken_queries: tuple[str, ...]
    # Steals: (its taken queries, its queries) against the catalogue's; loses: None.
    share: tuple[int, int] | None = None

    def p_value(self, taken_total: int, queries_total: int) -> float:
        drop = stratified_lower_p(self.strata)
        if self.share is None:
            return drop
        return min(1.0, 2 * min(drop, taken_upper_p(*self.share, taken_total, queries_total)))


def agent_routes(
    *,
    agent: str,
    model: str | None,
    candidate: str,
    catalogue: Sequence[str],
    original: str | None,
    queries: Sequence[RoutedQuery],
    trials: Sequence[TriggerTrial],
    listing: Mapping[str, Any] | None = None,
) -> AgentRoutes:
    """One agent's routing diff from its trials (``arm`` "candidate" with the candidate listed,
    any other arm with the catalogue alone or beside the original)."""
    before: dict[str, list[TriggerTrial]] = defaultdict(list)
    after: dict[str, list[TriggerTrial]] = defaultdict(list)
    for t in trials:
        (after if t.arm == "candidate" else before)[t.query].append(t)
    by_name = {q.name: q for q in queries}

    pairs = [_steal_pair(skill, [q for q in queries if q.owner == skill], before, after, candidate)
             for skill in catalogue]
    pairs = [p for p in pairs if p.strata]
    taken_total = sum(p.share[0] for p in pairs if p.share)
    queries_total = sum(p.share[1] for p in pairs if p.share)
    own = [q for q in queries if q.owner is None and q.expected == candidate]
    if original is not None and own:
        pairs.append(_lose_pair(original, own, before, after, candidate))
    p_values = [p.p_value(taken_total, queries_total) for p in pairs]
    adjusted = benjamini_hochberg(p_values) if pairs else []
    tests = [_pair_test(p, raw, adj) for p, raw, adj in zip(pairs, p_values, adjusted)]
    steals = tuple(t for t in tests if t.direction == "steals")
    loses = next((t for t in tests if t.direction == "loses"), None)

    listed_before = tuple(sorted({*catalogue, *([original] if original else [])}))
    listed_after = tuple(sorted({*catalogue, candidate}))
    return AgentRoutes(
        agent=agent,
        model=model,
        catalogue=_condition("catalogue" + (" + original" if original else ""), listed_before, queries,
                             before, candidate, expected_before=True),
        candidate=_condition("catalogue + candidate", listed_after, queries, after, candidate,
                             expected_before=False),
        own_accuracy=_accuracy([(q, after[q.name]) for q in own if q.expected == candidate], candidate),
        now_routed_to_candidate=tuple(q.name for q in queries if _mostly(after[q.name], candidate)),
        stolen_queries=tuple(dict.fromkeys(n for t in steals if t.significant for n in t.taken_queries)),
        steals=steals,
        lost_to=_lost_to(own, after, candidate),
        loses=loses,
        several_loaded_queries=tuple(q.name for q in queries
                                     if any(route_of(t.loaded) == MULTIPLE
                                            for t in (*before[q.name], *after[q.name]))),
        queries=tuple(_query_route(by_name[name], before[name], after[name]) for name in by_name),
        listing=dict(listing) if listing is not None else None,
        usage=sum_usage(t.usage for t in trials) if trials else Usage(),
    )


def _steal_pair(skill: str, owned: Sequence[RoutedQuery], before: Mapping[str, list[TriggerTrial]],
                after: Mapping[str, list[TriggerTrial]], candidate: str) -> _Pair:
    """A catalogue skill's own queries: right is that skill; taken, the candidate loaded."""
    strata, taken = _strata(owned, before, after, lambda q, t: is_right(t, skill, candidate),
                            lambda q, t: is_right(t, skill, candidate), lambda t: candidate in t.loaded)
    return _Pair(skill, "steals", strata, sum(taken.values()), tuple(taken),
                 share=(len(taken), len(strata)))


def _lose_pair(original: str, own: Sequence[RoutedQuery], before: Mapping[str, list[TriggerTrial]],
               after: Mapping[str, list[TriggerTrial]], candidate: str) -> _Pair:
    """The candidate's own queries: right is the original before, the candidate after."""
    strata, missed = _strata(own, before, after, lambda q, t: is_right(t, q.expected_before, candidate),
                             lambda q, t: is_right(t, candidate, candidate),
                             lambda t: not is_right(t, candidate, candidate))
    return _Pair(original, "loses", strata, sum(missed.values()), tuple(missed))


def _strata(queries: Sequence[RoutedQuery], before: Mapping[str, list[TriggerTrial]],
            after: Mapping[str, list[TriggerTrial]],
            right_before: Callable[[RoutedQuery, TriggerTrial], bool],
            right_after: Callable[[RoutedQuery, TriggerTrial], bool],
            counted: Callable[[TriggerTrial], bool]) -> tuple[tuple[tuple[int, int, int, int], ...], dict[str, int]]:
    """Per query with measured trials in both conditions, (right before, trials before, right
    after, trials after); and per query, the after-trials ``counted`` holds for (where nonzero)."""
    strata = []
    hits: dict[str, int] = {}
    for q in queries:
        b = [t for t in before[q.name] if measured(t)]
        a = [t for t in after[q.name] if measured(t)]
        strata.append((sum(right_before(q, t) for t in b), len(b), sum(right_after(q, t) for t in a), len(a)))
        if n := sum(counted(t) for t in a):
            hits[q.name] = n
    return tuple(s for s in strata if s[1] and s[3]), hits


def _pair_test(pair: _Pair, p: float, adjusted: float) -> PairTest:
    return PairTest(
        skill=pair.skill,
        direction="steals" if pair.direction == "steals" else "loses",
        queries=len(pair.strata),
        catalogue_right=sum(s[0] for s in pair.strata),
        catalogue_trials=sum(s[1] for s in pair.strata),
        candidate_right=sum(s[2] for s in pair.strata),
        candidate_trials=sum(s[3] for s in pair.strata),
        taken=pair.taken,
        taken_queries=pair.taken_queries,
        p_value=round(p, 6),
        p_adjusted=round(adjusted, 6),
        significant=adjusted <= FDR and pair.taken > 0,
    )


def _condition(label: str, skills: tuple[str, ...], queries: Sequence[RoutedQuery],
               trials: Mapping[str, list[TriggerTrial]], candidate: str, *, expected_before: bool) -> ConditionSummary:
    cells: Counter[tuple[str, str]] = Counter()
    errors = several = total = 0
    graded = []
    for q in queries:
        expected = q.expected_before if expected_before else q.expected
        ran = trials[q.name]
        total += len(ran)
        errors += sum(not measured(t) for t in ran)
        kept = [t for t in ran if measured(t)]
        several += sum(route_of(t.loaded) == MULTIPLE for t in kept)
        for t in kept:
            cells[(expected, route_of(t.loaded))] += 1
        graded.append((q, kept, expected))
    accuracy = clustered_rate([(sum(is_right(t, e, candidate) for t in kept), len(kept))
                               for _, kept, e in graded]).rounded()
    return ConditionSummary(
        label=label,
        skills=skills,
        trials=total,
        errors=errors,
        several_loaded=several,
        accuracy=accuracy,
        matrix=tuple(RouteCell(e, r, n) for (e, r), n in sorted(cells.items())),
    )


def _accuracy(own: Sequence[tuple[RoutedQuery, list[TriggerTrial]]], candidate: str) -> Any:
    clusters = []
    for _, ran in own:
        kept = [t for t in ran if measured(t)]
        clusters.append((sum(is_right(t, candidate, candidate) for t in kept), len(kept)))
    return clustered_rate(clusters).rounded()


def _mostly(trials: Sequence[TriggerTrial], candidate: str) -> bool:
    kept = [t for t in trials if measured(t)]
    return bool(kept) and 2 * sum(set(t.loaded) == {candidate} for t in kept) > len(kept)


def _lost_to(own: Sequence[RoutedQuery], after: Mapping[str, list[TriggerTrial]], candidate: str) -> tuple[Taken, ...]:
    trials: Counter[str] = Counter()
    names: dict[str, list[str]] = defaultdict(list)
    for q in own:
        for t in after[q.name]:
            if candidate in t.loaded:
                continue
            for skill in dict.fromkeys(t.loaded):
                trials[skill] += 1
                if q.name not in names[skill]:
                    names[skill].append(q.name)
    return tuple(Taken(s, n, tuple(names[s])) for s, n in trials.most_common())


def _query_route(q: RoutedQuery, before: Sequence[TriggerTrial], after: Sequence[TriggerTrial]) -> QueryRoute:
    def routes(trials: Sequence[TriggerTrial]) -> dict[str, int]:
        return dict(Counter(route_of(t.loaded) for t in trials if measured(t)).most_common())

    return QueryRoute(
        name=q.name,
        query=q.query,
        expected=q.expected,
        source=q.source,
        catalogue=routes(before),
        candidate=routes(after),
        errors=sum(not measured(t) for t in (*before, *after)),
    )
