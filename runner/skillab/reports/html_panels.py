"""The HTML report's account of a suite beyond its lift: a callout for the cases the skill broke
or could not measure, the judge's independence and consistency, what the run cost, and the
disclosures the markdown report carries. Every string from the run is escaped."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from ..core.runlog import RunLog
from ..scoring.sentences import pts
from .consistency_wording import agreed_on, agreement_interval, below_floor, consistency_unmeasured
from .disclosures import run_disclosure_counts, sandbox_label


def suite_panels(log: RunLog) -> list[str]:
    return [*_callouts(log), *versus_original(log), *_judge(log), _usage(log), _disclosures(log)]


def versus_original(log: RunLog) -> list[str]:
    """``--against``: the candidate against the original, the cases the edit broke first, as
    the PR comment sends reviewers here for."""
    compared = log.summary.comparison
    if compared is None:
        return []
    rate, stats = compared.pass_rate, compared.statistics
    delta = _signed(rate.delta_pts)
    if rate.delta_pts is not None and stats is not None and stats.ci95 is not None:
        delta += f" ({_signed(stats.ci95[0])} to {_signed(stats.ci95[1])})"
    elif compared.error_dominated:
        delta = "n/a (error-dominated)"
    out = ["<h3>Candidate vs original</h3>",
           f"<p class=\"note\">The edited skill against the original (<code>{_e(compared.original.label)}</code>).</p>"]
    if compared.broken_by_edit:
        out.append(f"<p class=\"callout fail\"><b>❌ Broken by the edit</b> (passed with the original, fail "
                   f"with the candidate; beyond noise): {_list(list(compared.broken_by_edit))}</p>")
    if compared.changed_within_noise:
        out.append(f"<p class=\"callout mixed\"><b>Changed, within noise</b> (passed with the original, fail "
                   f"with the candidate in this run): {_list(list(compared.changed_within_noise))}</p>")
    if compared.rescued_by_edit:
        out.append(f"<p class=\"callout pass\"><b>✅ Rescued by the edit</b> (failed with the original, pass "
                   f"with the candidate): {_list(list(compared.rescued_by_edit))}</p>")
    if not (compared.broken_by_edit or compared.changed_within_noise or compared.rescued_by_edit):
        out.append("<p class=\"note\">No case changed its result between the original and the candidate.</p>")
    p_value = None if stats is None or stats.p_value is None else f"{stats.p_value:.2g}"
    out.append("<table class=\"versus\"><tr><th>candidate</th><th>original</th><th>Δ pts (95% CI)</th>"
               f"<th>p (case-level)</th></tr><tr><td>{_rate(rate.candidate)}</td><td>{_rate(rate.original)}</td>"
               f"<td>{_e(delta)}</td><td>{_e(p_value or 'n/a')}</td></tr></table>")
    return out


def _signed(value: float | None) -> str:
    return "n/a" if value is None else pts(value)


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _callouts(log: RunLog) -> list[str]:
    stats = log.summary.statistics
    broken = _names(log, "flip_to_fail", lambda name: stats is not None and stats.broke(name))
    worse = _names(log, "flip_to_fail", lambda name: stats is None or not stats.broke(name))
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


def _judge(log: RunLog) -> list[str]:
    out = []
    models = log.settings.models
    if models.judge_same_family:
        out.append(f"<p class=\"callout mixed\">⚠️ Judged by a model of the agent's family ({_e(models.judge)} "
                   f"for {_e(models.agent)}): judges favour their own family's answers.</p>")
    check = log.settings.judge_consistency
    if check is None:
        return out
    if check.lift_withheld:
        out.append(f"<p class=\"callout mixed\"><b>Lift withheld</b>: {_e(below_floor(check))}.</p>")
    elif check.sampled and check.agreement is None:
        out.append(f"<p class=\"note\">{_e(consistency_unmeasured(check))}</p>")
    elif check.agreement is not None:
        out.append(f"<p><b>judge consistency</b> {_e(agreed_on(check))}{_e(agreement_interval(check))}</p>")
    return out


def _usage(log: RunLog) -> str:
    usage = log.summary.usage
    parts = [f"{usage.total.total_tokens:,} tokens"]
    if usage.total.cost_usd is not None:
        parts.append(f"${usage.total.cost_usd:.4f}")
        arms = (("with skill", usage.with_skill), ("without skill", usage.without_skill),
                ("original", usage.original), ("judge", usage.judge))
        shares = [f"{name} ${arm.cost_usd:.4f}" for name, arm in arms if arm is not None and arm.cost_usd is not None]
        if shares:
            parts.append(f"({', '.join(shares)})")
    else:
        parts.append("cost n/a (no price listed, or nothing billed)")
    return f"<p><b>usage</b> {parts[0]} · {' '.join(parts[1:])}</p>"


def _disclosures(log: RunLog) -> str:
    settings = log.settings
    items = [*run_disclosure_counts(log), f"sandbox: {sandbox_label(settings.isolation)}"]
    if log.summary.aggregate.error_dominated:
        items.insert(0, "<b>error-dominated: the lift is withheld</b>")
    if settings.interrupted:
        items.insert(0, "<b>interrupted: partial results</b>")
    body = " · ".join(item if item.startswith("<b>") else _e(item) for item in items)
    warnings = "".join(f"<li>⚠️ {_e(w)}</li>" for w in settings.warnings)
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
