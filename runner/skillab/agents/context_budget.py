"""What a skill costs in context, per agent: its listing entry, its loaded body and its files.

Every agent lists a skill by name and description before it is loaded, and some cap that
listing. The facts per agent, each stated with where it comes from:

- ``claude-code``: ``- name: description`` lines in a reminder of the first message; the listing
  has a budget of 1% of the context window at 4 characters a token (8,000 characters for a
  200k-token model) and cuts each description at 1,536 characters (``claude_listing``, measured
  by probing the pinned CLI).
- ``codex``: ``- name: description (file: PATH)`` lines in its instructions; no listing budget is
  documented.
- ``gemini-cli``: name and description per skill, no listing budget documented.
- ``agent`` (skillab's tool loop, ``discover`` loading): ``skill_view``'s line; no budget.
- ``llm``, ``agent`` with ``inline`` loading, ``mock``: the body is in the system prompt from
  the start; there is no listing.

Tokens are counted offline. No provider publishes an offline tokenizer for its current models
(Anthropic's and Gemini's counting are API calls; OpenAI's encodings are fetched on first use), so
every count here is an estimate at 4 characters a token, and says so (``method``) — except where
the run's agent counts its own listing (``Agent.measured_listing``: the Claude Agent SDK's
``get_context_usage()``, whose Skills category gives each skill's entry as the bundled CLI counts
it): that agent's listing entry is then its count, and ``method`` says which part was measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..core.run_info import ContextBudget, ListingCost, OriginalContext
from ..skill.loader import Skill
from .base import MeasuredListing

CHARS_PER_TOKEN = 4
METHOD = "estimated at 4 characters a token: no offline tokenizer for these providers"
MEASURED_METHOD = ("the {agent} listing entry measured by the agent's runtime ({source}); body and files "
                   "estimated at 4 characters a token")
CLAUDE_CONTEXT_TOKENS = 200_000
CLAUDE_LISTING_SHARE = 0.01
CLAUDE_DESCRIPTION_CAP = 1536


@dataclass(frozen=True)
class ListingRule:
    """How one agent lists a skill, and its listing's limits where it has them."""

    agent: str
    line: Callable[[Skill], str]
    budget_chars: int | None
    description_cap: int | None
    source: str


def _dash_line(skill: Skill) -> str:
    return f"- {skill.name}: {' '.join(skill.description.split())}"


def _codex_line(skill: Skill) -> str:
    return f"{_dash_line(skill)} (file: .agents/skills/{skill.root.name}/SKILL.md)"


def _agent_line(skill: Skill) -> str:
    from .skill_view import listing_line

    return listing_line(skill)


RULES: dict[str, ListingRule] = {
    "claude-code": ListingRule(
        "claude-code", _dash_line, int(CLAUDE_CONTEXT_TOKENS * CLAUDE_LISTING_SHARE * CHARS_PER_TOKEN),
        CLAUDE_DESCRIPTION_CAP, "1% of a 200k-token context at 4 characters a token; descriptions cut "
        "at 1,536 characters (probed from the pinned CLI)"),
    "codex": ListingRule("codex", _codex_line, None, None, "no listing budget documented"),
    "gemini-cli": ListingRule("gemini-cli", _dash_line, None, None, "no listing budget documented"),
    "agent": ListingRule("agent", _agent_line, None, None, "skillab's own listing (discover loading)"),
}


@dataclass(frozen=True)
class Listing:
    """One agent's listing entry for a skill."""

    agent: str
    tokens: int
    # The entry's share of the agent's listing budget, 0..1; None where it has no budget.
    share: float | None
    # Whether the agent cuts the description in its listing; None where it has no cap.
    description_cut: bool | None
    source: str


@dataclass(frozen=True)
class ContextCost:
    """A skill's context cost, in (estimated) tokens: loaded, and listed by each agent."""

    # The run's agent, and what the skill costs it once used: its listing entry plus the body.
    agent: str
    total_tokens: int
    body_tokens: int
    files_tokens: int
    listings: tuple[Listing, ...]
    method: str = METHOD

    def listing_costs(self) -> dict[str, ListingCost]:
        """The listings by agent, as the results document keys them."""
        return {item.agent: ListingCost(item.tokens, item.share, item.description_cut, item.source)
                for item in self.listings}


def tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def listing(skill: Skill, rule: ListingRule) -> Listing:
    line = rule.line(skill)
    share = None if rule.budget_chars is None else round(len(line) / rule.budget_chars, 4)
    cut = None if rule.description_cap is None else len(" ".join(skill.description.split())) > rule.description_cap
    return Listing(rule.agent, tokens(line), share, cut, rule.source)


def context_cost(skill: Skill, agent: str, measured: MeasuredListing | None = None) -> ContextCost:
    """The skill's context cost; ``agent`` (an adapter name) is the one the total is for;
    ``measured``, that agent's own count of its listing entry, replaces the estimate of it."""
    body = tokens(skill.skill_md_bytes().decode("utf-8", errors="replace"))
    files = sum(tokens(_read(skill, rel)) for rel in skill.bundled)
    listings = tuple(listing(skill, rule) for rule in RULES.values() if measured is None or rule.agent != agent)
    if measured is not None:
        listings += (Listing(agent, measured.tokens, None, None, f"measured: {measured.source}"),)
    own = next((item.tokens for item in listings if item.agent == agent), 0)
    method = METHOD if measured is None else MEASURED_METHOD.format(agent=agent, source=measured.source)
    return ContextCost(agent, own + body, body, files, listings, method)


def context_block(skill: Skill, agent: str, original: Skill | None = None, *,
                  measure: Callable[[Skill], MeasuredListing | None] | None = None) -> ContextBudget:
    """The results document's ``context_budget`` block, with the change against the
    ``--against`` original when there is one; ``measure`` is the agent's own count of a skill's
    listing entry, where it has one (both skills are then counted alike, or both estimated)."""
    counted = measure(skill) if measure is not None else None
    before_counted = measure(original) if counted is not None and measure is not None and original is not None else None
    if original is not None and counted is not None and before_counted is None:
        counted = None  # one side measured and the other estimated would make the change a mix
    now = context_cost(skill, agent, counted)
    before = context_cost(original, agent, before_counted) if original is not None else None
    return ContextBudget(
        "skillab.context/1", now.agent, now.total_tokens, now.body_tokens, now.files_tokens, now.listing_costs(),
        now.method,
        original=None if before is None else OriginalContext(before.total_tokens, before.body_tokens,
                                                             before.files_tokens, before.listing_costs()),
        change_tokens=None if before is None else now.total_tokens - before.total_tokens,
    )


def _read(skill: Skill, rel: str) -> str:
    try:
        data = (skill.root / rel).read_bytes()
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")


__all__ = ["ContextCost", "Listing", "RULES", "context_block", "context_cost", "tokens"]
