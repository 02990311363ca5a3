"""Graders of the imported suite formats, run after an arm's validators and expectations.

- ``contains``: every keyword occurs in the final output, case-insensitively. The score is the
  share found, but the check passes only when every keyword is found.
- ``pytest``: the suite's fixtures are staged into a fresh ``.skillab-judge/`` after the agent
  finished, and pytest runs the test file there with ``AI_OUTPUT_FILE`` naming a file that holds
  the final output. Agent-written ``conftest.py`` or ``pytest.ini`` elsewhere in the workspace
  are out of pytest's reach (``--rootdir``/``--confcutdir``/``-c`` pin it to the fixtures).
- ``llm-rubric`` (``rubric.py``): one judge call scores the session against the rubric in [0, 1].
- ``dimensions`` (``dimensions.py``): one judge call per arm scores that arm's work (its final output and the files
  it changed) per dimension with a reason. The call never names the arm or shows the other
  arm's work: each arm is scored blind.
- ``verifier`` (``verifier.py``): a SkillsBench ``test.sh`` staged (paths rewritten) and run after
  the agent; the reward it writes passes at the run's reward threshold.
- ``checklist`` (``checklist.py``): each item judged on its own; weighted score vs a threshold.

This module holds what they share (results, inputs, judge plumbing, workspace helpers) and
the two command graders; each judge and the verifier has a module of its own.

A result that could not be reached (judge unavailable or unreadable, a test runner that crashed,
a verifier that wrote no reward) is ``errored``: no verdict, so the case counts as an error and
stays out of the lift, exactly like an errored validator. Judge calls go through the same
``JudgeTransport`` seam and the same fenced data blocks as the expectation judge.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import shlex
import shutil
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.checks import GraderKind, GraderResult
from ..errors import ProviderError
from ..sandbox.process import CommandResult
from ..sandbox.python_runtime import python_view
from ..sandbox.workspace import Workspace
from ..secrets import redact
from ..suite.model import (
    JUDGED_GRADERS,
    Case,
    ChecklistGrader,
    ContainsGrader,
    DimensionGrader,
    PytestGrader,
    RubricGrader,
    SeedFiles,
    VerifierGrader,
)
from .judge import JudgeTransport, fence, fence_nonce, neutralize

JUDGE_DIR = ".skillab-judge"
VERIFIER_DIR = ".skillab-verifier"
AI_OUTPUT_ENV = "AI_OUTPUT_FILE"
# Command output kept per result (its end says most).
OUTPUT_TAIL = 2000
# What the dimension judge sees of the files an arm changed.
WORK_FILE_CHARS = 8000
WORK_TOTAL_CHARS = 48000
SNAPSHOT_MAX_FILES = 5000
# Workspace entries that are not the agent's work: sandbox homes, staged skills, graders.
_NOT_WORK = frozenset({".home", ".tmp", ".skills", ".claude", ".git", JUDGE_DIR, VERIFIER_DIR})


@dataclass(frozen=True)
class GradingInput:
    """What the graders of one arm read."""

    workspace: Workspace
    prompt: str
    final_output: str
    transcript: str
    # The files the agent changed, rendered for the dimension judge (``render_changes``).
    work: str = ""
    transport: JudgeTransport | None = None


def run_graders(case: Case, grading: GradingInput) -> list[GraderResult]:
    """Every format grader of ``case``, in order."""
    results = []
    for spec in case.graders:
        grade = _GRADERS.get(type(spec))
        # A plugin format's own grader grades itself (``core.contracts.Grader``).
        results.append(grade(spec, grading) if grade is not None else spec.grade(grading))
    return results


# --- contains --------------------------------------------------------------------------------


def grade_contains(spec: ContainsGrader, grading: GradingInput) -> GraderResult:
    text = grading.final_output.lower()
    found = [k for k in spec.keywords if k.lower() in text]
    missing = [k for k in spec.keywords if k.lower() not in text]
    total = len(spec.keywords)
    reason = f"{len(found)} of {total} keywords found in the final output"
    if missing:
        reason += "; missing: " + ", ".join(repr(k) for k in missing) + " (every keyword is required)"
    return GraderResult(
        kind="contains",
        label="contains: " + ", ".join(repr(k) for k in spec.keywords),
        passed=not missing,
        reason=reason,
        score=round(len(found) / total, 4) if total else 0.0,
        max_score=1.0,
    )


# --- pytest ----------------------------------------------------------------------------------


def grade_pytest(spec: PytestGrader, grading: GradingInput) -> GraderResult:
    label = f"pytest {spec.test_file}"
    if importlib.util.find_spec("pytest") is None:
        return _no_verdict("pytest", label, f"pytest is not installed for {sys.executable}; "
                           "install it (pip install pytest) to run pytest judges")
    workspace = grading.workspace
    clear_entry(workspace.root, JUDGE_DIR)
    stage_seed(workspace, spec.fixtures, under=JUDGE_DIR)
    output = workspace.put(f"{JUDGE_DIR}/ai_output.txt", grading.final_output.encode("utf-8", "replace"))
    fixtures_root = f"{JUDGE_DIR}/fixtures"
    ini = f"{fixtures_root}/pytest.ini"
    if not (workspace.root / ini).is_file():
        ini = f"{JUDGE_DIR}/pytest.ini"
        workspace.put(ini, b"[pytest]\n")
    q = shlex.quote
    python = python_view()
    command = (
        f"cd {q(JUDGE_DIR)} && exec {q(python.interpreter)} -m pytest -q -p no:cacheprovider "
        f"--rootdir fixtures --confcutdir fixtures -c {q(os.path.relpath(ini, JUDGE_DIR))} "
        f"{q(spec.test_file)}"
    )
    env = {AI_OUTPUT_ENV: str(output), "PYTHONDONTWRITEBYTECODE": "1", **python.env}
    result = workspace.run(command, timeout_s=spec.timeout_s, extra_env=env,
                           read_only=python.read_only, read_only_at=python.read_only_at)
    tail = _tail(result)
    if result.completed and result.exit_code == 0:
        return GraderResult("pytest", label, True, "the tests passed", output=tail)
    if result.completed and result.exit_code == 1:
        return GraderResult("pytest", label, False, "some tests failed", output=tail)
    if result.completed and result.exit_code == 5:
        return _no_verdict("pytest", label, f"pytest collected no tests from {spec.test_file}", tail)
    return _no_verdict("pytest", label, f"pytest gave no verdict: {result.describe()}", tail)


# --- judge plumbing shared by the rubric and dimension judges --------------------------------


def judge_message(intro: str, blocks: dict[str, str], question: str) -> str:
    """A user message of fenced data blocks under one content-derived tag (as ``Judge`` builds)."""
    data = {name: neutralize(text) for name, text in blocks.items()}
    nonce = fence_nonce(data)
    body = "\n\n".join(fence(name, text, nonce) for name, text in data.items())
    return f"{intro} Block tag for this message: {nonce}\n\n{body}\n\n{question}\n"


def prompts_sha256() -> str:
    """Identifies the score judges' prompts, so cached baselines follow their edits."""
    from .checklist import CHECKLIST_INTRO, CHECKLIST_QUESTION, CHECKLIST_SYSTEM
    from .rubric import RUBRIC_INTRO, RUBRIC_QUESTION
    from .dimensions import DIMENSION_INTRO, DIMENSION_QUESTION

    text = "\0".join((RUBRIC_SYSTEM, RUBRIC_INTRO, RUBRIC_QUESTION, DIMENSION_SYSTEM, DIMENSION_INTRO,
                      DIMENSION_QUESTION, CHECKLIST_SYSTEM, CHECKLIST_INTRO, CHECKLIST_QUESTION))
    return hashlib.sha256(text.encode()).hexdigest()


