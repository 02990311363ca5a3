"""The markdown report: the PR comment, the job summary and ``skillab run --markdown``.

It reads results documents only (format ``skillab.results/1``), so any run that left one can be
reported. Order of what a reader sees: the headline verdict, the flips (which cases the skill
rescued and which it broke), the per-suite table, the disclosures, then per-case rows and
collapsed details. To stay under GitHub's comment limit it leaves out case details first, then
case rows, never the suite table. Everything a model or a suite wrote goes through ``escape``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..grading.graders import CriteriaVerdict, criteria_verdicts
from ..core.records import ArmRecord
from ..scoring.statistics import pooled_statistics
from . import escape
from .portability import is_portability_run
from .portability import render_markdown as _portability
from .partial import interruption
from .trigger_gates import only_triggers
from .trigger_report import markdown_headline as trigger_headline
from .trigger_report import markdown_section as trigger_section

# GitHub refuses comment bodies over 65,536 characters; the default leaves room for the marker.
GITHUB_COMMENT_LIMIT = 65536
DEFAULT_MAX_CHARS = 65000
# Room kept for the note that says what was left out.
_TRIM_NOTE_RESERVE = 400
_FLIPS_SHOWN = 25
_OUTPUT_EXCERPT = 600

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
    # Attempts per arm (--pass-k), and the criteria verdicts of per-dimension scoring.
    pass_k: int = 1
    # Whether the flips toward failing passed their noise test (``statistics.regression``).
    regression: bool = False
    pass_at_k: dict[str, Any] | None = field(default=None, repr=False)
    judge_consistency: dict[str, Any] | None = field(default=None, repr=False)
    criteria: tuple[CriteriaVerdict, ...] = field(default=(), repr=False)
    # The sandbox backend suite commands ran under (``isolation.backend``), "unsandboxed" for none.
    sandbox: str = "?"

    @classmethod
    def from_document(cls, index: int, doc: dict[str, Any]) -> "SuiteView":
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
            pass_k=int(doc.get("pass_k", 1) or 1),
            regression=bool(stats.get("regression")),
            pass_at_k=doc.get("pass_at_k") or None,
            judge_consistency=doc.get("judge_consistency") or None,
            criteria=tuple(criteria_verdicts(doc.get("cases") or [])),
            sandbox=_sandbox(doc.get("isolation") or {}),
        )


# -- verdicts over several suites ----------------------------------------------------------------


def overall_verdict(documents: Sequence[dict[str, Any]]) -> str | None:
    """The most severe suite verdict (error > fail > mixed > pass); None without documents."""
    verdicts = [str(doc.get("verdict", "error")) for doc in documents if not only_triggers(doc)]
    if not verdicts:
        return None
    return max(verdicts, key=lambda v: VERDICT_SEVERITY.get(v, 3))


def pooled_delta_pts(documents: Sequence[dict[str, Any]]) -> float | None:
    """The lift over every case of every suite that measured one, each case weighing the same."""
    pooled = pooled_statistics(documents)
    return None if pooled is None else pooled.lift_pts


def pooled_scope(documents: Sequence[dict[str, Any]]) -> str:
    """``pooled +X pts (95% CI a to b)``: the cases of all suites as one sample."""
    pooled = pooled_statistics(documents)
    if pooled is None or pooled.lift_pts is None:
        return "pooled n/a pts"
    text = f"pooled {_pts(pooled.lift_pts)} pts"
    if pooled.ci95 is not None:
        text += f" (95% CI {_pts(pooled.ci95[0])} to {_pts(pooled.ci95[1])}, {pooled.n_cases} cases)"
    return text


# -- rendering ---------------------------------------------------------------------------------


def render_markdown(
    documents: list[dict[str, Any]],
    *,
    run_url: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    notes: Sequence[str] = (),
) -> str:
    """The report for ``documents``, at most ``max_chars`` long (counted as GitHub counts).

    ``notes`` are plain sentences about the run as a whole (a skipped suite, a parse error);
    they are escaped like everything else.
    """
    everything = [SuiteView.from_document(i, doc) for i, doc in enumerate(documents)]
    # Suites of trigger queries only have no A/B part: they appear in the trigger section.
    graded = [doc for doc in documents if not only_triggers(doc)]
    suites = [view for view, doc in zip(everything, documents) if not only_triggers(doc)]
    if is_portability_run(documents):
        # The same suite under several agents: each row names its agent.
        suites = [replace(s, name=f"{s.name} · {s.adapter}") for s in suites]
    head = "\n\n".join(
        part
        for part in (
            _headline(suites, graded) if suites or not documents else trigger_headline(documents),
            _versus_original(suites),
            _flips(suites),
            _table(suites),
            trigger_section(documents),
            _portability(documents),
            _rate_notes(suites),
            _statistics(suites),
            _criteria(suites),
            _trend(suites),
            _disclosures(suites),
            _notes(notes),
        )
        if part
    )
    foot = _footer(everything, run_url)
    budget = max_chars - size(head) - size(foot) - _TRIM_NOTE_RESERVE
    cases = _cases_section(suites, budget)
    body = "\n\n".join(part for part in (head, cases, foot) if part) + "\n"
    if size(body) > max_chars:
        # Only a table of hundreds of suites gets here: keep whole rows, say what is missing.
        body = _hard_trim(body, max_chars)
    return body


def size(text: str) -> int:
    """Length as GitHub counts it (UTF-16 code units), so emoji cannot push a body over."""
    return len(text.encode("utf-16-le")) // 2


def _headline(suites: list[SuiteView], documents: Sequence[dict[str, Any]]) -> str:
    if not suites:
        return "## skillab: no suite ran"
    verdict = overall_verdict(documents) or "error"
    icon = VERDICT_ICON.get(verdict, "⚠️")
    if len(suites) == 1:
        scope = f"{escape.inline(suites[0].name, 80)}: {_pts(suites[0].delta_pts)} pts"
    elif is_portability_run(documents):
        # Different agents have different baselines; their lifts are not pooled.
        agents = len({s.adapter for s in suites})
        scope = f"{len(suites)} suite runs under {agents} agents, lift per agent below"
    else:
        scope = f"{len(suites)} suites, {pooled_scope(documents)}"
    counts = _verdict_counts(suites)
    scope += _edit_scope(suites)
    if any((doc.get("isolation") or {}).get("unsandboxed") for doc in documents):
        scope += " · ⚠️ unsandboxed: suite commands and the agent ran without a sandbox"
    if any((doc.get("models") or {}).get("judge_same_family") for doc in documents):
        scope += " · ⚠️ judged by a model of the agent's family"
    stopped = [interruption(doc) for doc in documents if interruption(doc)]
    if stopped:
        # A partial run has no verdict: what did not run could change it.
        icon, verdict = "⏹️", "; ".join(stopped)
    line = f"## {icon} skillab: {verdict} — {scope}"
    return line + (f"\n\n{counts}" if len(suites) > 1 else "")


def _verdict_counts(suites: list[SuiteView]) -> str:
    tally: dict[str, int] = OrderedDict()
    for verdict in ("fail", "error", "mixed", "pass"):
        n = sum(1 for s in suites if s.verdict == verdict)
        if n:
            tally[verdict] = n
    return " · ".join(f"{VERDICT_ICON.get(v, '')} {n} {v}" for v, n in tally.items())


def _edit_scope(suites: list[SuiteView]) -> str:
    """Whatever the lift over no skill, a reviewer of the edit sees what it broke: named as broken
    only when the drop passed its noise test, else as changed within noise."""
    broke = changed = 0
    for s in suites:
        comparison = s.comparison or {}
        stats = comparison.get("statistics") or {}
        if stats.get("regression"):
            broke += len(stats.get("regressed_cases") or ())
        else:
            changed += len(comparison.get("broken_by_edit") or ())
    text = ""
    if broke:
        text += f" · ❌ the edit broke {broke} case{'s' if broke != 1 else ''} beyond noise"
    if changed:
        text += (f" · {changed} case{'s' if changed != 1 else ''} the original passed "
                 f"{'fail' if changed != 1 else 'fails'} now: changed, within noise")
    return text


def _flips(suites: list[SuiteView]) -> str:
    # An error-dominated suite says nothing about the skill, not even case by case.
    suites = [s for s in suites if not s.error_dominated]
    broken = _flip_lines(suites, "flip_to_fail")
    rescued = _flip_lines(suites, "flip_to_pass")
    if not broken and not rescued:
        return ""
    parts = []
    if broken and any(s.regression for s in suites):
        parts.append(f"**Broken by the skill** (passed without it, fail with it; beyond noise): {broken}")
    elif broken:
        parts.append(f"**Worse with the skill, within noise** (passed without it, fail with it): {broken}")
    if rescued:
        parts.append(f"**Rescued by the skill** (fail without it, pass with it): {rescued}")
    return "\n\n".join(parts)


def _versus_original(suites: list[SuiteView]) -> str:
    """Candidate vs original: the cases the edit broke first, then those it rescued, then rates."""
    compared = [s for s in suites if s.comparison]
    if not compared:
        return ""
    sources = ", ".join(
        (f"{escape.inline(s.name, 60)}: " if len(suites) > 1 else "")
        + escape.code_span(((s.comparison or {}).get("original") or {}).get("label") or "?", 80)
        for s in compared
    )
    parts = [f"### Candidate vs original\n\nThe edited skill against the original ({sources})."]
    broken = _flip_lines(compared, "flip_to_fail", key="original_outcome", named=len(suites) > 1)
    rescued = _flip_lines(compared, "flip_to_pass", key="original_outcome", named=len(suites) > 1)
    regression = any(((s.comparison or {}).get("statistics") or {}).get("regression") for s in compared)
    if broken and regression:
        parts.append(f"**❌ Broken by the edit** (passed with the original, fail with the candidate; "
                     f"beyond noise): {broken}")
    elif broken:
        parts.append(f"**Changed, within noise** (passed with the original, fail with the candidate "
                     f"in this run): {broken}")
    if rescued:
        parts.append(f"**✅ Rescued by the edit** (failed with the original, pass with the candidate): {rescued}")
    if not broken and not rescued:
        parts.append("No case changed its result between the original and the candidate.")
    lines = [
        "| Suite | Candidate | Original | Δ pts (95% CI) | p (case-level) |",
        "|---|---:|---:|---|---:|",
    ]
    for s in compared:
        comparison = s.comparison or {}
        rate = comparison.get("pass_rate") or {}
        stats = comparison.get("statistics") or {}
        delta = _pts(rate.get("delta_pts"))
        ci = stats.get("ci95")
        if rate.get("delta_pts") is not None and ci:
            delta += f" ({_pts(ci[0])} to {_pts(ci[1])})"
        elif comparison.get("error_dominated"):
            delta = "n/a (error-dominated)"
        lines.append(
            f"| {escape.inline(s.name, 80)} | {_rate(rate.get('candidate'))} | "
            f"{_rate(rate.get('original'))} | {delta} | {_p(stats.get('p_value', stats.get('mcnemar_p')))} |"
        )
    parts.append("\n".join(lines))
    return "\n\n".join(parts)


TREND_ICON = {"improved": "↑", "regressed": "↓", "unchanged": "=", "within_noise": "≈"}
# "improved" and "regressed" are printed only when the per-case change passed its test.
TREND_WORDS = {"within_noise": "changed within noise"}
ARM_NAMES = {"with_skill": "with skill", "without_skill": "without skill", "original": "original"}


def _trend(suites: list[SuiteView]) -> str:
    """Each arm against the previous comparable run (same suite, model, adapter)."""
    lines = []
    for s in suites:
        trend = s.trend
        if not trend:
            continue
        prefix = f"{escape.inline(s.name, 80)}: " if len(suites) > 1 else ""
        previous = trend.get("previous")
        if previous is None:
            lines.append(f"- {prefix}first comparable run (same suite content, cases, runs, pass@k, adapter and judge)")
            continue
        arms = []
        for a in trend.get("arms") or []:
            direction = TREND_WORDS.get(a.get("direction"), a.get("direction"))
            label = f"{TREND_ICON.get(a.get('direction'), '')} {ARM_NAMES.get(a.get('arm'), a.get('arm'))} " \
                    f"{escape.inline(direction, 30)}"
            if a.get("direction") == "unchanged":
                label += f" ({_rate(a.get('current'))})"
            else:
                p = f", p {_p(a['p_value'])}" if a.get("p_value") is not None else ""
                label += f" ({_rate(a.get('previous'))} → {_rate(a.get('current'))}{p})"
            arms.append(label)
        changed = " (the skill changed since)" if trend.get("skill_changed") else ""
        when = escape.inline(str(previous.get("recorded_at", "?"))[:16].replace("T", " "), 20)
        lines.append(f"- {prefix}vs the run of {when} UTC{changed}: " + (" · ".join(arms) or "no arm to compare"))
    return ("**Trend**\n\n" + "\n".join(lines)) if lines else ""


def _flip_lines(suites: list[SuiteView], outcome: str, *, key: str = "outcome", named: bool | None = None) -> str:
    named = len(suites) > 1 if named is None else named
    names: list[str] = []
    for suite in suites:
        runs: dict[str, int] = OrderedDict()
        for case in suite.cases:
            if getattr(case, key) == outcome:
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


def _table(suites: list[SuiteView]) -> str:
    if not suites:
        return ""
    lines = [
        "| Suite | Cases | With skill | Without skill | Δ pts (95% CI) | p (case-level) | Verdict |",
        "|---|---:|---:|---:|---|---:|---|",
    ]
    for s in suites:
        delta = _pts(s.delta_pts)
        if s.delta_pts is not None and s.ci95 is not None:
            delta += f" ({_pts(s.ci95[0])} to {_pts(s.ci95[1])})"
        elif s.error_dominated:
            delta = "n/a (error-dominated)"
        verdict = f"{VERDICT_ICON.get(s.verdict, '')} {escape.inline(s.verdict, 20)}"
        k = f" (pass@{s.pass_k})" if s.pass_k > 1 else ""
        lines.append(
            f"| {escape.inline(s.name, 80)} | {s.total_cases} | {_rate(s.with_rate)}{k} | "
            f"{_rate(s.without_rate)}{k} | {delta} | {_p(s.p_value)} | {verdict} |"
        )
    return "\n".join(lines)


def _rate_notes(suites: list[SuiteView]) -> str:
    """What the rates are: pass@k (any of k attempts) is not the MEAN over --runs."""
    notes = []
    ks = sorted({s.pass_k for s in suites if s.pass_k > 1})
    if ks:
        k = "/".join(str(k) for k in ks)
        notes.append(f"pass@{k}: each arm made every one of its attempts (no early stop) and passes "
                     "when any graded attempt passed; an errored attempt is left out, not failed.")
    for s in suites:
        summary = s.pass_at_k or {}
        arms = summary.get("arms") or {}
        if arms.get("with_skill") and arms.get("without_skill"):
            where = f"{escape.inline(s.name, 60)}: " if len(suites) > 1 else ""
            notes.append(
                f"{where}unbiased pass@{summary['k']} from {summary['attempts']} attempts: with "
                f"{_rate(arms['with_skill']['pass_at_k'])}, without {_rate(arms['without_skill']['pass_at_k'])}; "
                f"pass@1 with {_rate(arms['with_skill']['pass_at_1'])}, without "
                f"{_rate(arms['without_skill']['pass_at_1'])}."
            )
    runs = sorted({s.runs for s in suites if s.runs > 1})
    if runs:
        notes.append(f"Rates are the MEAN over {'/'.join(str(r) for r in runs)} independent runs per case.")
    return f"_{' '.join(notes)}_" if notes else ""


def _criteria(suites: list[SuiteView]) -> str:
    """Per-dimension scores (ruby-skill-bench): the format's own verdict, the table of
    dimensions (without, with, delta) and the judge's reasons for the weak ones."""
    parts = []
    for s in suites:
        for c in s.criteria:
            state = {True: "✅ pass", False: "❌ fail", None: "⚠️ n/a (an arm was not scored)"}[c.passed]
            where = f"{escape.inline(s.name, 60)} / " if len(suites) > 1 else ""
            lines = [
                f"**Criteria** — {where}{escape.inline(c.case_name, 80)}: with {_num(c.with_total)}/100, "
                f"without {_num(c.without_total)}/100, Δ {_signed(c.delta)} (passes at with ≥ "
                f"{c.pass_threshold:g} and Δ ≥ {c.minimum_delta:+g}): {state}",
                "",
                "| Dimension | Without skill | With skill | Δ |",
                "|---|---:|---:|---:|",
            ]
            for row in c.rows:
                lines.append(
                    f"| {escape.inline(row.name, 60)} | {_num(row.without)}/{row.max_score} | "
                    f"{_num(row.with_skill)}/{row.max_score} | {_signed(row.delta)} |"
                )
            if c.weak:
                lines += ["", "Weak dimensions (below the pass threshold's share of their maximum):", ""]
                for weak in c.weak:
                    arm = "with skill" if weak.arm == "with_skill" else "without skill"
                    lines.append(
                        f"- {arm} · {escape.inline(weak.name, 60)} {weak.score:g}/{weak.max_score}: "
                        f"{escape.inline(weak.reason, 300)}"
                    )
            parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:g}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{'−' if value < 0 else '+'}{abs(value):g}"


