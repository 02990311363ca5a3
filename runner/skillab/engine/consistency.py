"""The judge's consistency: a sample of its verdicts asked again, and how often it agrees.

After the arms finish, a share of the expectation verdicts (default 10%, at least 5, all of them
when fewer) is re-judged under a fresh fence tag, with the same blinded session. Agreement is the
share of re-asked verdicts that came back the same; an errored re-ask is left out.

Below ``AGREEMENT_FLOOR`` (0.8) the lift is withheld. Why 0.8: when a verdict disagrees with
itself a share ``d`` of the time, each verdict is a coin toss with probability about ``d``, so
about ``d / 2`` of the arms' grades are noise; at ``d = 0.2`` that is one grade in ten, the size of
the lifts a suite is typically asked to detect (``--target-lift-pts`` 10), so a lift could be made
of judge noise alone. 0.8 is also the conventional floor of "substantial" agreement.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from typing import Any

from ..core.checks import ConsistencyCheck
from ..grading.blinding import blind_transcript

DEFAULT_SHARE = 0.10
MINIMUM_SAMPLE = 5
_ARMS = ("with_skill", "without_skill", "original")


def check_consistency(
    records: Sequence[Any], judge: Any, *, prompts: dict[str, str], skills: Iterable[Any],
    share: float = DEFAULT_SHARE, minimum: int = MINIMUM_SAMPLE, seed: int = 0,
) -> ConsistencyCheck | None:
    """Re-judge a sample of the run's expectation verdicts; None when there is nothing to sample."""
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
    size = min(len(verdicts), max(minimum, math.ceil(share * len(verdicts))))
    agreed = errored = 0
    for record, arm, result in random.Random(seed).sample(verdicts, size):
        again = judge.grade(
            result.expectation,
            prompt=prompts.get(record.case_name, ""),
            transcript=blind_transcript(arm.transcript, skills),
            final_output=arm.final_output,
            salt="consistency",
        )
        if again.errored:
            errored += 1
        elif again.passed == result.passed:
            agreed += 1
    return ConsistencyCheck(len(verdicts), size, agreed, errored)
