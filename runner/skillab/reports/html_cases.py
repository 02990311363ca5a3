"""The HTML report's case table, filtered and sorted in the page without a script: radio
buttons and CSS (``:checked ~``) show all cases, the failing ones, one outcome or one tag, and
order them as run, failing first, by outcome or by tag. The report stays one file with no
script and no network asset; class names come from indices, never from the document's text."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from ..core.records import CaseRecord
from .findings import FAILED_OUTCOMES

# Worst first: what a reader came to see.
OUTCOME_ORDER = ("flip_to_fail", "error", "fail_kept", "flip_to_pass", "pass_kept")
NO_TAG = 9999

CSS = """
.cases>label{cursor:pointer;margin-right:.8em}.cases>input:checked+label{font-weight:600;text-decoration:underline}
.cases>.ctl{font-weight:600;margin-right:.4em}.cases>.ctl.sort{margin-left:0}
.case-table tbody{display:flex;flex-direction:column}
.case-table tr{display:grid;grid-template-columns:var(--cols)}
.sort-failing:checked~table tr.row{order:var(--fail)}
.sort-outcome:checked~table tr.row{order:var(--outcome)}
.sort-tag:checked~table tr.row{order:var(--tag)}
.show-failing:checked~table tr.row:not(.failing){display:none}
""" + "".join(f".show-o-{o}:checked~table tr.row:not(.o-{o}){{display:none}}\n" for o in OUTCOME_ORDER)


@dataclass(frozen=True)
class CaseRow:
    case_name: str
    outcome: str
    tags: tuple[str, ...]
    # The row's cells after the first, already escaped markup.
    cells: str
    link: str
    label: str


def case_table(key: str, head: list[str], rows: list[CaseRow]) -> list[str]:
    """``key``: the suite's index-made id (``s0``); ``head``: the column titles (escaped)."""
    tags = sorted({t for row in rows for t in row.tags})
    outcomes = [o for o in OUTCOME_ORDER if any(r.outcome == o for r in rows)]
    failing = sum(1 for r in rows if r.outcome in FAILED_OUTCOMES)
    show = [_radio(key, "show", "all", "all", f"all ({len(rows)})", checked=True),
            _radio(key, "show", "failing", "failing", f"failing ({failing})")]
    show += [_radio(key, "show", f"o-{o}", f"o-{o}", f"{o} ({sum(r.outcome == o for r in rows)})") for o in outcomes]
    show += [_radio(key, "show", f"t{i}", f"t{i}", f"tag {_e(t)} ({sum(t in r.tags for r in rows)})")
             for i, t in enumerate(tags)]
    sort = [_radio(key, "sort", "run", "run", "as run"),
            _radio(key, "sort", "failing", "failing", "failing first", checked=True),
            _radio(key, "sort", "outcome", "outcome", "by outcome")]
    if tags:
        sort.append(_radio(key, "sort", "tag", "tag", "by tag"))
    # Per-tag rules: the only CSS that depends on the document, keyed by index.
    tag_css = "".join(f"#{key}-cases .show-t{i}:checked~table tr.row:not(.t{i}){{display:none}}" for i in range(len(tags)))
    columns = f"minmax(8em,2fr) repeat({len(head) - 1},minmax(5em,1fr))"
    out = [f"<div class=\"cases\" id=\"{key}-cases\" style=\"--cols:{columns}\"><h3>Cases</h3>"]
    if tag_css:
        out.append(f"<style>{tag_css}</style>")
    # The radios stay siblings of the table: the CSS reaches the rows through ``:checked ~``.
    out.append("<span class=\"ctl\">show</span>" + "".join(show) + "<br>")
    out.append("<span class=\"ctl sort\">sort</span>" + "".join(sort))
    out.append("<table class=\"case-table\"><thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>")
    for row in rows:
        classes = ["row", f"o-{row.outcome}" if row.outcome in OUTCOME_ORDER else "o-other",
                   *(["failing"] if row.outcome in FAILED_OUTCOMES else []),
                   *(f"t{tags.index(t)}" for t in row.tags)]
        tag_rank = min((tags.index(t) for t in row.tags), default=NO_TAG)
        order = OUTCOME_ORDER.index(row.outcome) if row.outcome in OUTCOME_ORDER else len(OUTCOME_ORDER)
        style = f"--fail:{0 if row.outcome in FAILED_OUTCOMES else 1};--outcome:{order};--tag:{tag_rank}"
        out.append(f"<tr class=\"{' '.join(classes)}\" data-case=\"{_e(row.case_name)}\" style=\"{style}\">"
                   f"<td><a href=\"#{row.link}\">{_e(row.label)}</a></td>{row.cells}</tr>")
    out.append("</tbody></table></div>")
    return ["".join(out)]


def _radio(key: str, group: str, value: str, cls: str, label: str, *, checked: bool = False) -> str:
    ident = f"{key}-{group}-{value}"
    return (f"<input type=\"radio\" name=\"{key}-{group}\" id=\"{ident}\" class=\"{group}-{cls}\""
            + (" checked" if checked else "") + f"><label for=\"{ident}\">{label}</label>")


def tags_of(record: CaseRecord) -> tuple[str, ...]:
    # As text: a hand-edited document's number among the tags still sorts with the others.
    return tuple(str(t) for t in record.tags)


def _e(value: Any) -> str:
    return escape(str(value), quote=True)
