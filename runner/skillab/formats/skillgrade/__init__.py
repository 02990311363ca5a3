"""skillgrade's ``eval.yaml`` (``version: "1"``, ``defaults``, ``tasks`` with ``instruction``):
each task an A/B case graded by its deterministic scripts and LLM rubrics. The file name is the
native format's too, so what the file holds decides (``suite.sniff``), or ``--format skillgrade``."""

from ..base import Grader, SuiteFormat, lazy
from .specs import SkillgradeGrader


def judge_prompts() -> tuple[str, ...]:
    from ...grading.rubric import RUBRIC_INTRO, RUBRIC_QUESTION, RUBRIC_SYSTEM

    return (RUBRIC_SYSTEM, RUBRIC_INTRO, RUBRIC_QUESTION)


FORMAT = SuiteFormat(
    name="skillgrade",
    filenames=("eval.yaml", "eval.yml"),
    parse=lazy("skillab.formats.skillgrade.parser:load_skillgrade"),
    graders=(Grader(SkillgradeGrader, lazy("skillab.formats.skillgrade.graders:grade_task"), judge_prompts),),
    sniffed=True,
)
