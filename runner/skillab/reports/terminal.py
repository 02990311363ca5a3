"""The terminal report: a plain-text table rendered from a results document."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import UTC
from typing import Any

from .consistency_wording import agreed_on, agreement_interval, consistency_unmeasured
from .context_view import context_text
from .findings import ARM_TITLES, ARMS, arm_findings, failed_records, tail
from .markdown_view import edit_flips
from .partial import early_stop, interruption
from .trigger_gates import only_triggers
from .trigger_report import terminal_lines as trigger_lines

DIMENSIONS = ("duration_ms", "turns", "tokens", "tool_calls")


def render_table(doc: dict[str, Any], *, verbose: bool = False) -> str:
    """The table, the summary, then why each failed or errored case failed (``verbose``: both
    arms, longer output tails and the answer)."""
    if only_triggers(doc):
        # No graded case: an empty A/B table and an "error" verdict would only mislead.
        return "\n".join([_header(doc), *trigger_lines(doc), *_trend(doc)])
    lines = [_header(doc), ""]
    stopped = interruption(doc)
    if stopped:
        lines += [f"  {stopped.upper()}", ""]
    early = early_stop(doc)
    if early:
        lines += [f"  {early}", ""]
    lines += _case_rows(doc)
    lines.append("")
    lines += _summary(doc)
    lines += _format_sections(doc)
    lines += _versus_original(doc)
    lines += trigger_lines(doc)
    lines += _trend(doc)
    lines += why_failed(doc, verbose=verbose)
    return "\n".join(lines)


def why_failed(doc: dict[str, Any], *, verbose: bool = False) -> list[str]:
    """After the table: every failed or errored record with its reasons."""
    records = failed_records(doc)
    if verbose:
        # A rescued case failed too, without the skill: -v shows why, as it does for the rest.
        records += [r for r in doc.get("cases", []) if r.get("outcome") == "flip_to_pass"]
    if not records:
        return []
    runs = (doc.get("runs") or 1) > 1
    lines = ["", "  why cases failed" + ("" if verbose else " (-v for both arms and longer output)")]
    for record in records:
        name = record["case_name"] + (f" (run {record['run_index'] + 1})" if runs else "")
        rescued = record["outcome"] == "flip_to_pass"
        lines.append(f"  {'✓' if rescued else '✗'} {name}: {record['outcome']}"
                     + (" (the without-skill arm failed)" if rescued else ""))
        if record.get("error"):
            lines.append(f"      error: {_clip(record['error'], 400 if verbose else 200)}")
        for arm in ARMS:
            data = record.get(arm)
            if not data or (arm != "with_skill" and not verbose and not data.get("errored")):
                continue
            findings = arm_findings(data)
            if not findings:
                continue
            lines.append(f"    {ARM_TITLES[arm]}:")
            for finding in findings:
                label = f"{finding.kind} {finding.label!r}" if finding.kind != "error" else "error"
                lines.append(f"      {label}: {_clip(finding.detail, 600 if verbose else 200)}")
                for line in tail(finding.output, 20 if verbose else 3):
                    lines.append(f"        | {line}")
            if verbose and data.get("final_output", "").strip():
                lines.append("      answer:")
                lines += [f"        | {line}" for line in tail(data["final_output"], 15)]
    return lines


def _header(doc: dict[str, Any]) -> str:
    suite = doc["suite"]
    models = doc["models"]
    parts = [f"skillab · {suite['skill']} ({suite['path']})", f"adapter {doc['adapter']['name']}"]
    if models.get("agent"):
        provider = ((doc["adapter"].get("identity") or {}).get("provider"))
        parts.append(f"model {models['agent']}" + (f" ({provider})" if provider else ""))
    if models.get("judge"):
        same = " (the agent's family)" if models.get("judge_same_family") else ""
        parts.append(f"judge {models['judge']}{same}")
    parts.append(f"runs {doc['runs']}")
    if doc.get("pass_k", 1) > 1 or attempts(doc) > 1:
        n = attempts(doc)
        parts.append(f"pass@{doc['pass_k']}" + (f" from {n} attempts" if n != doc.get("pass_k", 1) else ""))
    if doc.get("shard"):
        # Its numbers cover its share only: the merged document has the run's.
        parts.append(f"shard {doc['shard']['index']}/{doc['shard']['count']} (join with skillab merge)")
    header = " · ".join(parts)
    if (doc.get("isolation") or {}).get("unsandboxed"):
        header = f"UNSANDBOXED · {header}"
    return header


def _case_rows(doc: dict[str, Any]) -> list[str]:
    by_case: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in doc["cases"]:
        by_case[record["case_name"]].append(record)
    if not by_case:
        return ["  (no case finished)"]
    width = max(12, *(len(name) for name in by_case))
    versus = doc.get("comparison") is not None
    original_head = f"  {'original':>8}" if versus else ""
    rows = [f"  {'case':<{width}}  {'with':>7}  {'without':>7}{original_head}  outcome"]
    for name, records in by_case.items():
        with_cell = _arm_cell(records, "with_skill")
        without_cell = _arm_cell(records, "without_skill")
        if versus:
            without_cell = f"{without_cell:>7}  {_arm_cell(records, 'original'):>8}"
        outcomes = Counter(r["outcome"] for r in records)
        outcome = ", ".join(
            o if n == 1 and len(records) == 1 else f"{o}×{n}" for o, n in outcomes.items()
        )
        flags = []
        if any(r["without_skill"].get("cached") for r in records):
            flags.append("cached baseline")
        if any(r["without_skill"].get("contaminated") for r in records):
            flags.append("CONTAMINATED baseline")
        errors = [r.get("error") or _arm_error(r) for r in records if r["outcome"] == "error"]
        if errors and errors[0]:
            flags.append(_clip(errors[0], 70))
        edit = Counter(r.get("original_outcome") for r in records)
        if edit.get("flip_to_fail"):
            regressed = name in ((doc.get("comparison") or {}).get("statistics") or {}).get("regressed_cases", ())
            label = "BROKEN BY THE EDIT" if regressed else "worse with the edit, within noise"
            flags.insert(0, label + _runs_note(edit["flip_to_fail"], len(records)))
        if edit.get("flip_to_pass"):
            flags.append("rescued by the edit" + _runs_note(edit["flip_to_pass"], len(records)))
        suffix = f"  [{'; '.join(flags)}]" if flags else ""
        rows.append(f"  {name:<{width}}  {with_cell:>7}  {without_cell:>7}  {outcome}{suffix}")
    return rows


def _runs_note(n: int, runs: int) -> str:
    return f" in {n}/{runs} runs" if runs > 1 else ""


def _arm_cell(records: list[dict[str, Any]], arm: str) -> str:
    arms = [r[arm] for r in records if r.get(arm)]
    if not arms:
        return "-"
    if len(arms) == 1:
        a = arms[0]
        return "error" if a["errored"] else ("pass" if a["passed"] else "fail")
    passed = sum(1 for a in arms if a["passed"] and not a["errored"])
    return f"{passed}/{len(arms)}"


def _arm_error(record: dict[str, Any]) -> str | None:
    for arm in ("with_skill", "without_skill", "original"):
        if record.get(arm) and record[arm].get("error"):
            return f"{arm}: {record[arm]['error']}"
    return None


def _summary(doc: dict[str, Any]) -> list[str]:
    rate = doc["pass_rate"]
    stats = doc.get("statistics") or {}
    # The raw difference stays visible, but never reads as a lift the run does not claim.
    withheld = doc.get("error_dominated") or (doc.get("judge_consistency") or {}).get("lift_withheld")
    lines = [
        f"  {rate_label(doc):<12} with {_pct(rate['with_skill'])}   without {_pct(rate['without_skill'])}"
        f"   delta {_pts(rate['delta_pts'])}{' (withheld as a lift)' if withheld else ''}{_runs_label(doc)}",
    ]
    if stats.get("summary"):
        lines.append(f"  evidence     {stats['summary']}")
    reward = doc.get("reward")
    if reward:
        lines.append(
            f"  reward       with {_reward(reward['with_skill'])}   without {_reward(reward['without_skill'])}"
            f"   (mean verifier reward over {reward['arms']} graded arm(s); pass at {reward['threshold']:g})"
        )
    lines += _pass_at_k(doc)
    verdict = doc["verdict"]
    if interruption(doc):
        verdict = f"{interruption(doc)} (no verdict: the finished cases are counted above)"
    elif doc.get("error_dominated"):
        verdict += " (more than 25% of cases errored: the lift is withheld)"
    lines.append(f"  verdict      {verdict}")
    dims = [_dimension(doc, d) for d in DIMENSIONS]
    lines.append("  efficiency   " + "   ".join(d for d in dims if d))
    gated = [_dimension(doc, f"{d}_correctness_gated", label=d) for d in DIMENSIONS]
    gated_n = doc.get("cases_correctness_gated", 0)
    lines.append(
        "  both-correct " + ("   ".join(d for d in gated if d) or "n/a") + f"   (over {gated_n})"
    )
    cache = doc.get("cache", {})
    cache_text = (
        f"{cache.get('hits', 0)}/{cache.get('arms', 0)} baselines from cache"
        if cache.get("enabled")
        else "baseline cache off"
    )
    lines.append(
        "  disclosure   "
        f"{doc['total_cases']} records · {doc['errors']} errored · "
        f"{doc['cases_skipped_apples_oranges']} skipped (task not attempted) · "
        f"{doc.get('cases_skipped_trigger_only', 0)} trigger-only · {cache_text} · "
        f"{doc.get('contaminated_arms', 0)} contaminated baselines"
    )
    activation = doc.get("activation")
    if activation and activation.get("with_skill") is not None:
        lines.append(f"  activation   skill opened in {_pct(activation['with_skill'])} of with-skill arms")
    usage = doc.get("usage", {}).get("total", {})
    cost = usage.get("cost_usd")
    lines.append(
        f"  usage        {usage.get('total_tokens', 0):,} tokens"
        + (f" · ${cost:.4f}" if cost is not None else "")
        + f" · {doc['timings']['wall_ms'] / 1000:.1f}s wall · sandbox: "
        + _sandbox_label(doc)
    )
    context = context_text(doc.get("context_budget"))
    if context:
        lines.append(f"  context      {context}")
    lines += _judge_consistency(doc)
    if doc["adapter"]["name"] == "mock":
        lines.append("  note         mock adapter: the answers are scripted, so this lift shows the "
                     "pipeline works, not that the skill helps")
    for warning in doc.get("warnings", []):
        lines.append(f"  warning      {warning}")
    return lines


def _reward(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _sandbox_label(doc: dict[str, Any]) -> str:
    isolation = doc.get("isolation") or {}
    if isolation.get("unsandboxed"):
        return "none (unsandboxed)"
    return str(isolation.get("backend") or isolation.get("network"))
def _pass_at_k(doc: dict[str, Any]) -> list[str]:
    """The unbiased pass@k estimate (Chen et al.) with pass@1 beside it."""
    summary = doc.get("pass_at_k")
    if not summary:
        return []
    arms = summary.get("arms") or {}

    def both(key: str) -> str:
        return "   ".join(f"{label} {_pct((arms.get(arm) or {}).get(key))}"
                           for arm, label in (("with_skill", "with"), ("without_skill", "without")))

    k = summary["k"]
    return [f"  pass@{k}       {both('pass_at_k')}   (unbiased estimate from {summary['attempts']} "
            f"attempts per arm)   pass@1 {both('pass_at_1')}"]


def _judge_consistency(doc: dict[str, Any]) -> list[str]:
    check = doc.get("judge_consistency")
    if check and check.get("sampled") and check.get("agreement") is None:
        return [f"  judge        {consistency_unmeasured(check)}"]
    if not check or check.get("agreement") is None:
        return []
    line = f"  judge        {agreed_on(check)} ({check['agreement'] * 100:.0f}%{agreement_interval(check)})"
    if check.get("lift_withheld"):
        line += f": below {check['floor'] * 100:.0f}%, so the lift is withheld"
    return [line]


def attempts(doc: dict[str, Any]) -> int:
    """Attempts per arm: ``--pass-n`` when it asked for more than ``--pass-k``."""
    return int(doc.get("pass_n") or doc.get("pass_k", 1) or 1)


def rate_label(doc: dict[str, Any]) -> str:
    """``pass@N rate`` when each arm had N attempts (any passing one counts), else ``pass rate``.

    The rate is over every attempt an arm made, so with ``--pass-n`` above ``--pass-k`` it is
    pass@n, not pass@k (the unbiased pass@k estimate is its own line)."""
    n = attempts(doc)
    return f"pass@{n} rate" if n > 1 else "pass rate"


def _runs_label(doc: dict[str, Any]) -> str:
    runs = doc.get("runs", 1) or 1
    return f"   (MEAN over {runs} runs)" if runs > 1 else ""


def _format_sections(doc: dict[str, Any]) -> list[str]:
    """What the suite's format adds about its own cases (ruby-skill-bench: its criteria)."""
    from ..formats import DEFAULT_REGISTRY

    return [line for fmt in DEFAULT_REGISTRY.of_documents([doc]) if fmt.terminal_section
            for line in fmt.terminal_section(doc)]


