"""The view of a run the markdown report reads, its labels and its number formats."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.records import CaseRecord
from ..core.run_info import JudgeConsistency
from ..core.runlog import RunLog
from ..core.statistics import LiftStatistics
from ..core.summary import Comparison, PassAtK
from ..core.trend import Trend
from ..scoring.sentences import pts
from . import escape
from .disclosures import disclosure_counts, run_disclosure_counts, runs_span, sandbox_label

_FLIPS_SHOWN = 25

VERDICT_ICON = {"pass": "✅", "fail": "❌", "mixed": "🟡", "error": "⚠️"}
# The headline verdict over several suites is the most severe one.
VERDICT_SEVERITY = {"pass": 0, "mixed": 1, "fail": 2, "error": 3}
OUTCOME_LABEL = {
    "flip_to_fail": "❌ broken by the skill",
    "error": "⚠️ error",
    "flip_to_pass": "✅ rescued by the skill",
    "fail_kept": "failed in both arms",
    "pass_kept": "passed in both arms",
}
EDIT_LABEL = {
    "flip_to_fail": "❌ broken by the edit",
    "error": "⚠️ error",
    "flip_to_pass": "✅ rescued by the edit",
    "fail_kept": "fails with both",
    "pass_kept": "passes with both",
}
# Which cases a reader needs first, and which are trimmed first.
OUTCOME_PRIORITY = {"flip_to_fail": 0, "error": 1, "flip_to_pass": 2, "fail_kept": 3, "pass_kept": 4}


# -- the view of a run the report needs ----------------------------------------------------------


@dataclass(frozen=True)
class FailedSuite:
    """A suite that produced no results (it was invalid, or could not run): a row with verdict
    ``error`` and nothing measured, so its failure is seen beside the other suites."""

    name: str
    # The agent it was to run under, when several ran (``adapter: a,b``).
    agent: str | None = None


@dataclass(frozen=True)
class CaseView:
    """One (case, run) record where the report shows it: its suite and its order there."""

    suite_index: int
    order: int
    record: CaseRecord

    @property
    def priority(self) -> tuple[int, int, int]:
        # A case the edit broke is read first, like a case the skill broke.
        outcome = self.record.outcome
        rank = 0 if self.record.original_outcome == "flip_to_fail" else OUTCOME_PRIORITY.get(outcome, 5)
        return rank, self.suite_index, self.order


@dataclass(frozen=True)
class SuiteView:
    index: int
    name: str
    verdict: str
    with_rate: float | None
    without_rate: float | None
    delta_pts: float | None
    ci95: tuple[float, float] | None
    p_value: float | None
    stats_summary: str
    # Distinct cases: one case of --runs 3 is one case, not three records.
    case_count: int
    error_dominated: bool
    # What the lift rests on, as every report words it (``disclosures.disclosure_counts``).
    counts: tuple[str, ...]
    interrupted: bool
    runs: int
    adapter: str
    agent_model: str | None
    judge_model: str | None
    version: str
    total_tokens: int
    cost_usd: float | None
    warnings: tuple[str, ...] = ()
    cases: tuple[CaseView, ...] = field(default=(), repr=False)
    # The run's "comparison" (candidate vs original) and "trend" blocks.
    comparison: Comparison | None = field(default=None, repr=False)
    trend: Trend | None = field(default=None, repr=False)
    # Attempts per arm the rates are over (pass@n: --pass-n when above --pass-k).
    pass_k: int = 1
    # Whether the flips toward failing passed their noise test (``statistics.regression``), and
    # the cases that did (``statistics.regressed_cases``; None when the run names none).
    regression: bool = False
    regressed_cases: tuple[str, ...] | None = None
    # The statistics withheld the lift (error-dominated, or a judge that disagreed with itself):
    # the report then claims no lift, no flip and no delta.
    lift_withheld: bool = False
    pass_at_k: PassAtK | None = field(default=None, repr=False)
    judge_consistency: JudgeConsistency | None = field(default=None, repr=False)
    # The sandbox backend suite commands ran under (``isolation.backend``), "unsandboxed" for none.
    sandbox: str = "?"
    # The runs a case got: "3", or "2–3" when --adaptive-runs gave agreeing cases fewer.
    runs_label: str = ""

    @classmethod
    def from_log(cls, index: int, log: RunLog) -> SuiteView:
        settings, summary = log.settings, log.summary
        aggregate, rate, stats = summary.aggregate, summary.aggregate.pass_rate, summary.statistics
        total = summary.usage.total
        return cls(
            index=index,
            name=settings.suite.skill or settings.suite.path or f"suite {index + 1}",
            verdict=summary.verdict,
            with_rate=rate.with_skill,
            without_rate=rate.without_skill,
            delta_pts=rate.delta_pts,
            ci95=None if stats is None else stats.ci95,
            p_value=None if stats is None else stats.p_value,
            stats_summary="" if stats is None else stats.summary or "",
            case_count=len({record.case_name for record in log.records}),
            error_dominated=aggregate.error_dominated,
            counts=tuple(run_disclosure_counts(log)),
            interrupted=settings.interrupted,
            runs=settings.runs,
            runs_label=runs_span(settings),
            adapter=settings.adapter.name or "?",
            agent_model=settings.models.agent,
            judge_model=settings.models.judge,
            version=settings.tool_version or "?",
            total_tokens=total.total_tokens,
            cost_usd=total.cost_usd,
            warnings=settings.warnings,
            cases=tuple(CaseView(index, order, record) for order, record in enumerate(log.records)),
            comparison=summary.comparison,
            trend=settings.trend,
            # The rates are over every attempt: pass@n when --pass-n asked for more than k.
            pass_k=settings.attempts,
            regression=stats is not None and stats.regression,
            lift_withheld=(stats is not None and bool(stats.withheld)) or aggregate.error_dominated,
            regressed_cases=_named(stats),
            pass_at_k=summary.pass_at_k,
            judge_consistency=settings.judge_consistency,
            sandbox=sandbox_label(settings.isolation),
        )

    @classmethod
    def failed(cls, index: int, suite: FailedSuite) -> SuiteView:
        """The row of a suite that produced no results: verdict ``error``, nothing measured."""
        nothing = disclosure_counts(errors=0, skipped_apples_oranges=0, trigger_only=0, cache_hits=0,
                                    contaminated_arms=0, cases_aggregated=0, total_cases=0)
        return cls(index=index, name=suite.name or f"suite {index + 1}", verdict="error", with_rate=None,
                   without_rate=None, delta_pts=None, ci95=None, p_value=None, stats_summary="",
                   case_count=0, error_dominated=False, counts=tuple(nothing), interrupted=False, runs=1, adapter=suite.agent or "?", agent_model=None, judge_model=None,
                   version="?", total_tokens=0, cost_usd=None)


def flip_lines(suites: list[SuiteView], outcome: str, *, key: str = "outcome", named: bool | None = None,
               keep: Callable[[SuiteView, str], bool] | None = None) -> str:
    """The cases with ``outcome`` (those ``keep`` accepts), with their suite when several."""
    named = len(suites) > 1 if named is None else named
    names: list[str] = []
    for suite in suites:
        runs: dict[str, int] = OrderedDict()
        for case in suite.cases:
            name = case.record.case_name
            if getattr(case.record, key) == outcome and (keep is None or keep(suite, name)):
                runs[name] = runs.get(name, 0) + 1
        for name, n in runs.items():
            label = escape.inline(name, 80)
            if named:
                label = f"{escape.inline(suite.name, 60)} / {label}"
            if suite.runs > 1:
                label += f" ({n}/{suite.runs} runs)"
            names.append(label)
    shown = names[:_FLIPS_SHOWN]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f", and {more} more" if more else "")


# -- number formats ------------------------------------------------------------------------------


def broken_by_skill(suite: SuiteView, name: str) -> bool:
    """Whether the case's drop with the skill passed its own suite's noise test."""
    return _regressed(suite.regression, suite.regressed_cases, name)


def broken_by_edit(suite: SuiteView, name: str) -> bool:
    """Whether the case's drop against the original skill passed its suite's noise test."""
    stats = None if suite.comparison is None else suite.comparison.statistics
    return stats is not None and _regressed(stats.regression, _named(stats), name)


def _named(stats: LiftStatistics | None) -> tuple[str, ...] | None:
    """The cases whose drop passed the noise test; None when the statistics name none."""
    return None if stats is None else stats.regressed_cases or None


def _regressed(regression: bool, named: tuple[str, ...] | None, name: str) -> bool:
    # Statistics that name no cases (written by hand, or older) keep their suite-wide claim.
    return regression and (named is None or name in named)


def fmt_pts(value: float | None) -> str:
    """Points as every sentence of the report prints them (``scoring.sentences.pts``: ties away
    from zero), so a bound reads the same in the table and in the lift sentence."""
    return "n/a" if value is None else pts(value)


def fmt_rate(value: float | None) -> str:
    if value is None:
        return "n/a"
    pct = value * 100
    return f"{pct:.0f}%" if abs(pct - round(pct)) < 0.05 else f"{pct:.1f}%"


def fmt_p(value: float | None) -> str:
    if value is None:
        return "n/a"
    if value < 0.001:
        return "<0.001"
    return f"{value:.3f}" if value < 0.1 else f"{value:.2f}"

