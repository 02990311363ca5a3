"""The placebo arm's lines (``--placebo``) as every report shows them: the content lift (skill
vs placebo) beside the presence lift (placebo vs none), each with the main lift's sentence."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.runlog import RunLog
from ..core.statistics import LiftStatistics
from ..core.summary import PlaceboComparison
from . import escape as md


def _pts(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1f} pts"


def _part(stats: LiftStatistics | None, delta: float | None) -> str:
    if stats is not None and stats.summary:
        return stats.summary
    return _pts(delta) + (f" ({stats.withheld})" if stats is not None and stats.withheld else "")


def sentences(block: PlaceboComparison) -> tuple[str, str]:
    """The content sentence and the presence sentence."""
    rate = "n/a" if block.pass_rate is None else f"{block.pass_rate * 100:.1f}%"
    errors = f"; the placebo arm errored in {block.errors} record(s)" if block.errors else ""
    return (f"content (skill vs placebo): {_part(block.content, block.content_delta_pts)}",
            f"presence (placebo vs none, placebo pass rate {rate}): "
            f"{_part(block.presence, block.presence_delta_pts)}{errors}")


def terminal_lines(log: RunLog) -> list[str]:
    block = log.summary.placebo
    if block is None:
        return []
    content, presence = sentences(block)
    return [f"  placebo      {content}", f"               {presence}"]


def markdown_section(named: Sequence[tuple[str, RunLog]]) -> str:
    lines = []
    for name, log in named:
        block = log.summary.placebo
        if block is None:
            continue
        prefix = f"{md.inline(name, 80)}: " if len(named) > 1 else ""
        content, presence = sentences(block)
        lines += [f"- {prefix}{md.inline(content, 500)}", f"- {prefix}{md.inline(presence, 500)}"]
    return ("**Placebo** (same name and lengths, neutral text)\n\n" + "\n".join(lines)) if lines else ""


def html_lines(log: RunLog) -> list[str]:
    from html import escape  # its entity table is only worth loading for an HTML report

    block = log.summary.placebo
    if block is None:
        return []
    return [f"<p><b>placebo</b> {escape(line, quote=True)}</p>" for line in sentences(block)]
