"""The markdown report's comparisons over time and against the original skill: the candidate
vs original section (``--against``) and the trend against the previous comparable run."""

from __future__ import annotations

from . import escape
from .markdown_view import SuiteView, broken_by_edit, flip_lines, fmt_p, fmt_pts, fmt_rate


def versus_original(suites: list[SuiteView]) -> str:
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
        comparison = s.comparison or {}
        rate = comparison.get("pass_rate") or {}
        stats = comparison.get("statistics") or {}
        delta = fmt_pts(rate.get("delta_pts"))
        ci = stats.get("ci95")
        if rate.get("delta_pts") is not None and ci:
            delta += f" ({fmt_pts(ci[0])} to {fmt_pts(ci[1])})"
        elif comparison.get("error_dominated"):
            delta = "n/a (error-dominated)"
        lines.append(
            f"| {escape.inline(s.name, 80)} | {fmt_rate(rate.get('candidate'))} | "
            f"{fmt_rate(rate.get('original'))} | {delta} | {fmt_p(stats.get('p_value', stats.get('mcnemar_p')))} |"
        )
    parts.append("\n".join(lines))
    return "\n\n".join(parts)


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
            show = _lift_pts if a.get("arm") == "lift" else fmt_rate
            if a.get("direction") == "unchanged":
                label += f" ({show(a.get('current'))})"
            else:
                p = f", p {fmt_p(a['p_value'])}" if a.get("p_value") is not None and a.get("arm") == "lift" else ""
                label += f" ({show(a.get('previous'))} → {show(a.get('current'))}{p})"
            arms.append(label)
        changed = " (the skill changed since)" if trend.get("skill_changed") else ""
        if trend.get("original_changed"):
            changed += " (compared with another original: no trend for it)"
        when = escape.inline(str(previous.get("recorded_at", "?"))[:16].replace("T", " "), 20)
        lines.append(f"- {prefix}vs the run of {when} UTC{changed}: " + (" · ".join(arms) or "no arm to compare"))
    return ("**Trend**\n\n" + "\n".join(lines)) if lines else ""
