"""The context-budget line every report prints: what the skill costs the agent in tokens."""

from __future__ import annotations

from ..core.run_info import ContextBudget
from ..core.runlog import RunLog


def context_text(block: ContextBudget | None) -> str | None:
    """``body 1,203 tok · files 840 tok · listing 61 tok, 3.0% of claude-code's listing budget
    (estimated …)``; None for a run without the block."""
    if block is None:
        return None
    parts = [f"body {block.body_tokens:,} tok"]
    if block.files_tokens:
        parts.append(f"files {block.files_tokens:,} tok")
    parts += listing_texts(block)
    text = " · ".join(parts)
    if block.change_tokens is not None:
        text += f" · {block.change_tokens:+,} tok against the original"
    return f"{text} ({block.method})"


def listing_texts(block: ContextBudget) -> list[str]:
    """The listing entry, once, with each agent's budget share and cut description."""
    if not block.listings:
        return []
    size = max(item.tokens for item in block.listings.values())
    notes = []
    for agent, item in block.listings.items():
        if item.share is not None:
            notes.append(f"{item.share * 100:.1f}% of {agent}'s listing budget")
        if item.description_cut:
            notes.append(f"description CUT by {agent}")
    return [f"listing ~{size:,} tok" + (f" ({', '.join(notes)})" if notes else "")]


def skill_tokens_failure(log: RunLog, limit: int | None) -> str | None:
    """The ``--max-skill-tokens`` gate: the run's agent's listing entry plus the body over ``limit``."""
    block = log.settings.context_budget
    if limit is None or block is None or block.total_tokens <= limit:
        return None
    return (f"{log.settings.suite.skill}: the skill costs {block.total_tokens:,} tokens in context for "
            f"{block.agent} (listing entry and body, {block.method}), above --max-skill-tokens {limit:,}")
