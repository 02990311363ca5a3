"""SkillsBench (Harbor) tasks: an environment from the task's Dockerfile and a verifier script."""

from pathlib import Path

from ..base import Grader, SuiteFormat, lazy
from .specs import VerifierGrader


def _layout(directory: Path) -> bool:
    has_task = (directory / "task.md").is_file() or (directory / "task.toml").is_file()
    return has_task and (directory / "environment" / "skills").is_dir()


FORMAT = SuiteFormat(
    name="skillsbench",
    filenames=("task.md", "task.toml"),
    parse=lazy("skillab.formats.skillsbench.parser:load_skillsbench"),
    graders=(Grader(VerifierGrader, lazy("skillab.formats.skillsbench.verifier:grade_verifier")),),
    layout=_layout,
)
