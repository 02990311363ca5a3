"""The sentences the reports print about the lift, each tied to the condition that allows it.

| sentence | printed only when |
|---|---|
| "... helps / hurts beyond noise" | sign-flip p < 0.05 (the 95% CI then excludes 0, see ``interval``) |
| "cannot be told from noise" | a lift was measured over 2+ cases and the above does not hold |
| "no case's result differed between the arms" | every per-case difference is exactly 0, no run flipped |
| "every case passed as often with the skill as without it" | every per-case difference is 0, some runs flipped |
| "a single case cannot tell a lift from noise" | one case |
| "no comparable records" | nothing left to measure |
| (nothing) | error-dominated: ``summary`` is None |
"""

from __future__ import annotations

from ..core.statistics import LiftStatistics
from .rounding import round_half_away


def lift_sentence(s: LiftStatistics, subject: str = "the skill", *,
                  runs_range: tuple[int, int] | None = None) -> str:
    """``runs_range``: the fewest and most comparable runs of any case (the sample size)."""
    if s.lift_pts is None:
        # An errored run never gets here (it is error-dominated: no sentence at all).
        return "No comparable records (no case finished, or every one was skipped): there is no lift to measure."
    size = _sample_size(s, runs_range)
    if s.ci95 is None:
        return f"{pts(s.lift_pts)} pts: a single case cannot tell a lift from noise."
    lo, hi = s.ci95
    head = f"{pts(s.lift_pts)} pts (95% CI {pts(lo)} to {pts(hi)}, {p_text(s)}, {size})"
    if s.distinguishable:
        direction = "helps" if s.lift_pts > 0 else "hurts"
        return f"{head}: {subject} {direction} beyond noise."
    if s.cases_up == 0 and s.cases_down == 0 and (s.flip_to_pass or s.flip_to_fail):
        # Runs of a case flipped both ways: its rate is unchanged, its results were not.
        body = (f"{head}: every case passed as often with the skill as without it over its runs, "
                "which does not show there is no lift")
    elif s.cases_up == 0 and s.cases_down == 0:
        body = f"{head}: no case's result differed between the arms, which does not show there is no lift"
    else:
        body = f"{head}: cannot be told from noise"
    return f"{body}{power_clause(s)}."


def power_clause(s: LiftStatistics) -> str:
    power = s.power
    if power is None:
        return ""
    parts = []
    if power.never_significant:
        parts.append("this suite cannot show a lift at p < 0.05 at any size of effect")
    elif power.detectable_lift_pts is not None:
        parts.append(f"this suite detects lifts of about {power.detectable_lift_pts:.0f} pts or more")
    else:
        parts.append("no lift the baseline leaves room for is detected at this size")
    if power.cases_needed is not None:
        parts.append(f"about {power.cases_needed} cases would detect {pts(power.target_lift_pts)} pts")
    elif power.note:
        parts.append(power.note)
    return ("; " + "; ".join(parts) + " (80% power)") if parts else ""


def p_text(s: LiftStatistics) -> str:
    p = s.p_value
    name = "McNemar" if s.mcnemar_p is not None else "sign-flip"
    if p is None:
        return f"{name} p not computed"
    if p < 0.001:
        return f"{name} p<0.001"
    text = f"{p:.2g}"
    return f"{name} p={text}" if "." in text else f"{name} p={text}.0"


def _sample_size(s: LiftStatistics, runs_range: tuple[int, int] | None) -> str:
    cases = f"{s.n_cases} case" + ("s" if s.n_cases != 1 else "")
    fewest, most = runs_range or (0, 0)
    if fewest != most:
        return f"{cases} × {fewest}–{most} runs"
    return f"{cases} × {round(s.n_records / s.n_cases)} runs" if s.n_records > s.n_cases else cases


def pts(x: float) -> str:
    x = round_half_away(x, 1)
    return f"{'−' if x < 0 else '+'}{abs(x):.1f}"
