"""A run as one typed value: its settings, its per-case records and what scoring derives from
them. The results document (``results.json``, format ``skillab.results/1``) is its JSON form,
read and written here only: ``RunLog.from_json(doc).to_json() == doc``.

``reports.summary.summarize`` computes the derived part (``RunSummary``) from the settings and
the records; this module only holds and serializes it, so the core imports no scoring.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .records import CaseRecord, Verdict
from .usage import Usage

FORMAT = "skillab.results/1"
# The lift the power statement sizes a suite for when the user names none.
DEFAULT_TARGET_LIFT_PTS = 10.0


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
    # What the skill costs in context for this run's agent (``agents.context_budget``).
    context_budget: dict[str, Any] | None = None
    # ``--stop-early``: the design, the seed and order of the cases, and where and why it
    # stopped (``engine.stop_early``); None for a run of every case.
    stop_early: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RunSettings:
        judge = doc["usage"].get("judge")
        timings = doc["timings"]
        comparison = doc.get("comparison")
        return cls(
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
            context_budget=doc.get("context_budget"),
            stop_early=doc.get("stop_early"),
        )


@dataclass(frozen=True)
class RunSummary:
    """What scoring derives from the settings and records (``reports.summary.summarize``).
    The statistics blocks stay in their JSON form: scoring owns their types."""

    # The spec's ``test-run-result`` aggregate (``scoring.RunAggregate.to_dict``), in wire order.
    aggregate: dict[str, Any]
    cases_skipped_trigger_only: int
    verdict: Verdict
    verdict_classified: Verdict
    outcome_counts: dict[str, int]
    statistics: dict[str, Any] | None
    usage: dict[str, Any]
    activation: dict[str, float | None] | None
    contaminated_arms: int
    criteria: list[dict[str, Any]] | None
    pass_at_k: dict[str, Any] | None
    comparison: dict[str, Any] | None
    # Verifier formats only: the mean fractional reward per arm.
    reward: dict[str, Any] | None = None


# Keys of the document that are neither settings nor the aggregate, in wire order.
_HEAD = ("format", "tool", "suite", "adapter", "models", "isolation", "runs", "pass_k", "pass_n", "shard")
_TAIL = ("cases_skipped_trigger_only", "verdict", "verdict_classified", "outcome_counts", "statistics",
         "judge_consistency", "cache", "usage", "timings", "interrupted", "planned_cases", "stopped",
         "stop_early", "activation", "contaminated_arms", "warnings", "trigger_only_cases", "triggers", "criteria",
         "pass_at_k", "comparison", "trend", "cases", "reward", "context_budget")


@dataclass(frozen=True)
class RunLog:
    """One suite's run: settings, records in suite order, and their summary."""

    settings: RunSettings
    records: list[CaseRecord]
    summary: RunSummary

    @property
    def verdict(self) -> Verdict:
        return self.summary.verdict

    @property
    def interrupted(self) -> bool:
        return self.settings.interrupted

    @property
    def stopped(self) -> str | None:
        return self.settings.stopped

    def to_json(self) -> dict[str, Any]:
        """The results document."""
        s, d = self.settings, self.summary
        doc: dict[str, Any] = {
            "format": FORMAT,
            "tool": {"name": "skillab", "version": s.tool_version},
            "suite": dict(s.suite),
            "adapter": dict(s.adapter),
            "models": dict(s.models),
            "isolation": dict(s.isolation),
            "runs": s.runs,
            "pass_k": s.pass_k,
        }
        if s.pass_n is not None:
            doc["pass_n"] = s.pass_n
        if s.shard is not None:
            doc["shard"] = dict(s.shard)
        doc.update(d.aggregate)
        doc["cases_skipped_trigger_only"] = d.cases_skipped_trigger_only
        doc["verdict"] = d.verdict
        doc["verdict_classified"] = d.verdict_classified
        doc["outcome_counts"] = dict(d.outcome_counts)
        doc["statistics"] = d.statistics
        doc["judge_consistency"] = s.judge_consistency
        doc["cache"] = {"enabled": s.cache_enabled, "hits": s.cache_hits, "arms": s.cache_arms}
        doc["usage"] = d.usage
        doc["timings"] = {
            "started_at": s.started_at.isoformat(),
            "finished_at": s.finished_at.isoformat(),
            "wall_ms": int((s.finished_at - s.started_at).total_seconds() * 1000),
        }
        doc["interrupted"] = s.interrupted
        doc["planned_cases"] = s.planned_cases if s.planned_cases is not None else len(self.records)
        doc["stopped"] = s.stopped
        if s.stop_early is not None:
            doc["stop_early"] = s.stop_early
        doc["activation"] = d.activation
        doc["contaminated_arms"] = d.contaminated_arms
        doc["warnings"] = list(s.warnings)
        doc["trigger_only_cases"] = list(s.trigger_only)
        doc["triggers"] = s.triggers
        doc["criteria"] = d.criteria
        doc["pass_at_k"] = d.pass_at_k
        doc["comparison"] = d.comparison
        doc["trend"] = s.trend
        doc["cases"] = [r.to_dict() for r in self.records]
        if d.reward is not None:
            doc["reward"] = d.reward
        if s.context_budget is not None:
            doc["context_budget"] = s.context_budget
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RunLog:
        """The log a results document was written from; ``ValueError`` if it is not one."""
        if doc.get("format") != FORMAT:
            raise ValueError(f"not a skillab results document (format {doc.get('format')!r})")
        known = set(_HEAD) | set(_TAIL)
        summary = RunSummary(
            aggregate={k: v for k, v in doc.items() if k not in known},
            cases_skipped_trigger_only=int(doc["cases_skipped_trigger_only"]),
            verdict=doc["verdict"],
            verdict_classified=doc["verdict_classified"],
            outcome_counts=dict(doc["outcome_counts"]),
            statistics=doc["statistics"],
            usage=doc["usage"],
            activation=doc["activation"],
            contaminated_arms=int(doc["contaminated_arms"]),
            criteria=doc["criteria"],
            pass_at_k=doc["pass_at_k"],
            comparison=doc["comparison"],
            reward=doc.get("reward"),
        )
        return cls(RunSettings.from_json(doc), [CaseRecord.from_dict(c) for c in doc["cases"]], summary)


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
