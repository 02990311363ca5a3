"""The terminal report: a plain-text table rendered from a run's log."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC

from ..core.records import ArmRecord, CaseRecord
from ..core.run_info import JudgeConsistency
from ..core.runlog import RunLog, RunSettings
from ..core.summary import Aggregate, Comparison
from ..core.trend import ArmTrend, Trend
from ..core.wording import counted
from .audit_view import audit_text
from .consistency_wording import agreed_on, agreement_interval, consistency_unmeasured
from .context_view import context_text
from .disclosures import runs_span
from .evidence_view import terminal_lines as evidence_lines
from .findings import ARM_TITLES, ARMS, arm_findings, failed_records, tail
from .held_out_view import held_out_text
from .partial import early_stop, interruption
from .placebo_view import terminal_lines as placebo_lines
from .trigger_gates import only_triggers
from .trigger_report import terminal_lines as trigger_lines

DIMENSIONS = ("duration_ms", "turns", "tokens", "tool_calls")


def render_table(log: RunLog, *, verbose: bool = False) -> str:
    """The table, the summary, then why each failed or errored case failed (``verbose``: both
    arms, longer output tails and the answer)."""
    if only_triggers(log):
        # No graded case: an empty A/B table and an "error" verdict would only mislead.
        return "\n".join([_header(log), *trigger_lines(log), *_trend(log.settings.trend)])
    lines = [_header(log), ""]
    stopped = interruption(log)
    if stopped:
        lines += [f"  {stopped.upper()}", ""]
    early = early_stop(log)
    if early:
        lines += [f"  {early}", ""]
    lines += _case_rows(log)
    lines.append("")
    lines += _summary(log)
    lines += _format_sections(log)
    lines += _versus_original(log.summary.comparison)
    lines += placebo_lines(log)
    lines += trigger_lines(log)
    lines += _trend(log.settings.trend)
    lines += evidence_lines(log)
    lines += why_failed(log, verbose=verbose)
    return "\n".join(lines)


def why_failed(log: RunLog, *, verbose: bool = False) -> list[str]:
    """After the table: every failed or errored record with its reasons."""
    records = failed_records(log)
    if verbose:
        # A rescued case failed too, without the skill: -v shows why, as it does for the rest.
        records += [r for r in log.records if r.outcome == "flip_to_pass"]
    if not records:
        return []
    runs = log.settings.runs > 1
    lines = ["", "  why cases failed" + ("" if verbose else " (-v for both arms and longer output)")]
    for record in records:
        lines += _record_reasons(record, runs=runs, verbose=verbose)
    return lines


def _record_reasons(record: CaseRecord, *, runs: bool, verbose: bool) -> list[str]:
    name = record.case_name + (f" (run {record.run_index + 1})" if runs else "")
    rescued = record.outcome == "flip_to_pass"
    lines = [f"  {'✓' if rescued else '✗'} {name}: {record.outcome}"
             + (" (the without-skill arm failed)" if rescued else "")]
    if record.error:
        lines.append(f"      error: {_clip(record.error, 400 if verbose else 200)}")
    for arm in ARMS:
        data: ArmRecord | None = getattr(record, arm)
        if data is None or (arm != "with_skill" and not verbose and not data.errored):
            continue
        lines += _arm_reasons(ARM_TITLES[arm], data, verbose=verbose)
    return lines


def _arm_reasons(title: str, arm: ArmRecord, *, verbose: bool) -> list[str]:
    findings = arm_findings(arm)
    if not findings:
        return []
    lines = [f"    {title}:"]
    for finding in findings:
        label = f"{finding.kind} {finding.label!r}" if finding.kind != "error" else "error"
        lines.append(f"      {label}: {_clip(finding.detail, 600 if verbose else 200)}")
        lines += [f"        | {line}" for line in tail(finding.output, 20 if verbose else 3)]
    if verbose and arm.final_output.strip():
        lines.append("      answer:")
        lines += [f"        | {line}" for line in tail(arm.final_output, 15)]
    return lines


def _header(log: RunLog) -> str:
    s = log.settings
    parts = [f"skillab · {s.suite.skill} ({s.suite.path})", f"adapter {s.adapter.name}"]
    if s.models.agent:
        provider = s.adapter.identity.get("provider")
        parts.append(f"model {s.models.agent}" + (f" ({provider})" if provider else ""))
    if s.models.judge:
        same = " (the agent's family)" if s.models.judge_same_family else ""
        parts.append(f"judge {s.models.judge}{same}")
    parts.append(f"runs {s.runs}")
    n = log.settings.attempts
    if s.pass_k > 1 or n > 1:
        parts.append(f"pass@{s.pass_k}" + (f" from {n} attempts" if n != s.pass_k else ""))
    if s.shard is not None:
        # Its numbers cover its share only: the merged document has the run's.
        parts.append(f"shard {s.shard.index}/{s.shard.count} (join with skillab merge)")
    header = " · ".join(parts)
    header = f"UNSANDBOXED · {header}" if s.isolation.unsandboxed else header
    return header if s.config is None else f"{header}\n{s.config.sentence()}"


def _case_rows(log: RunLog) -> list[str]:
    by_case: dict[str, list[CaseRecord]] = defaultdict(list)
    for record in log.records:
        by_case[record.case_name].append(record)
    if not by_case:
        return ["  (no case finished)"]
    width = max(12, *(len(name) for name in by_case))
    comparison = log.summary.comparison
    original_head = f"  {'original':>8}" if comparison is not None else ""
    rows = [f"  {'case':<{width}}  {'with':>7}  {'without':>7}{original_head}  outcome"]
    for name, records in by_case.items():
        with_cell = _arm_cell(records, "with_skill")
        without_cell = _arm_cell(records, "without_skill")
        if comparison is not None:
            without_cell = f"{without_cell:>7}  {_arm_cell(records, 'original'):>8}"
        outcomes = Counter(r.outcome for r in records)
        outcome = ", ".join(
            o if n == 1 and len(records) == 1 else f"{o}×{n}" for o, n in outcomes.items()
        )
        flags = _row_flags(name, records, comparison)
        suffix = f"  [{'; '.join(flags)}]" if flags else ""
        rows.append(f"  {name:<{width}}  {with_cell:>7}  {without_cell:>7}  {outcome}{suffix}")
    return rows


def _row_flags(name: str, records: list[CaseRecord], comparison: Comparison | None) -> list[str]:
    """What a case's row says beside its outcome: the baseline's provenance, its first error,
    and what the edit did to it (``--against``)."""
    flags = []
    if any(r.without_skill.cached for r in records):
        flags.append("cached baseline")
    if any(r.without_skill.contaminated for r in records):
        flags.append("CONTAMINATED baseline")
    errors = [r.error or _arm_error(r) for r in records if r.outcome == "error"]
    if errors and errors[0]:
        flags.append(_clip(errors[0], 70))
    edit = Counter(r.original_outcome for r in records)
    if edit.get("flip_to_fail"):
        stats = comparison.statistics if comparison is not None else None
        regressed = stats is not None and name in stats.regressed_cases
        label = "BROKEN BY THE EDIT" if regressed else "worse with the edit, within noise"
        flags.insert(0, label + _runs_note(edit["flip_to_fail"], len(records)))
    if edit.get("flip_to_pass"):
        flags.append("rescued by the edit" + _runs_note(edit["flip_to_pass"], len(records)))
    return flags


def _runs_note(n: int, runs: int) -> str:
    return f" in {n}/{runs} runs" if runs > 1 else ""


def _arm_cell(records: list[CaseRecord], arm: str) -> str:
    arms: list[ArmRecord] = [a for a in (getattr(r, arm) for r in records) if a is not None]
    if not arms:
        return "-"
    if len(arms) == 1:
        a = arms[0]
        return "error" if a.errored else ("pass" if a.passed else "fail")
    passed = sum(1 for a in arms if a.passed and not a.errored)
    return f"{passed}/{len(arms)}"


def _arm_error(record: CaseRecord) -> str | None:
    for arm in ARMS:
        data: ArmRecord | None = getattr(record, arm)
        if data is not None and data.error:
            return f"{arm}: {data.error}"
    return None


def _summary(log: RunLog) -> list[str]:
    s, aggregate = log.settings, log.summary.aggregate
    rate = aggregate.pass_rate
    stats = log.summary.statistics
    # The raw difference stays visible, but never reads as a lift the run does not claim.
    withheld = aggregate.error_dominated or (s.judge_consistency is not None and s.judge_consistency.lift_withheld)
    lines = [
        f"  {rate_label(log):<12} with {_pct(rate.with_skill)}   without {_pct(rate.without_skill)}"
        f"   delta {_pts(rate.delta_pts)}{' (withheld as a lift)' if withheld else ''}{_runs_label(s)}",
    ]
    if stats is not None and stats.summary:
        lines.append(f"  evidence     {stats.summary}")
    reward = log.summary.reward
    if reward is not None:
        lines.append(
            f"  reward       with {_reward(reward.with_skill)}   without {_reward(reward.without_skill)}"
            f"   (mean verifier reward over {reward.arms} graded arm(s); pass at {reward.threshold:g})"
        )
    lines += _pass_at_k(log)
    lines.append(f"  verdict      {_verdict(log)}")
    dims = [_dimension(aggregate, d) for d in DIMENSIONS]
    lines.append("  efficiency   " + "   ".join(d for d in dims if d))
    gated = [_dimension(aggregate, f"{d}_correctness_gated", label=d) for d in DIMENSIONS]
    lines.append(
        "  both-correct " + ("   ".join(d for d in gated if d) or "n/a")
        + f"   (over {aggregate.cases_correctness_gated})"
    )
    lines += _disclosure(log)
    lines += _judge_consistency(s.judge_consistency)
    if s.adapter.name == "mock":
        lines.append("  note         mock adapter: the answers are scripted, so this lift shows the "
                     "pipeline works, not that the skill helps")
    lines += [f"  warning      {warning}" for warning in s.warnings]
    return lines


def _verdict(log: RunLog) -> str:
    stopped = interruption(log)
    if stopped:
        return f"{stopped} (no verdict: the finished cases are counted above)"
    if log.summary.aggregate.error_dominated:
        return f"{log.verdict} (more than 25% of cases errored: the lift is withheld)"
    return log.verdict


def _disclosure(log: RunLog) -> list[str]:
    """What the numbers rest on: the records, errors and skips, the cache, activation, spend
    and the sandbox, and what the skill costs in context."""
    s, summary = log.settings, log.summary
    aggregate = summary.aggregate
    cache_text = f"{s.cache_hits}/{s.cache_arms} baselines from cache" if s.cache_enabled else "baseline cache off"
    lines = [
        "  disclosure   "
        f"{aggregate.total_cases} records · {aggregate.errors} errored · "
        f"{aggregate.cases_skipped_apples_oranges} skipped (task not attempted) · "
        f"{summary.cases_skipped_trigger_only} trigger-only · {cache_text} · "
        f"{summary.contaminated_arms} contaminated baselines"
    ]
    if summary.activation is not None and summary.activation.with_skill is not None:
        prompt = s.adapter.identity.get("skill_prompt")
        lines.append(f"  activation   skill opened in {_pct(summary.activation.with_skill)} of with-skill arms"
                     + (f" ({prompt})" if prompt else ""))
    total = summary.usage.total
    # As the document's ``timings.wall_ms``: whole milliseconds.
    wall_ms = int((s.finished_at - s.started_at).total_seconds() * 1000)
    lines.append(
        f"  usage        {total.total_tokens:,} tokens"
        + (f" · ${total.cost_usd:.4f}" if total.cost_usd is not None else "")
        + f" · {wall_ms / 1000:.1f}s wall · sandbox: "
        + _sandbox_label(s)
    )
    context = context_text(s.context_budget)
    if context:
        lines.append(f"  context      {context}")
    held_out = held_out_text(log.summary.held_out)
    if held_out:
        lines.append(f"  held-out     {held_out}")
    audit = audit_text(s.audit)
    if audit and s.audit is not None and s.audit.findings:
        lines.append(f"  audit        {audit} (`skillab audit {s.suite.path}` lists them)")
    return lines


def _reward(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _sandbox_label(settings: RunSettings) -> str:
    isolation = settings.isolation
    if isolation.unsandboxed:
        return "none (unsandboxed)"
    return str(isolation.backend or isolation.network)


def _pass_at_k(log: RunLog) -> list[str]:
    """The unbiased pass@k estimate (Chen et al.) with pass@1 beside it."""
    summary = log.summary.pass_at_k
    if summary is None:
        return []

    def both(key: str) -> str:
        return "   ".join(f"{label} {_pct(None if arm not in summary.arms else getattr(summary.arms[arm], key))}"
                           for arm, label in (("with_skill", "with"), ("without_skill", "without")))

    return [f"  pass@{summary.k}       {both('pass_at_k')}   (unbiased estimate from {summary.attempts} "
            f"attempts per arm)   pass@1 {both('pass_at_1')}"]


def _judge_consistency(check: JudgeConsistency | None) -> list[str]:
    if check is None:
        return []
    if check.agreement is None:
        return [f"  judge        {consistency_unmeasured(check)}"] if check.sampled else []
    line = f"  judge        {agreed_on(check)} ({check.agreement * 100:.0f}%{agreement_interval(check)})"
    if check.lift_withheld:
        line += f": below {check.floor * 100:.0f}%, so the lift is withheld"
    return [line]


def rate_label(log: RunLog) -> str:
    """``pass@N rate`` when each arm had N attempts (any passing one counts), else ``pass rate``.

    The rate is over every attempt an arm made, so with ``--pass-n`` above ``--pass-k`` it is
    pass@n, not pass@k (the unbiased pass@k estimate is its own line)."""
    n = log.settings.attempts
    return f"pass@{n} rate" if n > 1 else "pass rate"


def _runs_label(settings: RunSettings) -> str:
    return f"   (MEAN over {runs_span(settings)} runs)" if (settings.runs or 1) > 1 else ""


def _format_sections(log: RunLog) -> list[str]:
    """What the suite's format adds about its own cases (ruby-skill-bench: its criteria)."""
    from ..formats import DEFAULT_REGISTRY

    return [line for fmt in DEFAULT_REGISTRY.of_logs([log]) if fmt.terminal_section
            for line in fmt.terminal_section(log)]


