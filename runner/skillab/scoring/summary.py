"""A run's summary as a pure function of its settings and its per-case records.

A live run, ``skillab merge`` and anything that re-reads a document (``report``, ``--resume``)
summarize here, so the aggregate, verdict and statistics of a merged or re-read run are computed
exactly as a single run computes them: ``summarize(log.settings, log.records) == log``.
"""

from __future__ import annotations

from collections import Counter

from ..core.records import OUTCOMES, ArmRecord, CaseRecord
from ..core.run_info import JudgeConsistency
from ..core.runlog import RunLog, RunSettings, RunSummary
from ..core.statistics import LiftStatistics
from ..core.summary import (
    Activation,
    CandidateDelta,
    CandidatePassRate,
    Comparison,
    Criterion,
    DimensionDelta,
    Efficiency,
    PlaceboComparison,
    Reward,
    RunUsage,
)
from ..core.usage import Usage, sum_usage
from .aggregate import aggregate, run_verdict
from .inference import ALPHA
from .outcomes import classify_outcome, compute_verdict
from .pass_at_k import run_summary
from .statistics import paired_statistics


def summarize(settings: RunSettings, records: list[CaseRecord]) -> RunLog:
    """The run log of ``records`` (suite order) run with ``settings``."""
    agg = aggregate(records)
    outcomes = [r.outcome for r in records]
    counts = Counter(outcomes)
    withheld = _judge_withheld(settings.judge_consistency)
    # The records a format's graders or pass@k scored: only these load a format's scoring.
    scored = [r for r in records if _scored_beyond_checks(r)]
    criteria, reward = _format_scores(scored)
    summary = RunSummary(
        aggregate=agg,
        # The spec counts every trigger-only case here, left out of total_cases, whether or not
        # trigger trials also posed it: burying it is non-conforming.
        cases_skipped_trigger_only=len(settings.trigger_only),
        # An interrupted run reports the verdict of what finished; `interrupted` says it is partial.
        verdict=run_verdict(agg, outcomes),
        verdict_classified=compute_verdict(outcomes),
        outcome_counts={o: counts.get(o, 0) for o in OUTCOMES},
        statistics=None if settings.partial else paired_statistics(
            records, target_lift_pts=settings.target_lift_pts, withheld=withheld,
            alpha=settings.stop_early.alpha if settings.stop_early is not None else ALPHA),
        usage=_usage(records, settings.judge_usage),
        activation=_activation(records),
        contaminated_arms=sum(r.without_skill.contaminated for r in records),
        criteria=criteria,
        pass_at_k=run_summary(scored, settings.pass_k) if settings.pass_n is not None else None,
        comparison=_comparison(records, settings),
        # Verifier formats (SkillsBench, Harbor): the mean fractional reward per arm.
        reward=reward,
        placebo=_placebo(records, settings),
    )
    return RunLog(settings, list(records), summary)


def _format_scores(cases: list[CaseRecord]) -> tuple[tuple[Criterion, ...] | None, Reward | None]:
    """ruby-skill-bench's criteria verdicts and the verifier formats' mean rewards; a run whose
    records carry neither loads neither format."""
    if not cases:
        return None, None
    from ..formats.ruby_bench.dimensions import criteria_verdicts
    from ..formats.skillsbench.verifier import mean_rewards

    return tuple(criteria_verdicts(cases)) or None, mean_rewards(cases)


def _scored_beyond_checks(record: CaseRecord) -> bool:
    arms = (record.with_skill, record.without_skill, record.original)
    return any(arm is not None and (arm.graders or arm.pass_k is not None) for arm in arms)


def _judge_withheld(check: JudgeConsistency | None) -> str | None:
    if check is None or not check.lift_withheld:
        return None
    return (f"the judge agreed with itself on only {check.agreed} of {check.sampled - check.errored} "
            f"re-asked verdicts (below {check.floor:.0%}): no statistic is reported")


def _comparison(records: list[CaseRecord], settings: RunSettings) -> Comparison | None:
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
        stats = paired_statistics(pairs, subject="the edit", target_lift_pts=settings.target_lift_pts)
    worse = _case_names(pairs, "flip_to_fail")
    named = set(stats.regressed_cases if stats is not None else ())
    return Comparison(
        original=settings.original,
        pass_rate=CandidatePassRate(agg.pass_rate.with_skill, agg.pass_rate.without_skill, agg.pass_rate.delta_pts),
        # Named broken only on the case's own evidence (statistics.regressed_cases); every other
        # case that passed with the original and failed now is changed, within noise.
        broken_by_edit=tuple(n for n in worse if n in named),
        changed_within_noise=tuple(n for n in worse if n not in named),
        rescued_by_edit=tuple(_case_names(pairs, "flip_to_pass")),
        outcome_counts={o: counts.get(o, 0) for o in OUTCOMES},
        errors=agg.errors,
        error_dominated=agg.error_dominated,
        cases_aggregated=agg.cases_aggregated,
        efficiency=Efficiency(*(_versus(delta) for delta in (agg.duration_ms, agg.turns, agg.tokens, agg.tool_calls))),
        statistics=stats,
    )


