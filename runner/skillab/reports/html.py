"""The HTML report: one self-contained file (inline CSS and SVG, no script, no network asset).

Per suite: the headline and its evidence, a plot of the lift with its 95% interval, the trend
over the run history, trigger-only cases; then every case with both arms side by side (answer,
transcript, validator output, judge reasons, files the agent changed). Every string from the
document is escaped; nothing in it can become markup.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from typing import Any

from ..core.runlog import RunLog
from ..core.wording import counted
from . import html_cases
from .findings import ARM_TITLES, FAILED_OUTCOMES
from .html_cases import CaseRow, case_table, tags_of
from .html_panels import suite_panels
from .html_trend import trend_chart
from .partial import early_stop, interruption
from .trigger_gates import only_triggers

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;padding:1.5em;color:#1d2327;background:#fff}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.25em;margin:1.6em 0 .4em;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin:1em 0 .3em}table{border-collapse:collapse;margin:.4em 0}
td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
.verdict{display:inline-block;padding:.1em .5em;border-radius:4px;font-weight:600}
.pass,.flip_to_pass,.pass_kept{color:#116329}.fail,.flip_to_fail,.fail_kept{color:#b42318}
.error,.mixed,.interrupted{color:#9a6700}.note{color:#57606a}
.arms{display:grid;grid-template-columns:repeat(var(--arms),minmax(0,1fr));gap:1em}
.arm{border:1px solid #ddd;border-radius:6px;padding:.6em;min-width:0}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:.5em;max-height:24em;overflow:auto;margin:.3em 0}
details{margin:.4em 0;border:1px solid #eee;border-radius:6px;padding:.3em .6em}
summary{cursor:pointer;font-weight:600}svg text{font:11px sans-serif;fill:#1d2327}
.callout{border-left:4px solid currentColor;padding:.3em .6em;background:#fff8f0}
.disclosures{color:#57606a;margin:.4em 0}.disclosures ul{margin:.2em 0}
""" + html_cases.CSS
OPEN_ALL_UP_TO = 10
WRITE_TOOL = re.compile(r"(?i)write|edit|create|append|delete|remove|move|rename|patch")
TOOL_CALL = re.compile(r"→ tool: (\w+)\((.*)\)")
PATH_ARG = re.compile(r"""(?:file_path|path|target|destination)="([^"]+)\"""")


def render_html(documents: list[dict[str, Any]]) -> str:
    title = "skillab report"
    body = [f"<h1>{title}</h1>"]
    for index, doc in enumerate(documents):
        body += _suite(doc, f"s{index}")
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{title}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def write_html(documents: list[dict[str, Any]], path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(documents), encoding="utf-8")


def _log(doc: dict[str, Any]) -> RunLog | None:
    """The run of a results document; None for a document written by hand that is no run's
    (until this report reads ``RunLog`` itself)."""
    try:
        return RunLog.from_json(doc)
    except (ValueError, KeyError, TypeError):
        return None


def _hand_interruption(doc: dict[str, Any]) -> str | None:
    return (f"interrupted: {doc.get('total_cases', 0)} of {doc.get('planned_cases', '?')} cases"
            if doc.get("interrupted") else None)


