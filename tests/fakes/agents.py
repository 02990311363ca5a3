"""Adapters for tests that care about what an agent can see, not what it says."""

from __future__ import annotations

from skillab.agents.base import Agent, AgentResult, ArmRequest
from skillab.grading.trajectory import Trajectory


class ListingAdapter(Agent):
    """An agent that lists every file in its workspace, records the list per arm, and answers
    with a fixed text."""

    name = "listing"
    staging_dirs: tuple[str, ...] = ()

    def __init__(self, answer: str = "done"):
        self.answer = answer
        self.seen: dict[str, list[str]] = {}

    def identity(self) -> dict:
        return {"adapter": self.name, "answer": self.answer}

    def run(self, request: ArmRequest) -> AgentResult:
        root = request.workspace
        self.seen[request.arm] = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        return AgentResult(final_output=self.answer, trajectory=Trajectory(user_input=request.case.prompt))
