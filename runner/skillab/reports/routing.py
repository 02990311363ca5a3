"""The routing diff as text, markdown (a PR comment section) and a self-contained HTML page, each
read from the typed ``RouteDocument``."""

from __future__ import annotations

import html

from ..core.routing import AgentRoutes, ConditionSummary, PairTest, RouteDocument
from ..core.triggers import RateInterval
from .escape import code_span, inline

MARKER = "<!-- skillab:route -->"


def _rate(rate: RateInterval) -> str:
    if rate.value is None:
        return "n/a"
    low = f"{rate.low:.0%}" if rate.low is not None else "?"
    high = f"{rate.high:.0%}" if rate.high is not None else "?"
    return f"{rate.value:.0%} [{low}, {high}]"


def headline(doc: RouteDocument, agent: AgentRoutes) -> str:
    """"+3 queries now go to release-notes, 1 stolen from changelog (p_adj 0.01)"."""
    parts = [f"{len(agent.now_routed_to_candidate):+d} quer{'y' if len(agent.now_routed_to_candidate) == 1 else 'ies'} "
             f"now go to {doc.candidate}"]
    for test in agent.steals:
        if test.significant:
            parts.append(f"{len(test.taken_queries)} stolen from {test.skill} (p_adj {test.p_adjusted:.2g})")
    if agent.loses is not None and agent.loses.significant:
        parts.append(f"its own queries routed right less often than the original's "
                     f"(p_adj {agent.loses.p_adjusted:.2g})")
    nothing = not any(t.significant for t in agent.steals)
    if nothing:
        parts.append("nothing stolen beyond noise")
    return ", ".join(parts)


def _pair_line(test: PairTest) -> str:
    before = f"{test.catalogue_right}/{test.catalogue_trials}"
    after = f"{test.candidate_right}/{test.candidate_trials}"
    mark = "STOLEN" if test.significant else ("took some" if test.taken else "")
    return (f"    {mark:<9} {test.skill:<24} right {before:>7} -> {after:>7}   p {test.p_value:.3g}  "
            f"p_adj {test.p_adjusted:.3g}" + (f"   taken: {', '.join(test.taken_queries)}" if test.taken else ""))


def render_text(doc: RouteDocument) -> str:
    """The terminal's view: per agent, accuracy in each condition and the pairs that moved."""
    lines = [f"routing  {doc.candidate} among {len(doc.catalogue)} catalogue skill(s) ({doc.catalogue_path})"
             f" · {doc.queries} queries x {doc.runs} run(s) x 2 conditions = {doc.trials} trials per agent"]
    if doc.original:
        lines.append(f"         the catalogue condition lists the original ({doc.original}) in the candidate's place")
    for agent in doc.agents:
        lines.append("")
        lines.append(f"  {agent.agent}" + (f" ({agent.model})" if agent.model else "") + f": {headline(doc, agent)}")
        lines.append(f"    route accuracy  {agent.catalogue.label}: {_rate(agent.catalogue.accuracy)}"
                     f" · {agent.candidate.label}: {_rate(agent.candidate.accuracy)}")
        lines.append(f"    own queries routed to {doc.candidate}: {_rate(agent.own_accuracy)}")
        for taken in agent.lost_to:
            lines.append(f"    lost to {taken.skill}: {taken.trials} trial(s) of {', '.join(taken.queries)}")
        if agent.several_loaded_queries:
            lines.append(f"    several skills loaded at once on: {', '.join(agent.several_loaded_queries)}")
        errors = agent.catalogue.errors + agent.candidate.errors
        if errors:
            lines.append(f"    {errors} trial(s) errored before loading anything: left out of every rate")
        moved = [t for t in agent.steals if t.taken or t.significant]
        if moved:
            lines.append("    catalogue skills whose queries the candidate took (exact stratified test, BH at 5%):")
            lines += [_pair_line(t) for t in moved]
        if agent.loses is not None:
            lines.append("    against the original:")
            lines.append(_pair_line(agent.loses))
        lines += _listing_lines(agent)
    lines += [f"  warning: {w}" for w in doc.warnings]
    if doc.interrupted:
        lines.append("  interrupted: the rates cover the trials that finished")
    return "\n".join(lines)


