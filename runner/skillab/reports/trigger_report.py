"""The trigger section of the terminal and markdown reports, from a document's ``triggers`` block.

False triggers and misses come first, worst first; then every query's rate; then the set's
metrics with their 95 % intervals; crowd findings; the change against the original description.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.runlog import RunLog
from ..core.triggers import (
    Crowd,
    LostQuery,
    QueryOutcome,
    RateChange,
    RateInterval,
    StolenQuery,
    TriggerBlock,
    TriggerComparison,
)
from .escape import clip, code_span, inline, one_line

METRICS = (("recall", "recall"), ("false_trigger_rate", "false-trigger rate"),
           ("precision", "precision"), ("f1", "F1"))


def metric_text(metric: RateInterval) -> str:
    if metric.value is None:
        return "n/a"
    return f"{metric.value:.2f} [{metric.low:.2f}, {metric.high:.2f}]"


def headline(block: TriggerBlock) -> str:
    return " · ".join(f"{label} {metric_text(getattr(block.metrics, key))}" for key, label in METRICS)


def _rate(row: QueryOutcome) -> str:
    if row.rate is None:
        return "error"
    return f"{row.triggered}/{row.trials}" if row.trials > 1 else ("yes" if row.rate else "no")


def _taken(row: QueryOutcome | LostQuery) -> str:
    return ("taken by " + ", ".join(sorted(row.taken_by))) if row.taken_by else ""


def _clip(text: str, limit: int) -> str:
    return clip(one_line(text), limit)


def _pct_rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


# --- terminal ---------------------------------------------------------------------------------


def terminal_lines(log: RunLog) -> list[str]:
    block = log.settings.triggers
    if block is None:
        return []
    counts = block.query_count
    lines = ["", f"  triggers     {counts.should_trigger} should / {counts.should_not_trigger} "
                 f"should-not queries x {block.runs} run(s) · {block.errors} errored trials"]
    lines.append(f"  trigger set  {headline(block)}   (95% intervals)")
    lines += _query_rows(block)
    lines += _crowd_lines(block.crowd)
    lines += _comparison_lines(block.comparison)
    if block.interrupted:
        lines.append("  INTERRUPTED  trigger trials stopped early: rates cover the finished trials")
    return lines


def _query_rows(block: TriggerBlock) -> list[str]:
    """Every query, the false triggers and misses first (worst first), then the rest."""
    by_name = {q.name: q for q in block.queries}
    flagged = [("FALSE", r.name) for r in block.false_triggers] + [("MISSED", r.name) for r in block.misses]
    named = {name for _, name in flagged}
    rows = [(tag, by_name[name]) for tag, name in flagged] + [("", q) for q in block.queries if q.name not in named]
    width = min(40, max(12, *(len(q.name) for _, q in rows))) if rows else 12
    lines = [f"    {'':<6}  {'query':<{width}}  {'should':>6}  {'rate':>5}"]
    for tag, q in rows:
        note = " · ".join(x for x in (_taken(q), _clip(q.query, 60)) if x)
        should = "yes" if q.should_trigger else "no"
        lines.append(f"    {tag:<6}  {_clip(q.name, width):<{width}}  {should:>6}  {_rate(q):>5}  {note}")
    return lines


def _crowd_lines(crowd: Crowd | None) -> list[str]:
    if crowd is None:
        return []
    lines = [f"  crowd        siblings: {', '.join(crowd.siblings) or 'none'}"]
    for row in crowd.stolen_from_siblings:
        lines.append(f"    STOLEN   {row.name} (meant for {row.meant_for}): the skill took it in "
                     f"{_pct_rate(row.rate)} of trials; {owner_text(row)}")
    for lost in crowd.lost_to_siblings:
        lines.append(f"    LOST     {lost.name}: {_taken(lost)}")
    if crowd.listing:
        lines.append(f"  listing      {listing_text(crowd.listing)}")
    lines += [f"  warning      {w}" for w in crowd.warnings]
    return lines


def owner_text(row: StolenQuery) -> str:
    """How often the sibling took its own query, without the skill and beside it."""
    return (f"{row.meant_for} took it in {_pct_rate(row.owner_rate_without_skill)} of trials without the "
            f"skill, {_pct_rate(row.owner_rate)} beside it")


def listing_text(listing: dict[str, Any]) -> str:
    if listing.get("error"):
        return f"not measured: {listing['error']}"
    budget = listing.get("budget_chars")
    size = f"{listing.get('chars', 0):,} chars" + (f" of a {budget:,}-char budget" if budget else "")
    if listing.get("method") == "prompt":
        size += ", no budget: every description in full"
    dropped = listing.get("descriptions_dropped") or []
    cut = listing.get("descriptions_cut") or []
    absent = listing.get("absent") or []
    parts = [f"{listing.get('skills', 0)} skills listed by {listing.get('agent', 'the agent')}, {size}"]
    if listing.get("overflow"):
        parts.append("OVERFLOW")
    if dropped:
        parts.append("description dropped (name only): " + ", ".join(dropped))
    if cut:
        parts.append("description cut short: " + ", ".join(cut))
    if absent:
        parts.append("not listed at all: " + ", ".join(absent))
    return " · ".join(parts)


def _comparison_lines(comparison: TriggerComparison | None) -> list[str]:
    if comparison is None:
        return []
    lines = [f"  vs original  {change_text('recall', comparison.recall)} · "
             f"{change_text('false-trigger rate', comparison.false_trigger_rate)}   "
             f"(original {comparison.original or '?'}"
             + (f", {comparison.original_errors} errored trials" if comparison.original_errors else "")
             + ")"]
    for row in comparison.changed_queries:
        should = "should" if row.should_trigger else "should not"
        lines.append(f"    CHANGED  {row.name} ({should}): {_pct_rate(row.original)} → {_pct_rate(row.candidate)}")
    return lines


def change_text(label: str, change: RateChange) -> str:
    if change.candidate is None:
        return f"{label} n/a"
    verdict = "significant" if change.significant else "within noise"
    return (f"{label} {change.original:.2f} → {change.candidate:.2f} "
            f"({change.delta_pts:+.1f} pts, p={change.p_value:.3g}, {verdict})")


# --- markdown ---------------------------------------------------------------------------------


def markdown_headline(logs: Sequence[RunLog]) -> str:
    """The report's headline when every suite is a trigger set (no A/B verdict to lead with)."""
    parts = []
    for log in logs:
        if log.settings.triggers is None:
            continue
        metrics = log.settings.triggers.metrics
        parts.append(f"{inline(log.settings.suite.skill, 80)}: recall {_pct_rate(metrics.recall.value)}, "
                     f"false-trigger rate {_pct_rate(metrics.false_trigger_rate.value)}")
    return "## 🎯 skillab: triggers — " + " · ".join(parts)


