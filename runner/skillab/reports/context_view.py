"""The context-budget line every report prints: what the skill costs the agent in tokens."""

from __future__ import annotations

from typing import Any


def context_text(block: dict[str, Any] | None) -> str | None:
    """``body 1,203 tok · files 840 tok · listing 61 tok, 3.0% of claude-code's listing budget
    (estimated …)``; None for a document without the block."""
    if not block:
        return None
    parts = [f"body {block['body_tokens']:,} tok"]
    if block.get("files_tokens"):
        parts.append(f"files {block['files_tokens']:,} tok")
    parts += listing_texts(block)
    text = " · ".join(parts)
    change = block.get("change_tokens")
    if change is not None:
        text += f" · {change:+,} tok against the original"
    return f"{text} ({block.get('method', 'estimated')})"


def listing_texts(block: dict[str, Any]) -> list[str]:
    """The listing entry, once, with each agent's budget share and cut description."""
    listings = block.get("listings") or {}
    if not listings:
        return []
    size = max(item["tokens"] for item in listings.values())
    notes = []
    for agent, item in listings.items():
        if item.get("share") is not None:
            notes.append(f"{item['share'] * 100:.1f}% of {agent}'s listing budget")
        if item.get("description_cut"):
            notes.append(f"description CUT by {agent}")
    return [f"listing ~{size:,} tok" + (f" ({', '.join(notes)})" if notes else "")]


def skill_tokens_failure(doc: dict[str, Any], limit: int | None) -> str | None:
    """The ``--max-skill-tokens`` gate: the run's agent's listing entry plus the body over ``limit``."""
    block = doc.get("context_budget")
    if limit is None or not block:
        return None
    total = int(block.get("total_tokens") or 0)
    if total <= limit:
        return None
    return (f"{doc['suite']['skill']}: the skill costs {total:,} tokens in context for {block['agent']} "
            f"(listing entry and body, {block.get('method', 'estimated')}), above --max-skill-tokens {limit:,}")
