"""The markdown report: the PR comment, the job summary and ``skillab run --markdown``.

It reads typed runs (``RunLog``, a results document of format ``skillab.results/1`` read back),
so any run that left one can be reported; a suite that produced none is a ``FailedSuite`` row.
Order of what a reader sees: the headline verdict, the flips (which cases the skill rescued and
which it broke), the per-suite table, the disclosures, then per-case rows and collapsed details.
To stay under GitHub's comment limit it leaves out case details first, then case rows, never the
suite table. Everything a model or a suite wrote goes through ``escape``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.run_info import JudgeConsistency
from ..core.runlog import RunLog
from ..scoring.statistics import pooled_statistics
from . import escape
from .audit_view import audit_section
from .consistency_wording import agreed_on, agreement_interval, below_floor, consistency_unmeasured
from .context_view import context_text
from .evidence_view import markdown_section as evidence_section
from .held_out_view import held_out_section
from .markdown_cases import cases_section, size
from .markdown_compare import trend_section, versus_original
from .markdown_view import (
    VERDICT_ICON,
    VERDICT_SEVERITY,
    FailedSuite,
    SuiteView,
    broken_by_skill,
    flip_lines,
    fmt_p,
    fmt_pts,
    fmt_rate,
)
from .partial import early_stop, interruption
from .placebo_view import markdown_section as placebo_section
from .portability import is_portability_run, portability_rows, prompt_notes
from .portability import render_markdown as _portability
from .trigger_gates import only_triggers
from .trigger_report import markdown_headline as trigger_headline
from .trigger_report import markdown_section as trigger_section

# GitHub refuses comment bodies over 65,536 characters; the default leaves room for the marker.
GITHUB_COMMENT_LIMIT = 65536
DEFAULT_MAX_CHARS = 65000
# Room kept for the note that says what was left out.
_TRIM_NOTE_RESERVE = 400


# -- verdicts over several suites ----------------------------------------------------------------


def overall_verdict(logs: Sequence[RunLog], failed: Sequence[FailedSuite] = ()) -> str | None:
    """The most severe suite verdict (error > fail > mixed > pass; a failed suite is an error);
    None without suites."""
    return _most_severe([log.verdict for log in logs if not only_triggers(log)] + ["error" for _ in failed])


def _most_severe(verdicts: Sequence[str]) -> str | None:
    if not verdicts:
        return None
    return max(verdicts, key=lambda v: VERDICT_SEVERITY.get(v, 3))


def pooled_delta_pts(logs: Sequence[RunLog]) -> float | None:
    """The lift over every case of every suite that measured one, each case weighing the same."""
    pooled = pooled_statistics(logs)
    return None if pooled is None else pooled.lift_pts


def pooled_scope(logs: Sequence[RunLog]) -> str:
    """``pooled +X pts (95% CI a to b)``: the cases of all suites as one sample."""
    pooled = pooled_statistics(logs)
    if pooled is None or pooled.lift_pts is None:
        return "pooled n/a pts"
    text = f"pooled {fmt_pts(pooled.lift_pts)} pts"
    if pooled.ci95 is not None:
        text += f" (95% CI {fmt_pts(pooled.ci95[0])} to {fmt_pts(pooled.ci95[1])}, {pooled.n_cases} cases)"
    return text


# -- rendering ---------------------------------------------------------------------------------


def render_markdown(
    logs: Sequence[RunLog],
    *,
    failed: Sequence[FailedSuite] = (),
    run_url: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    notes: Sequence[str] = (),
    checks: Sequence[str] = (),
    html_artifact: bool = False,
) -> str:
    """The report for ``logs`` (then a row for each ``failed`` suite), at most ``max_chars``
    long (counted as GitHub counts).

    ``notes`` are plain sentences about the run as a whole (a skipped suite, a parse error);
    ``checks`` say why the check failed, right under the headline where a reviewer looks
    first. Both are escaped like everything else. ``html_artifact``: the workflow run uploads
    ``report.html``, so the footer may send readers to it.
    """
    views = [SuiteView.from_log(i, log) for i, log in enumerate(logs)]
    failed_rows = [SuiteView.failed(len(logs) + i, suite) for i, suite in enumerate(failed)]
    # Suites of trigger queries only have no A/B part: they appear in the trigger section.
    graded = [log for log in logs if not only_triggers(log)]
    suites = [view for view, log in zip(views, logs) if not only_triggers(log)] + failed_rows
    several_agents = is_portability_run(logs, failed)
    if several_agents:
        # The same suite under several agents: each row names its agent.
        suites = [replace(s, name=f"{s.name} · {s.adapter}") for s in suites]
    head = "\n\n".join(
        part
        for part in (
            _headline(suites, graded, several_agents) if suites or not logs
            else trigger_headline(logs),
            _notes(checks),
            versus_original(suites),
            _flips(suites),
            _table(suites),
            trigger_section(logs),
            _portability(logs, failed),
            "" if several_agents else _prompt_notes(graded),
            _rate_notes(suites),
            _statistics(suites),
            placebo_section(list(zip((s.name for s in suites), graded))),
            _format_sections(suites, graded),
            trend_section(suites),
            evidence_section(list(zip((s.name for s in suites), graded))),
            _disclosures(suites),
            _context(suites, graded),
            held_out_section(graded, len(suites) > 1),
            audit_section(graded, len(suites) > 1),
            _notes(notes),
        )
        if part
    )
    foot = _footer(views + failed_rows, run_url, html_artifact)
    budget = max_chars - size(head) - size(foot) - _TRIM_NOTE_RESERVE
    cases = cases_section(suites, budget)
    body = "\n\n".join(part for part in (head, cases, foot) if part) + "\n"
    if size(body) > max_chars:
        # Only a table of hundreds of suites gets here: keep whole rows, say what is missing.
        body = cut_to_fit(body, max_chars)
    return body


def write_markdown(logs: Sequence[RunLog], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_markdown(logs), encoding="utf-8")


def _headline(suites: list[SuiteView], graded: Sequence[RunLog], several_agents: bool) -> str:
    """The verdict over every suite shown (a failed suite's row is an error), and its scope."""
    if not suites:
        return "## skillab: no suite ran"
    verdict = _most_severe([s.verdict for s in suites]) or "error"
    icon = VERDICT_ICON.get(verdict, "⚠️")
    scope = _scope(suites, graded, several_agents) + _edit_scope(suites)
    if any(log.settings.isolation.unsandboxed for log in graded):
        scope += " · ⚠️ unsandboxed: suite commands and the agent ran without a sandbox"
    if any(log.settings.models.judge_same_family for log in graded):
        scope += " · ⚠️ judged by a model of the agent's family"
    stopped = [text for text in map(interruption, graded) if text]
    if stopped:
        # A partial run has no verdict: what did not run could change it.
        icon, verdict = "⏹️", "; ".join(stopped)
    line = f"## {icon} skillab: {verdict} — {scope}"
    sources = sorted({log.settings.config.sentence() for log in graded if log.settings.config is not None})
    if sources:
        # The repository's config file chose these: a reviewer sees what it set.
        line += "\n\n" + "\n\n".join(f"⚙️ {escape.inline(text, 400)}" for text in sources)
    early = [text for text in map(early_stop, graded) if text]
    if early:
        line += "\n\n" + "\n\n".join(f"⏩ {text}" for text in early)
    return line + (f"\n\n{_verdict_counts(suites)}" if len(suites) > 1 else "")


def _scope(suites: list[SuiteView], graded: Sequence[RunLog], several_agents: bool) -> str:
    if len(suites) == 1:
        withheld = suites[0].lift_withheld and suites[0].delta_pts is not None
        shown = "lift withheld" if withheld else f"{fmt_pts(suites[0].delta_pts)} pts"
        return f"{escape.inline(suites[0].name, 80)}: {shown}"
    if several_agents:
        # Different agents have different baselines; their lifts are not pooled.
        agents = len({s.adapter for s in suites})
        return f"{len(suites)} suite runs under {agents} agents, lift per agent below"
    return f"{len(suites)} suites, {pooled_scope(graded)}"


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
    compared = [s.comparison for s in suites if s.comparison is not None]
    broke = sum(len(c.broken_by_edit) for c in compared)
    changed = sum(len(c.changed_within_noise) for c in compared)
    text = ""
    if broke:
        text += f" · ❌ the edit broke {broke} case{'s' if broke != 1 else ''} beyond noise"
    if changed:
        text += (f" · {changed} case{'s' if changed != 1 else ''} the original passed "
                 f"{'fail' if changed != 1 else 'fails'} now: changed, within noise")
    return text


def _flips(suites: list[SuiteView]) -> str:
    # An error-dominated suite says nothing about the skill, not even case by case.
    suites = [s for s in suites if not s.error_dominated and not s.lift_withheld]
    # Each suite's own noise test decides: a regression in one suite says nothing of another's flips.
    broken = flip_lines(suites, "flip_to_fail", keep=broken_by_skill)
    worse = flip_lines(suites, "flip_to_fail", keep=lambda s, name: not broken_by_skill(s, name))
    rescued = flip_lines(suites, "flip_to_pass")
    if not broken and not worse and not rescued:
        return ""
    parts = []
    if broken:
        parts.append(f"**Broken by the skill** (passed without it, fail with it; beyond noise): {broken}")
    if worse:
        parts.append(f"**Worse with the skill, within noise** (passed without it, fail with it): {worse}")
    if rescued:
        parts.append(f"**Rescued by the skill** (fail without it, pass with it): {rescued}")
    return "\n\n".join(parts)


def _table(suites: list[SuiteView]) -> str:
    if not suites:
        return ""
    lines = [
        "| Suite | Cases | With skill | Without skill | Δ pts (95% CI) | p (case-level) | Verdict |",
        "|---|---:|---:|---:|---|---:|---|",
    ]
    for s in suites:
        delta = fmt_pts(s.delta_pts)
        if s.delta_pts is not None and s.ci95 is not None:
            delta += f" ({fmt_pts(s.ci95[0])} to {fmt_pts(s.ci95[1])})"
        elif s.error_dominated:
            delta = "n/a (error-dominated)"
        elif s.lift_withheld:
            delta = "withheld (judge)"
        # A partial run has no verdict: what did not run could change it.
        verdict = ("⏹️ interrupted" if s.interrupted
                   else f"{VERDICT_ICON.get(s.verdict, '')} {escape.inline(s.verdict, 20)}")
        k = f" (pass@{s.pass_k})" if s.pass_k > 1 else ""
        lines.append(
            f"| {escape.inline(s.name, 80)} | {s.case_count} | {fmt_rate(s.with_rate)}{k} | "
            f"{fmt_rate(s.without_rate)}{k} | {delta} | {fmt_p(s.p_value)} | {verdict} |"
        )
    return "\n".join(lines)


def _prompt_notes(graded: Sequence[RunLog]) -> str:
    """What the agent's runtime tells the model about skills (the portability table says it
    beside several agents)."""
    notes = prompt_notes(portability_rows(graded))
    return " ".join(f"_Note: {escape.inline(n, 300)}._" for n in notes)


def _rate_notes(suites: list[SuiteView]) -> str:
    """What the rates are: pass@k (any of k attempts) is not the MEAN over --runs."""
    notes = []
    ks = sorted({s.pass_k for s in suites if s.pass_k > 1})
    if ks:
        k = "/".join(str(k) for k in ks)
        notes.append(f"pass@{k}: each arm made every one of its attempts (no early stop) and passes "
                     "when any graded attempt passed; an errored attempt is left out, not failed.")
    for s in suites:
        arms = {} if s.pass_at_k is None else s.pass_at_k.arms
        with_arm, without_arm = arms.get("with_skill"), arms.get("without_skill")
        if s.pass_at_k is not None and with_arm is not None and without_arm is not None:
            where = f"{escape.inline(s.name, 60)}: " if len(suites) > 1 else ""
            notes.append(
                f"{where}unbiased pass@{s.pass_at_k.k} from {s.pass_at_k.attempts} attempts: with "
                f"{fmt_rate(with_arm.pass_at_k)}, without {fmt_rate(without_arm.pass_at_k)}; "
                f"pass@1 with {fmt_rate(with_arm.pass_at_1)}, without {fmt_rate(without_arm.pass_at_1)}."
            )
    runs = sorted({s.runs_label or str(s.runs) for s in suites if s.runs > 1})
    if runs:
        fewer = " (--adaptive-runs gave cases whose arms agreed fewer)" if any("–" in r for r in runs) else ""
        notes.append(f"Rates are the MEAN over {'/'.join(runs)} independent runs per case{fewer}.")
    return f"_{' '.join(notes)}_" if notes else ""


def _format_sections(suites: list[SuiteView], graded: Sequence[RunLog]) -> str:
    """What each suite format adds about its own suites (ruby-skill-bench: its criteria)."""
    from ..formats import DEFAULT_REGISTRY

    named = [(s.name, log) for s, log in zip(suites, graded)]
    sections = (fmt.markdown_section(named, escape.inline) for fmt in DEFAULT_REGISTRY.of_logs(graded)
                if fmt.markdown_section)
    return "\n\n".join(section for section in sections if section)


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
        counts = list(s.counts)
        flags = []
        if s.error_dominated:
            flags.append("**error-dominated: the lift is withheld**")
        _judge_consistency(s.judge_consistency, flags, counts)
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


def _judge_consistency(check: JudgeConsistency | None, flags: list[str], counts: list[str]) -> None:
    """The judge's agreement with itself: a flag when it withheld the lift or measured nothing,
    else a count with its interval."""
    if check is None:
        return
    if check.lift_withheld:
        flags.append(f"**{below_floor(check)}: the lift is withheld**")
    elif check.sampled and check.agreement is None:
        flags.append(f"**{consistency_unmeasured(check)}**")
    elif check.agreement is not None:
        interval = agreement_interval(check).replace(", 95% CI", " (95% CI", 1)
        counts.append(f"judge {agreed_on(check)}{interval}{')' if check.ci95 else ''}")


def _context(suites: list[SuiteView], graded: Sequence[RunLog]) -> str:
    """What each skill costs in context, and its change against the original (a PR's base)."""
    lines = []
    for log in graded:
        budget = log.settings.context_budget
        text = None if budget is None else context_text(budget)
        if text:
            prefix = f"{escape.inline(log.settings.suite.skill, 80)}: " if len(suites) > 1 else ""
            lines.append(f"- {prefix}{escape.inline(text, 400)}")
    return ("**Context budget**\n\n" + "\n".join(lines)) if lines else ""


def _notes(notes: Sequence[str]) -> str:
    if not notes:
        return ""
    return "\n".join(f"> {escape.inline(note, 500)}" for note in notes)


def _footer(suites: list[SuiteView], run_url: str | None, html_artifact: bool) -> str:
    parts = [f"skillab {escape.inline(__version__, 20)}"] if suites else []
    # A suite that could not run (an invalid suite's row) has no adapter or models to tell.
    suites = [s for s in suites if s.version != "?"]
    if suites:
        parts[0] = f"skillab {escape.inline(suites[0].version, 20)}"
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
        parts.append(f"[workflow run]({safe})" + (" (both arms of every case side by side: "
                                                   "`report.html` in its artifacts)" if html_artifact else ""))
    return "---\n<sub>" + " · ".join(parts) + "</sub>" if parts else ""


def _distinct(values: Any) -> str:
    seen = list(OrderedDict.fromkeys(values))
    return ", ".join(escape.code_span(v, 60) for v in seen)


def cut_to_fit(body: str, max_chars: int, where: str = "results.json") -> str:
    """``body`` cut after its last whole line that fits, with a note that says where the rest is."""
    note = f"\n\n_The report is cut here to fit GitHub's comment limit; see {where}._\n"
    kept: list[str] = []
    used = size(note)
    for line in body.split("\n"):
        if used + size(line) + 1 > max_chars:
            break
        kept.append(line)
        used += size(line) + 1
    return "\n".join(kept) + note
