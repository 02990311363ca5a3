"""``skillab regrade``: judge a finished run's arms again from what its document keeps, with no
agent run.

An arm that reached grading keeps everything its judge read: the expectations (in its
expectation results), its redacted transcript and final output; the case prompt comes from the
suite, which must be the one the run ran (its hash is checked by the caller). Judged against
the same judge (model and prompt), only the verdicts that errored are asked again: the others
are that judge's already. Against another judge every verdict is asked again, so no arm mixes
two judges. The arm is then decided by the rule a live run uses (``arm.decided``): a judge that
fails again leaves the arm ``error``, never a failure, for the next regrade to recover.

What a regrade cannot re-judge is left as it was and counted: an arm whose document holds only
a compact detail file reference, a pass@k arm (its attempts' verdicts are not all kept), and a
format's judged grader (it reads the workspace, which is gone; ``--resume`` runs it again).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.checks import ExpectationResult
from ..core.records import ArmRecord, CaseRecord, Outcome
from ..core.runlog import RunLog
from ..core.usage import Usage
from ..grading.blinding import blind_transcript
from ..grading.judge import ExpectationJudge
from ..scoring.outcomes import classify_outcome
from ..scoring.summary import summarize
from ..skill.loader import Skill
from .arm import JUDGED_KINDS, NO_VERDICT, decided


@dataclass(frozen=True)
class RegradeTally:
    """What a regrade asked and what it changed."""

    verdicts_asked: int = 0
    # Arms that were ``error`` before and are graded now, and the reverse.
    arms_recovered: int = 0
    arms_still_errored: int = 0
    # Errored arms a regrade cannot judge again (see the module docstring).
    arms_not_regradable: int = 0

    def __add__(self, other: RegradeTally) -> RegradeTally:
        return RegradeTally(*(a + b for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(other))))

    def sentence(self, judge: str) -> str:
        text = (f"regraded by {judge} without running any agent: {self.verdicts_asked} verdict(s) asked "
                f"again, {self.arms_recovered} errored arm(s) graded now")
        if self.arms_still_errored:
            text += f", {self.arms_still_errored} still errored by the judge (regrade again)"
        if self.arms_not_regradable:
            text += (f", {self.arms_not_regradable} errored arm(s) a regrade cannot judge (a format's judged "
                     "grader or a pass@k arm: --resume runs them again)")
        return text


@dataclass(frozen=True)
class Regrading:
    """A run's arms judged again: its new log and what was done."""

    log: RunLog
    tally: RegradeTally


def regrade_log(log: RunLog, judge: ExpectationJudge, prompts: Mapping[str, str],
                skills: Sequence[Skill]) -> Regrading:
    """``log`` with its arms judged again by ``judge`` (see the module docstring); ``prompts``:
    each case's prompt by name, ``skills``: the skill the run tested and its placebo, if the run
    had one (blinded from the judge, as in the run)."""
    models = log.settings.models
    every = (models.judge, models.judge_prompt_sha256) != (judge.model, judge.prompt_sha256)
    tally = RegradeTally()
    records: list[CaseRecord] = []
    for record in log.records:
        prompt = prompts.get(record.case_name)
        new, counted = _regrade_record(record, judge, prompt, skills, every=every)
        records.append(new)
        tally += counted
    settings = dataclasses.replace(
        log.settings,
        models=dataclasses.replace(models, judge=judge.model, judge_prompt_sha256=judge.prompt_sha256,
                                   judge_sampling=judge.sampling),
        judge_usage=_usage_sum(log.settings.judge_usage, judge.usage),
        # The consistency check measured the judge that graded the run: another one is unmeasured.
        judge_consistency=None if every else log.settings.judge_consistency,
        warnings=(*log.settings.warnings, tally.sentence(judge.model)),
    )
    return Regrading(summarize(settings, records), tally)


def _usage_sum(before: Usage | None, added: Usage | None) -> Usage | None:
    if before is None:
        return added
    return before if added is None else before.add(added)


def _regrade_record(record: CaseRecord, judge: ExpectationJudge, prompt: str | None, skills: Sequence[Skill],
                    *, every: bool) -> tuple[CaseRecord, RegradeTally]:
    tally = RegradeTally()
    arms: dict[str, ArmRecord | None] = {}
    for name in ("with_skill", "without_skill", "original", "placebo"):
        arm: ArmRecord | None = getattr(record, name)
        if arm is None or prompt is None:
            arms[name] = arm
            continue
        # The with-skill arm's transcript may show the skill, the placebo arm's the placebo;
        # every arm is blinded alike.
        new, counted = _regrade_arm(arm, judge, prompt, skills, every=every)
        arms[name], tally = new, tally + counted
    with_arm, without_arm = arms["with_skill"], arms["without_skill"]
    assert with_arm is not None and without_arm is not None
    if record.error is not None:  # the case errored before any arm ran: nothing to regrade
        return record, tally

    def against(other: ArmRecord | None) -> Outcome | None:
        assert with_arm is not None
        return None if other is None else classify_outcome(
            with_passed=with_arm.passed, without_passed=other.passed, errored=with_arm.errored or other.errored)

    return dataclasses.replace(record, outcome=against(without_arm) or "error", with_skill=with_arm,
                               without_skill=without_arm, original=arms["original"],
                               original_outcome=against(arms["original"]), placebo=arms["placebo"],
                               placebo_outcome=against(arms["placebo"])), tally


def _regrade_arm(arm: ArmRecord, judge: ExpectationJudge, prompt: str, skills: Sequence[Skill],
                 *, every: bool) -> tuple[ArmRecord, RegradeTally]:
    stale = [i for i, e in enumerate(arm.expectation_results) if every or e.errored]
    judged_grader_errored = any(g.errored and g.kind in JUDGED_KINDS for g in arm.graders)
    if not stale or arm.detail is not None or arm.pass_k is not None:
        blocked = arm.errored and (bool(stale) or judged_grader_errored)
        return arm, RegradeTally(arms_not_regradable=int(blocked))
    transcript = blind_transcript(arm.transcript, skills)
    results: list[ExpectationResult] = list(arm.expectation_results)
    for i in stale:
        results[i] = judge.grade(results[i].expectation, prompt=prompt, transcript=transcript,
                                 final_output=arm.final_output)
    new = dataclasses.replace(arm, expectation_results=results, errored=False,
                              error=None if arm.error == NO_VERDICT else arm.error)
    new = decided(new)
    return new, RegradeTally(
        verdicts_asked=len(stale),
        arms_recovered=int(arm.errored and not new.errored),
        arms_still_errored=int(new.errored and any(e.errored for e in results)),
        arms_not_regradable=int(new.errored and judged_grader_errored),
    )
