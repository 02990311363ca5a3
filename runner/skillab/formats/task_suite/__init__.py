"""``task_suite.yaml``: keyword, pytest and rubric graders; a suite may live apart from its skill."""

from pathlib import Path

from ...suite.model import RubricGrader
from ..base import Grader, SuiteFormat, lazy
from .specs import ContainsGrader, PytestGrader


def _prompts() -> tuple[str, ...]:
    from ...grading.rubric import RUBRIC_INTRO, RUBRIC_QUESTION, RUBRIC_SYSTEM

    return (RUBRIC_SYSTEM, RUBRIC_INTRO, RUBRIC_QUESTION)


def _layout(directory: Path) -> bool:
    return (directory / "task_suite.yaml").is_file()


FORMAT = SuiteFormat(
    name="task_suite.yaml",
    filenames=("task_suite.yaml",),
    parse=lazy("skillab.formats.task_suite.parser:load_task_suite"),
    graders=(
        Grader(ContainsGrader, lazy("skillab.formats.task_suite.graders:grade_contains")),
        Grader(PytestGrader, lazy("skillab.formats.task_suite.graders:grade_pytest")),
        Grader(RubricGrader, lazy("skillab.grading.rubric:grade_rubric"), _prompts),
    ),
    layout=_layout,
)
