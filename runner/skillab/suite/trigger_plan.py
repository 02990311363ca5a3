"""A trigger run's plain data: the plan (which queries are posed, to which skills, how often)
and each trial's record. The engine runs the plan (``engine.trigger``); scoring reads the
trials (``scoring.trigger_summary``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..core.usage import Usage
from ..skill.loader import Skill
from .trigger import TriggerQuery

# "baseline": a query meant for a sibling, posed to the siblings alone, to tell what the
# candidate's arrival changed.
TrialArm = Literal["candidate", "original", "baseline"]
# Loading a skill is the agent's first move when it chooses to; a few turns leave room to look
# around first, and the adapters stop (or are cut off) soon after.
TRIGGER_MAX_TURNS = 4


@dataclass(frozen=True)
class TriggerTrial:
    """One query posed once. ``skill`` is the name of the skill under test in this trial."""

    query: str
    run_index: int
    arm: TrialArm
    skill: str
    loaded: tuple[str, ...] = ()
    error: str | None = None
    duration_ms: int = 0
    usage: Usage = field(default_factory=Usage)
    # The session as trajectory format v1: the evidence of what was loaded.
    transcript: str = ""

    @property
    def triggered(self) -> bool | None:
        """Loaded the skill under test: True even if the session failed later; unknown when it
        failed without loading it."""
        if self.skill in self.loaded:
            return True
        return None if self.error else False


@dataclass(frozen=True)
class TriggerPlan:
    queries: tuple[TriggerQuery, ...]
    skill: Skill
    siblings: tuple[Skill, ...] = ()
    original: Skill | None = None
    runs: int = 1
    concurrency: int = 4
    max_turns: int = TRIGGER_MAX_TURNS
    keep_workspaces: bool = False

    def trials(self) -> list[tuple[TriggerQuery, int, TrialArm, Skill, tuple[Skill, ...]]]:
        """(query, run, arm, skill under test, skills offered beside it), in run order."""
        arms: list[tuple[TrialArm, Skill, tuple[Skill, ...]]] = [("candidate", self.skill, self.siblings)]
        if self.original is not None:
            arms.append(("original", self.original, self.siblings))
        by_name = {s.name: s for s in self.siblings}
        planned = []
        for run in range(self.runs):
            for q in self.queries:
                planned += [(q, run, arm, skill, beside) for arm, skill, beside in arms]
                owner = by_name.get(q.owner or "")
                if owner is not None:
                    others = tuple(s for s in self.siblings if s is not owner)
                    planned.append((q, run, "baseline", owner, others))
        return planned
