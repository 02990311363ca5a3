"""Claude Code's ``claude plugin eval`` cases (``evals/<case>/case.yaml``, or ``prompt.md`` plus
``graders/*.md``), run A/B on every agent skillab drives: the eval folder is the suite."""

from pathlib import Path

from ..base import Grader, SuiteFormat, lazy
from .specs import PluginCaseGrader


def judge_prompts() -> tuple[str, ...]:
    from ..evals_json.checklist import CHECKLIST_INTRO, CHECKLIST_QUESTION, CHECKLIST_SYSTEM

    return (CHECKLIST_SYSTEM, CHECKLIST_INTRO, CHECKLIST_QUESTION)


def _layout(directory: Path) -> bool:
    """A plugin folder without a SKILL.md of its own (``.claude-plugin/`` or ``skills/``) whose
    ``evals/`` holds cases."""
    if (directory / "SKILL.md").is_file() or not (directory / "evals").is_dir():
        return False
    if not ((directory / ".claude-plugin").is_dir() or (directory / "skills").is_dir()):
        return False
    return any(directory.glob("evals/*/case.yaml")) or any(directory.glob("evals/*/graders"))


FORMAT = SuiteFormat(
    name="claude-plugin-eval",
    # A plugin or skill folder, its eval folder, or one case folder: each names the eval folder.
    filenames=("evals/*/case.yaml", "evals/*/prompt.md", "*/case.yaml", "*/prompt.md", "case.yaml"),
    parse=lazy("skillab.formats.plugin_eval.parser:load_plugin_eval"),
    graders=(Grader(PluginCaseGrader, lazy("skillab.formats.plugin_eval.graders:grade_plugin_case"), judge_prompts),),
    layout=_layout,
)
