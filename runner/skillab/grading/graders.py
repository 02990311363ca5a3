"""What every format grader shares: its result, its input, the judge plumbing of the score
judges, and staging files into an arm's workspace. The graders themselves belong to the formats
that use them (``skillab.formats``); the rubric judge, which any format may use, is ``rubric.py``.

A result that could not be reached (judge unavailable or unreadable, a test runner that crashed,
a verifier that wrote no reward) is ``errored``: no verdict, so the case counts as an error and
stays out of the lift, exactly like an errored validator. Judge calls go through the run's judge
(``Judge.ask``: its model client, its usage count) with the same fenced data blocks as the
expectation judge.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..core.checks import GraderKind, GraderResult
from ..errors import ProviderError
from ..sandbox.nofollow import remove_inside
from ..sandbox.process import CommandResult
from ..sandbox.workspace import Workspace
from ..secrets import redact
from ..suite.model import SeedFiles
from ..suite.paths import read_below
from .judge import ExpectationJudge, fence, fence_nonce, neutralize

JUDGE_DIR = ".skillab-judge"
VERIFIER_DIR = ".skillab-verifier"
AI_OUTPUT_ENV = "AI_OUTPUT_FILE"
# Command output kept per result (its end says most).
OUTPUT_TAIL = 2000


@dataclass(frozen=True)
class GradingInput:
    """What the graders of one arm read."""

    workspace: Workspace
    prompt: str
    final_output: str
    transcript: str
    # The files the agent changed, rendered for the dimension judge (``render_changes``).
    work: str = ""
    judge: ExpectationJudge | None = None
    # The agent's tool calls in order, (tool name, arguments as JSON text), and whether it
    # opened the skill (None: the agent cannot tell): for graders of tool use.
    tool_calls: tuple[tuple[str, str], ...] = ()
    skill_activated: bool | None = None


@runtime_checkable
class SelfGrading(Protocol):
    """A grader spec a plugin format puts on a case that grades itself (a frozen dataclass,
    hashed into the suite's identity). Built-in specs are graded by the function their format
    registers (``formats.base.Grader``); any other spec must be one of these."""

    # Whether grading asks the judge model (the run then builds one), and whether it reads the
    # files the agent changed (the engine then snapshots the workspace): ``suite.model.GraderSpec``.
    judged: bool
    reads_work: bool

    def grade(self, grading: GradingInput) -> GraderResult: ...


# --- judge plumbing shared by the rubric and dimension judges --------------------------------


def judge_message(intro: str, blocks: dict[str, str], question: str) -> str:
    """A user message of fenced data blocks under one content-derived tag (as ``Judge`` builds)."""
    data = {name: neutralize(text) for name, text in blocks.items()}
    nonce = fence_nonce(data)
    body = "\n\n".join(fence(name, text, nonce) for name, text in data.items())
    return f"{intro} Block tag for this message: {nonce}\n\n{body}\n\n{question}\n"


def ask_judge(judge: ExpectationJudge | None, system: str, user: str) -> str | GraderResult:
    if judge is None:
        return no_verdict("llm-rubric", "", "the run has no judge to ask")
    try:
        return judge.ask(system=system, user=user)
    except ProviderError as exc:
        return no_verdict("llm-rubric", "", f"judge unavailable: {redact(str(exc))}")


def unreadable_reply(kind: GraderKind, label: str, exc: Exception, reply: str) -> GraderResult:
    excerpt = " ".join(str(reply).split())[:200]
    return no_verdict(kind, label, f"the judge's output could not be read ({exc}); it began: {excerpt!r}")


def no_verdict(kind: GraderKind, label: str, reason: str, output: str = "") -> GraderResult:
    return GraderResult(kind, label, passed=False, reason=reason, errored=True, output=output)


def output_tail(result: CommandResult) -> str:
    text = "\n".join(part for part in (result.stdout.strip(), result.stderr.strip()) if part)
    return redact(text[-OUTPUT_TAIL:])


# --- workspace helpers -----------------------------------------------------------------------


def stage_seed(workspace: Workspace, seed: SeedFiles | None, *, under: str = "") -> None:
    """Copy seed files into the workspace (below ``under``), keeping their permission bits."""
    if seed is None:
        return
    for source, target in seed.files:
        rel = f"{under}/{target}" if under else target
        data, mode = read_below(seed.root, source)
        os.chmod(workspace.put(rel, data), mode | stat.S_IRUSR)


def clear_entry(root: Path, name: str) -> None:
    """Remove ``root/name`` (a file, a link, a FIFO or a tree) so a grader starts from nothing."""
    remove_inside(root, name)
