"""The mock adapter: the agent of ``--adapter mock``, answering from the mock model's script.

Whole runs work without a model or a key. The answers come from the script
(``suite.mock_script.MockScript``); the mock model client (``providers.mock``) judges the run.
Scripted files are written into the arm workspace as if the agent wrote them. Trigger trials (the skill listed, not loaded) load what the script's
``loads:`` says, among the skills offered.

The original arm (``--against``) answers what the candidate script's ``original`` key says for
the case; else the original skill's own ``mock-responses.yaml`` (its ``with`` answers: the script
as the base commit had it); else the candidate's ``with`` answer, and then the run warns that the
comparison with the original means nothing.

Usage is an ESTIMATE, not a measurement: one token per four characters (rounded up) of the
prompt, plus the SKILL.md body when the arm loads the skill, for input; of the answer and the
scripted file contents for output. ``cost_usd`` stays None: nothing was billed.
"""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.usage import Usage
from ..errors import SandboxError
from ..grading.trajectory import ModelTurn, ToolCall, Trajectory
from ..sandbox.workspace import safe_join
from ..suite.mock_script import (
    ARM_KEY,
    MOCK_RESPONSES_FILE,
    MockAnswer,
    MockScript,
    default_answer,
    load_mock_responses,
)
from .base import Agent, AgentResult, ArmRequest

if TYPE_CHECKING:
    from ..core.settings import RunConfig

# The names tests and the mock-responses tooling know the mock adapter by.
__all__ = ["MockAdapter", "MockAnswer", "default_answer", "load_mock_responses"]

CHARS_PER_TOKEN = 4


class MockAdapter(Agent):
    """Answers each arm from the script; see the module docstring."""

    name = "mock"
    staging_dirs: tuple[str, ...] = ()  # scripted: nothing is staged
    # Trigger trials: the agent is offered skills it may load (see engine.trigger).
    discovers_skills = True

    def __init__(
        self,
        responses: dict | None = None,
        *,
        latency_ms: int = 0,
        responses_sha256: str | None = None,
    ):
        self.model = MockScript(responses, script_sha256=responses_sha256)
        self._latency_ms = max(0, int(latency_ms))
        # The original skills' own scripts, by directory, read once.
        self._originals: dict[Path, MockScript | None] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: RunConfig) -> MockAdapter:
        agent = config.agent
        adapter = cls(latency_ms=agent.mock_latency_ms)
        if agent.mock_responses is not None:
            adapter.model = MockScript.from_file(Path(agent.mock_responses))
        return adapter

    def identity(self) -> dict[str, Any]:
        return {"adapter": self.name, "responses_sha256": self.model.script_sha256}

    def loads_for(self, request: ArmRequest) -> list[str]:
        """The offered skills the script says this trigger trial loads."""
        offered = [s.name for s in request.offered]
        routes = self.model.routes_for(request.case.name, request.case.prompt)
        if routes is not None:
            return next(([name] for name in routes if name in offered), [])
        value = self.model.loads_for(request.case.name, request.case.prompt, request.arm)
        if value is True:
            wanted = [request.skill.name] if request.skill is not None else []
        else:
            wanted = list(value) if isinstance(value, tuple) else []
        return [name for name in wanted if name in offered]

    def run(self, request: ArmRequest) -> AgentResult:
        if request.arm == "without_skill" and request.skill is not None:
            raise ValueError("the without-skill arm must not be given the skill")
        if request.purpose == "trigger":
            return self._trigger(request)
        original = None
        if request.arm == "original" and request.skill and not self.model.scripts_original(request.case.name):
            original = self.original_script(request.skill.root)
        model, arm = (original, "with_skill") if original is not None else (self.model, request.arm)
        shown = _shown(request.skill) if model.scripts_by_skill(request.case.name) else None
        answer = model.answer_for(request.case.name, request.case.prompt, arm, shown=shown)
        calls = [self._write(request, rel, content) for rel, content in answer.files.items()]
        if self._latency_ms:
            time.sleep(self._latency_ms / 1000)
        turn = ModelTurn(text=answer.text, tool_calls=calls, latency_ms=self._latency_ms or None)
        return AgentResult(
            final_output=answer.text,
            trajectory=Trajectory(user_input=request.case.prompt, turns=[turn]),
            usage=_estimate_usage(request, answer),
            # The simulated model time, not the few microseconds the mock itself takes: at zero
            # latency there is no duration to compare, and the report says so rather than noise.
            duration_ms=self._latency_ms,
            turns=1,
        )

    def original_script(self, root: Path) -> MockScript | None:
        """The script the original skill at ``root`` ships, or None."""
        with self._lock:
            if root not in self._originals:
                script = Path(root) / MOCK_RESPONSES_FILE
                self._originals[root] = MockScript.from_file(script) if script.is_file() else None
            return self._originals[root]

    def against_warning(self, root: Path, label: str) -> str | None:
        """Why a comparison with the original at ``root`` means nothing under this script."""
        if self.original_script(root) is not None or self.model.scripts_original():
            return None
        return (f"mock adapter: the original ({label}) has no {MOCK_RESPONSES_FILE} and the script "
                "scripts no 'original' answer, so the original arm answered the candidate's "
                "script: the comparison with the original means nothing")

    def _trigger(self, request: ArmRequest) -> AgentResult:
        loaded = self.loads_for(request)
        calls = [ToolCall("Skill", {"skill": name}, output="loaded") for name in loaded]
        text = f"[mock trigger trial] loaded: {', '.join(loaded) or 'nothing'}"
        if self._latency_ms:
            time.sleep(self._latency_ms / 1000)
        return AgentResult(
            final_output=text,
            trajectory=Trajectory(user_input=request.case.prompt,
                                  turns=[ModelTurn(text=text, tool_calls=calls)]),
            usage=Usage(input_tokens=_tokens(request.case.prompt)),
            duration_ms=self._latency_ms,
            turns=1,
            skill_activated=(request.skill.name in loaded) if request.skill is not None else None,
            skills_loaded=loaded,
        )

    def _write(self, request: ArmRequest, rel: str, content: str | bytes) -> ToolCall:
        try:
            target = safe_join(request.workspace, rel)
        except SandboxError as exc:
            raise SandboxError(
                f"mock responses: case {request.case.name} '{ARM_KEY[request.arm]}' 'files' — {exc}"
            ) from None
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return ToolCall("write_file", {"path": rel}, output="ok")


def _shown(skill: Any) -> str | None:
    """What an arm's loaded skill shows the agent: SKILL.md and the paths of its files."""
    if skill is None:
        return None
    text = skill.skill_md_bytes().decode("utf-8", errors="replace")
    return "\n".join((text, *skill.bundled))


def _estimate_usage(request: ArmRequest, answer: MockAnswer) -> Usage:
    loaded = request.skill.body if request.skill is not None else ""
    written = "".join(c if isinstance(c, str) else c.hex() for c in answer.files.values())
    return Usage(
        input_tokens=_tokens(request.case.prompt) + _tokens(loaded),
        output_tokens=_tokens(answer.text) + _tokens(written),
    )


def _tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)
