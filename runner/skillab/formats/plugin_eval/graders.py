"""Grading a ``claude plugin eval`` case as the CLI grades it, on any agent skillab drives.

Each grader passes or fails; the arm's score is the weight of the scored graders that pass over
their total weight, and the arm passes at the threshold (1.0: every scored grader). A with-only
grader (``tool_used: Skill``, ``arm: with-only``) is an indicator: graded and shown in both
arms, never scored — unless every grader of the case is with-only, when all are scored.

- regex: JavaScript flags ``i m s`` map to Python's; ``g``/``u``/``y``/``d``/``v`` change nothing
  a search or a count needs. Targets: ``last_message`` (the final answer), ``trace`` (the
  transcript), ``files`` (the text of the files the agent created or changed), a file's path.
  ``mock_calls`` needs Claude Code's MCP mocks, which no other agent has: no verdict.
- tool_used / tool_order: over the agent's tool calls, Claude Code's tool names matched to
  skillab's own agent's (Bash ↔ run_shell, Read ↔ read_file, Write ↔ write_file, Edit ↔
  edit_file, Glob/LS ↔ list_dir). ``Skill`` counts the Skill tool's calls, or one when the
  agent opened the skill another way.
- file_exists: the path in the arm's workspace after the agent finished.
- llm / baseline: the checklist judge, one call, with the baseline file as the reference.
"""

from __future__ import annotations

import json
import re

from ...core.checks import DimensionScore, GraderKind, GraderResult
from ...errors import SandboxError
from ...grading.graders import GradingInput, ask_judge, judge_message, unreadable_reply
from ...grading.judge import UnreadableReply, parse_verdict
from ...sandbox.nofollow import exists_inside, read_inside
from ..evals_json.checklist import CHECKLIST_INTRO, CHECKLIST_QUESTION, CHECKLIST_SYSTEM
from .specs import CaseGrader, PluginCaseGrader, ToolRef

KIND: GraderKind = "plugin-eval"
_FLAGS = {"i": re.I, "m": re.M, "s": re.S}
_ALIASES = {"bash": {"run_shell", "shell", "run_shell_command"}, "read": {"read_file"},
            "write": {"write_file"}, "edit": {"edit_file", "replace"}, "multiedit": {"edit_file"},
            "glob": {"list_dir", "glob"}, "ls": {"list_dir", "list_directory"}, "grep": {"grep", "search_file_content"}}
# The text of changed files a regex reads at most: a grader never loads a whole dataset.
FILES_MAX_CHARS = 2_000_000


# How long one regex grader may take: a search over FILES_MAX_CHARS takes milliseconds unless
# the pattern backtracks without end (``(a+)+$``), which no longer holds the run.
REGEX_TIMEOUT_S = 5.0
# Run in the sandbox with ``-I`` (no workspace module can shadow ``re``): the request comes on
# stdin as JSON, the count goes to stdout.
_MATCHER = (
    "import json, re, sys\n"
    "r = json.loads(sys.stdin.buffer.read().decode('utf-8'))\n"
    "p = re.compile(r['pattern'], r['flags'])\n"
    "print(sum(1 for _ in p.finditer(r['text'])) if r['count'] else int(p.search(r['text']) is not None))\n"
)


class _NoVerdict(Exception):
    """A grader that cannot be graded here (a target another agent does not have)."""


def grade_plugin_case(spec: PluginCaseGrader, grading: GradingInput) -> GraderResult:
    scored = [g for g in spec.graders if not g.indicator]
    label = f"claude plugin eval ({len(scored)} graders" + (
        f", {len(spec.graders) - len(scored)} with-only" if len(scored) < len(spec.graders) else "") + ")"
    dimensions: list[DimensionScore] = []
    total = sum(g.weight for g in scored)
    earned = 0.0
    for grader in spec.graders:
        try:
            passed, why = _grade(grader, grading)
        except _NoVerdict as exc:
            if grader.indicator:
                dimensions.append(DimensionScore(f"{grader.name} [with-only]", 0, 0.0, f"no verdict: {exc}"))
                continue
            return GraderResult(KIND, label, False, f"{grader.name}: {exc}", errored=True, dimensions=dimensions)
        except UnreadableReply as exc:
            return unreadable_reply(KIND, f"{label}: {grader.name}", exc, str(exc))
        except _Judged as outcome:
            return outcome.result
        if grader.indicator:
            dimensions.append(DimensionScore(f"{grader.name} [with-only, not scored]", 0, 0.0,
                                             f"{'✓' if passed else '✗'} {why}"))
            continue
        earned += grader.weight if passed else 0.0
        dimensions.append(DimensionScore(grader.name, int(grader.weight) if grader.weight.is_integer() else 1,
                                         grader.weight if passed else 0.0, f"{'✓' if passed else '✗'} {why}"))
    score = earned / total if total else 0.0
    passed = bool(total) and score >= spec.threshold
    missed = [d.name for d in dimensions if not d.score and "[with-only" not in d.name]
    reason = f"score {score:.2f} {'>=' if passed else '<'} {spec.threshold:g}"
    reason += f"; failed: {', '.join(missed)}" if missed else "; every scored grader passed"
    return GraderResult(KIND, label, passed, reason, score=round(score, 4), max_score=1.0, dimensions=dimensions,
                        threshold=spec.threshold)


class _Judged(Exception):
    """The judge could not be asked: its result stands for the whole case."""

    def __init__(self, result: GraderResult) -> None:
        super().__init__(result.reason)
        self.result = result