def _versus_original(comparison: Comparison | None) -> list[str]:
    """Candidate vs original (``--against``): what the edit broke comes first, whatever the lift."""
    if comparison is None:
        return []
    rate = comparison.pass_rate
    lines = [
        "",
        f"  candidate vs original ({comparison.original.label})",
    ]
    # Named broken only on each case's own evidence (statistics.regressed_cases).
    broken, changed, rescued = comparison.broken_by_edit, comparison.changed_within_noise, comparison.rescued_by_edit
    if broken:
        lines.append(f"  REGRESSION   broken by the edit beyond noise (passed with the original, fail now): "
                     f"{', '.join(broken)}")
    if changed:
        lines.append(f"  changed      within noise (passed with the original, fail now): {', '.join(changed)}")
    if rescued:
        lines.append(f"  rescued      by the edit (failed with the original, pass now): {', '.join(rescued)}")
    if not broken and not changed and not rescued:
        lines.append("  flips        none: every case has the same result with both versions")
    lines.append(
        f"  pass rate    candidate {_pct(rate.candidate)}   original {_pct(rate.original)}"
        f"   delta {_pts(rate.delta_pts)}"
    )
    if comparison.statistics is not None and comparison.statistics.summary:
        lines.append(f"  evidence     {comparison.statistics.summary}")
    if comparison.error_dominated:
        lines.append("  note         more than 25% of candidate/original pairs errored: the delta is withheld")
    return lines