def _statistics(suites: list[SuiteView]) -> str:
    lines = []
    for s in suites:
        if s.stats_summary:
            prefix = f"{escape.inline(s.name, 80)}: " if len(suites) > 1 else ""
            lines.append(f"- {prefix}{escape.inline(s.stats_summary, 400)}")
    return "\n".join(lines)


def _disclosures(suites: list[SuiteView]) -> str:
    lines = []
    for s in suites:
        counts = [
            f"{s.errors} errored",
            f"{s.skipped_apples_oranges} skipped (apples-to-oranges)",
            f"{s.trigger_only} trigger-only",
            f"{s.cache_hits} cached baselines",
            f"{s.contaminated_arms} contaminated arms",
            f"{s.cases_aggregated} of {s.total_cases} cases aggregated",
        ]
        flags = []
        if s.error_dominated:
            flags.append("**error-dominated: the lift is withheld**")
        check = s.judge_consistency or {}
        if check.get("lift_withheld"):
            flags.append(f"**the judge agreed with itself on {check['agreed']}/{check['sampled'] - check['errored']} "
                         f"re-asked verdicts, below {check['floor']:.0%}: the lift is withheld**")
        elif check.get("agreement") is not None:
            counts.append(f"judge agreed with itself on {check['agreed']}/{check['sampled'] - check['errored']} "
                          "re-asked verdicts")
        if s.interrupted:
            flags.append("**interrupted: partial results**")
        if s.adapter == "mock":
            flags.append("mock adapter: the answers are scripted, so the lift shows the pipeline "
                         "works, not that the skill helps")
        prefix = f"{escape.inline(s.name, 80)}: " if len(suites) > 1 else ""
        lines.append(f"- {prefix}" + " · ".join(flags + counts))
        lines.extend(f"  - ⚠️ {escape.inline(w, 300)}" for w in s.warnings[:10])
        if len(s.warnings) > 10:
            lines.append(f"  - and {len(s.warnings) - 10} more warnings in results.json")
    return ("**Disclosures**\n\n" + "\n".join(lines)) if lines else ""