def _suite(doc: dict[str, Any], key: str = "s0") -> list[str]:
    suite, rate = doc["suite"], doc["pass_rate"]
    log = _log(doc)
    stopped = interruption(log) if log is not None else _hand_interruption(doc)
    verdict, cls = (stopped, "interrupted") if stopped else (doc["verdict"], doc["verdict"])
    routing_only = log is not None and only_triggers(log)
    if routing_only and not stopped:
        # No graded case: an "error" verdict, an empty lift and an empty case table would mislead.
        verdict, cls = "triggers", "note"
    stats = doc.get("statistics") or {}
    out = [
        f"<section class=\"suite\"><h2>{_e(suite['skill'])} "
        f"<span class=\"verdict {_e(cls)}\">{_e(verdict)}</span></h2>",
        f"<p class=\"note\">{_e(suite['path'])} · adapter {_e(doc['adapter']['name'])}"
        + "".join(f" · {k} {_e(v)}" for k, v in (doc.get("models") or {}).items()
                  if k in ("agent", "judge") and v)
        + f" · runs {_e(doc.get('runs', 1))}</p>",
    ]
    early = early_stop(log) if log is not None else None
    if early:
        out.append(f"<p class=\"note\">{_e(early)}</p>")
    if routing_only:
        out.append("<p class=\"note\">Trigger queries only: no case is graded with and without the skill, "
                   "so there is no lift; the trigger gates are this suite's check.</p>")
        if doc["adapter"]["name"] == "mock":
            out.append("<p class=\"note\">Mock adapter: the loads are scripted, so these rates show the "
                       "pipeline works, not how the agent routes.</p>")
        return [*out, *trend_chart(doc), *_trigger_tables(doc), "</section>"]
    out.append(f"<p><b>pass rate</b> with {_pct(rate['with_skill'])} · without {_pct(rate['without_skill'])}"
               f" · delta <b>{_pts(rate['delta_pts'])}</b></p>")
    if stats.get("summary"):
        out.append(f"<p><b>evidence</b> {_e(stats['summary'])}</p>")
    if doc["adapter"]["name"] == "mock":
        out.append("<p class=\"note\">Mock adapter: the answers are scripted, so this lift shows the "
                   "pipeline works, not that the skill helps.</p>")
    out += suite_panels(doc)
    out.append(_lift_plot(rate.get("delta_pts"), stats.get("ci95")))
    out += trend_chart(doc)
    out += _trigger_tables(doc)
    out += _case_table(doc, key)
    out += [_case_detail(doc, record) for record in doc.get("cases", [])]
    out.append("</section>")
    return out


def _lift_plot(delta: float | None, ci: list[float] | None) -> str:
    """The lift in points on a -100..+100 axis, with its 95% interval as a bar."""
    width, height, pad = 520, 64, 20

    def x(pts: float) -> float:
        return pad + (max(-100.0, min(100.0, pts)) + 100) / 200 * (width - 2 * pad)

    parts = [f'<svg role="img" aria-label="lift and 95% interval" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
             f'<line x1="{pad}" y1="40" x2="{width - pad}" y2="40" stroke="#999"/>']
    for tick in (-100, -50, 0, 50, 100):
        parts.append(f'<line x1="{x(tick):.1f}" y1="36" x2="{x(tick):.1f}" y2="44" stroke="#999"/>'
                     f'<text x="{x(tick):.1f}" y="58" text-anchor="middle">{tick:+d}</text>')
    if ci:
        parts.append(f'<rect x="{x(ci[0]):.1f}" y="33" width="{max(1.0, x(ci[1]) - x(ci[0])):.1f}" '
                     'height="14" fill="#54aeff" opacity="0.45"><title>95% interval</title></rect>')
    if delta is not None:
        parts.append(f'<circle cx="{x(delta):.1f}" cy="40" r="5" fill="#0969da"/>'
                     f'<text x="{x(delta):.1f}" y="22" text-anchor="middle">lift {delta:+.1f} pts</text>')
    else:
        parts.append(f'<text x="{width / 2}" y="22" text-anchor="middle">no lift measured</text>')
    return "".join(parts) + "</svg>"


