"""The judge consistency check in words, as every report says it: how often the judge agreed
with itself when re-asked (with the agreement's interval), the sentence that withholds the lift
when that is too seldom, and the check that measured nothing.

Each takes the run's ``JudgeConsistency``.
"""

from __future__ import annotations

from ..core.run_info import JudgeConsistency


def agreed_on(check: JudgeConsistency) -> str:
    """``agreed with itself on 9/10 re-asked verdicts``: the re-asks that errored are not compared."""
    compared = check.sampled - check.errored
    return f"agreed with itself on {check.agreed}/{compared} re-asked verdicts"


def below_floor(check: JudgeConsistency) -> str:
    """``the judge agreed with itself on 3/5 re-asked verdicts, below 80%``: why the lift is withheld."""
    return f"the judge {agreed_on(check)}, below {check.floor:.0%}"


def agreement_interval(check: JudgeConsistency) -> str:
    """``, 95% CI 88–100%`` when the check measured its agreement's interval."""
    ci = check.ci95
    if not ci:
        return ""
    text = f", 95% CI {ci[0] * 100:.0f}–{ci[1] * 100:.0f}%"
    return text + (", undecided when the re-asks ran out" if check.decided == "cap" else "")


def consistency_unmeasured(check: JudgeConsistency) -> str:
    """A consistency check whose every re-ask errored: it measured nothing."""
    return (f"consistency check failed: all {check.sampled} re-asked verdicts errored, so the "
            "judge's agreement with itself is unknown")

