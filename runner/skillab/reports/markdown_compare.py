"""The markdown report's comparisons over time and against the original skill: the candidate
vs original section (``--against``) and the trend against the previous comparable run."""

from __future__ import annotations

from ..core.summary import Comparison
from ..core.trend import ArmTrend, Trend
from . import escape
from .markdown_view import SuiteView, broken_by_edit, flip_lines, fmt_p, fmt_pts, fmt_rate


def versus_original(suites: list[SuiteView]) -> str:
    """Candidate vs original: the cases the edit broke first, then those it rescued, then rates."""
    compared = [s for s in suites if s.comparison]
    if not compared:
        return ""
    sources = ", ".join(
        (f"{escape.inline(s.name, 60)}: " if len(suites) > 1 else "")
        + escape.code_span(s.comparison.original.label or "?", 80)
        for s in compared if s.comparison is not None
    )
    parts = [f"### Candidate vs original\n\nThe edited skill against the original ({sources})."]
    named = len(suites) > 1
    # Each suite's own noise test decides: a regression in one suite says nothing of another's flips.
    broken = flip_lines(compared, "flip_to_fail", key="original_outcome", named=named, keep=broken_by_edit)
    changed = flip_lines(compared, "flip_to_fail", key="original_outcome", named=named,
                         keep=lambda s, name: not broken_by_edit(s, name))
    rescued = flip_lines(compared, "flip_to_pass", key="original_outcome", named=named)
    if broken:
        parts.append(f"**❌ Broken by the edit** (passed with the original, fail with the candidate; "
                     f"beyond noise): {broken}")
    if changed:
        parts.append(f"**Changed, within noise** (passed with the original, fail with the candidate "
                     f"in this run): {changed}")
    if rescued:
        parts.append(f"**✅ Rescued by the edit** (failed with the original, pass with the candidate): {rescued}")
    if not broken and not changed and not rescued:
        parts.append("No case changed its result between the original and the candidate.")
    lines = [
        "| Suite | Candidate | Original | Δ pts (95% CI) | p (case-level) |",
        "|---|---:|---:|---|---:|",
    ]
    for s in compared:
        if s.comparison is not None:
            lines.append(_versus_row(s.name, s.comparison))
    parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _versus_row(name: str, comparison: Comparison) -> str:
    rate, stats = comparison.pass_rate, comparison.statistics
    ci = None if stats is None else stats.ci95
    delta = fmt_pts(rate.delta_pts)
    if rate.delta_pts is not None and ci:
        delta += f" ({fmt_pts(ci[0])} to {fmt_pts(ci[1])})"
    elif comparison.error_dominated:
        delta = "n/a (error-dominated)"
    p_value = None if stats is None else stats.p_value
    return (f"| {escape.inline(name, 80)} | {fmt_rate(rate.candidate)} | {fmt_rate(rate.original)} | {delta} | "
            f"{fmt_p(p_value)} |")


TREND_ICON = {"improved": "↑", "regressed": "↓", "unchanged": "=", "within_noise": "≈", "changed": "·"}
# "improved" and "regressed" are printed only when the per-case change passed its test.
TREND_WORDS = {"within_noise": "changed within noise", "changed": "moved"}
ARM_NAMES = {"lift": "lift", "with_skill": "with skill", "without_skill": "without skill", "original": "original"}


def _lift_pts(value: float | None) -> str:
    return "?" if value is None else f"{fmt_pts(value * 100)} pts"


def trend_section(suites: list[SuiteView]) -> str:
    """Each arm against the previous comparable run (same suite, model, adapter)."""
    lines = []
    for s in suites:
        if s.trend is None:
            continue
        prefix = f"{escape.inline(s.name, 80)}: " if len(suites) > 1 else ""
        lines.append(f"- {prefix}{_trend_line(s.trend)}")
    return ("**Trend**\n\n" + "\n".join(lines)) if lines else ""


def _trend_line(trend: Trend) -> str:
    """``vs the run of <when> UTC: ↑ with skill improved (40% → 80%) · …``."""
    previous = trend.previous
    if previous is None:
        return "first comparable run (same suite content, cases, runs, pass@k, adapter and judge)"
    arms = " · ".join(_arm_trend(a) for a in trend.arms)
    changed = " (the skill changed since)" if trend.skill_changed else ""
    if trend.original_changed:
        changed += " (compared with another original: no trend for it)"
    when = escape.inline(str(previous.recorded_at or "?")[:16].replace("T", " "), 20)
    return f"vs the run of {when} UTC{changed}: " + (arms or "no arm to compare")


def _arm_trend(a: ArmTrend) -> str:
    direction = TREND_WORDS.get(a.direction, a.direction)
    label = f"{TREND_ICON.get(a.direction, '')} {ARM_NAMES.get(a.arm, a.arm)} {escape.inline(direction, 30)}"
    show = _lift_pts if a.arm == "lift" else fmt_rate
    if a.direction == "unchanged":
        return label + f" ({show(a.current)})"
    p = f", p {fmt_p(a.p_value)}" if a.p_value is not None and a.arm == "lift" else ""
    return label + f" ({show(a.previous)} → {show(a.current)}{p})"
