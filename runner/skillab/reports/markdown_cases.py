"""The markdown report's per-case rows and collapsed details, as many as fit a budget (the
most important cases first)."""

from __future__ import annotations

from ..core.records import ArmRecord, CaseRecord
from . import escape
from .findings import failed_checks
from .markdown_view import EDIT_LABEL, OUTCOME_LABEL, CaseView, SuiteView, broken_by_skill

_OUTPUT_EXCERPT = 600


def size(text: str) -> int:
    """Length as GitHub counts it (UTF-16 code units), so emoji cannot push a body over."""
    return len(text.encode("utf-16-le")) // 2


def cases_section(suites: list[SuiteView], budget: int) -> str:
    """Rows for as many cases as fit (most important first), then details for as many as fit."""
    ordered = sorted((c for s in suites for c in s.cases), key=lambda c: c.priority)
    if not ordered:
        return ""
    # A case names its suite by the suite's place among every run, trigger sets included.
    suite_of = {s.index: s for s in suites}
    spent = size("### Cases\n\n")
    rows: dict[int, list[CaseView]] = {s.index: [] for s in suites}
    row_text: dict[tuple[int, int], str] = {}
    headers_paid: set[int] = set()
    for case in ordered:
        text = _case_row(case.record, suite_of[case.suite_index])
        cost = size(text) + 1
        if case.suite_index not in headers_paid:
            cost += size(_rows_header(suite_of[case.suite_index], len(suites) > 1)) + 2
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
            block = _case_details(case.record, suite_of[case.suite_index], len(suites) > 1)
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


def _case_row(case: CaseRecord, suite: SuiteView) -> str:
    run = f" {case.run_index + 1} |" if suite.runs > 1 else ""
    tokens = f"{case.with_skill.total_tokens:,} / {case.without_skill.total_tokens:,}"
    original = ""
    if suite.comparison:
        state = _arm_state(case.original) if case.original is not None else "—"
        versus = _edit_label(case, suite)
        original = f" {state} | {versus} |"
    return (
        f"| {escape.inline(case.case_name, 80)} |{run} {_outcome_label(case, suite)} | "
        f"{_arm_state(case.with_skill)} | {_arm_state(case.without_skill)} |{original} {tokens} |"
    )


def _outcome_label(case: CaseRecord, suite: SuiteView) -> str:
    """A case is "broken by the skill" only when its drop passed the noise test, as the
    headline says: one case, one label."""
    if case.outcome == "flip_to_fail" and not broken_by_skill(suite, case.case_name):
        return "🟡 worse with the skill, within noise"
    return OUTCOME_LABEL.get(case.outcome, case.outcome)


def _edit_label(case: CaseRecord, suite: SuiteView) -> str:
    """A case is "broken by the edit" only when its drop passed the noise test."""
    stats = None if suite.comparison is None else suite.comparison.statistics
    regressed = () if stats is None else stats.regressed_cases
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


def _case_details(case: CaseRecord, suite: SuiteView, named: bool) -> str:
    run = f" (run {case.run_index + 1})" if suite.runs > 1 else ""
    where = f"{escape.html_text(suite.name, 60)} / " if named else ""
    summary = (
        f"{where}{escape.html_text(case.case_name, 100)}{run}: "
        f"{_outcome_label(case, suite)}"
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
    checks = failed_checks(arm)
    for v in checks.validators:
        got = "no verdict (errored)" if v.errored else f"exit {v.exit_code}, expected {v.expect_exit_code}"
        items.append(f"- validator {escape.inline(v.label, 120)}: {got}{_tail(v.stderr or v.stdout)}")
    for e in checks.expectations:
        state = "judge errored" if e.errored else "not met"
        items.append(
            f"- expectation {escape.inline(e.expectation, 200)}: {state} — "
            f"judge: {escape.inline(e.reason, 400)}"
        )
    for g in checks.graders:
        state = "no verdict (errored)" if g.errored else "failed"
        items.append(f"- {escape.inline(g.label, 120)}: {state} — {escape.inline(g.reason, 400)}{_tail(g.output)}")
    lines = [f"**{label}**", ""] + (items or ["- failed"]) + [""]
    if arm.final_output.strip():
        lines += ["Answer:", "", escape.code_block(arm.final_output, _OUTPUT_EXCERPT), ""]
    return lines


def _tail(output: str) -> str:
    """`` — <the output's last 300 characters>``, or nothing for an empty output."""
    tail = output.strip()[-300:]
    return f" — {escape.inline(tail, 300)}" if tail else ""


def _cost(arm: ArmRecord) -> str:
    if arm.cached:
        return "cached"
    return "n/a" if arm.usage.cost_usd is None else f"${arm.usage.cost_usd:.4f}"
