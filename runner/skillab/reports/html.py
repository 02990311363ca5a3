"""The HTML report: one self-contained file (inline CSS and SVG, no script, no network asset).

Per suite: the headline and its evidence, a plot of the lift with its 95% interval, the trend
over the run history, trigger-only cases; then every case with both arms side by side (answer,
transcript, validator output, judge reasons, files the agent changed). Every string from the
document is escaped; nothing in it can become markup.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import fields
from html import escape
from pathlib import Path
from typing import Any

from ..core.records import ArmRecord, CaseRecord
from ..core.runlog import RunLog
from ..core.triggers import RateInterval
from ..core.wording import counted
from . import html_cases
from .evidence_view import html_lines as evidence_lines
from .findings import ARM_TITLES, FAILED_OUTCOMES
from .html_cases import CaseRow, case_table, tags_of
from .html_panels import suite_panels
from .html_trend import trend_chart
from .partial import early_stop, interruption
from .placebo_view import html_lines as placebo_lines
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


def render_html(logs: Sequence[RunLog]) -> str:
    title = "skillab report"
    body = [f"<h1>{title}</h1>"]
    for index, log in enumerate(logs):
        body += _suite(log, f"s{index}")
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{title}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def write_html(logs: Sequence[RunLog], path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(logs), encoding="utf-8")


def _suite(log: RunLog, key: str = "s0") -> list[str]:
    settings, summary = log.settings, log.summary
    rate = summary.aggregate.pass_rate
    stopped = interruption(log)
    verdict, cls = (stopped, "interrupted") if stopped else (summary.verdict, summary.verdict)
    routing_only = only_triggers(log)
    if routing_only and not stopped:
        # No graded case: an "error" verdict, an empty lift and an empty case table would mislead.
        verdict, cls = "triggers", "note"
    stats = summary.statistics
    mock = settings.adapter.name == "mock"
    models = (("agent", settings.models.agent), ("judge", settings.models.judge))
    out = [
        f"<section class=\"suite\"><h2>{_e(settings.suite.skill)} "
        f"<span class=\"verdict {_e(cls)}\">{_e(verdict)}</span></h2>",
        f"<p class=\"note\">{_e(settings.suite.path)} · adapter {_e(settings.adapter.name)}"
        + "".join(f" · {role} {_e(model)}" for role, model in models if model)
        + f" · runs {_e(settings.runs)}</p>",
    ]
    early = early_stop(log)
    if early:
        out.append(f"<p class=\"note\">{_e(early)}</p>")
    if routing_only:
        out.append("<p class=\"note\">Trigger queries only: no case is graded with and without the skill, "
                   "so there is no lift; the trigger gates are this suite's check.</p>")
        if mock:
            out.append("<p class=\"note\">Mock adapter: the loads are scripted, so these rates show the "
                       "pipeline works, not how the agent routes.</p>")
        return [*out, *trend_chart(log), *_trigger_tables(log), "</section>"]
    out.append(f"<p><b>pass rate</b> with {_pct(rate.with_skill)} · without {_pct(rate.without_skill)}"
               f" · delta <b>{_pts(rate.delta_pts)}</b></p>")
    if stats is not None and stats.summary:
        out.append(f"<p><b>evidence</b> {_e(stats.summary)}</p>")
    if mock:
        out.append("<p class=\"note\">Mock adapter: the answers are scripted, so this lift shows the "
                   "pipeline works, not that the skill helps.</p>")
    out += placebo_lines(log)
    out += suite_panels(log)
    out.append(_lift_plot(rate.delta_pts, None if stats is None else stats.ci95))
    out += trend_chart(log)
    out += evidence_lines(log)
    out += _trigger_tables(log)
    out += _case_table(log, key)
    out += [_case_detail(log, record) for record in log.records]
    out.append("</section>")
    return out


def _lift_plot(delta: float | None, ci: tuple[float, float] | None) -> str:
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


def _trigger_tables(log: RunLog) -> list[str]:
    """Trigger-only cases, and the trigger trials' block when the run measured routing."""
    out = []
    if log.settings.trigger_only:
        names = ", ".join(_e(n) for n in log.settings.trigger_only)
        out.append(f"<p><b>trigger-only cases</b> (no grader; not run A/B): {names}</p>")
    block = log.settings.triggers
    if block is None:
        return out
    shown = [f"{_e(f.name)} {_e(_metric(getattr(block.metrics, f.name)))}" for f in fields(block.metrics)]
    out.append(f"<h3>Triggers</h3><p>{' · '.join(shown)} (95% intervals)</p>")
    if block.queries:
        # False triggers and misses first, as the terminal and markdown reports list them.
        flags = {**{q.name: "missed" for q in block.misses}, **{q.name: "false trigger" for q in block.false_triggers}}
        order = {"false trigger": 0, "missed": 1}
        queries = sorted(block.queries, key=lambda q: order.get(flags.get(q.name, ""), 2))
        out.append(_table([{"": flags.get(q.name, ""), "name": q.name, "query": q.query,
                            "should_trigger": _yes_no(q.should_trigger), "triggered": q.triggered,
                            "trials": q.trials, "rate": q.rate} for q in queries]))
    return out


