"""The portability table: one suite run under several agents (``--adapter a,b,c``), one row per
agent and suite.

Per row: how the skill was offered (inline in the prompt, or staged where the agent discovers
skills), how often the agent loaded it in its with-skill arms (the trigger rate, from what the
agent's transcript shows; ``n/a`` when the agent does not report it), the lift with its 95%
interval, and what the run cost. Every figure comes from that agent's own run;
nothing is pooled across agents, because their baselines differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.runlog import RunLog
from . import escape
from .markdown_view import FailedSuite

# Where an adapter that does not name its skills directory in its identity stages the skill.
_KNOWN_SKILL_HOMES = {"claude-code": ".claude/skills"}


@dataclass(frozen=True)
class PortabilityRow:
    skill: str
    agent: str
    version: str | None
    model: str | None
    offered: str
    loaded_rate: float | None
    with_rate: float | None
    without_rate: float | None
    delta_pts: float | None
    ci95: tuple[float, float] | None
    verdict: str
    errors: int
    tokens: int
    cost_usd: float | None
    # Why the run's statistics were withheld (a judge that disagreed with itself, an
    # error-dominated run): its lift is no figure to compare agents on.
    withheld: str | None = None
    # What the runtime's own instructions tell the model about skills (the OpenAI Agents SDK's
    # "must use"), which weighs on its trigger rate beside the other agents'.
    skill_prompt: str | None = None

    @classmethod
    def from_log(cls, log: RunLog) -> PortabilityRow:
        settings, summary = log.settings, log.summary
        identity = settings.adapter.identity
        stats, rates, total = summary.statistics, summary.aggregate.pass_rate, summary.usage.total
        return cls(
            skill=settings.suite.skill or "?",
            agent=settings.adapter.name or "?",
            version=identity.get("cli_version") or identity.get("claude_code_version"),
            model=settings.models.agent,
            offered=offered_as(settings.adapter.name, identity),
            loaded_rate=None if summary.activation is None else summary.activation.with_skill,
            with_rate=rates.with_skill,
            without_rate=rates.without_skill,
            delta_pts=rates.delta_pts,
            ci95=None if stats is None else stats.ci95,
            verdict=summary.verdict or "?",
            errors=summary.aggregate.errors,
            tokens=total.total_tokens,
            cost_usd=total.cost_usd,
            withheld=None if stats is None else stats.withheld or None,
            skill_prompt=str(identity["skill_prompt"]) if identity.get("skill_prompt") else None,
        )

    @classmethod
    def failed(cls, suite: FailedSuite) -> PortabilityRow:
        """The row of a suite that produced no results under its agent."""
        return cls(skill=suite.name or "?", agent=suite.agent or "?", version=None, model=None,
                   offered=offered_as(suite.agent, {}), loaded_rate=None, with_rate=None, without_rate=None,
                   delta_pts=None, ci95=None, verdict="error", errors=0, tokens=0, cost_usd=None)


def offered_as(adapter: str | None, identity: dict[str, Any]) -> str:
    """How the with-skill arm is shown the skill: ``inline``, or ``discover`` and where."""
    loading = str(identity.get("skill_loading") or "inline")
    home = identity.get("skills_dir") or _KNOWN_SKILL_HOMES.get(str(adapter))
    if loading in ("discover", "lazy"):
        return f"{loading} ({home})" if home else loading
    return loading


def is_portability_run(logs: Sequence[RunLog], failed: Sequence[FailedSuite] = ()) -> bool:
    """Several agents ran: the table is worth showing. A suite that never ran without an agent
    of its own (a parse error's row) does not count."""
    names = {log.settings.adapter.name for log in logs} | {suite.agent for suite in failed if suite.agent}
    return len(names) > 1


def portability_rows(logs: Sequence[RunLog], failed: Sequence[FailedSuite] = ()) -> list[PortabilityRow]:
    return [PortabilityRow.from_log(log) for log in logs] + [PortabilityRow.failed(suite) for suite in failed]


def render_terminal(logs: Sequence[RunLog]) -> str:
    rows = portability_rows(logs)
    header = ("skill", "agent", "offered as", "loaded", "with", "without", "lift pts (95% CI)", "verdict", "cost")
    table = [header] + [
        (
            r.skill,
            _agent(r),
            r.offered,
            _rate(r.loaded_rate),
            _rate(r.with_rate),
            _rate(r.without_rate),
            _lift(r),
            r.verdict + (f" ({r.errors} errored)" if r.errors else ""),
            _cost(r),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in table]
    notes = [f"  note: {line}" for line in prompt_notes(rows)]
    return "portability · one row per agent\n\n" + "\n".join([f"  {line}" for line in lines] + notes)


def render_markdown(logs: Sequence[RunLog], failed: Sequence[FailedSuite] = ()) -> str:
    """The PR-comment section; empty unless several agents ran."""
    if not is_portability_run(logs, failed):
        return ""
    lines = [
        "**Portability** · one row per agent",
        "",
        "| Skill | Agent | Offered as | Loaded | With | Without | Lift pts (95% CI) | Verdict | Cost |",
        "|---|---|---|---:|---:|---:|---|---|---:|",
    ]
    for r in portability_rows(logs, failed):
        verdict = r.verdict + (f" ({r.errors} errored)" if r.errors else "")
        lines.append(
            f"| {escape.inline(r.skill, 80)} | {escape.inline(_agent(r), 120)} | "
            f"{escape.inline(r.offered, 60)} | {_rate(r.loaded_rate)} | {_rate(r.with_rate)} | "
            f"{_rate(r.without_rate)} | {escape.inline(_lift(r), 40)} | {escape.inline(verdict, 40)} | "
            f"{escape.inline(_cost(r), 40)} |"
        )
    notes = prompt_notes(portability_rows(logs, failed))
    return "\n".join(lines + ([""] + [f"Note: {escape.inline(n, 300)}." for n in notes] if notes else []))


def prompt_notes(rows: Sequence[PortabilityRow]) -> list[str]:
    """One sentence per agent whose runtime tells the model how to treat skills: its trigger
    rate is partly the runtime's instruction, not only the skill's description."""
    said = dict.fromkeys((r.agent, r.skill_prompt) for r in rows if r.skill_prompt)
    return [f"{agent}: {prompt}, so its trigger rate is not comparable one to one with agents that "
            "leave that to the model" for agent, prompt in said if prompt]


def _agent(row: PortabilityRow) -> str:
    parts = [row.agent + (f" {row.version}" if row.version else "")]
    if row.model:
        parts.append(row.model)
    return " · ".join(parts)


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _lift(row: PortabilityRow) -> str:
    if row.withheld:
        return "withheld"
    if row.delta_pts is None:
        return "n/a"
    text = f"{row.delta_pts:+.1f}"
    if row.ci95 is not None:
        text += f" ({row.ci95[0]:+.1f} to {row.ci95[1]:+.1f})"
    return text


def _cost(row: PortabilityRow) -> str:
    if row.cost_usd is None:
        return f"{row.tokens:,} tokens, price unknown"
    return f"${row.cost_usd:.4f} ({row.tokens:,} tokens)"