def _trigger_tables(doc: dict[str, Any]) -> list[str]:
    """Trigger-only cases, and the trigger trials' block when the run measured routing."""
    out = []
    if doc.get("trigger_only_cases"):
        names = ", ".join(_e(n) for n in doc["trigger_only_cases"])
        out.append(f"<p><b>trigger-only cases</b> (no grader; not run A/B): {names}</p>")
    block = doc.get("triggers")
    if not isinstance(block, dict):
        return out
    metrics = block.get("metrics") or {}
    shown = [f"{_e(k)} {_e(_metric(v))}" for k, v in metrics.items() if isinstance(v, dict)]
    out.append("<h3>Triggers</h3>" + (f"<p>{' · '.join(shown)} (95% intervals)</p>" if shown else ""))
    queries = [q for q in block.get("queries") or [] if isinstance(q, dict)]
    if queries:
        # False triggers and misses first, as the terminal and markdown reports list them.
        flags = {**{r.get("name"): "missed" for r in block.get("misses") or [] if isinstance(r, dict)},
                 **{r.get("name"): "false trigger" for r in block.get("false_triggers") or [] if isinstance(r, dict)}}
        order: dict[str | None, int] = {"false trigger": 0, "missed": 1}
        queries.sort(key=lambda q: order.get(flags.get(q.get("name")), 2))
        columns = ("name", "query", "should_trigger", "triggered", "trials", "rate")
        out.append(_table([{"": flags.get(q.get("name"), ""),
                            **{c: _yes_no(q.get(c, "")) for c in columns}} for q in queries]))
    return out


def _yes_no(value: Any) -> Any:
    return {True: "yes", False: "no"}.get(value, value) if isinstance(value, bool) else value


def _metric(metric: dict[str, Any]) -> str:
    if metric.get("value") is None:
        return "n/a"
    low, high = metric.get("low"), metric.get("high")
    interval = f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else ""
    return f"{metric['value']:.2f}{interval}"


def _table(rows: list[dict[str, Any]]) -> str:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_e(row.get(c, ''))}</td>" for c in columns) + "</tr>"
                   for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _case_table(doc: dict[str, Any], key: str) -> list[str]:
    arms = _arms(doc)
    head = ["case", *(ARM_TITLES[a] for a in arms), "outcome"]
    rows = [CaseRow(record["case_name"], record["outcome"], tags_of(record),
                    "".join(f"<td class=\"{_state(record.get(a))}\">{_state(record.get(a))}</td>" for a in arms)
                    + f"<td class=\"{_e(record['outcome'])}\">{_e(record['outcome'])}</td>",
                    _anchor(doc, record), _label(doc, record))
            for record in doc.get("cases", [])]
    return case_table(key, head, rows)


def _case_detail(doc: dict[str, Any], record: dict[str, Any]) -> str:
    arms = _arms(doc)
    # Failures are what a reader came for; a small suite shows every case unfolded.
    few = len(doc.get("cases", [])) <= OPEN_ALL_UP_TO
    opened = " open" if few or record["outcome"] in FAILED_OUTCOMES else ""
    parts = [f"<details id=\"{_anchor(doc, record)}\"{opened}><summary>{_e(_label(doc, record))}: "
             f"<span class=\"{_e(record['outcome'])}\">{_e(record['outcome'])}</span></summary>"]
    if record.get("error"):
        parts.append(f"<p class=\"error\">error: {_e(record['error'])}</p>")
    parts.append(f"<div class=\"arms\" style=\"--arms:{len(arms)}\">")
    for arm in arms:
        parts.append(_arm(arm, record.get(arm)))
    return "".join(parts) + "</div></details>"