def _notes(notes: Sequence[str]) -> str:
    if not notes:
        return ""
    return "\n".join(f"> {escape.inline(note, 500)}" for note in notes)


def _footer(suites: list[SuiteView], run_url: str | None) -> str:
    parts = []
    if suites:
        parts.append(f"skillab {escape.inline(suites[0].version, 20)}")
        parts.append("adapter " + _distinct(s.adapter for s in suites))
        parts.append("model " + _distinct(s.agent_model or "none" for s in suites))
        parts.append("judge " + _distinct(s.judge_model or "none" for s in suites))
        parts.append("runs " + _distinct(str(s.runs) for s in suites))
        parts.append("sandbox " + _distinct(s.sandbox for s in suites))
        tokens = sum(s.total_tokens for s in suites)
        costs = [s.cost_usd for s in suites if s.cost_usd is not None]
        parts.append(f"{tokens:,} tokens" + (f" · ${sum(costs):.4f}" if costs else ""))
    if run_url:
        safe = run_url.replace("(", "%28").replace(")", "%29").replace(" ", "%20")
        parts.append(f"[workflow run]({safe}) (both arms of every case side by side: "
                     "`report.html` in its artifacts)")
    return "---\n<sub>" + " · ".join(parts) + "</sub>" if parts else ""