def _grade(grader: CaseGrader, grading: GradingInput) -> tuple[bool, str]:
    if grader.type == "regex":
        return _regex(grader, grading)
    if grader.type == "file_exists":
        try:
            present = exists_inside(grading.workspace.root, grader.path)
        except SandboxError as exc:
            raise _NoVerdict(str(exc)) from None
        return present == grader.exists, f"{grader.path} {'exists' if present else 'does not exist'}"
    if grader.type == "tool_used":
        assert grader.tool is not None
        count = _count(grader.tool, grading)
        top = "∞" if grader.maximum is None else str(grader.maximum)
        ok = count >= grader.minimum and (grader.maximum is None or count <= grader.maximum)
        return ok, f"{grader.tool.tool} called {count}x (expected {grader.minimum}..{top})"
    if grader.type == "tool_order":
        assert grader.before is not None and grader.after is not None
        first, second = _first(grader.before, grading), _first(grader.after, grading)
        if first < 0:
            return False, f'"before" tool {grader.before.tool} never called'
        if second < 0:
            return False, f'"after" tool {grader.after.tool} never called'
        ok = first < second
        return ok, f"{grader.before.tool}@{first} {'precedes' if ok else 'does NOT precede'} {grader.after.tool}@{second}"
    return _judge(grader, grading)


def _text(target: str, target_file: str | None, grading: GradingInput) -> str:
    if target_file is not None:
        try:
            data = read_inside(grading.workspace.root, target_file, FILES_MAX_CHARS)
        except SandboxError as exc:
            raise _NoVerdict(str(exc)) from None
        if data is None:
            raise _NoVerdict(f"file {target_file} was not written (a regular file in the workspace, no link)")
        return data.decode("utf-8", errors="replace")
    if target == "last_message":
        return grading.final_output
    if target == "trace":
        return grading.transcript
    if target == "files":
        return grading.work[:FILES_MAX_CHARS]
    raise _NoVerdict("mock_calls needs Claude Code's MCP mocks, which this agent does not have")


def _regex(grader: CaseGrader, grading: GradingInput) -> tuple[bool, str]:
    text = _text(grader.target, grader.target_file, grading)
    flags = 0
    for letter in grader.flags:
        flags |= _FLAGS.get(letter, 0)
    where = grader.target_file or grader.target
    counting = grader.match.startswith("count:")
    found = _matches_in_sandbox(grader.pattern, flags, text, counting, grading)
    if grader.match == "contains":
        return found > 0, f"matched {grader.pattern}" if found else f"pattern not found in {where}"
    if grader.match == "not_contains":
        return not found, "pattern found (expected absent)" if found else "pattern absent as expected"
    wanted = int(grader.match.split(":", 1)[1])
    return found == wanted, f"found {found} matches (expected {wanted})"


def _matches_in_sandbox(pattern: str, flags: int, text: str, counting: bool, grading: GradingInput) -> int:
    """How many times ``pattern`` matches ``text`` (with ``counting`` off: 1 or 0), worked out by
    a python3 under the arm's sandbox backend, as bounded as any command there: a pattern that
    backtracks forever is killed at ``REGEX_TIMEOUT_S``, and a stop request ends it."""
    request = json.dumps({"pattern": pattern, "flags": flags, "count": counting, "text": text})
    result = grading.workspace.run(["python3", "-I", "-c", _MATCHER], stdin=request, timeout_s=REGEX_TIMEOUT_S,
                                   output_limit=1024)
    if not result.completed or result.exit_code != 0 or not result.stdout.strip().isdigit():
        raise _NoVerdict(f"the pattern could not be matched: {result.describe()} "
                         f"(at most {REGEX_TIMEOUT_S:g}s per pattern){_tail(result.stderr)}")
    return int(result.stdout.strip())


def _tail(stderr: str) -> str:
    last = stderr.strip().splitlines()[-1:] if stderr.strip() else []
    return f": {last[0][:200]}" if last else ""


def _matches(ref: ToolRef, name: str, arguments: str) -> bool:
    wanted = ref.tool.lower()
    if name.lower() != wanted and name.lower() not in _ALIASES.get(wanted, ()):
        return False
    return ref.input_match is None or re.search(ref.input_match, arguments) is not None


def _count(ref: ToolRef, grading: GradingInput) -> int:
    count = sum(_matches(ref, name, arguments) for name, arguments in grading.tool_calls)
    if ref.tool == "Skill" and ref.input_match is None and not count and grading.skill_activated:
        return 1  # the agent opened the skill without a Skill tool (it read SKILL.md)
    return count


def _first(ref: ToolRef, grading: GradingInput) -> int:
    return next((i for i, (name, args) in enumerate(grading.tool_calls) if _matches(ref, name, args)), -1)


def _judge(grader: CaseGrader, grading: GradingInput) -> tuple[bool, str]:
    focus = grader.target_file or grader.target
    blocks = {"CHECK": grader.criteria, **({"REFERENCE": grader.reference} if grader.reference else {}),
              "PROMPT": grading.prompt, "TRANSCRIPT": grading.transcript,
              "FINAL_OUTPUT": grading.final_output if focus == "last_message" else _text(grader.target,
                                                                                        grader.target_file, grading),
              "WORK": grading.work}
    reply = ask_judge(grading.judge, CHECKLIST_SYSTEM, judge_message(CHECKLIST_INTRO, blocks, CHECKLIST_QUESTION))
    if isinstance(reply, GraderResult):
        raise _Judged(GraderResult(KIND, grader.name, False, reply.reason, errored=True))
    verdict = parse_verdict(reply)
    return verdict.passed, verdict.reason
