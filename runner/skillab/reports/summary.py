"""The results document as a pure function of the run's settings and its per-case records.

A live run, ``skillab merge`` and anything that re-reads a document (``report``, ``--resume``)
build the document here, so the aggregate, verdict and statistics of a merged or re-read run are
computed exactly as a single run computes them: ``summarize(*read_run(doc)) == doc``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..agents.base import Usage
from ..formats.ruby_bench.dimensions import criteria_verdicts
from ..formats.skillsbench.verifier import mean_rewards
from ..records import OUTCOMES, ArmRecord, CaseRecord
from ..scoring import aggregate, compute_verdict, run_verdict
from ..scoring.pass_at_k import run_summary
from ..scoring.power import DEFAULT_TARGET_LIFT_PTS
from ..scoring.statistics import paired_statistics

FORMAT = "skillab.results/1"


@dataclass(frozen=True)
class RunSettings:
    """Everything a results document holds that is not derived from its per-case records."""

    tool_version: str
    suite: dict[str, Any]
    adapter: dict[str, Any]
    models: dict[str, Any]
    isolation: dict[str, Any]
    runs: int
    pass_k: int
    trigger_only: tuple[str, ...]
    cache_enabled: bool
    cache_hits: int
    cache_arms: int
    # The judge's own tokens, when its transport counts them (model judges do; the mock does not).
    judge_usage: Usage | None
    started_at: datetime
    finished_at: datetime
    interrupted: bool = False
    # A checkpoint: the statistics wait for the final document.
    partial: bool = False
    warnings: tuple[str, ...] = ()
    # Where the ``--against`` skill came from (``OriginalSkill.to_dict``); None for two arms.
    original: dict[str, Any] | None = None
    trend: dict[str, Any] | None = None
    # ``ShardPlan.marker`` of a ``--shard I/N`` run; None for a whole run.
    shard: dict[str, Any] | None = None
    # Attempts per arm for pass@k, when the run estimates it (``--pass-k``/``--pass-n``).
    pass_n: int | None = None
    # The lift the power statement sizes the suite for (``--target-lift-pts``).
    target_lift_pts: float = DEFAULT_TARGET_LIFT_PTS
    # The judge's consistency check (``engine.consistency``); None without judged verdicts.
    judge_consistency: dict[str, Any] | None = None
    # (case, run) records the run set out to produce (None: as many as finished).
    planned_cases: int | None = None
    # Why a run stopped before its plan was done, other than Ctrl-C (the cost cap).
    stopped: str | None = None
    # The trigger trials' block (``engine.trigger``); None when the suite has no trigger queries.
    triggers: dict[str, Any] | None = None


def summarize(settings: RunSettings, records: list[CaseRecord]) -> dict[str, Any]:
    """The results document of ``records`` (suite order) run with ``settings``."""
    agg = aggregate(records)
    outcomes = [r.outcome for r in records]
    doc: dict[str, Any] = {
        "format": FORMAT,
        "tool": {"name": "skillab", "version": settings.tool_version},
        "suite": dict(settings.suite),
        "adapter": dict(settings.adapter),
        "models": dict(settings.models),
        "isolation": dict(settings.isolation),
        "runs": settings.runs,
        "pass_k": settings.pass_k,
    }
    if settings.pass_n is not None:
        doc["pass_n"] = settings.pass_n
    if settings.shard is not None:
        doc["shard"] = dict(settings.shard)
    doc.update(agg.to_dict())
    # Trigger-only cases are skipped by the A/B part; they run as trigger trials when any ran.
    doc["cases_skipped_trigger_only"] = 0 if settings.triggers else len(settings.trigger_only)
    # An interrupted run reports the verdict of what finished; `interrupted` says it is partial.
    doc["verdict"] = run_verdict(agg, outcomes)
    doc["verdict_classified"] = compute_verdict(outcomes)
    counts = Counter(outcomes)
    doc["outcome_counts"] = {o: counts.get(o, 0) for o in OUTCOMES}
    withheld = _judge_withheld(settings.judge_consistency)
    doc["statistics"] = None if settings.partial else paired_statistics(
        records, target_lift_pts=settings.target_lift_pts, withheld=withheld).to_dict()
    doc["judge_consistency"] = settings.judge_consistency
    doc["cache"] = {
        "enabled": settings.cache_enabled,
        "hits": settings.cache_hits,
        "arms": settings.cache_arms,
    }
    doc["usage"] = _usage(records, settings.judge_usage)
    doc["timings"] = {
        "started_at": settings.started_at.isoformat(),
        "finished_at": settings.finished_at.isoformat(),
        "wall_ms": int((settings.finished_at - settings.started_at).total_seconds() * 1000),
    }
    doc["interrupted"] = settings.interrupted
    doc["planned_cases"] = settings.planned_cases if settings.planned_cases is not None else len(records)
    doc["stopped"] = settings.stopped
    doc["activation"] = _activation(records)
    doc["contaminated_arms"] = sum(r.without_skill.contaminated for r in records)
    doc["warnings"] = list(settings.warnings)
    doc["trigger_only_cases"] = list(settings.trigger_only)
    doc["triggers"] = settings.triggers
    # ruby-skill-bench's own per-case rule, beside the A/B outcome (None for other formats).
    cases = [r.to_dict() for r in records]
    criteria = criteria_verdicts(cases)
    doc["criteria"] = [c.to_dict() for c in criteria] or None
    doc["pass_at_k"] = run_summary(cases, settings.pass_k) if settings.pass_n is not None else None
    doc["comparison"] = _comparison(records, settings)
    doc["trend"] = settings.trend
    doc["cases"] = cases
    # Verifier formats (SkillsBench, Harbor): the mean fractional reward per arm.
    rewards = mean_rewards(cases)
    if rewards is not None:
        doc["reward"] = rewards
    return doc


def read_run(doc: dict[str, Any]) -> tuple[RunSettings, list[CaseRecord]]:
    """The settings and records a results document was summarized from."""
    judge = doc["usage"].get("judge")
    timings = doc["timings"]
    comparison = doc.get("comparison")
    settings = RunSettings(
        tool_version=doc["tool"]["version"],
        suite=dict(doc["suite"]),
        adapter=dict(doc["adapter"]),
        models=dict(doc["models"]),
        isolation=dict(doc["isolation"]),
        runs=int(doc["runs"]),
        pass_k=int(doc.get("pass_k", 1)),
        trigger_only=tuple(doc.get("trigger_only_cases") or ()),
        cache_enabled=bool(doc["cache"]["enabled"]),
        cache_hits=int(doc["cache"]["hits"]),
        cache_arms=int(doc["cache"]["arms"]),
        judge_usage=None if judge is None else Usage.from_dict(judge),
        started_at=datetime.fromisoformat(timings["started_at"]),
        finished_at=datetime.fromisoformat(timings["finished_at"]),
        interrupted=bool(doc.get("interrupted")),
        partial=doc.get("statistics") is None and bool(doc.get("interrupted")),
        warnings=tuple(doc.get("warnings") or ()),
        original=None if not comparison else dict(comparison["original"]),
        trend=doc.get("trend"),
        shard=doc.get("shard"),
        pass_n=doc.get("pass_n"),
        target_lift_pts=_target_lift_pts(doc),
        judge_consistency=doc.get("judge_consistency"),
        planned_cases=doc.get("planned_cases"),
        stopped=doc.get("stopped"),
        triggers=doc.get("triggers"),
    )
    return settings, [case_record(c) for c in doc["cases"]]


def _target_lift_pts(doc: dict[str, Any]) -> float:
    """The ``--target-lift-pts`` a document was summarized with. It shows only in a power
    statement, so a shard (which may have none) records it in its marker; a document with no
    power statement anywhere was summarized the same whatever it was."""
    marked = (doc.get("shard") or {}).get("target_lift_pts")
    if marked is not None:
        return float(marked)
    for stats in (doc.get("statistics"), (doc.get("comparison") or {}).get("statistics")):
        power = (stats or {}).get("power")
        if power:
            return float(power["target_lift_pts"])
    return DEFAULT_TARGET_LIFT_PTS


def _judge_withheld(check: dict[str, Any] | None) -> str | None:
    if not check or not check.get("lift_withheld"):
        return None
    return (f"the judge agreed with itself on only {check['agreed']} of {check['sampled'] - check['errored']} "
            f"re-asked verdicts (below {check['floor']:.0%}): no statistic is reported")


def case_record(data: dict[str, Any]) -> CaseRecord:
    """A ``CaseRecord`` read back from its ``to_dict`` form."""
    original = data.get("original")
    return CaseRecord(
        case_name=data["case_name"],
        outcome=data["outcome"],
        with_skill=ArmRecord.from_dict(data["with_skill"]),
        without_skill=ArmRecord.from_dict(data["without_skill"]),
        run_index=int(data.get("run_index", 0)),
        tags=tuple(data.get("tags") or ()),
        original=None if original is None else ArmRecord.from_dict(original),
        original_outcome=data.get("original_outcome"),
        error=data.get("error"),
    )


def _comparison(records: list[CaseRecord], settings: RunSettings) -> dict[str, Any] | None:
    """Candidate vs original (``--against``): the run's own aggregate and statistics, with the
    original skill standing in for the without-skill arm. The headline lift is untouched."""
    if settings.original is None:
        return None
    pairs = [versus_original(r) for r in records if r.original is not None or r.error]
    agg = aggregate(pairs)
    counts = Counter(p.outcome for p in pairs)
    stats = None
    if not settings.partial:
        # The same statistics, about the edit rather than the skill as a whole.
        stats = paired_statistics(pairs, subject="the edit",
                                  target_lift_pts=settings.target_lift_pts).to_dict()
    return {
        "original": dict(settings.original),
        "pass_rate": {
            "candidate": agg.pass_rate.with_skill,
            "original": agg.pass_rate.without_skill,
            "delta_pts": agg.pass_rate.delta_pts,
        },
        "broken_by_edit": _case_names(pairs, "flip_to_fail"),
        "rescued_by_edit": _case_names(pairs, "flip_to_pass"),
        "outcome_counts": {o: counts.get(o, 0) for o in OUTCOMES},
        "errors": agg.errors,
        "error_dominated": agg.error_dominated,
        "cases_aggregated": agg.cases_aggregated,
        "efficiency": {
            dim: None if delta is None else {
                "candidate_avg": delta.with_skill_avg,
                "original_avg": delta.without_skill_avg,
                "delta_pct": delta.delta_pct,
            }
            for dim, delta in (("duration_ms", agg.duration_ms), ("turns", agg.turns),
                               ("tokens", agg.tokens), ("tool_calls", agg.tool_calls))
        },
        "statistics": stats,
    }


def versus_original(record: CaseRecord) -> CaseRecord:
    """The record as a candidate-vs-original pair, so aggregation and statistics apply as-is."""
    return CaseRecord(
        case_name=record.case_name,
        outcome=record.original_outcome or "error",
        with_skill=record.with_skill,
        without_skill=record.original or ArmRecord(passed=False, errored=True),
        run_index=record.run_index,
        tags=record.tags,
        error=record.error,
    )


def _case_names(records: list[CaseRecord], outcome: str) -> list[str]:
    """Names of the cases with ``outcome`` in at least one run, in suite order."""
    return list(dict.fromkeys(r.case_name for r in records if r.outcome == outcome))


def _usage(records: list[CaseRecord], judged: Usage | None) -> dict[str, Any]:
    def total(arm: str) -> Usage:
        acc = Usage()
        for record in records:
            arm_record = getattr(record, arm)
            if arm_record is not None and not arm_record.cached:
                acc = acc.add(arm_record.usage)
        return acc

    with_skill, without_skill = total("with_skill"), total("without_skill")
    has_original = any(r.original is not None for r in records)
    original = total("original") if has_original else None
    grand = with_skill.add(without_skill)
    for extra in (original, judged):
        if extra is not None:
            grand = grand.add(extra)
    return {
        "with_skill": with_skill.to_dict(),
        "without_skill": without_skill.to_dict(),
        "original": original.to_dict() if original is not None else None,
        "judge": judged.to_dict() if judged is not None else None,
        # Cached baselines cost nothing in this run, so they are left out of the totals.
        "total": grand.to_dict(),
    }


def _activation(records: list[CaseRecord]) -> dict[str, float | None] | None:
    """Share of arms that opened SKILL.md, for adapters that report it (discover mode)."""

    def rate(arm: str) -> float | None:
        flags = [
            getattr(r, arm).skill_activated
            for r in records
            if getattr(r, arm) is not None and getattr(r, arm).skill_activated is not None
        ]
        return round(sum(flags) / len(flags), 4) if flags else None

    result = {"with_skill": rate("with_skill"), "original": rate("original")}
    return result if any(v is not None for v in result.values()) else None