def _sandbox(isolation: dict[str, Any]) -> str:
    return "unsandboxed" if isolation.get("unsandboxed") else str(isolation.get("backend") or "?")


def _distinct(values: Any) -> str:
    seen = list(OrderedDict.fromkeys(values))
    return ", ".join(escape.code_span(v, 60) for v in seen)


# -- per-case rows and details, within a budget --------------------------------------------------


def _cases_section(suites: list[SuiteView], budget: int) -> str:
    """Rows for as many cases as fit (most important first), then details for as many as fit."""
    ordered = sorted((c for s in suites for c in s.cases), key=lambda c: c.priority)
    if not ordered:
        return ""
    spent = size("### Cases\n\n")
    rows: dict[int, list[CaseView]] = {s.index: [] for s in suites}
    row_text: dict[tuple[int, int], str] = {}
    headers_paid: set[int] = set()
    for case in ordered:
        text = _case_row(case, suites[case.suite_index])
        cost = size(text) + 1
        if case.suite_index not in headers_paid:
            cost += size(_rows_header(suites[case.suite_index], len(suites) > 1)) + 2
        if spent + cost > budget:
            break
        spent += cost
        headers_paid.add(case.suite_index)
        rows[case.suite_index].append(case)
        row_text[(case.suite_index, case.order)] = text
    shown_rows = sum(len(v) for v in rows.values())

    details: dict[int, list[str]] = {s.index: [] for s in suites}
    shown_details = 0
    if shown_rows == len(ordered):
        for case in ordered:
            block = _case_details(case, suites[case.suite_index], len(suites) > 1)
            if spent + size(block) + 2 > budget:
                break
            spent += size(block) + 2
            details[case.suite_index].append(block)
            shown_details += 1

    parts = ["### Cases"]
    for s in suites:
        if rows[s.index]:
            parts.append(
                _rows_header(s, len(suites) > 1)
                + "\n"
                + "\n".join(row_text[(s.index, c.order)] for c in rows[s.index])
            )
        parts.extend(details[s.index])
    left_rows = len(ordered) - shown_rows
    left_details = len(ordered) - shown_details
    if left_rows:
        parts.append(
            f"_{left_rows} of {len(ordered)} case rows and every case's details are left out to "
            "stay under GitHub's comment limit; the full records are in results.json._"
        )
    elif left_details:
        parts.append(
            f"_Details of {left_details} of {len(ordered)} cases are left out to stay under "
            "GitHub's comment limit; the full records are in results.json._"
        )
    return "\n\n".join(parts)