def _ask(transport: JudgeTransport | None, system: str, user: str) -> str | GraderResult:
    if transport is None:
        return _no_verdict("llm-rubric", "", "the run has no judge to ask")
    try:
        return transport.complete(system=system, user=user)
    except ProviderError as exc:
        return _no_verdict("llm-rubric", "", f"judge unavailable: {redact(str(exc))}")


def _unreadable(kind: GraderKind, label: str, exc: Exception, reply: str) -> GraderResult:
    excerpt = " ".join(str(reply).split())[:200]
    return _no_verdict(kind, label, f"the judge's output could not be read ({exc}); it began: {excerpt!r}")


def _no_verdict(kind: GraderKind, label: str, reason: str, output: str = "") -> GraderResult:
    return GraderResult(kind, label, passed=False, reason=reason, errored=True, output=output)


def _tail(result: CommandResult) -> str:
    text = "\n".join(part for part in (result.stdout.strip(), result.stderr.strip()) if part)
    return redact(text[-OUTPUT_TAIL:])


# --- workspace helpers -----------------------------------------------------------------------


def stage_seed(workspace: Workspace, seed: SeedFiles | None, *, under: str = "") -> None:
    """Copy seed files into the workspace (below ``under``), keeping their permission bits."""
    if seed is None:
        return
    for source, target in seed.files:
        rel = f"{under}/{target}" if under else target
        staged = workspace.put(rel, source.read_bytes())
        os.chmod(staged, stat.S_IMODE(source.stat().st_mode) | stat.S_IRUSR)


