"""The trigger section of the terminal and markdown reports, from a document's ``triggers`` block.

False triggers and misses come first, worst first; then every query's rate; then the set's
metrics with their 95 % intervals; crowd findings; the change against the original description.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.runlog import RunLog
from ..core.wire import to_wire
from .escape import clip, code_span, inline, one_line

METRICS = (("recall", "recall"), ("false_trigger_rate", "false-trigger rate"),
           ("precision", "precision"), ("f1", "F1"))


def metric_text(metric: dict[str, Any]) -> str:
    if metric.get("value") is None:
        return "n/a"
    return f"{metric['value']:.2f} [{metric['low']:.2f}, {metric['high']:.2f}]"


def headline(block: dict[str, Any]) -> str:
    metrics = block["metrics"]
    return " · ".join(f"{label} {metric_text(metrics[key])}" for key, label in METRICS)


def _rate(row: dict[str, Any]) -> str:
    if row.get("rate") is None:
        return "error"
    triggered, trials = row.get("triggered"), row.get("trials")
    return f"{triggered}/{trials}" if trials and trials > 1 else ("yes" if row["rate"] else "no")


def _taken(row: dict[str, Any]) -> str:
    taken = row.get("taken_by") or {}
    return ("taken by " + ", ".join(sorted(taken))) if taken else ""


def _clip(text: str, limit: int) -> str:
    return clip(one_line(text), limit)


def _pct_rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


# --- terminal ---------------------------------------------------------------------------------


def terminal_lines(doc: dict[str, Any]) -> list[str]:
    block = doc.get("triggers")
    if not block:
        return []
    counts = block["query_count"]
    lines = ["", f"  triggers     {counts['should_trigger']} should / {counts['should_not_trigger']} "
                 f"should-not queries x {block['runs']} run(s) · {block['errors']} errored trials"]
    lines.append(f"  trigger set  {headline(block)}   (95% intervals)")
    by_name = {q["name"]: q for q in block["queries"]}
    flagged = [("FALSE", r) for r in block["false_triggers"]] + [("MISSED", r) for r in block["misses"]]
    rows = [(tag, by_name[r["name"]]) for tag, r in flagged] + [
        ("", q) for q in block["queries"]
        if q["name"] not in {r["name"] for _, r in flagged}]
    width = min(40, max(12, *(len(q["name"]) for _, q in rows))) if rows else 12
    lines.append(f"    {'':<6}  {'query':<{width}}  {'should':>6}  {'rate':>5}")
    for tag, q in rows:
        note = " · ".join(x for x in (_taken(q), _clip(q["query"], 60)) if x)
        should = "yes" if q["should_trigger"] else "no"
        lines.append(f"    {tag:<6}  {_clip(q['name'], width):<{width}}  {should:>6}  {_rate(q):>5}  {note}")
    lines += _crowd_lines(block.get("crowd"))
    lines += _comparison_lines(block.get("comparison"))
    if block.get("interrupted"):
        lines.append("  INTERRUPTED  trigger trials stopped early: rates cover the finished trials")
    return lines


def _crowd_lines(crowd: dict[str, Any] | None) -> list[str]:
    if not crowd:
        return []
    lines = [f"  crowd        siblings: {', '.join(crowd['siblings']) or 'none'}"]
    for row in crowd["stolen_from_siblings"]:
        lines.append(f"    STOLEN   {row['name']} (meant for {row['meant_for']}): the skill took it in "
                     f"{_pct_rate(row['rate'])} of trials; {owner_text(row)}")
    for row in crowd["lost_to_siblings"]:
        lines.append(f"    LOST     {row['name']}: {_taken(row)}")
    listing = crowd.get("listing")
    if listing:
        lines.append(f"  listing      {listing_text(listing)}")
    lines += [f"  warning      {w}" for w in crowd.get("warnings") or ()]
    return lines


def owner_text(row: dict[str, Any]) -> str:
    """How often the sibling took its own query, without the skill and beside it."""
    before = row.get("owner_rate_without_skill")
    return (f"{row['meant_for']} took it in {_pct_rate(before)} of trials without the skill, "
            f"{_pct_rate(row.get('owner_rate'))} beside it")


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


def _comparison_lines(comparison: dict[str, Any] | None) -> list[str]:
    if not comparison:
        return []
    lines = [f"  vs original  {change_text('recall', comparison['recall'])} · "
             f"{change_text('false-trigger rate', comparison['false_trigger_rate'])}   "
             f"(original {comparison.get('original') or '?'}"
             + (f", {comparison['original_errors']} errored trials" if comparison.get("original_errors") else "")
             + ")"]
    for row in comparison.get("changed_queries") or ():
        should = "should" if row["should_trigger"] else "should not"
        lines.append(f"    CHANGED  {row['name']} ({should}): {_pct_rate(row['original'])} → "
                     f"{_pct_rate(row['candidate'])}")
    return lines


def change_text(label: str, change: dict[str, Any]) -> str:
    if change.get("candidate") is None:
        return f"{label} n/a"
    verdict = "significant" if change["significant"] else "within noise"
    return (f"{label} {change['original']:.2f} → {change['candidate']:.2f} "
            f"({change['delta_pts']:+.1f} pts, p={change['p_value']:.3g}, {verdict})")


# --- markdown ---------------------------------------------------------------------------------


def markdown_headline(logs: Sequence[RunLog]) -> str:
    """The report's headline when every suite is a trigger set (no A/B verdict to lead with)."""
    parts = []
    for log in logs:
        metrics = log.settings.triggers.metrics if log.settings.triggers is not None else None
        recall = None if metrics is None else metrics.recall.value
        false_rate = None if metrics is None else metrics.false_trigger_rate.value
        parts.append(f"{inline(log.settings.suite.skill, 80)}: recall {_pct_rate(recall)}, "
                     f"false-trigger rate {_pct_rate(false_rate)}")
    return "## 🎯 skillab: triggers — " + " · ".join(parts)