def _rows_header(suite: SuiteView, named: bool) -> str:
    title = f"**{escape.inline(suite.name, 80)}**\n\n" if named else ""
    run = " Run |" if suite.runs > 1 else ""
    rule = "---:|" if suite.runs > 1 else ""
    original, original_rule = (" Original | Vs original |", "---|---|") if suite.comparison else ("", "")
    return (
        f"{title}| Case |{run} Outcome | With skill | Without skill |{original} Tokens (with / without) |\n"
        f"|---|{rule}---|---|---|{original_rule}---:|"
    )


def _case_row(case: CaseView, suite: SuiteView) -> str:
    run = f" {case.run_index + 1} |" if suite.runs > 1 else ""
    tokens = f"{case.with_skill.total_tokens:,} / {case.without_skill.total_tokens:,}"
    original = ""
    if suite.comparison:
        state = _arm_state(case.original) if case.original is not None else "—"
        versus = _edit_label(case, suite)
        original = f" {state} | {versus} |"
    return (
        f"| {escape.inline(case.case_name, 80)} |{run} {OUTCOME_LABEL.get(case.outcome, case.outcome)} | "
        f"{_arm_state(case.with_skill)} | {_arm_state(case.without_skill)} |{original} {tokens} |"
    )


def _edit_label(case: CaseView, suite: SuiteView) -> str:
    """A case is "broken by the edit" only when its drop passed the noise test."""
    regressed = (((suite.comparison or {}).get("statistics") or {}).get("regressed_cases")) or ()
    if case.original_outcome == "flip_to_fail" and case.case_name not in regressed:
        return "worse with the edit, within noise"
    return EDIT_LABEL.get(case.original_outcome or "error", str(case.original_outcome))