def _arm(arm: str, data: dict[str, Any] | None) -> str:
    if not data:
        return f"<div class=\"arm\"><h3>{ARM_TITLES[arm]}</h3><p class=\"note\">not run</p></div>"
    state = _state(data)
    out = [f"<div class=\"arm\" data-arm=\"{arm}\"><h3>{ARM_TITLES[arm]}: <span class=\"{state}\">{state}</span>"
           + (" <span class=\"note\">(cached baseline)</span>" if data.get("cached") else "") + "</h3>"]
    if data.get("error"):
        out.append(f"<p class=\"error\">error: {_e(data['error'])}</p>")
    seconds = data.get("duration_ms", 0)
    seconds = seconds / 1000 if _is_number(seconds) else seconds
    out.append(f"<p class=\"note\">{_counted(data.get('turns', 0), 'turn')} · "
               f"{_counted(data.get('total_tokens', 0), 'token')} · "
               f"{_counted(data.get('tool_call_count', 0), 'tool call')} · {_n(seconds, '.1f')}s</p>")
    out.append(f"<b>answer</b><pre>{_e(data.get('final_output') or '(no answer)')}</pre>")
    extra = data.get("extra") or {}
    if "files_changed" in extra or "files_deleted" in extra:
        # The workspace diff the run took: what is on disk, whatever the transcript says.
        changed = [*extra.get("files_changed", []), *(f"{f} (deleted)" for f in extra.get("files_deleted", []))]
    else:
        changed = files_changed(data.get("transcript", ""))  # a document written before the diff was kept
    out.append("<b>files changed</b> " + (", ".join(f"<code>{_e(f)}</code>" for f in changed) or
                                          "<span class=\"note\">none</span>"))
    for v in data.get("validator_results", []):
        verdict = "errored" if v.get("errored") else ("passed" if v.get("passed") else "failed")
        output = "\n".join(p for p in (v.get("stdout", ""), v.get("stderr", "")) if p.strip())
        out.append(f"<p>validator <b>{_e(v.get('label', ''))}</b>: <span class=\"{_cls(verdict)}\">{verdict}</span> "
                   f"(exit {_e(v.get('exit_code', '-'))}, expected {_e(v.get('expect_exit_code', 0))})</p>"
                   + (f"<pre>{_e(output[-4000:])}</pre>" if output else ""))
    for e in data.get("expectation_results", []):
        verdict = "errored" if e.get("errored") else ("met" if e.get("passed") else "not met")
        out.append(f"<p>expectation <b>{_e(e.get('expectation', ''))}</b>: "
                   f"<span class=\"{_cls(verdict)}\">{verdict}</span><br>judge: {_e(e.get('reason', ''))}</p>")
    for g in (data.get("extra") or {}).get("graders", []):
        verdict = "errored" if g.get("errored") else ("passed" if g.get("passed") else "failed")
        out.append(f"<p>{_e(g.get('kind', 'grader'))} <b>{_e(g.get('label', ''))}</b>: "
                   f"<span class=\"{_cls(verdict)}\">{verdict}</span> {_e(g.get('reason', ''))}</p>")
    out.append(f"<details><summary>transcript</summary><pre>{_e(data.get('transcript') or '')}</pre></details>")
    return "".join(out) + "</div>"


def files_changed(transcript: str) -> list[str]:
    """Workspace paths the agent's write-like tool calls named, in first-touched order."""
    found: dict[str, None] = {}
    for match in TOOL_CALL.finditer(transcript):
        if WRITE_TOOL.search(match.group(1)):
            for path in PATH_ARG.findall(match.group(2)):
                found.setdefault(path)
    return list(found)


def _arms(doc: dict[str, Any]) -> list[str]:
    arms = ["with_skill", "without_skill"]
    if any(r.get("original") for r in doc.get("cases", [])):
        arms.append("original")
    return arms


def _state(arm: dict[str, Any] | None) -> str:
    if not arm:
        return "-"
    return "error" if arm.get("errored") else ("pass" if arm.get("passed") else "fail")


def _cls(verdict: str) -> str:
    return {"passed": "pass", "met": "pass", "failed": "fail", "not met": "fail"}.get(verdict, "error")


def _label(doc: dict[str, Any], record: dict[str, Any]) -> str:
    runs = (doc.get("runs") or 1) > 1
    return record["case_name"] + (f" (run {record['run_index'] + 1})" if runs else "")


def _anchor(doc: dict[str, Any], record: dict[str, Any]) -> str:
    raw = f"{doc['suite']['skill']}-{record['case_name']}-{record.get('run_index', 0)}"
    return "c-" + re.sub(r"[^A-Za-z0-9_-]", "_", raw)


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _n(value: Any, spec: str = "") -> str:
    """A number as ``spec`` formats it; anything else a hand-edited document holds, as text."""
    return format(value, spec) if _is_number(value) else _e(value)


def _counted(value: Any, noun: str) -> str:
    """``counted`` for a number; anything else a hand-edited document holds, escaped."""
    return counted(value, noun) if _is_number(value) else f"{_e(value)} {noun}s"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _pts(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f} pts"
