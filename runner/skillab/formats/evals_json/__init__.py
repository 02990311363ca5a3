"""The Agent Skills evaluation format (``evals/evals.json`` beside SKILL.md): judged checklists."""

from pathlib import Path

from ..base import Grader, SuiteFormat, lazy
from .specs import ChecklistGrader


def checklist_prompts() -> tuple[str, ...]:
    from .checklist import CHECKLIST_INTRO, CHECKLIST_QUESTION, CHECKLIST_SYSTEM

    return (CHECKLIST_SYSTEM, CHECKLIST_INTRO, CHECKLIST_QUESTION)


def _layout(directory: Path) -> bool:
    """``evals/evals.json`` at a repository's root, the skill in the folder its ``skill_name``
    names (beside SKILL.md, the file name alone makes it a suite)."""
    if (directory / "SKILL.md").is_file() or not (directory / "evals" / "evals.json").is_file():
        return False
    from .parser import named_skill_dir

    return named_skill_dir(directory / "evals" / "evals.json") is not None


CHECKLIST = Grader(ChecklistGrader, lazy("skillab.formats.evals_json.checklist:grade_checklist"), checklist_prompts)

FORMAT = SuiteFormat(
    name="evals.json",
    # Beside SKILL.md too: skill-creator writes evals/evals.json, many skills keep it at the root.
    filenames=("evals/evals.json", "evals.json"),
    parse=lazy("skillab.formats.evals_json.parser:load_evals_json"),
    graders=(CHECKLIST,),
    layout=_layout,
)
