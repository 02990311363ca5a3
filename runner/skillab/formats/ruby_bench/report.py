"""ruby-skill-bench's report sections: per case, the format's own criteria verdict and the
table of dimensions (without, with, delta), with the judge's reasons for the weak ones."""

from __future__ import annotations

from collections.abc import Sequence

from ...core.runlog import RunLog
from ..base import Inline


def markdown_section(named_logs: Sequence[tuple[str, RunLog]], inline: Inline) -> str:
    """The criteria of every suite in the report (each run's ``criteria`` block); ``""`` when no
    suite has any. ``inline`` escapes what a suite or the judge wrote."""
    parts = []
    for name, log in named_logs:
        for c in log.summary.criteria or ():
            state = {True: "✅ pass", False: "❌ fail", None: "⚠️ n/a (an arm was not scored)"}[c.passed]
            where = f"{inline(name, 60)} / " if len(named_logs) > 1 else ""
            lines = [
                f"**Criteria** — {where}{inline(c.case_name, 80)}: with {_num(c.with_total)}/100, "
                f"without {_num(c.without_total)}/100, Δ {_signed(c.delta)} (passes at with ≥ "
                f"{c.pass_threshold:g} and Δ ≥ {c.minimum_delta:+g}): {state}",
                "",
                "| Dimension | Without skill | With skill | Δ |",
                "|---|---:|---:|---:|",
            ]
            for row in c.dimensions:
                lines.append(
                    f"| {inline(row.name, 60)} | {_num(row.without_skill)}/{row.max_score} | "
                    f"{_num(row.with_skill)}/{row.max_score} | {_signed(row.delta)} |"
                )
            if c.weak:
                lines += ["", "Weak dimensions (below the pass threshold's share of their maximum):", ""]
                for weak in c.weak:
                    arm = "with skill" if weak.arm == "with_skill" else "without skill"
                    lines.append(
                        f"- {arm} · {inline(weak.name, 60)} {weak.score:g}/{weak.max_score}: "
                        f"{inline(weak.reason, 300)}"
                    )
            parts.append("\n".join(lines))
    return "\n\n".join(parts)


def terminal_section(log: RunLog) -> list[str]:
    """The criteria of one suite for the terminal table (the run's summary holds them)."""
    lines: list[str] = []
    for verdict in log.summary.criteria or ():
        state = {True: "pass", False: "fail", None: "n/a (an arm was not scored)"}[verdict.passed]
        lines += [
            "",
            f"  criteria     {verdict.case_name}: with {_score(verdict.with_total)} · without "
            f"{_score(verdict.without_total)} · delta {_plus(verdict.delta)} (needs with >= "
            f"{verdict.pass_threshold:g} and delta >= {verdict.minimum_delta:+g}): {state}",
        ]
        width = max(12, *(len(r.name) for r in verdict.dimensions)) if verdict.dimensions else 12
        lines.append(f"    {'dimension':<{width}}  {'without':>9}  {'with':>9}  {'delta':>6}")
        for row in verdict.dimensions:
            lines.append(
                f"    {row.name:<{width}}  {_of(row.without_skill, row.max_score):>9}  "
                f"{_of(row.with_skill, row.max_score):>9}  {_plus(row.delta):>6}"
            )
        for weak in verdict.weak:
            arm = "with skill" if weak.arm == "with_skill" else "without skill"
            lines.append(f"    weak ({arm}) {weak.name} {weak.score:g}/{weak.max_score}: {_clip(weak.reason, 100)}")
    return lines


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:g}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{'−' if value < 0 else '+'}{abs(value):g}"


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:g}/100"


def _of(value: float | None, top: float) -> str:
    return "n/a" if value is None else f"{value:g}/{top}"


def _plus(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+g}"


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