def clear_entry(root: Path, name: str) -> None:
    """Remove ``root/name`` (a file, a link or a tree) so a grader starts from nothing."""
    path = root / name
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def snapshot(root: Path) -> dict[str, str]:
    """Relative path → SHA-256 of every regular file that is the agent's to change."""
    found: dict[str, str] = {}
    for directory, dirnames, filenames in os.walk(root):
        if Path(directory) == root:
            dirnames[:] = [d for d in dirnames if d not in _NOT_WORK]
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and not os.path.islink(os.path.join(directory, d))]
        for name in filenames:
            path = os.path.join(directory, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            rel = os.path.relpath(path, root)
            with open(path, "rb") as handle:
                found[rel] = hashlib.sha256(handle.read()).hexdigest()
            if len(found) >= SNAPSHOT_MAX_FILES:
                return found
    return found


def render_changes(root: Path, before: dict[str, str]) -> str:
    """The files created or changed since ``before`` with their text, and the ones deleted."""
    after = snapshot(root)
    changed = sorted(rel for rel, digest in after.items() if before.get(rel) != digest)
    deleted = sorted(set(before) - set(after))
    if not changed and not deleted:
        return "(the agent created, changed and deleted no files)"
    parts: list[str] = []
    budget = WORK_TOTAL_CHARS
    for rel in changed:
        state = "changed" if rel in before else "new"
        content = _text_of(root / rel)
        if len(content) > WORK_FILE_CHARS:
            content = content[:WORK_FILE_CHARS] + f"\n[... cut at {WORK_FILE_CHARS} characters]"
        block = f"=== {rel} ({state}) ===\n{content}"
        if len(block) > budget:
            parts.append(f"[... {len(changed) - len(parts)} more changed files left out]")
            break
        budget -= len(block)
        parts.append(block)
    parts.extend(f"=== {rel} (deleted) ===" for rel in deleted)
    return "\n\n".join(parts)


def _text_of(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return f"(binary file, {len(data)} bytes)"


def grading_scope(case: Case) -> dict[str, Any]:
    """Everything about ``case``'s format-specific grading a cached baseline depends on."""

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            if set(value) == {"files", "sha256"}:
                return value["sha256"]  # seeds by content, not by where the checkout lies
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    return {
        "graders": [
            {"kind": type(g).__name__, **plain(dataclasses.asdict(g))} for g in case.graders
        ],
        "seed": case.seed.sha256 if case.seed else None,
        "timeout_s": case.timeout_s,
        "unsupported": case.unsupported,
        "skill_files_in_every_arm": case.skill_files_in_every_arm,
        "score_prompts": prompts_sha256() if any(isinstance(g, JUDGED_GRADERS) for g in case.graders) else None,
    }


# Graders with modules of their own import this module's shared types, so they come last.
from .checklist import grade_checklist  # noqa: E402
from .dimensions import (  # noqa: E402,F401
    DIMENSION_SYSTEM,
    CriteriaVerdict,
    DimensionRow,
    WeakDimension,
    criteria_verdicts,
    grade_dimensions,
    parse_dimension_reply,
)
from .rubric import RUBRIC_SYSTEM, grade_rubric, parse_score_reply  # noqa: E402,F401
from .verifier import grade_verifier, read_reward  # noqa: E402,F401

Grade = Callable[[Any, GradingInput], GraderResult]
_GRADERS: dict[type, Grade] = {
    ContainsGrader: grade_contains,
    PytestGrader: grade_pytest,
    RubricGrader: grade_rubric,
    DimensionGrader: grade_dimensions,
    VerifierGrader: grade_verifier,
    ChecklistGrader: grade_checklist,
}
