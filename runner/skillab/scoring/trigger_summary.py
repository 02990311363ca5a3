"""The ``triggers`` block of the results document, from the queries and their trials.

Per query: how often the skill under test was loaded over its trials, and what else was loaded
instead. Over the set: recall, false-trigger rate, precision and F1 with intervals (see
``scoring.trigger``). False triggers and misses are listed first, worst first. In crowd mode,
queries meant for a sibling that the skill takes, and its own queries a sibling took. With an
original skill (``--against``), both descriptions' rates and the change with its test.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.triggers import (
    ChangedQuery,
    Crowd,
    LostQuery,
    QueryCount,
    QueryMiss,
    QueryOutcome,
    QueryRate,
    StolenQuery,
    TriggerBlock,
    TriggerComparison,
    TriggerTrialRecord,
)
from ..core.usage import sum_usage
from ..core.wire import UNSET
from .trigger import QueryCounts, rate_change, trigger_metrics

if TYPE_CHECKING:
    from ..suite.trigger import TriggerQuery
    from ..suite.trigger_plan import TriggerPlan, TriggerTrial

FORMAT = "skillab.triggers/1"


@dataclass(frozen=True)
class QueryResult:
    query: TriggerQuery
    counts: QueryCounts
    errors: int
    # Other skills loaded in trials where the skill under test was not.
    taken_by: dict[str, int]
    original: QueryCounts | None = None
    original_errors: int = 0
    # A sibling's query posed to the siblings alone: how often its owner took it then.
    baseline: QueryCounts | None = None
    # Every skill loaded over the query's candidate trials that count (``counts.trials``: an
    # errored trial that loaded nothing says nothing), and in how many.
    loaded: dict[str, int] | None = None

    def outcome(self) -> QueryOutcome:
        q, counts, original = self.query, self.counts, self.original
        return QueryOutcome(
            name=q.name, query=q.query, should_trigger=q.should_trigger, source=q.source, line=q.line,
            owner=q.owner, rate=_r(counts.rate), triggered=counts.triggered, trials=counts.trials,
            errors=self.errors, taken_by=dict(self.taken_by), verdict=_verdict(counts),
            original=None if original is None else QueryRate(_r(original.rate), original.triggered, original.trials),
            owner_rate_without_skill=UNSET if self.baseline is None else _r(self.baseline.rate),
        )


def _verdict(counts: QueryCounts) -> str:
    rate = counts.rate
    if rate is None:
        return "error"
    if counts.should_trigger:
        return "ok" if rate == 1 else ("missed" if rate == 0 else "flaky")
    return "ok" if rate == 0 else ("false_trigger" if rate == 1 else "flaky")


def query_results(plan: TriggerPlan, trials: Sequence[TriggerTrial]) -> list[QueryResult]:
    results = []
    for query in plan.queries:
        mine = [t for t in trials if t.query == query.name and t.arm == "candidate"]
        theirs = [t for t in trials if t.query == query.name and t.arm == "original"]
        alone = [t for t in trials if t.query == query.name and t.arm == "baseline"]
        taken = Counter(name for t in mine if not t.triggered for name in t.loaded if name != t.skill)
        results.append(QueryResult(
            query=query,
            counts=_counts(query.should_trigger, mine),
            errors=sum(t.triggered is None for t in mine),
            taken_by=dict(taken),
            original=_counts(query.should_trigger, theirs) if plan.original is not None else None,
            original_errors=sum(t.triggered is None for t in theirs),
            baseline=_counts(True, alone) if alone else None,
            loaded=dict(Counter(name for t in mine if t.triggered is not None for name in t.loaded)),
        ))
    return results


def _counts(should_trigger: bool, trials: Sequence[TriggerTrial]) -> QueryCounts:
    known = [t for t in trials if t.triggered is not None]
    return QueryCounts(should_trigger, sum(bool(t.triggered) for t in known), len(known))


def trigger_block(plan: TriggerPlan, trials: Sequence[TriggerTrial], *,
                  listing: dict[str, Any] | None = None, original_label: str | None = None,
                  interrupted: bool = False, warnings: Sequence[str] = ()) -> TriggerBlock:
    results = query_results(plan, trials)
    return TriggerBlock(
        format=FORMAT,
        skill=plan.skill.name,
        runs=plan.runs,
        sources=tuple(sorted({r.query.source for r in results})),
        query_count=QueryCount(sum(r.query.should_trigger for r in results),
                               sum(not r.query.should_trigger for r in results)),
        trials=sum(r.counts.trials + r.errors for r in results),
        baseline_trials=sum(t.arm == "baseline" for t in trials),
        errors=sum(r.errors for r in results),
        metrics=trigger_metrics([r.counts for r in results]).rounded(),
        false_triggers=_worst(results, should_trigger=False),
        misses=_worst(results, should_trigger=True),
        queries=tuple(r.outcome() for r in results),
        crowd=_crowd(plan, results, listing, warnings),
        comparison=_comparison(results, original_label) if plan.original is not None else None,
        usage=sum_usage(t.usage for t in trials),
        # Every trial: which skills the agent loaded (the evidence behind each rate).
        trial_records=tuple(_trial_record(t) for t in trials),
        interrupted=interrupted,
    )


def _trial_record(trial: TriggerTrial) -> TriggerTrialRecord:
    return TriggerTrialRecord(trial.query, trial.run_index, trial.arm, trial.triggered, tuple(trial.loaded),
                              trial.error, trial.duration_ms, trial.usage, trial.transcript)


def _worst(results: list[QueryResult], *, should_trigger: bool) -> tuple[QueryMiss, ...]:
    """False triggers (rate above 0 on should-not) or misses (below 1 on should), worst first."""
    picked = [r for r in results if r.query.should_trigger == should_trigger and r.counts.rate is not None
              and (r.counts.rate < 1 if should_trigger else r.counts.rate > 0)]
    picked.sort(key=lambda r: ((r.counts.rate or 0) if should_trigger else -(r.counts.rate or 0)))
    return tuple(QueryMiss(r.query.name, r.query.query, _r(r.counts.rate), r.query.owner, dict(r.taken_by))
                 for r in picked)


def _crowd(plan: TriggerPlan, results: list[QueryResult], listing: dict[str, Any] | None,
           warnings: Sequence[str]) -> Crowd | None:
    if not plan.siblings and listing is None and not warnings:
        return None
    stolen = tuple(StolenQuery(r.query.name, r.query.query, r.query.owner, _r(r.counts.rate), _owner_rate(r),
                               _r(r.baseline.rate) if r.baseline else None)
                   for r in results if r.query.owner and (r.counts.rate or 0) > 0)
    lost = tuple(LostQuery(r.query.name, r.query.query, dict(r.taken_by), _r(r.counts.rate))
                 for r in results if r.query.should_trigger and not r.query.owner and r.taken_by)
    return Crowd(tuple(s.name for s in plan.siblings), stolen, lost, listing, tuple(warnings))


def _owner_rate(result: QueryResult) -> float | None:
    """How often the sibling the query is meant for was loaded, over the query's trials that
    ran (as its rate is): a provider error is not the owner losing the query."""
    trials = result.counts.trials
    return _r((result.loaded or {}).get(result.query.owner or "", 0) / trials) if trials else None


def _comparison(results: list[QueryResult], label: str | None) -> TriggerComparison:
    def pairs(should: bool) -> list[tuple[QueryCounts, QueryCounts]]:
        return [(r.counts, r.original) for r in results
                if r.query.should_trigger == should and r.original is not None]

    changed = tuple(ChangedQuery(r.query.name, r.query.query, r.query.should_trigger, _r(r.counts.rate),
                                 _r(r.original.rate))
                    for r in results if r.original is not None and None not in (r.counts.rate, r.original.rate)
                    and r.counts.rate != r.original.rate)
    original_metrics = trigger_metrics([r.original for r in results if r.original is not None])
    return TriggerComparison(
        original=label,
        recall=rate_change(pairs(True)),
        false_trigger_rate=rate_change(pairs(False)),
        original_metrics=original_metrics.rounded(),
        # The original's trials that failed without loading it: left out of its rates.
        original_errors=sum(r.original_errors for r in results),
        changed_queries=changed,
    )


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