def markdown_section(logs: Sequence[RunLog]) -> str:
    """The PR comment's trigger table, one block per suite that has trigger queries."""
    parts = [_markdown_suite(log.settings.triggers, log.settings.suite.skill)
             for log in logs if log.settings.triggers is not None]
    return "\n\n".join(p for p in parts if p)


def _markdown_suite(block: TriggerBlock, skill: str) -> str:
    out = [f"#### Triggers · {code_span(skill)}", "",
           "| recall | false-trigger rate | precision | F1 |", "|---|---|---|---|",
           "| " + " | ".join(metric_text(getattr(block.metrics, k)) for k, _ in METRICS) + " |", ""]
    rows = [("❌ false trigger", r.name) for r in block.false_triggers] + [("⚠️ miss", r.name) for r in block.misses]
    if rows:
        out += ["| | query | should | rate | note |", "|---|---|---|---|---|"]
        by_name = {q.name: q for q in block.queries}
        for tag, name in rows:
            q = by_name[name]
            should = "yes" if q.should_trigger else "no"
            out.append(f"| {tag} | {inline(q.query, 80)} | {should} | {_rate(q)} | {inline(_taken(q))} |")
        out.append("")
    ok = len(block.queries) - len(rows)
    out.append(f"{ok} of {len(block.queries)} queries routed as labelled over "
               f"{block.runs} run(s); intervals are exact 95% (Clopper-Pearson, per-query clustering).")
    if block.crowd is not None:
        out += _markdown_crowd(block.crowd)
    if block.comparison is not None:
        out.append(f"- Description edit: {change_text('recall', block.comparison.recall)}; "
                   f"{change_text('false-trigger rate', block.comparison.false_trigger_rate)}")
    return "\n".join(out)


def _markdown_crowd(crowd: Crowd) -> list[str]:
    out = []
    for row in crowd.stolen_from_siblings:
        out.append(f"- **Steals** {code_span(row.name)} from {code_span(row.meant_for or '')} "
                   f"(taken in {_pct_rate(row.rate)} of trials; {inline(owner_text(row))})")
    for lost in crowd.lost_to_siblings:
        out.append(f"- **Loses** {code_span(lost.name)}: {inline(_taken(lost))}")
    if crowd.listing:
        out.append(f"- Listing: {inline(listing_text(crowd.listing), 1000)}")
    out += [f"- Warning: {inline(w, 300)}" for w in crowd.warnings]
    return out
