"""The view of a results document the markdown report reads, its labels and its number formats."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.records import ArmRecord
from . import escape

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


# -- the view of a results document the report needs ------------------------------------------


@dataclass(frozen=True)
class CaseView:
    suite_index: int
    order: int
    case_name: str
    run_index: int
    outcome: str
    error: str | None
    with_skill: ArmRecord
    without_skill: ArmRecord
    # The ``--against`` arm and the candidate-vs-original outcome, when the run had one.
    original: ArmRecord | None = None
    original_outcome: str | None = None

    @property
    def priority(self) -> tuple[int, int, int]:
        # A case the edit broke is read first, like a case the skill broke.
        rank = 0 if self.original_outcome == "flip_to_fail" else OUTCOME_PRIORITY.get(self.outcome, 5)
        return rank, self.suite_index, self.order


@dataclass(frozen=True)
class SuiteView:
    index: int
    name: str
    path: str
    verdict: str
    with_rate: float | None
    without_rate: float | None
    delta_pts: float | None
    ci95: tuple[float, float] | None
    p_value: float | None
    stats_summary: str
    total_cases: int
    cases_aggregated: int
    errors: int
    error_dominated: bool
    skipped_apples_oranges: int
    trigger_only: int
    cache_hits: int
    contaminated_arms: int
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
    # The document's "comparison" (candidate vs original) and "trend" sections, as written.
    comparison: dict[str, Any] | None = field(default=None, repr=False)
    trend: dict[str, Any] | None = field(default=None, repr=False)
    # Attempts per arm (--pass-k).
    # Attempts per arm the rates are over (pass@n: --pass-n when above --pass-k).
    pass_k: int = 1
    # Whether the flips toward failing passed their noise test (``statistics.regression``), and
    # the cases that did (``statistics.regressed_cases``; None when the document names none).
    regression: bool = False
    regressed_cases: tuple[str, ...] | None = None
    # The statistics withheld the lift (error-dominated, or a judge that disagreed with itself):
    # the report then claims no lift, no flip and no delta.
    lift_withheld: bool = False
    pass_at_k: dict[str, Any] | None = field(default=None, repr=False)
    judge_consistency: dict[str, Any] | None = field(default=None, repr=False)
    # The sandbox backend suite commands ran under (``isolation.backend``), "unsandboxed" for none.
    sandbox: str = "?"

    @classmethod
    def from_document(cls, index: int, doc: dict[str, Any]) -> SuiteView:
        rate = doc.get("pass_rate") or {}
        stats = doc.get("statistics") or {}
        ci = stats.get("ci95")
        total = (doc.get("usage") or {}).get("total") or {}
        suite = doc.get("suite") or {}
        models = doc.get("models") or {}
        cases = tuple(
            CaseView(
                suite_index=index,
                order=order,
                case_name=str(record.get("case_name", "?")),
                run_index=int(record.get("run_index", 0)),
                outcome=str(record.get("outcome", "error")),
                error=record.get("error"),
                with_skill=ArmRecord.from_dict(record.get("with_skill") or {"passed": False}),
                without_skill=ArmRecord.from_dict(record.get("without_skill") or {"passed": False}),
                original=ArmRecord.from_dict(record["original"]) if record.get("original") else None,
                original_outcome=record.get("original_outcome"),
            )
            for order, record in enumerate(doc.get("cases") or [])
        )
        return cls(
            index=index,
            name=str(suite.get("skill") or suite.get("path") or f"suite {index + 1}"),
            path=str(suite.get("path") or ""),
            verdict=str(doc.get("verdict", "error")),
            with_rate=rate.get("with_skill"),
            without_rate=rate.get("without_skill"),
            delta_pts=rate.get("delta_pts"),
            ci95=(float(ci[0]), float(ci[1])) if ci else None,
            p_value=stats.get("p_value", stats.get("mcnemar_p")),
            stats_summary=str(stats.get("summary") or ""),
            total_cases=int(doc.get("total_cases", len(cases))),
            cases_aggregated=int(doc.get("cases_aggregated", 0)),
            errors=int(doc.get("errors", 0)),
            error_dominated=bool(doc.get("error_dominated", False)),
            skipped_apples_oranges=int(doc.get("cases_skipped_apples_oranges", 0)),
            trigger_only=int(doc.get("cases_skipped_trigger_only", 0)),
            cache_hits=int((doc.get("cache") or {}).get("hits", 0)),
            contaminated_arms=int(doc.get("contaminated_arms", 0)),
            interrupted=bool(doc.get("interrupted", False)),
            runs=int(doc.get("runs", 1)),
            adapter=str((doc.get("adapter") or {}).get("name") or "?"),
            agent_model=models.get("agent"),
            judge_model=models.get("judge"),
            version=str((doc.get("tool") or {}).get("version") or "?"),
            total_tokens=int(total.get("total_tokens", 0)),
            cost_usd=total.get("cost_usd"),
            warnings=tuple(str(w) for w in doc.get("warnings") or ()),
            cases=cases,
            comparison=doc.get("comparison") or None,
            trend=doc.get("trend") or None,
            # The rates are over every attempt: pass@n when --pass-n asked for more than k.
            pass_k=int(doc.get("pass_n") or doc.get("pass_k", 1) or 1),
            regression=bool(stats.get("regression")),
            lift_withheld=bool(stats.get("withheld")) or bool(doc.get("error_dominated", False)),
            regressed_cases=(tuple(stats["regressed_cases"]) if isinstance(stats.get("regressed_cases"), list)
                             else None),
            pass_at_k=doc.get("pass_at_k") or None,
            judge_consistency=doc.get("judge_consistency") or None,
            sandbox=_sandbox(doc.get("isolation") or {}),
        )


def flip_lines(suites: list[SuiteView], outcome: str, *, key: str = "outcome", named: bool | None = None,
               keep: Callable[[SuiteView, str], bool] | None = None) -> str:
    """The cases with ``outcome`` (those ``keep`` accepts), with their suite when several."""
    named = len(suites) > 1 if named is None else named
    names: list[str] = []
    for suite in suites:
        runs: dict[str, int] = OrderedDict()
        for case in suite.cases:
            if getattr(case, key) == outcome and (keep is None or keep(suite, case.case_name)):
                runs[case.case_name] = runs.get(case.case_name, 0) + 1
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
    stats = (suite.comparison or {}).get("statistics") or {}
    named = stats.get("regressed_cases")
    return _regressed(bool(stats.get("regression")), tuple(named) if isinstance(named, list) else None, name)


def edit_flips(comparison: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The cases named broken by the edit, and those that failed now within noise.

    A document without ``changed_within_noise`` listed every flip in ``broken_by_edit``; its
    statistics' ``regressed_cases`` then say which of them were named.
    """
    broken = list(comparison.get("broken_by_edit") or ())
    if "changed_within_noise" in comparison:
        return broken, list(comparison.get("changed_within_noise") or ())
    stats = comparison.get("statistics") or {}
    named = set(stats.get("regressed_cases") or ()) if stats.get("regression") else set()
    return [n for n in broken if n in named], [n for n in broken if n not in named]


def _regressed(regression: bool, named: tuple[str, ...] | None, name: str) -> bool:
    # A document that names no cases (written by hand, or older) keeps its suite-wide claim.
    return regression and (named is None or name in named)


def fmt_pts(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{'−' if value < 0 else '+'}{abs(value):.1f}"


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


def _sandbox(isolation: dict[str, Any]) -> str:
    return "unsandboxed" if isolation.get("unsandboxed") else str(isolation.get("backend") or "?")