def _versus_original(doc: dict[str, Any]) -> list[str]:
    """Candidate vs original (``--against``): what the edit broke comes first, whatever the lift."""
    comparison = doc.get("comparison")
    if not comparison:
        return []
    rate = comparison["pass_rate"]
    lines = [
        "",
        f"  candidate vs original ({comparison['original']['label']})",
    ]
    broken, changed = edit_flips(comparison)
    rescued = comparison["rescued_by_edit"]
    stats = comparison.get("statistics") or {}
    if broken:
        # Named only on each case's own evidence (statistics.regressed_cases).
        lines.append(f"  REGRESSION   broken by the edit beyond noise (passed with the original, fail now): "
                     f"{', '.join(broken)}")
    if changed:
        lines.append(f"  changed      within noise (passed with the original, fail now): {', '.join(changed)}")
    if rescued:
        lines.append(f"  rescued      by the edit (failed with the original, pass now): {', '.join(rescued)}")
    if not broken and not changed and not rescued:
        lines.append("  flips        none: every case has the same result with both versions")
    lines.append(
        f"  pass rate    candidate {_pct(rate['candidate'])}   original {_pct(rate['original'])}"
        f"   delta {_pts(rate['delta_pts'])}"
    )
    if stats.get("summary"):
        lines.append(f"  evidence     {stats['summary']}")
    if comparison.get("error_dominated"):
        lines.append("  note         more than 25% of candidate/original pairs errored: the delta is withheld")
    return lines


