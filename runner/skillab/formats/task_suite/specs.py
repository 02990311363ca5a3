"""The grader specs task_suite.yaml's parser writes: keywords and pytest (its rubric is the
generic ``RubricGrader``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...suite.model import SeedFiles


@dataclass(frozen=True)
class ContainsGrader:
    """Every keyword must occur in the final output (case-insensitive); score = found / total."""

    # Whether grading asks the judge model, and whether it reads the files the agent changed.
    judged: ClassVar[bool] = False
    reads_work: ClassVar[bool] = False

    keywords: tuple[str, ...]


@dataclass(frozen=True)
class PytestGrader:
    """pytest runs ``test_file`` (relative to ``fixtures``' staged root) on the final output,
    whose path it reads from ``AI_OUTPUT_FILE``. The fixtures are staged after the agent."""

    # Whether grading asks the judge model, and whether it reads the files the agent changed.
    judged: ClassVar[bool] = False
    reads_work: ClassVar[bool] = False

    fixtures: SeedFiles
    test_file: str
    timeout_s: float = 300.0