def _arm_state(arm: ArmRecord) -> str:
    if arm.errored:
        state = "⚠️ errored"
    elif not arm.task_attempted:
        state = "not attempted"
    else:
        state = "✅ pass" if arm.passed else "❌ fail"
    return state + (" (cached)" if arm.cached else "")


def _case_details(case: CaseView, suite: SuiteView, named: bool) -> str:
    run = f" (run {case.run_index + 1})" if suite.runs > 1 else ""
    where = f"{escape.html_text(suite.name, 60)} / " if named else ""
    summary = (
        f"{where}{escape.html_text(case.case_name, 100)}{run}: "
        f"{OUTCOME_LABEL.get(case.outcome, case.outcome)}"
    )
    if case.original_outcome in ("flip_to_fail", "flip_to_pass"):
        summary += f" · {_edit_label(case, suite)}"
    lines = [f"<details><summary>{summary}</summary>", ""]
    if case.error:
        lines += [f"Case error: {escape.inline(case.error, 500)}", ""]
    arms = [case.with_skill, case.without_skill] + ([case.original] if case.original is not None else [])
    lines += [
        "| | With skill | Without skill |" + (" Original |" if case.original is not None else ""),
        "|---|---|---|" + ("---|" if case.original is not None else ""),
        "| result | " + " | ".join(_arm_state(a) for a in arms) + " |",
        "| tokens | " + " | ".join(f"{a.total_tokens:,}" for a in arms) + " |",
        "| cost | " + " | ".join(_cost(a) for a in arms) + " |",
        "| duration | " + " | ".join(f"{a.duration_ms / 1000:.1f} s" for a in arms) + " |",
        "",
    ]
    for label, arm in (("With skill", case.with_skill), ("Without skill", case.without_skill)):
        lines += _arm_findings(label, arm)
    lines.append("</details>")
    return "\n".join(lines)


