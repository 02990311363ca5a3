"""The judge gate's part of ``benchmarks/calibration.py``: ``engine.consistency.check_consistency``
against simulated judges that give the same verdict again with a known probability."""

from __future__ import annotations

import numpy as np

from skillab.engine.consistency import check_consistency


class _Verdict:
    def __init__(self, expectation: str, passed: bool):
        self.expectation, self.passed, self.errored = expectation, passed, False


class _Arm:
    def __init__(self, verdict: _Verdict):
        self.expectation_results, self.transcript, self.final_output = [verdict], [], ""


class _Record:
    def __init__(self, i: int):
        self.case_name = f"c{i}"
        self.with_skill = _Arm(_Verdict(f"e{i} pass", True))
        self.without_skill = _Arm(_Verdict(f"e{i} fail", False))
        self.original = None


class _FlippingJudge:
    """The judge seam ``check_consistency`` calls: the same verdict again with probability ``agree``."""

    def __init__(self, agree: float, rng: np.random.Generator):
        self.agree, self.rng, self.calls = agree, rng, 0

    def grade(self, expectation, *, prompt, transcript, final_output, salt):
        self.calls += 1
        first = expectation.endswith("pass")
        return _Verdict(expectation, first if self.rng.random() < self.agree else not first)


def judge_gate(agree: float, verdicts: int, reps: int, rng: np.random.Generator) -> tuple[float, float]:
    """``engine.consistency.check_consistency`` against a judge that agrees with itself ``agree``
    of the time: how often it withholds the lift, and the re-asks it spent."""
    records = [_Record(i) for i in range(verdicts // 2)]
    withheld = calls = 0
    for _ in range(reps):
        judge = _FlippingJudge(agree, rng)
        check = check_consistency(records, judge, prompts={}, skills=(), seed=int(rng.integers(1 << 30)))
        withheld += check.lift_withheld
        calls += judge.calls
    return withheld / reps, calls / reps
