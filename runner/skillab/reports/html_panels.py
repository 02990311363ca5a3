"""The HTML report's account of a suite beyond its lift: a callout for the cases the skill broke
or could not measure, the judge's independence and consistency, what the run cost, and the
disclosures the markdown report carries. Every string from the document is escaped."""

from __future__ import annotations

from html import escape
from typing import Any, TypeGuard

from ..core.runlog import RunLog
from .markdown_view import SuiteView, broken_by_skill
from .terminal import agreement_interval, consistency_unmeasured


def suite_panels(doc: dict[str, Any]) -> list[str]:
    try:
        view = SuiteView.from_log(0, RunLog.from_json(doc))
    except (ValueError, TypeError, KeyError, AttributeError):
        # A hand-edited document whose counts are not numbers: the rest of the page still renders.
        return ["<p class=\"note\">the document's summary fields are not numbers: its panels are left out</p>"]
    return [*_callouts(doc, view), *_judge(doc, view), _usage(doc), _disclosures(view)]


def _callouts(doc: dict[str, Any], view: SuiteView) -> list[str]:
    broken = _names(doc, "flip_to_fail", lambda name: broken_by_skill(view, name))
    worse = _names(doc, "flip_to_fail", lambda name: not broken_by_skill(view, name))
    errored = _names(doc, "error")
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


def _judge(doc: dict[str, Any], view: SuiteView) -> list[str]:
    out = []
    models = doc.get("models") or {}
    if models.get("judge_same_family"):
        out.append(f"<p class=\"callout mixed\">⚠️ Judged by a model of the agent's family ({_e(models.get('judge'))} "
                   f"for {_e(models.get('agent'))}): judges favour their own family's answers.</p>")
    check = doc.get("judge_consistency") or {}
    if check.get("lift_withheld"):
        out.append(f"<p class=\"callout mixed\"><b>Lift withheld</b>: the judge agreed with itself on "
                   f"{_re_asked(check)} re-asked verdicts, below {_num(check.get('floor'), '.0%')}.</p>")
    elif check.get("sampled") and check.get("agreement") is None:
        out.append(f"<p class=\"note\">{_e(consistency_unmeasured(check))}</p>")
    elif check.get("agreement") is not None:
        out.append(f"<p><b>judge consistency</b> agreed with itself on {_re_asked(check)} re-asked "
                   f"verdicts{_interval(check)}</p>")
    return out


def _usage(doc: dict[str, Any]) -> str:
    usage = doc.get("usage") or {}
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


def _interval(check: dict[str, Any]) -> str:
    """The agreement's interval as every report words it (``agreement_interval``); nothing for a
    hand-edited document whose bounds are not numbers."""
    ci = check.get("ci95")
    if not (isinstance(ci, list) and len(ci) == 2 and all(isinstance(v, (int, float)) for v in ci)):
        return ""
    return _e(agreement_interval(check))


def _re_asked(check: dict[str, Any]) -> str:
    """``agreed/compared`` of the consistency check, each part a number or escaped text."""
    sampled, errored = check.get("sampled"), check.get("errored")
    compared = sampled - errored if _count(sampled) and _count(errored) else f"{sampled} - {errored}"
    return f"{_num(check.get('agreed'))}/{_num(compared)}"


def _count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


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


def _names(doc: dict[str, Any], outcome: str, keep: Any = None) -> list[str]:
    names: dict[str, None] = {}
    for record in doc.get("cases", []):
        if record.get("outcome") == outcome and (keep is None or keep(record["case_name"])):
            names.setdefault(record["case_name"])
    return list(names)


def _list(names: list[str]) -> str:
    return ", ".join(f"<code>{_e(n)}</code>" for n in names)


def _e(value: Any) -> str:
    return escape(str(value), quote=True)