def _arm_findings(label: str, arm: ArmRecord) -> list[str]:
    """What went wrong in one arm: its error, failed validators, failed expectations, its answer."""
    if arm.passed and not arm.errored:
        return []
    items = []
    if arm.error:
        items.append(f"- error: {escape.inline(arm.error, 400)}")
    for v in arm.validator_results:
        if v.passed and not v.errored:
            continue
        got = "no verdict (errored)" if v.errored else f"exit {v.exit_code}, expected {v.expect_exit_code}"
        tail = (v.stderr or v.stdout).strip()[-300:]
        detail = f" — {escape.inline(tail, 300)}" if tail else ""
        items.append(f"- validator {escape.inline(v.label, 120)}: {got}{detail}")
    for e in arm.expectation_results:
        if e.passed and not e.errored:
            continue
        state = "judge errored" if e.errored else "not met"
        items.append(
            f"- expectation {escape.inline(e.expectation, 200)}: {state} — "
            f"judge: {escape.inline(e.reason, 400)}"
        )
    for g in arm.graders:
        if g.passed and not g.errored:
            continue
        state = "no verdict (errored)" if g.errored else "failed"
        tail = g.output.strip()[-300:]
        detail = f" — {escape.inline(tail, 300)}" if tail else ""
        items.append(
            f"- {escape.inline(g.label, 120)}: {state} — "
            f"{escape.inline(g.reason, 400)}{detail}"
        )
    lines = [f"**{label}**", ""] + (items or ["- failed"]) + [""]
    if arm.final_output.strip():
        lines += ["Answer:", "", escape.code_block(arm.final_output, _OUTPUT_EXCERPT), ""]
    return lines


def _hard_trim(body: str, max_chars: int) -> str:
    note = "\n\n_The report is cut here to fit GitHub's comment limit; see results.json._\n"
    kept: list[str] = []
    used = size(note)
    for line in body.split("\n"):
        if used + size(line) + 1 > max_chars:
            break
        kept.append(line)
        used += size(line) + 1
    return "\n".join(kept) + note


# -- number formats ------------------------------------------------------------------------------


def _pts(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{'−' if value < 0 else '+'}{abs(value):.1f}"


def _rate(value: float | None) -> str:
    if value is None:
        return "n/a"
    pct = value * 100
    return f"{pct:.0f}%" if abs(pct - round(pct)) < 0.05 else f"{pct:.1f}%"


def _p(value: float | None) -> str:
    if value is None:
        return "n/a"
    if value < 0.001:
        return "<0.001"
    return f"{value:.3f}" if value < 0.1 else f"{value:.2f}"


def _cost(arm: ArmRecord) -> str:
    if arm.cached:
        return "cached"
    return "n/a" if arm.usage.cost_usd is None else f"${arm.usage.cost_usd:.4f}"
