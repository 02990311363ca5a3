"""ruby-skill-bench evals: a dimension judge per arm, and the format's own criteria verdict in
the reports."""

from pathlib import Path

from ..base import Grader, SuiteFormat, lazy
from .specs import DimensionGrader


def _prompts() -> tuple[str, ...]:
    from .dimensions import DIMENSION_INTRO, DIMENSION_QUESTION, DIMENSION_SYSTEM

    return (DIMENSION_SYSTEM, DIMENSION_INTRO, DIMENSION_QUESTION)


def _layout(directory: Path) -> bool:
    # task.md + criteria.json: a ruby-skill-bench eval (or a Tessl scenario, laid out alike).
    return (directory / "criteria.json").is_file() and (directory / "task.md").is_file()


FORMAT = SuiteFormat(
    name="ruby-skill-bench",
    filenames=("criteria.json",),
    parse=lazy("skillab.formats.ruby_bench.parser:load_ruby_bench"),
    graders=(Grader(DimensionGrader, lazy("skillab.formats.ruby_bench.dimensions:grade_dimensions"), _prompts),),
    layout=_layout,
    markdown_section=lazy("skillab.formats.ruby_bench.report:markdown_section"),
    terminal_section=lazy("skillab.formats.ruby_bench.report:terminal_section"),
)
