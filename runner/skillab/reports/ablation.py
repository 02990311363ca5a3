"""The ablation's reports: the terminal table, the markdown section and a self-contained HTML page
with one bar per part and its 95% interval. Each reads the ``skillab.ablation/1`` document
(``core.ablation.AblationDocument``)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

from .escape import inline

if TYPE_CHECKING:
    from ..core.ablation import AblationDocument, PartResult

ROLE_MARK = {"load-bearing": "▲", "harmful": "▼", "dead weight": "·", "not measured": "?"}


def _label(label: str) -> str:
    """A part's label as markdown text: its '##' must not open a heading in a list item."""
    return inline(label, 80).replace("#", "\\#")


def _pts(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "" if not ci else f"[{ci[0]:+.1f}, {ci[1]:+.1f}]"


def _p(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def headline(doc: AblationDocument) -> str:
    counts = {role: sum(1 for p in doc.parts if p.role == role) for role in ROLE_MARK}
    text = (f"{counts['load-bearing']} load-bearing · {counts['dead weight']} dead weight · "
            f"{counts['harmful']} harmful")
    if counts["not measured"]:
        text += f" · {counts['not measured']} not measured"
    return text


def spend_line(doc: AblationDocument) -> str:
    spend = doc.spend
    cost = "" if spend.cost_usd is None else f" · ${spend.cost_usd:.4f}"
    saved = spend.calls_saved
    text = f"{spend.model_calls} agent arms run · {spend.cached_arms} baselines from the cache{cost}"
    if doc.stop_early:
        text += f" · {saved} arms saved by stopping early (case order seed {doc.order_seed})"
    return text + (f" · stopped: {doc.stopped}" if doc.stopped else "")


def render_terminal(doc: AblationDocument) -> str:
    full = doc.full
    lines = [f"ablation  {doc.skill}  ({doc.cases} cases x {doc.runs} runs; contribution = full "
             "skill's pass rate minus the variant's, Holm-corrected over the parts)",
             f"  full skill   {full.summary or _pts(full.lift_pts)}", ""]
    lines.append(f"  {'part':<44} {'role':<13} {'contrib':>8}  {'95% CI':<17} {'p (Holm)':>8}  tokens")
    for part in doc.parts:
        lines.append(f"  {part.label[:44]:<44} {part.role:<13} {_pts(part.contribution_pts):>8}  "
                     f"{_ci(part.ci95):<17} {_p(part.p_adjusted):>8}  {part.tokens:,}")
        if part.note:
            lines.append(f"    {part.note}")
    for rel in doc.grader_files:
        lines.append(f"  {rel:<44} kept: a grader calls it")
    lines += ["", f"  verdict      {headline(doc)}", f"  spend        {spend_line(doc)}"]
    lines += [f"  warning      {w}" for w in doc.warnings]
    return "\n".join(lines)


def render_markdown(doc: AblationDocument) -> str:
    full = doc.full
    rows = ["| part | role | contribution (pts) | 95% CI | p (Holm) | tokens |",
            "|---|---|---:|---|---:|---:|"]
    for part in doc.parts:
        role = f"{ROLE_MARK[part.role]} {part.role}"
        rows.append(f"| {_label(part.label)} | {role} | {_pts(part.contribution_pts)} | "
                    f"{_ci(part.ci95)} | {_p(part.p_adjusted)} | {part.tokens:,} |")
    notes = [f"- {_label(p.label)}: {inline(p.note)}" for p in doc.parts if p.note]
    notes += [f"- `{inline(rel, 80)}` is kept in every variant: a grader calls it" for rel in doc.grader_files]
    return "\n".join([
        f"### Ablation: which part of {inline(doc.skill, 80)} earns its tokens",
        "",
        f"Full skill: {inline(full.summary or _pts(full.lift_pts))}",
        "",
        f"**{headline(doc)}** · {inline(spend_line(doc))}",
        "",
        *rows,
        "",
        *notes,
    ]) + "\n"


def render_html(doc: AblationDocument) -> str:
    rows = []
    for part in doc.parts:
        rows.append(f"<tr class='{part.role.replace(' ', '-')}'><td>{html.escape(part.label)}</td>"
                    f"<td>{html.escape(part.role)}</td><td>{_bar(part)}</td>"
                    f"<td>{html.escape(_pts(part.contribution_pts))} {html.escape(_ci(part.ci95))}</td>"
                    f"<td>{html.escape(_p(part.p_adjusted))}</td><td>{int(part.tokens):,}</td>"
                    f"<td>{html.escape(part.note)}</td></tr>")
    title = f"skillab ablation: {html.escape(doc.skill)}"
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{title}</title><style>{CSS}</style></head><body>"
        f"<h1>{title}</h1><p>{html.escape(doc.full.summary or '')}</p>"
        f"<p><b>{html.escape(headline(doc))}</b> · {html.escape(spend_line(doc))}</p>"
        "<table><tr><th>part</th><th>role</th><th>contribution, 95% CI (-100 to +100 pts)</th>"
        "<th>pts</th><th>p (Holm)</th><th>tokens</th><th>note</th></tr>"
        + "".join(rows) + "</table></body></html>\n"
    )


def _bar(part: PartResult) -> str:
    """An SVG bar from 0 to the contribution, with the interval as a whisker (-100..+100 pts)."""
    value, ci = part.contribution_pts, part.ci95
    if value is None:
        return "<svg width='240' height='16'></svg>"

    def x(pts: float) -> float:
        return 120 + max(-100.0, min(100.0, pts)) * 1.2

    left, right = sorted((x(0), x(value)))
    whisker = ""
    if ci:
        whisker = (f"<line x1='{x(ci[0]):.1f}' x2='{x(ci[1]):.1f}' y1='8' y2='8' stroke='#222'/>"
                   f"<line x1='{x(ci[0]):.1f}' x2='{x(ci[0]):.1f}' y1='4' y2='12' stroke='#222'/>"
                   f"<line x1='{x(ci[1]):.1f}' x2='{x(ci[1]):.1f}' y1='4' y2='12' stroke='#222'/>")
    colour = {"load-bearing": "#2a7", "harmful": "#c33"}.get(part.role, "#999")
    return (f"<svg width='240' height='16' role='img' aria-label='{html.escape(_pts(value))} pts'>"
            f"<line x1='120' x2='120' y1='0' y2='16' stroke='#888'/>"
            f"<rect x='{left:.1f}' y='4' width='{max(right - left, 1):.1f}' height='8' fill='{colour}'/>"
            f"{whisker}</svg>")


CSS = ("body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
       "td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:middle}"
       ".load-bearing td:nth-child(2){color:#176}.harmful td:nth-child(2){color:#a22}")


def write_ablation_reports(doc: AblationDocument, *, markdown: Path | None, html: Path | None) -> None:
    if markdown is not None:
        Path(markdown).write_text(render_markdown(doc), encoding="utf-8")
    if html is not None:
        Path(html).write_text(render_html(doc), encoding="utf-8")


__all__ = ["render_html", "render_markdown", "render_terminal", "write_ablation_reports"]