def _listing_lines(agent: AgentRoutes) -> list[str]:
    listing = agent.listing or {}
    lines = []
    for key, what in (("descriptions_dropped", "listed by name only (description dropped)"),
                      ("descriptions_cut", "description cut"), ("absent", "not listed at all")):
        names = listing.get(key)
        if names:
            lines.append(f"    listing: {len(names)} skill(s) {what}: {', '.join(map(str, names))}")
    return lines


def render_markdown(doc: RouteDocument) -> str:
    """A section of the PR comment: one line per agent, then what moved."""
    out = [MARKER, f"### Routing: `{inline(doc.candidate, 80)}` among {len(doc.catalogue)} skills", ""]
    out.append(f"{doc.queries} labelled queries × {doc.runs} run(s), posed with the catalogue alone"
               + (f" (beside the original, {inline(doc.original, 80)})" if doc.original else "")
               + " and with the candidate added.")
    out.append("")
    out.append("| agent | routing | accuracy, catalogue | accuracy, with candidate | own queries to candidate |")
    out.append("|---|---|---|---|---|")
    for agent in doc.agents:
        out.append(f"| {inline(agent.agent, 40)} | {inline(headline(doc, agent), 300)} | "
                   f"{_rate(agent.catalogue.accuracy)} | {_rate(agent.candidate.accuracy)} | "
                   f"{_rate(agent.own_accuracy)} |")
    for agent in doc.agents:
        moved = [t for t in agent.steals if t.taken or t.significant]
        if not moved and agent.loses is None:
            continue
        out += ["", f"<details><summary>{html.escape(agent.agent)}: pairs that moved</summary>", "",
                "| skill | right, catalogue | right, with candidate | taken | p | p_adj |", "|---|---|---|---|---|---|"]
        for t in (*moved, *([agent.loses] if agent.loses else [])):
            who = code_span(t.skill, 60, table=True) + (" **stolen**" if t.significant and t.direction == "steals" else "")
            out.append(f"| {who} | {t.catalogue_right}/{t.catalogue_trials} | {t.candidate_right}/{t.candidate_trials} | "
                       f"{inline(', '.join(t.taken_queries) or '—', 200)} | {t.p_value:.3g} | {t.p_adjusted:.3g} |")
        out += ["", "</details>"]
    if doc.warnings:
        out += ["", *[f"- {inline(w, 300)}" for w in doc.warnings]]
    return "\n".join(out) + "\n"


def render_html(doc: RouteDocument) -> str:
    """A self-contained page: per agent, the confusion matrix of each condition."""
    esc = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'>",
             f"<title>Routing: {esc(doc.candidate)}</title>",
             "<style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}th{background:#f3f3f3}"
             "td.right{background:#e6f4e6}td.wrong{background:#fbe9e9}caption{font-weight:bold;text-align:left}"
             "</style></head><body>",
             f"<h1>Routing: {esc(doc.candidate)} among {len(doc.catalogue)} skills</h1>",
             f"<p>{doc.queries} labelled queries × {doc.runs} run(s) × 2 conditions.</p>"]
    for agent in doc.agents:
        parts.append(f"<h2>{esc(agent.agent)}</h2><p>{esc(headline(doc, agent))}</p>")
        parts.append(_matrix_html(agent.catalogue))
        parts.append(_matrix_html(agent.candidate))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _matrix_html(condition: ConditionSummary) -> str:
    esc = html.escape
    rows = sorted({c.expected for c in condition.matrix})
    cols = sorted({c.routed for c in condition.matrix})
    counts = {(c.expected, c.routed): c.trials for c in condition.matrix}
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    body = []
    for r in rows:
        cells = []
        for c in cols:
            n = counts.get((r, c), 0)
            cls = "right" if r == c and n else ("wrong" if n else "")
            cells.append(f"<td class='{cls}'>{n or ''}</td>")
        body.append(f"<tr><th>{esc(r)}</th>{''.join(cells)}</tr>")
    return (f"<table><caption>{esc(condition.label)}: accuracy {esc(_rate(condition.accuracy))}"
            f" (rows: expected route; columns: the route taken)</caption>"
            f"<tr><th></th>{head}</tr>{''.join(body)}</table>")