def _versus(delta: DimensionDelta | None) -> CandidateDelta | None:
    return None if delta is None else CandidateDelta(delta.with_skill_avg, delta.without_skill_avg, delta.delta_pct)


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


def _placebo(records: list[CaseRecord], settings: RunSettings) -> PlaceboComparison | None:
    """``--placebo``: the main lift's aggregate and statistics, once with the placebo standing
    in for the without-skill arm (content) and once for the with-skill arm (presence)."""
    if not any(r.placebo is not None for r in records):
        return None
    content = [versus_placebo(r) for r in records]
    presence = [placebo_versus_none(r) for r in records]
    content_agg, presence_agg = aggregate(content), aggregate(presence)

    def stats(pairs: list[CaseRecord], subject: str) -> LiftStatistics | None:
        if settings.partial:
            return None
        return paired_statistics(pairs, subject=subject, target_lift_pts=settings.target_lift_pts)

    return PlaceboComparison(
        pass_rate=presence_agg.pass_rate.with_skill,
        content_delta_pts=content_agg.pass_rate.delta_pts,
        content=stats(content, "the skill's content"),
        presence_delta_pts=presence_agg.pass_rate.delta_pts,
        presence=stats(presence, "the skill's presence"),
        errors=sum(1 for r in records if r.placebo is None or r.placebo.errored),
    )


def versus_placebo(record: CaseRecord) -> CaseRecord:
    """The record as a skill-vs-placebo pair: the placebo stands in for the without-skill arm."""
    return _paired(record, record.with_skill, record.placebo)


def placebo_versus_none(record: CaseRecord) -> CaseRecord:
    """The record as a placebo-vs-none pair: the placebo stands in for the with-skill arm."""
    return _paired(record, record.placebo, record.without_skill)


def _paired(record: CaseRecord, first: ArmRecord | None, second: ArmRecord | None) -> CaseRecord:
    first = first or ArmRecord(passed=False, errored=True)
    second = second or ArmRecord(passed=False, errored=True)
    outcome = classify_outcome(with_passed=first.passed, without_passed=second.passed,
                               errored=first.errored or second.errored or record.error is not None)
    return CaseRecord(case_name=record.case_name, outcome=outcome, with_skill=first, without_skill=second,
                      run_index=record.run_index, tags=record.tags, error=record.error)


def _case_names(records: list[CaseRecord], outcome: str) -> list[str]:
    """Names of the cases with ``outcome`` in at least one run, in suite order."""
    return list(dict.fromkeys(r.case_name for r in records if r.outcome == outcome))


def _usage(records: list[CaseRecord], judged: Usage | None) -> RunUsage:
    def total(arm: str) -> Usage:
        arms = (getattr(record, arm) for record in records)
        return sum_usage(a.usage for a in arms if a is not None and not a.cached)

    with_skill, without_skill = total("with_skill"), total("without_skill")
    has_original = any(r.original is not None for r in records)
    original = total("original") if has_original else None
    placebo = total("placebo") if any(r.placebo is not None for r in records) else None
    grand = with_skill.add(without_skill)
    for extra in (original, judged, placebo):
        if extra is not None:
            grand = grand.add(extra)
    # Cached baselines cost nothing in this run, so they are left out of the totals.
    return RunUsage(with_skill, without_skill, original, judged, grand, placebo)


def _activation(records: list[CaseRecord]) -> Activation | None:
    """Share of arms that opened SKILL.md, for adapters that report it (discover mode). An
    errored arm is left out: an agent that never started, or stopped on an outage, did not
    decide against the skill."""

    def rate(arm: str) -> float | None:
        flags = [
            getattr(r, arm).skill_activated
            for r in records
            if getattr(r, arm) is not None and getattr(r, arm).skill_activated is not None
            and not getattr(r, arm).errored
        ]
        return round(sum(flags) / len(flags), 4) if flags else None

    result = Activation(rate("with_skill"), rate("original"))
    return result if result.with_skill is not None or result.original is not None else None
