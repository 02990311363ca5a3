"""The mock adapter: answers from a script, so whole runs work without a model or a key.

The script is the ``--mock-responses`` YAML file: case name → ``{with:, without:, original:}``,
each arm's answer a string or ``{text: ..., files: {relpath: content}}``. Scripted files are
written into the arm workspace as if the agent wrote them. The ``original`` arm (``--against``)
falls back to ``with``. A case or arm the script does not name gets a deterministic default
answer that restates the prompt, the same for every arm but for its label, so defaults never
manufacture lift.

Trigger trials (the skill listed, not loaded) follow ``loads:``: ``true`` (the skill under
test), ``false``, or a list of skill names; ``loads_original:`` overrides it for the original
skill of ``--against``. A query the script does not name loads nothing. Cases are found by name,
then by the query's own text.

Usage is an ESTIMATE, not a measurement: one token per four characters (rounded up) of the
prompt, plus the SKILL.md body when the arm loads the skill, for input; of the answer and the
scripted file contents for output. ``cost_usd`` stays None: nothing was billed.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ..errors import SandboxError, SkillabError
from ..grading.judge import fenced_blocks
from ..grading.mock_judge import grade_text
from ..grading.trajectory import ModelTurn, ToolCall, Trajectory
from ..sandbox.workspace import safe_join
from ..suite.eval_yaml import setup_path_problem
from ..core.usage import Usage
from .base import AgentResult, ArmName, ArmRequest

if TYPE_CHECKING:
    from ..engine.config import RunConfig

ARM_KEYS: tuple[str, ...] = ("with", "without", "original")
LOAD_KEYS: tuple[str, ...] = ("loads", "loads_original")
_ARM_KEY: dict[ArmName, str] = {"with_skill": "with", "without_skill": "without", "original": "original"}
_ANSWER_KEYS = frozenset({"text", "files"})
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class MockAnswer:
    """One scripted arm: the final answer, and files (workspace-relative path → content)."""

    text: str
    files: dict[str, str] = field(default_factory=dict)


MockResponses = dict[str, dict[str, MockAnswer]]


def load_mock_responses(path: Path) -> MockResponses:
    """Read and check a mock responses file; ``SkillabError`` names the file and the problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SkillabError(f"{path}: mock responses file cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise SkillabError(f"{path}: mock responses file is not UTF-8 text") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise SkillabError(f"{where}: mock responses file is not valid YAML") from None
    responses = parse_mock_responses(data, source=str(path))
    parse_mock_loads(data, source=str(path))
    return responses


def check_case_names(path: Path, case_names: set[str]) -> None:
    """Every key of the responses file names a case: a typo would silently fall back to the
    default answer and move the lift. ``UsageError`` lists each stray key with a suggestion."""
    import difflib

    from ..errors import UsageError

    stray = sorted(set(load_mock_responses(path)) - case_names)
    if not stray:
        return
    problems = []
    for key in stray:
        close = difflib.get_close_matches(key, sorted(case_names), n=1, cutoff=0.6)
        problems.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise UsageError(f"{path}: mock responses for no case of the suite: {', '.join(problems)}")


def parse_mock_responses(data: Any, *, source: str = "mock responses") -> MockResponses:
    """Check the loaded YAML shape (also accepts ready ``MockAnswer`` values)."""
    if data is None:
        raise SkillabError(f"{source}: empty — expected a mapping of case name to {{with:, without:}}")
    if not isinstance(data, dict):
        raise SkillabError(f"{source}: expected a mapping of case name to {{with:, without:}}")
    parsed: MockResponses = {}
    for case, arms in data.items():
        if not isinstance(case, str) or not case.strip():
            raise SkillabError(f"{source}: case name {case!r} must be a non-empty string")
        if not isinstance(arms, dict):
            raise SkillabError(f"{source}: case {case} — expected a mapping with keys {_keys(ARM_KEYS)}")
        unknown = [k for k in arms if k not in ARM_KEYS + LOAD_KEYS]
        if unknown:
            raise SkillabError(
                f"{source}: case {case} — unknown key {unknown[0]!r} "
                f"(allowed: {_keys(ARM_KEYS + LOAD_KEYS)})"
            )
        parsed[case] = {arm: _answer(value, source, case, arm) for arm, value in arms.items()
                        if arm in ARM_KEYS}
    return parsed


MockLoads = dict[str, dict[str, Any]]


def parse_mock_loads(data: Any, *, source: str = "mock responses") -> MockLoads:
    """The ``loads`` / ``loads_original`` entries of a checked script: case → key → bool or
    tuple of skill names."""
    found: MockLoads = {}
    for case, arms in (data or {}).items():
        for key in LOAD_KEYS:
            if not isinstance(arms, dict) or key not in arms:
                continue
            value = arms[key]
            if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
                value = tuple(value)
            elif not isinstance(value, bool):
                raise SkillabError(f"{source}: case {case} '{key}' — must be true, false or a list "
                                   "of skill names")
            found.setdefault(case, {})[key] = value
    return found


def _answer(value: Any, source: str, case: str, arm: str) -> MockAnswer:
    where = f"{source}: case {case} '{arm}'"
    if isinstance(value, MockAnswer):
        return value
    if isinstance(value, str):
        return MockAnswer(value)
    if not isinstance(value, dict):
        raise SkillabError(f"{where} — expected a string or a mapping with 'text' and 'files'")
    unknown = [k for k in value if k not in _ANSWER_KEYS]
    if unknown:
        raise SkillabError(f"{where} — unknown key {unknown[0]!r} (allowed: {_keys(_ANSWER_KEYS)})")
    text = value.get("text")
    if not isinstance(text, str):
        raise SkillabError(f"{where} 'text' — must be a string")
    files = value.get("files") or {}
    if not isinstance(files, dict):
        raise SkillabError(f"{where} 'files' — must be a mapping of relative path to content")
    for rel, content in files.items():
        if not isinstance(rel, str) or not rel.strip():
            raise SkillabError(f"{where} 'files' — path {rel!r} must be a non-empty string")
        # Refused here already so a bad script stops the run before any arm; the workspace
        # write goes through safe_join as well, which also refuses escaping symbolic links.
        problem = setup_path_problem(rel)
        if problem:
            raise SkillabError(f"{where} 'files' — path {rel!r} {problem}; it must stay in the workspace")
        if not isinstance(content, str):
            raise SkillabError(f"{where} 'files' — content of {rel} must be a string")
    return MockAnswer(text, dict(files))


def _keys(keys: Any) -> str:
    return ", ".join(sorted(keys))


class MockAdapter:
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
        self._responses = parse_mock_responses(responses or {}, source="mock responses")
        self._loads = parse_mock_loads(responses or {})
        self._latency_ms = max(0, int(latency_ms))
        self._sha256 = responses_sha256 or _content_sha256(self._responses, self._loads)

    @classmethod
    def from_config(cls, config: RunConfig) -> "MockAdapter":
        if config.mock_responses is None:
            return cls(latency_ms=config.mock_latency_ms)
        path = Path(config.mock_responses)
        load_mock_responses(path)  # checked, with the file named in any error
        return cls(
            yaml.safe_load(path.read_text(encoding="utf-8")),
            latency_ms=config.mock_latency_ms,
            responses_sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        )

    def identity(self) -> dict[str, Any]:
        return {"adapter": self.name, "responses_sha256": self._sha256}

    def answer_for(self, case_name: str, prompt: str, arm: ArmName) -> MockAnswer:
        """The scripted answer for this arm, or the default one."""
        scripted = self._responses.get(case_name, {})
        key = _ARM_KEY[arm]
        if key == "original" and key not in scripted:
            key = "with"
        return scripted.get(key) or default_answer(case_name, prompt, arm)

    def loads_for(self, request: ArmRequest) -> list[str]:
        """The offered skills the script says this trigger trial loads."""
        scripted = self._loads.get(request.case.name) or self._loads.get(request.case.prompt) or {}
        value = scripted.get("loads", False)
        if request.arm == "original":
            value = scripted.get("loads_original", value)
        offered = [s.name for s in request.offered]
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
        answer = self.answer_for(request.case.name, request.case.prompt, request.arm)
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

    def _write(self, request: ArmRequest, rel: str, content: str) -> ToolCall:
        try:
            target = safe_join(request.workspace, rel)
        except SandboxError as exc:
            raise SandboxError(
                f"mock responses: case {request.case.name} '{_ARM_KEY[request.arm]}' 'files' — {exc}"
            ) from None
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return ToolCall("write_file", {"path": rel}, output="ok")


def default_answer(case_name: str, prompt: str, arm: ArmName) -> MockAnswer:
    """The unscripted answer: the same for every arm but its label, so it never makes lift."""
    return MockAnswer(
        f"[mock {arm} answer] No scripted response for case '{case_name}'. "
        f"The request was: {prompt.strip()}"
    )


def _estimate_usage(request: ArmRequest, answer: MockAnswer) -> Usage:
    loaded = request.skill.body if request.skill is not None else ""
    written = "".join(answer.files.values())
    return Usage(
        input_tokens=_tokens(request.case.prompt) + _tokens(loaded),
        output_tokens=_tokens(answer.text) + _tokens(written),
    )


def _tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _content_sha256(responses: MockResponses, loads: MockLoads | None = None) -> str:
    canonical: dict[str, Any] = {
        case: {arm: {"text": a.text, "files": a.files} for arm, a in arms.items()}
        for case, arms in responses.items()
    }
    if loads:
        canonical["\0loads"] = {case: {k: list(v) if isinstance(v, tuple) else v for k, v in keys.items()}
                                for case, keys in loads.items()}
    return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()


class MockScoreTransport:
    """A judge model for the score judges of ``--adapter mock`` runs (``llm-rubric`` and the
    per-dimension judge): honest and deterministic, it grades the text the judge is shown with
    the mock judge's rule (``grade_text``), criterion by criterion.

    - rubric: the criteria are the rubric's bullet lines, else its non-empty lines; each is graded
      against the FINAL_OUTPUT block; the score is the share met, to two decimals.
    - checklist: each item (the CHECK block) is graded like an expectation, on the FINAL_OUTPUT
      and WORK blocks.
    - dimensions: a dimension's criteria are the sentences of its description, else the TASK's
      bullet lines, else the whole task; each is graded against the FINAL_OUTPUT and WORK blocks;
      the score is max_score times the share met, rounded to a whole number.
    """

    model = "mock-judge"

    def complete(self, *, system: str, user: str) -> str:
        blocks = fenced_blocks(user)
        if "RUBRIC" in blocks and "FINAL_OUTPUT" in blocks:
            return _mock_rubric(blocks["RUBRIC"], blocks["FINAL_OUTPUT"])
        if "DIMENSIONS" in blocks and "FINAL_OUTPUT" in blocks:
            work = f"{blocks['FINAL_OUTPUT']}\n{blocks.get('WORK', '')}"
            return _mock_dimensions(blocks["DIMENSIONS"], blocks.get("TASK", ""), work)
        if "CHECK" in blocks and "FINAL_OUTPUT" in blocks:
            # A checklist item is graded like an expectation, on the output and the work.
            passed, reason = grade_text(blocks["CHECK"], f"{blocks['FINAL_OUTPUT']}\n{blocks.get('WORK', '')}")
            return json.dumps({"passed": passed, "reason": reason})
        # Not JSON on purpose: the grader then records the score as ungraded.
        return "mock score judge: the message carries no RUBRIC or DIMENSIONS block"


_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?P<text>\S.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _bullets(text: str) -> list[str]:
    return [m["text"].strip() for m in map(_BULLET.match, text.splitlines()) if m]


def _share_met(criteria: list[str], output: str) -> tuple[float, list[str]]:
    """The share of ``criteria`` the output meets, and a note per criterion missed."""
    missed = []
    for criterion in criteria:
        passed, reason = grade_text(criterion, output)
        if not passed:
            missed.append(f"{criterion[:80]!r}: {reason}")
    return (len(criteria) - len(missed)) / len(criteria), missed


def _mock_rubric(rubric: str, output: str) -> str:
    criteria = _bullets(rubric) or [line.strip() for line in rubric.splitlines() if line.strip()]
    if not criteria:
        return json.dumps({"score": 0.0, "reason": "The rubric states no criterion."})
    share, missed = _share_met(criteria, output)
    reason = f"{len(criteria) - len(missed)} of {len(criteria)} rubric criteria met"
    reason += f"; missed {'; '.join(missed)}" if missed else "."
    return json.dumps({"score": round(share, 2), "reason": reason})


def _mock_dimensions(dimensions_json: str, task: str, work: str) -> str:
    try:
        dimensions = json.loads(dimensions_json)
    except ValueError:
        return "mock score judge: the DIMENSIONS block is not JSON"
    task_criteria = _bullets(task) or ([task.strip()] if task.strip() else [])
    scored = []
    for dimension in dimensions:
        description = (dimension.get("description") or "").strip()
        criteria = [s for s in _SENTENCE_END.split(description) if s.strip()] or task_criteria
        if not criteria or not work.strip():
            scored.append({"name": dimension["name"], "score": 0, "reason": "Nothing to grade against."})
            continue
        share, missed = _share_met(criteria, work)
        reason = f"{len(criteria) - len(missed)} of {len(criteria)} criteria met"
        reason += f"; missed {missed[0]}" if missed else "."
        scored.append({"name": dimension["name"], "score": round(dimension["max_score"] * share), "reason": reason})
    return json.dumps({"dimensions": scored})