def markdown_section(logs: Sequence[RunLog]) -> str:
    """The PR comment's trigger table, one block per suite that has trigger queries."""
    # The block's helpers here read its wire form, as the terminal's trigger lines do.
    parts = [_markdown_suite(to_wire(log.settings.triggers), log.settings.suite.skill)
             for log in logs if log.settings.triggers is not None]
    return "\n\n".join(p for p in parts if p)


def _markdown_suite(block: dict[str, Any], skill: str) -> str:
    out = [f"#### Triggers · {code_span(skill)}", "",
           "| recall | false-trigger rate | precision | F1 |", "|---|---|---|---|",
           "| " + " | ".join(metric_text(block["metrics"][k]) for k, _ in METRICS) + " |", ""]
    rows = [("❌ false trigger", r) for r in block["false_triggers"]] + [("⚠️ miss", r) for r in block["misses"]]
    if rows:
        out += ["| | query | should | rate | note |", "|---|---|---|---|---|"]
        by_name = {q["name"]: q for q in block["queries"]}
        for tag, r in rows:
            q = by_name[r["name"]]
            should = "yes" if q["should_trigger"] else "no"
            out.append(f"| {tag} | {inline(q['query'], 80)} | {should} | {_rate(q)} | "
                       f"{inline(_taken(q))} |")
        out.append("")
    ok = len(block["queries"]) - len(rows)
    out.append(f"{ok} of {len(block['queries'])} queries routed as labelled over "
               f"{block['runs']} run(s); intervals are 95% (Wilson, per-query clustering).")
    crowd = block.get("crowd")
    if crowd:
        for row in crowd["stolen_from_siblings"]:
            out.append(f"- **Steals** {code_span(row['name'])} from {code_span(row['meant_for'] or '')} "
                       f"(taken in {_pct_rate(row['rate'])} of trials; {inline(owner_text(row))})")
        for row in crowd["lost_to_siblings"]:
            out.append(f"- **Loses** {code_span(row['name'])}: {inline(_taken(row))}")
        if crowd.get("listing"):
            out.append(f"- Listing: {inline(listing_text(crowd['listing']), 1000)}")
        out += [f"- Warning: {inline(w, 300)}" for w in crowd.get("warnings") or ()]
    comparison = block.get("comparison")
    if comparison:
        out.append(f"- Description edit: {change_text('recall', comparison['recall'])}; "
                   f"{change_text('false-trigger rate', comparison['false_trigger_rate'])}")
    return "\n".join(out)
