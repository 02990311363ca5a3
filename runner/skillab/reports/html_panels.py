"""The HTML report's account of a suite beyond its lift: a callout for the cases the skill broke
or could not measure, the judge's independence and consistency, what the run cost, and the
disclosures the markdown report carries. Every string from the document is escaped."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from ..core.runlog import RunLog
from .consistency_wording import agreed_on, below_floor
from .markdown_view import SuiteView, broken_by_skill
from .terminal import agreement_interval, consistency_unmeasured


def suite_panels(log: RunLog) -> list[str]:
    view = SuiteView.from_log(0, log)
    return [*_callouts(log, view), *_judge(log, view), _usage(log), _disclosures(view)]


def _callouts(log: RunLog, view: SuiteView) -> list[str]:
    broken = _names(log, "flip_to_fail", lambda name: broken_by_skill(view, name))
    worse = _names(log, "flip_to_fail", lambda name: not broken_by_skill(view, name))
    errored = _names(log, "error")
    out = []
    if broken:
        out.append(f"<p class=\"callout fail\"><b>Broken by the skill</b> (pass without it, fail with it, "
                   f"beyond noise): {_list(broken)}</p>")
    if worse:
        out.append(f"<p class=\"callout mixed\"><b>Worse with the skill, within noise</b>: {_list(worse)}</p>")
    if errored:
        out.append(f"<p class=\"callout error\"><b>Not measured</b> (an arm errored; left out of the lift): "
                   f"{_list(errored)}</p>")
    return out


def _judge(log: RunLog, view: SuiteView) -> list[str]:
    out = []
    models = log.settings.models
    if models.get("judge_same_family"):
        out.append(f"<p class=\"callout mixed\">⚠️ Judged by a model of the agent's family ({_e(models.get('judge'))} "
                   f"for {_e(models.get('agent'))}): judges favour their own family's answers.</p>")
    check = view.judge_consistency or {}
    if check.get("lift_withheld"):
        out.append(f"<p class=\"callout mixed\"><b>Lift withheld</b>: {_e(below_floor(check))}.</p>")
    elif check.get("sampled") and check.get("agreement") is None:
        out.append(f"<p class=\"note\">{_e(consistency_unmeasured(check))}</p>")
    elif check.get("agreement") is not None:
        out.append(f"<p><b>judge consistency</b> {_e(agreed_on(check))}{_e(agreement_interval(check))}</p>")
    return out


def _usage(log: RunLog) -> str:
    usage = log.summary.usage
    total = usage.get("total") or {}
    parts = [f"{_num(total.get('total_tokens', 0), ',')} tokens"]
    if total.get("cost_usd") is not None:
        parts.append(f"${_num(total['cost_usd'], '.4f')}")
        shares = [f"{name} ${_num((usage.get(key) or {}).get('cost_usd'), '.4f')}"
                  for key, name in (("with_skill", "with skill"), ("without_skill", "without skill"),
                                    ("original", "original"), ("judge", "judge"))
                  if (usage.get(key) or {}).get("cost_usd") is not None]
        if shares:
            parts.append(f"({', '.join(shares)})")
    else:
        parts.append("cost n/a (no price listed, or nothing billed)")
    return f"<p><b>usage</b> {parts[0]} · {' '.join(parts[1:])}</p>"


def _num(value: Any, spec: str = "") -> str:
    """A number as ``spec`` formats it; anything else a hand-edited document holds, escaped."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return format(value, spec)
    return _e(value)


def _disclosures(view: SuiteView) -> str:
    items = [f"{view.errors} errored", f"{view.skipped_apples_oranges} skipped (apples-to-oranges)",
             f"{view.trigger_only} trigger-only", f"{view.cache_hits} cached baselines",
             f"{view.contaminated_arms} contaminated arms",
             f"{view.cases_aggregated} of {view.total_cases} cases aggregated", f"sandbox: {view.sandbox}"]
    if view.error_dominated:
        items.insert(0, "<b>error-dominated: the lift is withheld</b>")
    if view.interrupted:
        items.insert(0, "<b>interrupted: partial results</b>")
    body = " · ".join(item if item.startswith("<b>") else _e(item) for item in items)
    warnings = "".join(f"<li>⚠️ {_e(w)}</li>" for w in view.warnings)
    return f"<div class=\"disclosures\"><b>disclosures</b> {body}" + (f"<ul>{warnings}</ul>" if warnings else "") + "</div>"


def _names(log: RunLog, outcome: str, keep: Callable[[str], bool] | None = None) -> list[str]:
    names: dict[str, None] = {}
    for record in log.records:
        if record.outcome == outcome and (keep is None or keep(record.case_name)):
            names.setdefault(record.case_name)
    return list(names)


def _list(names: list[str]) -> str:
    return ", ".join(f"<code>{_e(n)}</code>" for n in names)


def _e(value: Any) -> str:
    return escape(str(value), quote=True)