ARM_LABELS = {"lift": "lift", "with_skill": "with skill", "without_skill": "without skill", "original": "original"}
# "improved" / "regressed": the lift, only when its per-case change passed its test (scoring/trend.py);
# the arms' rates are numbers that moved, never tested one by one.
_TREND_WORDS = {"within_noise": "changed within noise", "changed": "moved"}


def _trend_value(arm: dict[str, Any], key: str) -> str:
    """The lift in points, an arm's rate in percent."""
    if arm["arm"] == "lift":
        return f"{arm[key] * 100:+.1f} pts"
    return _pct(arm[key])


def _trend(doc: dict[str, Any]) -> list[str]:
    """One line: each arm against the previous comparable run in the history."""
    trend = doc.get("trend")
    if not trend:
        return []
    previous = trend.get("previous")
    if previous is None:
        return ["", f"  trend        first comparable run: same suite content, cases, runs, pass@k, adapter "
                    f"and judge ({trend['history']})"]
    parts = [
        f"{ARM_LABELS.get(a['arm'], a['arm'])} {_TREND_WORDS.get(a['direction'], a['direction'])}"
        + (f" {_trend_value(a, 'previous')} → {_trend_value(a, 'current')}" if a["direction"] != "unchanged"
           else f" at {_trend_value(a, 'current')}")
        + (f" (p={a['p_value']:.2g})" if a.get("p_value") is not None and a["arm"] == "lift"
           and a["direction"] != "unchanged" else "")
        for a in trend.get("arms", [])
    ]
    since = f"vs the run of {_when(previous['recorded_at'])}"
    if trend.get("skill_changed"):
        since += " (the skill changed since)"
    if trend.get("original_changed"):
        since += " (compared with another original: no trend for it)"
    return ["", f"  trend        {since}: " + (" · ".join(parts) or "no arm to compare")]


def _when(iso: str) -> str:
    """``2026-11-22T03:12:50.23+00:00`` as ``2026-11-22 03:12 UTC`` (as written otherwise)."""
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is not None:
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return moment.strftime("%Y-%m-%d %H:%M")


def _dimension(doc: dict[str, Any], key: str, label: str | None = None) -> str | None:
    value = doc.get(key)
    if not value:
        return None
    pct = value.get("delta_pct")
    shown = "n/a" if pct is None else f"{pct:+.1f}%"
    return f"{label or key} {shown}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _pts(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f} pts"


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
