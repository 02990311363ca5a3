"""The judge's consistency: its verdicts asked again until the agreement's interval decides.

After the arms finish, the expectation verdicts are re-judged one at a time in a seeded random
order, each under a fresh fence tag with the same blinded session. Agreement is the share of
re-asked verdicts that came back the same; an errored re-ask is left out. From
``MINIMUM_COMPARED`` compared re-asks on, the check stops as soon as the agreement's exact
one-sided 95% bounds (Clopper-Pearson) put it clearly above ``AGREEMENT_FLOOR`` (keep the lift)
or clearly below it (withhold the lift); at ``MAXIMUM_REASKS`` re-asks the point estimate
decides (``decided: "cap"``). A suite with fewer verdicts than that asks them again in a fresh
order, each re-ask under its own fence tag. Measured by
``benchmarks/calibration.py``: a judge that agrees with itself 70% of the time is caught about
95% of the time, one at 95% is kept about every time, after about 36 and 23 re-asks.

Why the floor is 0.8: when a verdict disagrees with itself a share ``d`` of the time, each
verdict is a coin toss with probability about ``d``, so about ``d / 2`` of the arms' grades are
noise; at ``d = 0.2`` that is one grade in ten, the size of the lifts a suite is typically asked
to detect (``--target-lift-pts`` 10), so a lift could be made of judge noise alone. 0.8 is also
the conventional floor of "substantial" agreement.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..core.checks import AGREEMENT_FLOOR, ConsistencyCheck
from ..grading.blinding import blind_transcript
from ..scoring.exact import clopper_pearson_lower, clopper_pearson_upper

if TYPE_CHECKING:
    from ..grading.judge import ExpectationJudge

DEFAULT_SHARE = 0.10
MINIMUM_SAMPLE = 5
MINIMUM_COMPARED = 10
MAXIMUM_REASKS = 60
# One-sided error of each bound the check decides by.
_BOUND_TAIL = 0.05
_ARMS = ("with_skill", "without_skill", "original", "placebo")


def check_consistency(
    records: Sequence[Any], judge: ExpectationJudge, *, prompts: dict[str, str], skills: Iterable[Any],
    share: float = DEFAULT_SHARE, minimum: int = MINIMUM_SAMPLE, seed: int = 0,
    maximum: int = MAXIMUM_REASKS,
) -> ConsistencyCheck | None:
    """Re-judge the run's expectation verdicts until the agreement decides; None when there is
    nothing to sample. ``share`` of the verdicts, when larger than ``maximum``, raises the cap;
    0 turns the check off."""
    skills = tuple(skills)
    verdicts = [
        (record, arm, result)
        for record in records
        for arm in (getattr(record, name, None) for name in _ARMS)
        if arm is not None
        for result in arm.expectation_results
        if not result.errored
    ]
    if not verdicts or share <= 0:
        return None
    cap = max(maximum, math.ceil(share * len(verdicts)))
    rng = random.Random(seed)
    tally = _Tally()
    for index in range(cap):
        # A suite with fewer verdicts than the check needs asks them again, each time afresh.
        rounds, position = divmod(index, len(verdicts))
        if position == 0:
            order = rng.sample(verdicts, len(verdicts))
        record, arm, result = order[position]
        again = judge.grade(
            result.expectation,
            prompt=prompts.get(record.case_name, ""),
            transcript=blind_transcript(arm.transcript, skills),
            final_output=arm.final_output,
            salt="consistency" if rounds == 0 else f"consistency-{rounds + 1}",
        )
        tally.add(again, result)
        if tally.decision() is not None or (tally.errored >= minimum and tally.compared == 0):
            break
    return tally.check(len(verdicts))


def reask_range(verdicts: int, share: float = DEFAULT_SHARE, maximum: int = MAXIMUM_REASKS) -> tuple[int, int]:
    """The re-asks ``check_consistency`` makes over ``verdicts``: the fewest (a judge that agrees
    with itself every time decides once its interval's lower bound clears the floor) and the
    cap; (0, 0) when there is nothing to sample."""
    if verdicts <= 0 or share <= 0:
        return 0, 0
    cap = max(maximum, math.ceil(share * verdicts))
    fewest = MINIMUM_COMPARED
    while fewest < cap and clopper_pearson_lower(fewest, fewest, _BOUND_TAIL) < AGREEMENT_FLOOR:
        fewest += 1
    return fewest, cap


class _Tally:
    def __init__(self) -> None:
        self.sampled = self.agreed = self.errored = 0

    @property
    def compared(self) -> int:
        return self.sampled - self.errored

    def add(self, again: Any, result: Any) -> None:
        self.sampled += 1
        if again.errored:
            self.errored += 1
        elif again.passed == result.passed:
            self.agreed += 1

    def decision(self) -> bool | None:
        """True: withhold the lift; False: keep it; None: the interval does not decide yet."""
        if self.compared < MINIMUM_COMPARED:
            return None
        if clopper_pearson_lower(self.agreed, self.compared, _BOUND_TAIL) >= AGREEMENT_FLOOR:
            return False
        if clopper_pearson_upper(self.agreed, self.compared, _BOUND_TAIL) < AGREEMENT_FLOOR:
            return True
        return None

    def check(self, verdicts: int) -> ConsistencyCheck:
        decided = self.decision()
        ci = None
        if self.compared:
            ci = (clopper_pearson_lower(self.agreed, self.compared, 0.025),
                  clopper_pearson_upper(self.agreed, self.compared, 0.025))
        withheld = decided if decided is not None else (
            self.compared > 0 and self.agreed / self.compared < AGREEMENT_FLOOR)
        return ConsistencyCheck(verdicts, self.sampled, self.agreed, self.errored, ci95=ci,
                                decided="interval" if decided is not None else "cap", withheld=withheld)
