"""The Agent Skills evaluation format (``evals/evals.json`` beside SKILL.md): judged checklists."""

from ..base import Grader, SuiteFormat, lazy
from .specs import ChecklistGrader


def checklist_prompts() -> tuple[str, ...]:
    from .checklist import CHECKLIST_INTRO, CHECKLIST_QUESTION, CHECKLIST_SYSTEM

    return (CHECKLIST_SYSTEM, CHECKLIST_INTRO, CHECKLIST_QUESTION)


CHECKLIST = Grader(ChecklistGrader, lazy("skillab.formats.evals_json.checklist:grade_checklist"), checklist_prompts)

FORMAT = SuiteFormat(
    name="evals.json",
    filenames=("evals/evals.json",),
    parse=lazy("skillab.formats.evals_json.parser:load_evals_json"),
    graders=(CHECKLIST,),
)
