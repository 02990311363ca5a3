"""Errors never decide a claim: a lift is claimed only if it holds with the errors against it,
an arm erroring more than the other is named, and errors the agent caused are its failures."""

from __future__ import annotations

import json

from skillab.core.records import ArmRecord, CaseRecord
from skillab.core.statistics import LiftStatistics
from skillab.core.wire import from_wire, to_wire
from skillab.scoring import classify_outcome, paired_statistics


def rec(case: str, with_passed: bool, without_passed: bool, *, with_error: str | None = None,
        tampering: list[str] | None = None, run: int = 0) -> CaseRecord:
    errored = with_error is not None
    outcome = classify_outcome(with_passed=with_passed, without_passed=without_passed, errored=errored)
    arm = ArmRecord(passed=with_passed and not errored, errored=errored, error=with_error)
    if tampering:
        arm.tampering = tampering
    return CaseRecord(case, outcome, arm, ArmRecord(passed=without_passed, errored=False), run_index=run)


def test_three_solved_and_one_tampered_is_not_a_hundred_points():
    records = [rec(f"c{i}", True, False) for i in range(3)]
    records.append(rec("c3", False, False, with_error="tampering: the agent changed graders/check.py",
                       tampering=["graders/check.py"]))
    stats = paired_statistics(records)
    assert stats.lift_pts == 75.0 and stats.n_cases == 4


def test_a_lift_carried_by_the_errors_of_one_arm_is_not_claimed():
    # A null skill whose with-arm times out exactly where it fails: 12 cases up where both ran,
    # and 10 cases where the without arm passed and the with arm errored.
    records = [rec(f"up{i}", True, False) for i in range(12)]
    records += [rec(f"kept{i}", True, True) for i in range(20)]
    records += [rec(f"err{i}", False, True, with_error="agent timed out after 600 s") for i in range(10)]
    stats = paired_statistics(records)
    assert stats.p_value < 0.05 and stats.lift_pts > 0  # the records alone say "helps"
    assert not stats.distinguishable
    account = stats.errors
    assert account is not None and account.claim_holds is False
    assert (account.with_errored, account.without_errored) == (10, 0) and account.arms_differ
    assert account.lift_as_failures_pts == round(100 * 2 / 42, 2)
    assert "beyond noise" not in stats.summary.split(":")[1].split(".")[0]
    assert "Errors: 10 of 42 records with the skill, 0 without it" in stats.summary
    assert "differ beyond noise" in stats.summary and "does not survive the errors" in stats.summary


def test_a_claim_the_errors_cannot_move_stands_and_names_them():
    records = [rec(f"up{i}", True, False) for i in range(15)] + [rec(f"kept{i}", True, True) for i in range(10)]
    records.append(rec("err", True, True, with_error="agent timed out after 600 s"))
    stats = paired_statistics(records)
    assert stats.distinguishable and stats.errors.claim_holds is True
    assert stats.summary.split(":")[1].strip().startswith("the skill helps beyond noise")
    assert "Errors: 1 of 26 records with the skill, 0 without it (exact p=1)" in stats.summary


def test_the_account_is_a_typed_block_of_the_results_document():
    records = [rec("a", True, False), rec("b", True, False),
               rec("c", False, False, with_error="agent timed out")]
    stats = paired_statistics(records)
    wire = json.loads(json.dumps(to_wire(stats)))
    assert wire["errors"]["with_errored"] == 1 and wire["errors"]["error_p"] == 1.0
    assert from_wire(LiftStatistics, wire) == stats


def test_no_error_no_account():
    assert paired_statistics([rec("a", True, False), rec("b", False, False)]).errors is None
