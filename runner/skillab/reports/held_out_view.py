"""The held-out line every report prints: the author lift, the held-out lift and their gap."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.held_out import HeldOutLift, SplitLift
from ..core.runlog import RunLog
from ..core.wording import counted
from . import escape


def _interval(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f", 95% CI {ci[0]:+.1f} to {ci[1]:+.1f}"


def _side(name: str, side: SplitLift) -> str:
    if side.lift_pts is None:
        return f"{name} lift n/a ({counted(side.cases, 'case')})"
    return f"{name} lift {side.lift_pts:+.1f} pts ({counted(side.cases, 'case')}{_interval(side.ci95)})"


def held_out_text(block: HeldOutLift | None) -> str | None:
    """``author lift +40.0 pts (6 cases, …) · held-out lift +5.0 pts (3 cases, …) · gap +35.0 pts (…)``."""
    if block is None:
        return None
    gap = "gap n/a" if block.gap_pts is None else f"gap {block.gap_pts:+.1f} pts{_interval(block.gap_ci95)}"
    return f"{_side('author', block.author)} · {_side('held-out', block.held_out)} · {gap}"


def held_out_gap_failure(log: RunLog, limit: float | None) -> str | None:
    """The ``--max-held-out-gap`` gate: the author lift over the held-out lift by more than ``limit``."""
    block = log.summary.held_out
    if limit is None or block is None or block.gap_pts is None or block.gap_pts <= limit:
        return None
    return (f"{log.settings.suite.skill}: the author lift is {block.gap_pts:+.1f} pts above the held-out lift, "
            f"more than --max-held-out-gap {limit:g}")


def held_out_section(logs: Sequence[RunLog], several: bool) -> str:
    lines = []
    for log in logs:
        text = held_out_text(log.summary.held_out)
        if text:
            prefix = f"{escape.inline(log.settings.suite.skill, 80)}: " if several else ""
            lines.append(f"- {prefix}{escape.inline(text, 400)}")
    return ("**Held-out cases** (the author's cases beside the cases kept from the author)\n\n"
            + "\n".join(lines)) if lines else ""
