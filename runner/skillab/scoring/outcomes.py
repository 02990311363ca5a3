"""The per-case outcome taxonomy and the run verdict the outcomes imply (spec runner contract)."""

from __future__ import annotations

from collections.abc import Iterable

from ..core.records import OUTCOMES, Outcome, Verdict

PASSING: frozenset[str] = frozenset({"flip_to_pass", "pass_kept"})
FAILING: frozenset[str] = frozenset({"flip_to_fail", "fail_kept"})


def classify_outcome(*, with_passed: bool, without_passed: bool, errored: bool) -> Outcome:
    """The outcome of one (case, run); ``errored`` wins over both pass flags."""
    if errored:
        return "error"
    if with_passed:
        return "pass_kept" if without_passed else "flip_to_pass"
    return "flip_to_fail" if without_passed else "fail_kept"


def compute_verdict(outcomes: Iterable[str]) -> Verdict:
    """The classifier's verdict: a pure function of the outcomes, decided over non-errored ones.

    No outcomes, or only errors, is ``error``. The error-dominated floor is not applied here: it
    belongs to the run aggregate (see ``run_verdict``), which keeps this function golden-pinned.
    """
    items = list(outcomes)
    unknown = sorted(set(items) - set(OUTCOMES))
    if unknown:
        raise ValueError(f"unknown outcome(s) {unknown}; expected one of {list(OUTCOMES)}")
    graded = [o for o in items if o != "error"]
    if not graded:
        return "error"
    if all(o in PASSING for o in graded):
        return "pass"
    if all(o in FAILING for o in graded):
        return "fail"
    return "mixed"
