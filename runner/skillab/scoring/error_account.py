"""Errors never decide a claim.

An errored record leaves the lift; if one arm errors on exactly the runs it would have failed
(a skill that makes the agent run long and time out when stuck, or tamper with the grader when
it cannot solve the case), dropping those records moves the lift. So:

- the lift is also reported with every errored arm counted as a failure;
- "helps beyond noise" stands only if the lift is still beyond noise, upward, with every record
  where one arm errored counted against it (the errored with-skill arm fails, the errored
  without-skill arm passes); "hurts" only if it is with the reverse;
- whether one arm errored more than the other is tested exactly (McNemar over the records where
  exactly one arm errored) and named in every report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.statistics import ErrorAccount
from .aggregate import arm_passed
from .inference import ALPHA, CasePair, sign_flip_p
from .interval import LiftInference, infer_lift
from .rounding import round_half_away
from .sentences import pts

# How an arm's error reads when the agent caused it by filling its workspace's disk budget.
_WORKSPACE_FULL = "the workspace is full"


def arm_errored(arm: Any) -> bool:
    """An absent arm (an errored record may hold none) counts as errored."""
    return arm is None or bool(getattr(arm, "errored", False))


def errored_arms(record: Any) -> tuple[bool, bool]:
    """Which arms of an errored record errored; an error no arm carries (the run around them
    failed) is both arms'."""
    w, o = arm_errored(record.with_skill), arm_errored(record.without_skill)
    return (w, o) if w or o else (True, True)


def _agent_caused(arm: Any) -> bool:
    return bool(getattr(arm, "tampering", None)) or (getattr(arm, "error", None) or "").startswith(_WORKSPACE_FULL)


def failed_by_its_own_hand(record: Any) -> bool:
    """An errored record whose only errored arm caused its error itself (tampered with the
    graders' files, filled its disk budget) while the other arm was graded: that arm failed,
    and the record enters the lift as its failure, never as a dropped case."""
    if record.outcome != "error":
        return False
    w, o = errored_arms(record)
    if w == o:
        return False
    arm, other = (record.with_skill, record.without_skill) if w else (record.without_skill, record.with_skill)
    return _agent_caused(arm) and getattr(other, "task_attempted", True) is not False


def _counted(record: Any) -> bool:
    """Records the lift or the error account reads: errored ones, and those both arms engaged with."""
    if record.outcome == "error":
        return True
    arms = (getattr(record, "with_skill", None), getattr(record, "without_skill", None))
    return all(getattr(arm, "task_attempted", True) is not False for arm in arms)


def _pairs(records: Sequence[Any], with_errored: bool, without_errored: bool) -> list[CasePair]:
    """Per case, the pass counts with each errored arm counted as the given result; a record
    where both arms errored stays out."""
    cases: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        if not _counted(record):
            continue
        errored = errored_arms(record) if record.outcome == "error" else (False, False)
        if all(errored):
            continue
        arms = (getattr(record, "with_skill", None), getattr(record, "without_skill", None))
        outcome = [value if e else arm_passed(arm)
                   for e, value, arm in zip(errored, (with_errored, without_errored), arms)]
        entry = cases.setdefault(getattr(record, "case_name", None) or str(index), [0, 0, 0])
        entry[0] += outcome[0]
        entry[1] += outcome[1]
        entry[2] += 1
    return [CasePair(w, o, r) for w, o, r in cases.values()]


def error_account(records: Sequence[Any], *, alpha: float = ALPHA) -> ErrorAccount | None:
    """The account of the records' errors; None when no record errored."""
    errored = [r for r in records if r.outcome == "error"]
    if not errored:
        return None
    with_only = without_only = with_errors = without_errors = 0
    for record in errored:
        w, o = errored_arms(record)
        with_errors += w
        without_errors += o
        with_only += w and not o
        without_only += o and not w
    error_p = sign_flip_p([1] * with_only + [-1] * without_only)[0]
    failures = infer_lift(_pairs(records, False, False), alpha=alpha)
    against_helps = infer_lift(_pairs(records, False, True), alpha=alpha)
    against_hurts = infer_lift(_pairs(records, True, False), alpha=alpha)
    return ErrorAccount(
        len(records), with_errors, without_errors, error_p,
        *_lift_and_p(failures), *_lift_and_p(against_helps), *_lift_and_p(against_hurts),
    )


def _lift_and_p(inference: LiftInference | None) -> tuple[float | None, float | None]:
    if inference is None:
        return None, None
    return round_half_away(inference.lift_pts, 2), inference.p_value


def claim_survives(account: ErrorAccount, lift_pts: float, *, alpha: float = ALPHA) -> bool:
    """Whether a claim in the direction of ``lift_pts`` also holds with the errors against it."""
    if lift_pts > 0:
        lift, p = account.lift_against_helps_pts, account.p_against_helps
        return lift is not None and p is not None and lift > 0 and p < alpha
    lift, p = account.lift_against_hurts_pts, account.p_against_hurts
    return lift is not None and p is not None and lift < 0 and p < alpha


def errors_sentence(account: ErrorAccount) -> str:
    """The sentence every report prints about the errors."""
    rates = (f"Errors: {account.with_errored} of {account.records} records with the skill, "
             f"{account.without_errored} without it")
    if account.arms_differ:
        rates += f" (the arms' error rates differ beyond noise, exact p={account.error_p:.2g})"
    else:
        rates += f" (exact p={account.error_p:.2g})"
    parts = [rates]
    if account.lift_as_failures_pts is not None:
        parts.append(f"with every errored arm counted as a failure the lift is "
                     f"{pts(account.lift_as_failures_pts)} pts")
    if account.claim_holds is False:
        parts.append("the claim does not survive the errors, so none is made")
    return "; ".join(parts) + "."

