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

    def to_dict(self) -> dict[str, Any]:
        out = self.query.to_dict()
        out.update({
            "rate": _r(self.counts.rate),
            "triggered": self.counts.triggered,
            "trials": self.counts.trials,
            "errors": self.errors,
            "taken_by": dict(self.taken_by),
            "verdict": _verdict(self.counts),
        })
        if self.original is not None:
            out["original"] = {"rate": _r(self.original.rate), "triggered": self.original.triggered,
                               "trials": self.original.trials}
        if self.baseline is not None:
            out["owner_rate_without_skill"] = _r(self.baseline.rate)
        return out


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
                  interrupted: bool = False, warnings: Sequence[str] = ()) -> dict[str, Any]:
    results = query_results(plan, trials)
    metrics = trigger_metrics([r.counts for r in results])
    block: dict[str, Any] = {
        "format": FORMAT,
        "skill": plan.skill.name,
        "runs": plan.runs,
        "sources": sorted({r.query.source for r in results}),
        "query_count": {"should_trigger": sum(r.query.should_trigger for r in results),
                        "should_not_trigger": sum(not r.query.should_trigger for r in results)},
        "trials": sum(r.counts.trials + r.errors for r in results),
        "baseline_trials": sum(t.arm == "baseline" for t in trials),
        "errors": sum(r.errors for r in results),
        "metrics": metrics.to_dict(),
        "false_triggers": _worst(results, should_trigger=False),
        "misses": _worst(results, should_trigger=True),
        "queries": [r.to_dict() for r in results],
        "crowd": _crowd(plan, results, listing, warnings),
        "comparison": _comparison(results, original_label) if plan.original is not None else None,
        "usage": _usage(trials),
        # Every trial: which skills the agent loaded (the evidence behind each rate).
        "trial_records": [t.to_dict() for t in trials],
        "interrupted": interrupted,
    }
    return block


def _worst(results: list[QueryResult], *, should_trigger: bool) -> list[dict[str, Any]]:
    """False triggers (rate above 0 on should-not) or misses (below 1 on should), worst first."""
    picked = [r for r in results if r.query.should_trigger == should_trigger and r.counts.rate is not None
              and (r.counts.rate < 1 if should_trigger else r.counts.rate > 0)]
    picked.sort(key=lambda r: ((r.counts.rate or 0) if should_trigger else -(r.counts.rate or 0)))
    return [{"name": r.query.name, "query": r.query.query, "rate": _r(r.counts.rate),
             "owner": r.query.owner, "taken_by": dict(r.taken_by)} for r in picked]


def _crowd(plan: TriggerPlan, results: list[QueryResult], listing: dict[str, Any] | None,
           warnings: Sequence[str]) -> dict[str, Any] | None:
    if not plan.siblings and listing is None and not warnings:
        return None
    stolen = [{"name": r.query.name, "query": r.query.query, "meant_for": r.query.owner,
               "rate": _r(r.counts.rate), "owner_rate": _owner_rate(r),
               "owner_rate_without_skill": _r(r.baseline.rate) if r.baseline else None}
              for r in results if r.query.owner and (r.counts.rate or 0) > 0]
    lost = [{"name": r.query.name, "query": r.query.query, "taken_by": dict(r.taken_by),
             "rate": _r(r.counts.rate)}
            for r in results if r.query.should_trigger and not r.query.owner and r.taken_by]
    return {
        "siblings": [s.name for s in plan.siblings],
        "stolen_from_siblings": stolen,
        "lost_to_siblings": lost,
        "listing": listing,
        "warnings": list(warnings),
    }


def _owner_rate(result: QueryResult) -> float | None:
    """How often the sibling the query is meant for was loaded, over the query's trials that
    ran (as its rate is): a provider error is not the owner losing the query."""
    trials = result.counts.trials
    return _r((result.loaded or {}).get(result.query.owner or "", 0) / trials) if trials else None


def _comparison(results: list[QueryResult], label: str | None) -> dict[str, Any]:
    def pairs(should: bool) -> list[tuple[QueryCounts, QueryCounts]]:
        return [(r.counts, r.original) for r in results
                if r.query.should_trigger == should and r.original is not None]

    changed = [{"name": r.query.name, "query": r.query.query, "should_trigger": r.query.should_trigger,
                "candidate": _r(r.counts.rate), "original": _r(r.original.rate)}
               for r in results if r.original is not None and None not in (r.counts.rate, r.original.rate)
               and r.counts.rate != r.original.rate]
    original_metrics = trigger_metrics([r.original for r in results if r.original is not None])
    return {
        "original": label,
        "recall": rate_change(pairs(True)).to_dict(),
        "false_trigger_rate": rate_change(pairs(False)).to_dict(),
        "original_metrics": original_metrics.to_dict(),
        # The original's trials that failed without loading it: left out of its rates.
        "original_errors": sum(r.original_errors for r in results),
        "changed_queries": changed,
    }


def _usage(trials: Sequence[TriggerTrial]) -> dict[str, Any]:
    from ..core.usage import Usage

    total = Usage()
    for trial in trials:
        total = total.add(trial.usage)
    return total.to_dict()


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