def _yes_no(value: bool) -> str:
    return "yes" if value else "no"


def _metric(metric: RateInterval) -> str:
    if metric.value is None:
        return "n/a"
    low, high = metric.low, metric.high
    interval = f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else ""
    return f"{metric.value:.2f}{interval}"


def _table(rows: list[dict[str, Any]]) -> str:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_e(row.get(c, ''))}</td>" for c in columns) + "</tr>"
                   for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _case_table(log: RunLog, key: str) -> list[str]:
    arms = _arms(log)
    head = ["case", *(ARM_TITLES[a] for a in arms), "outcome"]
    rows = [CaseRow(record.case_name, record.outcome, tags_of(record),
                    "".join(f"<td class=\"{_state(_arm_of(record, a))}\">{_state(_arm_of(record, a))}</td>"
                            for a in arms)
                    + f"<td class=\"{_e(record.outcome)}\">{_e(record.outcome)}</td>",
                    _anchor(log, record), _label(log, record))
            for record in log.records]
    return case_table(key, head, rows)


def _case_detail(log: RunLog, record: CaseRecord) -> str:
    arms = _arms(log)
    # Failures are what a reader came for; a small suite shows every case unfolded.
    few = len(log.records) <= OPEN_ALL_UP_TO
    opened = " open" if few or record.outcome in FAILED_OUTCOMES else ""
    parts = [f"<details id=\"{_anchor(log, record)}\"{opened}><summary>{_e(_label(log, record))}: "
             f"<span class=\"{_e(record.outcome)}\">{_e(record.outcome)}</span></summary>"]
    if record.error:
        parts.append(f"<p class=\"error\">error: {_e(record.error)}</p>")
    parts.append(f"<div class=\"arms\" style=\"--arms:{len(arms)}\">")
    for arm in arms:
        parts.append(_arm(arm, _arm_of(record, arm)))
    return "".join(parts) + "</div></details>"


def _arm(arm: str, data: ArmRecord | None) -> str:
    if data is None:
        return f"<div class=\"arm\"><h3>{ARM_TITLES[arm]}</h3><p class=\"note\">not run</p></div>"
    state = _state(data)
    out = [f"<div class=\"arm\" data-arm=\"{arm}\"><h3>{ARM_TITLES[arm]}: <span class=\"{state}\">{state}</span>"
           + (" <span class=\"note\">(cached baseline)</span>" if data.cached else "") + "</h3>"]
    if data.error:
        out.append(f"<p class=\"error\">error: {_e(data.error)}</p>")
    out.append(f"<p class=\"note\">{counted(data.turns, 'turn')} · {counted(data.total_tokens, 'token')} · "
               f"{counted(data.tool_call_count, 'tool call')} · {data.duration_ms / 1000:.1f}s</p>")
    out.append(f"<b>answer</b><pre>{_e(data.final_output or '(no answer)')}</pre>")
    out.append("<b>files changed</b> " + (", ".join(f"<code>{_e(f)}</code>" for f in _changed(data)) or
                                          "<span class=\"note\">none</span>"))
    out += _checks(data)
    out.append(f"<details><summary>transcript</summary><pre>{_e(data.transcript)}</pre></details>")
    return "".join(out) + "</div>"