ARM_LABELS = {"lift": "lift", "with_skill": "with skill", "without_skill": "without skill", "original": "original"}
# "improved" / "regressed": the lift, only when its per-case change passed its test (scoring/trend.py);
# the arms' rates are numbers that moved, never tested one by one.
_TREND_WORDS = {"within_noise": "changed within noise", "changed": "moved"}


def _trend_value(arm: ArmTrend, value: float) -> str:
    """The lift in points, an arm's rate in percent."""
    if arm.arm == "lift":
        return f"{value * 100:+.1f} pts"
    return _pct(value)


def _arm_trend(a: ArmTrend) -> str:
    """``lift improved +10.0 pts → +20.0 pts (p=0.031)``: one arm then and now."""
    moved = a.direction != "unchanged"
    text = f"{ARM_LABELS.get(a.arm, a.arm)} {_TREND_WORDS.get(a.direction, a.direction)}"
    text += (f" {_trend_value(a, a.previous)} → {_trend_value(a, a.current)}" if moved
             else f" at {_trend_value(a, a.current)}")
    if a.p_value is not None and a.arm == "lift" and moved:
        text += f" (p={a.p_value:.2g})"
    return text


def _trend(trend: Trend | None) -> list[str]:
    """One line: each arm against the previous comparable run in the history."""
    if trend is None:
        return []
    if trend.previous is None:
        return ["", f"  trend        first comparable run: same suite content, cases, runs, pass@k, adapter "
                    f"and judge ({trend.history})"]
    parts = [_arm_trend(a) for a in trend.arms]
    since = f"vs the run of {_when(trend.previous.recorded_at)}"
    if trend.skill_changed:
        since += " (the skill changed since)"
    if trend.original_changed:
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


def _dimension(aggregate: Aggregate, key: str, label: str | None = None) -> str | None:
    value = getattr(aggregate, key)
    if value is None:
        return None
    pct = value.delta_pct
    shown = "n/a" if pct is None else f"{pct:+.1f}%"
    return f"{label or key} {shown}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _pts(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f} pts"


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_summary_line(logs: Sequence[RunLog]) -> str:
    """The last line of a run of several suites, as pytest ends with its counts: how many
    suites ended with each verdict, the cases and the wall time."""
    verdicts = Counter("interrupted" if log.interrupted else log.verdict for log in logs)
    order = ("fail", "error", "mixed", "pass", "interrupted")
    counts = ", ".join(f"{verdicts[v]} {v}" for v in (*order, *sorted(set(verdicts) - set(order))) if verdicts[v])
    cases = sum(len({r.case_name for r in log.records}) for log in logs)
    started = min(log.settings.started_at for log in logs)
    finished = max(log.settings.finished_at for log in logs)
    seconds = (finished - started).total_seconds()
    return (f"== {counted(len(logs), 'suite')}: {counts} · {counted(cases, 'case')} · "
            f"{seconds:.1f}s ==")
