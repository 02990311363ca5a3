"""A run as one typed value: its settings, its per-case records and what scoring derives from
them. The results document (``results.json``, format ``skillab.results/1``) is its JSON form,
read and written here only: ``RunLog.from_json(doc).to_json() == doc``.

``scoring.summary.summarize`` computes the derived part (``RunSummary``) from the settings and
the records; this module only holds and serializes it, so the core imports no scoring.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .audit import AuditBlock
from .evidence import EvidenceBlock
from .held_out import HeldOutLift
from .records import CaseRecord, Verdict
from .run_info import (
    AdapterInfo,
    AdaptiveRuns,
    ConfigSource,
    ContextBudget,
    IsolationInfo,
    JudgeConsistency,
    ModelsInfo,
    ShardMarker,
    StopEarly,
    SuiteInfo,
)
from .statistics import LiftStatistics
from .summary import (
    Activation,
    Aggregate,
    Comparison,
    Criterion,
    OriginalRef,
    PassAtK,
    PlaceboComparison,
    Reward,
    RunUsage,
)
from .trend import Trend
from .triggers import TriggerBlock
from .usage import Usage
from .wire import from_wire, to_wire, wire_keys

FORMAT = "skillab.results/1"
# The lift the power statement sizes a suite for when the user names none.
DEFAULT_TARGET_LIFT_PTS = 10.0


@dataclass(frozen=True)
class RunSettings:
    """Everything a results document holds that is not derived from its per-case records."""

    tool_version: str
    suite: SuiteInfo
    adapter: AdapterInfo
    models: ModelsInfo
    isolation: IsolationInfo
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
    # Where the ``--against`` skill came from; None for two arms.
    original: OriginalRef | None = None
    trend: Trend | None = None
    # The shard of a ``--shard I/N`` run; None for a whole run.
    shard: ShardMarker | None = None
    # Attempts per arm for pass@k, when the run estimates it (``--pass-k``/``--pass-n``).
    pass_n: int | None = None
    # The lift the power statement sizes the suite for (``--target-lift-pts``).
    target_lift_pts: float = DEFAULT_TARGET_LIFT_PTS
    # The judge's consistency check (``engine.consistency``); None without judged verdicts.
    judge_consistency: JudgeConsistency | None = None
    # (case, run) records the run set out to produce (None: as many as finished).
    planned_cases: int | None = None
    # Why a run stopped before its plan was done, other than Ctrl-C (the cost cap).
    stopped: str | None = None
    # The trigger trials' block (``engine.trigger``); None when the suite has no trigger queries.
    triggers: TriggerBlock | None = None
    # What the skill costs in context for this run's agent (``agents.context_budget``).
    context_budget: ContextBudget | None = None
    # ``--stop-early``: the design, the seed and order of the cases, and where and why it
    # stopped (``engine.stop_early``); None for a run of every case.
    stop_early: StopEarly | None = None
    # ``--adaptive-runs``: the cases whose agreeing arms ran no more runs, and what that saved
    # (``engine.adaptive_runs``); None when off.
    adaptive_runs: AdaptiveRuns | None = None
    # The settings a config file gave the run; None when none did.
    config: ConfigSource | None = None
    # What the evidence ledger accumulated for this skill content, agent, model and suite
    # (``--evidence-ledger``); None without a ledger.
    evidence: EvidenceBlock | None = None
    # ``skillab audit``'s findings on the suite and skill as run (``suite_audit``); None when not
    # audited (documents written before the audit existed).
    audit: AuditBlock | None = None
    # What failed once the arms had run (the statistics, a block of the report), in one line; the
    # run is then partial: its document keeps every finished arm for ``report`` and ``--resume``.
    failure: str | None = None

    @property
    def attempts(self) -> int:
        """Attempts per arm the pass rates are over: ``--pass-n`` when it asked for more than
        ``--pass-k`` (any passing attempt counts)."""
        return self.pass_n or self.pass_k or 1

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RunSettings:
        judge = doc["usage"].get("judge")
        timings = doc["timings"]
        comparison = doc.get("comparison")
        shard = _optional(ShardMarker, doc, "shard")
        statistics = _optional(LiftStatistics, doc, "statistics")
        compared = None if not comparison else from_wire(Comparison, comparison, "comparison")
        return cls(
            tool_version=from_wire(str, doc["tool"]["version"], "tool.version"),
            suite=from_wire(SuiteInfo, doc["suite"], "suite"),
            adapter=from_wire(AdapterInfo, doc["adapter"], "adapter"),
            models=from_wire(ModelsInfo, doc["models"], "models"),
            isolation=from_wire(IsolationInfo, doc["isolation"], "isolation"),
            runs=from_wire(int, doc["runs"], "runs"),
            pass_k=from_wire(int, doc.get("pass_k", 1), "pass_k"),
            trigger_only=from_wire(tuple[str, ...], doc.get("trigger_only_cases") or [], "trigger_only_cases"),
            cache_enabled=from_wire(bool, doc["cache"]["enabled"], "cache.enabled"),
            cache_hits=from_wire(int, doc["cache"]["hits"], "cache.hits"),
            cache_arms=from_wire(int, doc["cache"]["arms"], "cache.arms"),
            judge_usage=None if judge is None else from_wire(Usage, judge, "usage.judge"),
            started_at=from_wire(datetime, timings["started_at"], "timings.started_at"),
            finished_at=from_wire(datetime, timings["finished_at"], "timings.finished_at"),
            interrupted=bool(doc.get("interrupted")),
            partial=doc.get("statistics") is None and bool(doc.get("interrupted")),
            warnings=from_wire(tuple[str, ...], doc.get("warnings") or [], "warnings"),
            original=None if compared is None else compared.original,
            trend=_optional(Trend, doc, "trend"),
            shard=shard,
            pass_n=_optional(int, doc, "pass_n"),
            target_lift_pts=_target_lift_pts(shard, statistics, compared),
            judge_consistency=_optional(JudgeConsistency, doc, "judge_consistency"),
            planned_cases=_optional(int, doc, "planned_cases"),
            stopped=_optional(str, doc, "stopped"),
            triggers=_optional(TriggerBlock, doc, "triggers"),
            context_budget=_optional(ContextBudget, doc, "context_budget"),
            stop_early=_optional(StopEarly, doc, "stop_early"),
            adaptive_runs=_optional(AdaptiveRuns, doc, "adaptive_runs"),
            config=_optional(ConfigSource, doc, "config"),
            evidence=_optional(EvidenceBlock, doc, "evidence"),
            audit=_optional(AuditBlock, doc, "audit"),
            failure=_optional(str, doc, "failure"),
        )


@dataclass(frozen=True)
class RunSummary:
    """What scoring derives from the settings and records (``scoring.summary.summarize``)."""

    # The spec's ``test-run-result`` aggregate: its keys sit at the document's top level.
    aggregate: Aggregate
    cases_skipped_trigger_only: int
    verdict: Verdict
    verdict_classified: Verdict
    outcome_counts: dict[str, int]
    statistics: LiftStatistics | None
    usage: RunUsage
    activation: Activation | None
    contaminated_arms: int
    criteria: tuple[Criterion, ...] | None
    pass_at_k: PassAtK | None
    comparison: Comparison | None
    # Verifier formats only: the mean fractional reward per arm.
    reward: Reward | None = None
    # ``--placebo``: content lift (skill vs placebo) and presence lift (placebo vs none).
    placebo: PlaceboComparison | None = None
    # The author and held-out lifts and their gap, when the run has held-out cases.
    held_out: HeldOutLift | None = None


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
            "suite": to_wire(s.suite),
            "adapter": to_wire(s.adapter),
            "models": to_wire(s.models),
            "isolation": to_wire(s.isolation),
            "runs": s.runs,
            "pass_k": s.pass_k,
        }
        if s.pass_n is not None:
            doc["pass_n"] = s.pass_n
        if s.shard is not None:
            doc["shard"] = to_wire(s.shard)
        doc.update(to_wire(d.aggregate))
        doc["cases_skipped_trigger_only"] = d.cases_skipped_trigger_only
        doc["verdict"] = d.verdict
        doc["verdict_classified"] = d.verdict_classified
        doc["outcome_counts"] = dict(d.outcome_counts)
        doc["statistics"] = to_wire(d.statistics)
        doc["judge_consistency"] = to_wire(s.judge_consistency)
        doc["cache"] = {"enabled": s.cache_enabled, "hits": s.cache_hits, "arms": s.cache_arms}
        doc["usage"] = to_wire(d.usage)
        doc["timings"] = {
            "started_at": s.started_at.isoformat(),
            "finished_at": s.finished_at.isoformat(),
            "wall_ms": int((s.finished_at - s.started_at).total_seconds() * 1000),
        }
        doc["interrupted"] = s.interrupted
        doc["planned_cases"] = s.planned_cases if s.planned_cases is not None else len(self.records)
        doc["stopped"] = s.stopped
        if s.failure is not None:
            doc["failure"] = s.failure
        if s.stop_early is not None:
            doc["stop_early"] = to_wire(s.stop_early)
        if s.adaptive_runs is not None:
            doc["adaptive_runs"] = to_wire(s.adaptive_runs)
        doc["activation"] = to_wire(d.activation)
        doc["contaminated_arms"] = d.contaminated_arms
        doc["warnings"] = list(s.warnings)
        doc["trigger_only_cases"] = list(s.trigger_only)
        doc["triggers"] = to_wire(s.triggers)
        doc["criteria"] = to_wire(d.criteria)
        doc["pass_at_k"] = to_wire(d.pass_at_k)
        doc["comparison"] = to_wire(d.comparison)
        if d.placebo is not None:
            doc["placebo"] = to_wire(d.placebo)
        doc["trend"] = to_wire(s.trend)
        if s.evidence is not None:
            doc["evidence"] = to_wire(s.evidence)
        doc["cases"] = to_wire(self.records)
        if d.reward is not None:
            doc["reward"] = to_wire(d.reward)
        if d.held_out is not None:
            doc["held_out"] = to_wire(d.held_out)
        if s.context_budget is not None:
            doc["context_budget"] = to_wire(s.context_budget)
        if s.audit is not None:
            doc["audit"] = to_wire(s.audit)
        if s.config is not None:
            doc["config"] = to_wire(s.config)
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RunLog:
        """The log a results document was written from; ``ValueError`` naming the key path if it
        is not one."""
        if doc.get("format") != FORMAT:
            raise ValueError(f"not a skillab results document (format {doc.get('format')!r})")
        summary = RunSummary(
            aggregate=from_wire(Aggregate, {k: doc[k] for k in wire_keys(Aggregate) if k in doc}, "aggregate"),
            cases_skipped_trigger_only=from_wire(int, doc["cases_skipped_trigger_only"], "cases_skipped_trigger_only"),
            verdict=doc["verdict"],
            verdict_classified=doc["verdict_classified"],
            outcome_counts=from_wire(dict[str, int], doc["outcome_counts"], "outcome_counts"),
            statistics=_optional(LiftStatistics, doc, "statistics"),
            usage=from_wire(RunUsage, doc["usage"], "usage"),
            activation=_optional(Activation, doc, "activation"),
            contaminated_arms=from_wire(int, doc["contaminated_arms"], "contaminated_arms"),
            criteria=_optional(tuple[Criterion, ...], doc, "criteria"),
            pass_at_k=_optional(PassAtK, doc, "pass_at_k"),
            comparison=_optional(Comparison, doc, "comparison"),
            reward=_optional(Reward, doc, "reward"),
            placebo=_optional(PlaceboComparison, doc, "placebo"),
            held_out=_optional(HeldOutLift, doc, "held_out"),
        )
        return cls(RunSettings.from_json(doc), from_wire(list[CaseRecord], doc["cases"], "cases"), summary)


def _optional(cls: Any, doc: dict[str, Any], key: str) -> Any:
    """The block under ``key`` read as ``cls``; None when it is null or absent."""
    value = doc.get(key)
    return None if value is None else from_wire(cls, value, key)


def _target_lift_pts(shard: ShardMarker | None, statistics: LiftStatistics | None,
                     comparison: Comparison | None) -> float:
    """The ``--target-lift-pts`` a document was summarized with. It shows only in a power
    statement, so a shard (which may have none) records it in its marker; a document with no
    power statement anywhere was summarized the same whatever it was."""
    if shard is not None and shard.target_lift_pts is not None:
        return float(shard.target_lift_pts)
    for stats in (statistics, comparison.statistics if comparison is not None else None):
        if stats is not None and stats.power is not None:
            return float(stats.power.target_lift_pts)
    return DEFAULT_TARGET_LIFT_PTS