def _changed(arm: ArmRecord) -> list[str]:
    if arm.files_changed or arm.files_deleted:
        # The workspace diff the run took: what is on disk, whatever the transcript says.
        return [*arm.files_changed, *(f"{f} (deleted)" for f in arm.files_deleted)]
    return files_changed(arm.transcript)  # a document written before the diff was kept


def _checks(arm: ArmRecord) -> list[str]:
    """The arm's validators (with their output), the judge's expectations and the format's graders."""
    out = []
    for v in arm.validator_results:
        verdict = "errored" if v.errored else ("passed" if v.passed else "failed")
        output = "\n".join(p for p in (v.stdout, v.stderr) if p.strip())
        exit_code = "-" if v.exit_code is None else v.exit_code
        out.append(f"<p>validator <b>{_e(v.label)}</b>: <span class=\"{_cls(verdict)}\">{verdict}</span> "
                   f"(exit {_e(exit_code)}, expected {_e(v.expect_exit_code)})</p>"
                   + (f"<pre>{_e(output[-4000:])}</pre>" if output else ""))
    for e in arm.expectation_results:
        verdict = "errored" if e.errored else ("met" if e.passed else "not met")
        out.append(f"<p>expectation <b>{_e(e.expectation)}</b>: "
                   f"<span class=\"{_cls(verdict)}\">{verdict}</span><br>judge: {_e(e.reason)}</p>")
    for g in arm.graders:
        verdict = "errored" if g.errored else ("passed" if g.passed else "failed")
        out.append(f"<p>{_e(g.kind)} <b>{_e(g.label)}</b>: "
                   f"<span class=\"{_cls(verdict)}\">{verdict}</span> {_e(g.reason)}</p>")
    return out


def files_changed(transcript: str) -> list[str]:
    """Workspace paths the agent's write-like tool calls named, in first-touched order."""
    found: dict[str, None] = {}
    for match in TOOL_CALL.finditer(transcript):
        if WRITE_TOOL.search(match.group(1)):
            for path in PATH_ARG.findall(match.group(2)):
                found.setdefault(path)
    return list(found)


def _arms(log: RunLog) -> list[str]:
    arms = ["with_skill", "without_skill"]
    if any(r.original is not None for r in log.records):
        arms.append("original")
    return arms


def _arm_of(record: CaseRecord, arm: str) -> ArmRecord | None:
    return {"with_skill": record.with_skill, "without_skill": record.without_skill,
            "original": record.original}[arm]


def _state(arm: ArmRecord | None) -> str:
    if arm is None:
        return "-"
    return "error" if arm.errored else ("pass" if arm.passed else "fail")


def _cls(verdict: str) -> str:
    return {"passed": "pass", "met": "pass", "failed": "fail", "not met": "fail"}.get(verdict, "error")


def _label(log: RunLog, record: CaseRecord) -> str:
    return record.case_name + (f" (run {record.run_index + 1})" if log.settings.runs > 1 else "")


def _anchor(log: RunLog, record: CaseRecord) -> str:
    raw = f"{log.settings.suite.skill}-{record.case_name}-{record.run_index}"
    return "c-" + re.sub(r"[^A-Za-z0-9_-]", "_", raw)


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _pts(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f} pts"
