"""The grader spec of a skillgrade task: its weighted graders and the reward it passes at."""

from __future__ import annotations

from dataclasses import dataclass

from ...suite.model import SeedFiles


@dataclass(frozen=True)
class TaskGrader:
    """One grader: ``deterministic`` runs ``run`` (after ``setup``) in the workspace and reads
    the JSON it prints (``score`` 0..1); ``llm_rubric`` asks the judge to score ``rubric``."""

    type: str
    weight: float
    run: str = ""
    setup: str = ""
    rubric: str = ""


@dataclass(frozen=True)
class SkillgradeGrader:
    """The arm's reward is Σ score × weight / Σ weight; it passes at ``threshold``."""

    graders: tuple[TaskGrader, ...]
    threshold: float = 0.8
    timeout_s: float = 300.0
    # The suite's graders/ folder: staged into the workspace after the agent finished, for the
    # deterministic graders' scripts (``run: node graders/check.js``).
    grader_files: SeedFiles | None = None
    reads_work = False

    @property
    def judged(self) -> bool:
        return any(g.type == "llm_rubric" for g in self.graders)

    @property
    def judge_calls(self) -> int:
        return sum(g.type == "llm_rubric" for g in self.graders)
