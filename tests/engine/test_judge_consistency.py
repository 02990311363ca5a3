"""The judge consistency gate asks again until the agreement's interval decides, capped."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from skillab.core.checks import ConsistencyCheck
from skillab.engine.consistency import MAXIMUM_REASKS, check_consistency


@dataclass
class Verdict:
    expectation: str
    passed: bool
    errored: bool = False


@dataclass
class Arm:
    expectation_results: list
    transcript: list = field(default_factory=list)
    final_output: str = ""


@dataclass
class Record:
    case_name: str
    with_skill: Arm
    without_skill: Arm
    original: None = None


class FlippingJudge:
    """A judge (the ``grade`` seam) that gives the same verdict again with probability ``agree``."""

    def __init__(self, agree: float, seed: int):
        self.agree, self.rng, self.calls = agree, random.Random(seed), 0

    def grade(self, expectation, *, prompt, transcript, final_output, salt):
        self.calls += 1
        first = expectation.endswith("pass")
        return Verdict(expectation, first if self.rng.random() < self.agree else not first)


def records(cases: int) -> list[Record]:
    return [Record(f"c{i}", Arm([Verdict(f"e{i} pass", True)]), Arm([Verdict(f"e{i} fail", False)]))
            for i in range(cases)]


def check(agree: float, seed: int, cases: int = 100) -> tuple[ConsistencyCheck, int]:
    judge = FlippingJudge(agree, seed)
    result = check_consistency(records(cases), judge, prompts={}, skills=())
    return result, judge.calls


def test_a_consistent_judge_is_kept_after_the_interval_clears_the_floor():
    result, calls = check(1.0, 1)
    # 14 of 14: the one-sided 95% lower bound 0.807 clears 0.8.
    assert (result.agreed, result.sampled, calls) == (14, 14, 14)
    assert not result.lift_withheld and result.decided == "interval" and result.ci95[0] < 0.8 < result.ci95[1]


def test_a_judge_that_flips_a_fifth_of_the_time_or_more_is_caught_most_of_the_time():
    """The old fixed sample of 5-8 re-asks kept a 70%-consistent judge's lift 26-53% of the time."""
    caught = sum(check(0.7, seed)[0].lift_withheld for seed in range(200))
    assert caught >= 0.9 * 200
    kept = sum(not check(0.95, seed)[0].lift_withheld for seed in range(200))
    assert kept >= 0.9 * 200


def test_the_re_asks_are_capped():
    capped = [check(0.8, seed, cases=200) for seed in range(20)]
    assert all(calls <= MAXIMUM_REASKS and result.sampled == calls for result, calls in capped)
    # A judge right at the floor seldom decides: the point estimate does, and says so.
    assert any(result.decided == "cap" for result, _ in capped)


def test_a_small_suite_asks_its_verdicts_again_until_the_interval_decides():
    """Six verdicts cannot decide alone: they are asked again, each time under a new fence tag."""
    judge = FlippingJudge(1.0, 2)
    salts = []
    grade = judge.grade

    def spy(expectation, *, prompt, transcript, final_output, salt):
        salts.append(salt)
        return grade(expectation, prompt=prompt, transcript=transcript, final_output=final_output, salt=salt)

    judge.grade = spy
    result = check_consistency(records(3), judge, prompts={}, skills=())
    assert judge.calls == 14 and result.decided == "interval" and not result.lift_withheld
    assert salts[:6] == ["consistency"] * 6 and salts[6:12] == ["consistency-2"] * 6
