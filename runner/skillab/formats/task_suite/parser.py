"""``task_suite.yaml``: the improvement-evaluator task suite, imported into the suite model.

    skill_id: my-skill               the skill the suite evaluates (non-empty)
    version: "1.0"                   the only version there is (a string)
    tasks:                           one A/B case each
      - id: summarize-scores         unique
        description: ...             optional
        prompt: ...                  non-empty
        timeout_seconds: 300         optional, default 300: the agent's time budget per arm
        judge:
          type: contains             every keyword of `expected`, case-insensitive
          expected: [POWERFUL]
        # or   type: pytest,     test_file: fixtures/test_x.py   (under the suite's fixtures/)
        # or   type: llm-rubric, rubric: ..., pass_threshold: 0.7 (score in [0, 1])

Every key is checked; unknown keys, duplicate ids and a ``test_file`` outside ``fixtures/`` are
errors that name the file, the line and the field. The skill lies beside the suite (a SKILL.md in
the same directory) or is named by ``skill_id``: the nearest ``skills/<skill_id>/`` or
``<skill_id>/`` directory with a SKILL.md, looking up from the suite.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from ...skill.loader import SKILL_FILE
from ...suite.loading import (
    IssueList,
    collect_files,
    find_skill,
    seed_files,
)
from ...suite.model import Case, GraderSpec, RubricGrader, Suite, setup_path_problem
from ...suite.paths import path_problem
from ...yaml_source import SUITE_MAX_BYTES, parse_yaml, read_suite_text
from .specs import ContainsGrader, PytestGrader

FORMAT_NAME = "task_suite.yaml"
MAX_SKILL_ID = 128
_SKILL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
VERSION = "1.0"
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_RUBRIC_THRESHOLD = 0.7
FIXTURES = "fixtures"
TOP_KEYS = ("skill_id", "version", "tasks")
TASK_KEYS = ("id", "description", "prompt", "timeout_seconds", "judge")
JUDGE_KEYS: dict[str, tuple[str, ...]] = {
    "contains": ("type", "expected"),
    "pytest": ("type", "test_file"),
    "llm-rubric": ("type", "rubric", "pass_threshold"),
}


def load_task_suite(path: Path) -> Suite:
    """Read and parse a ``task_suite.yaml`` (the registry's loader for this format)."""
    return parse_task_suite(read_suite_text(path), path)


def parse_task_suite(text: str, path: Path) -> Suite:
    if len(text) > SUITE_MAX_BYTES:
        issues = IssueList(path)
        issues.add(f"is larger than {SUITE_MAX_BYTES} bytes")
        issues.raise_if_any()
    doc = parse_yaml(text, path)
    issues = IssueList(path, doc)
    for dup in doc.duplicates:
        issues.add(
            f"duplicate key {dup.key!r} (first on line {dup.first_line}) — YAML keeps only one of "
            "them; remove or rename the other",
            (*dup.path, dup.key),
            line=dup.line,
        )
    value = doc.value
    if not isinstance(value, dict):
        issues.add("must be a mapping with skill_id, version and tasks")
        issues.raise_if_any()
    # The format's own reader ignores top-level keys it does not use (a suite's description):
    # accepted, with a warning so a misspelt key does not go unseen.
    warnings = [
        f"{path}:{doc.line_at((key,))}: the top level has the key {key!r}, which task_suite.yaml does not "
        f"define (known: {', '.join(TOP_KEYS)}) — ignored"
        for key in value if key not in TOP_KEYS
    ]
    skill_id = _skill_id(value, issues)
    if "version" not in value:
        issues.add(f"is missing — it must be \"{VERSION}\"", field="version")
    elif value["version"] != VERSION:
        got = value["version"]
        hint = " — quote it, YAML reads 1.0 as a number" if got == 1.0 else ""
        issues.add(f"must be the string \"{VERSION}\", got {got!r}{hint}", ("version",), field="version")
    cases = _tasks(value, path.parent, issues)
    skill_dir = _skill_dir(path, skill_id, issues)
    issues.raise_if_any()
    # Beside SKILL.md, fixtures/ is never a bundled skill file (skill.loader.SUITE_DIRS): the
    # pytest judge's tests reach the grader through the case, and no agent or staged skill copy.
    return Suite(path=path, format=FORMAT_NAME, cases=tuple(cases), skill_dir=skill_dir, warnings=tuple(warnings))


def _skill_id(value: dict[str, Any], issues: IssueList) -> str | None:
    skill_id = value.get("skill_id")
    if "skill_id" not in value:
        issues.add("is missing — name the skill this suite evaluates", field="skill_id")
    elif not isinstance(skill_id, str) or not skill_id.strip():
        got = f", got {type(skill_id).__name__} {str(skill_id)[:40]!r} — quote it" if skill_id is not None else ""
        issues.add(f"must be a non-empty string{got}", ("skill_id",), field="skill_id")
    elif len(skill_id) > MAX_SKILL_ID or not _SKILL_ID.match(skill_id.strip()):
        issues.add(f"must be a skill directory name (letters, digits, '.', '_', '-'; at most {MAX_SKILL_ID} "
                   f"characters), got {skill_id[:40]!r}{'...' if len(skill_id) > 40 else ''} ({len(skill_id)} "
                   "characters)", ("skill_id",), field="skill_id")
    else:
        return skill_id.strip()
    return None


def _skill_dir(path: Path, skill_id: str | None, issues: IssueList) -> Path | None:
    if (path.parent / SKILL_FILE).is_file():
        return path.parent
    if skill_id is None:
        return None
    found = find_skill(path.parent, [skill_id])
    if found is None:
        issues.add(
            f"cannot find the skill {skill_id!r}: put the suite beside its {SKILL_FILE}, or keep the "
            f"skill in a skills/{skill_id}/ or {skill_id}/ directory here or above",
            ("skill_id",),
            field="skill_id",
        )
    return found


def _tasks(value: dict[str, Any], suite_dir: Path, issues: IssueList) -> list[Case]:
    tasks = value.get("tasks")
    if "tasks" not in value:
        issues.add("is missing — list the tasks", field="tasks")
        return []
    if not isinstance(tasks, list) or not tasks:
        issues.add("must be a non-empty list of tasks", ("tasks",), field="tasks")
        return []
    cases = []
    first_line: dict[str, int | None] = {}
    for index, raw in enumerate(tasks):
        at = ("tasks", index)
        case = _task(raw, at, suite_dir, issues, first_line)
        if case is not None:
            cases.append(case)
    return cases


def _task(
    raw: Any, at: tuple, suite_dir: Path, issues: IssueList, first_line: dict[str, int | None]
) -> Case | None:
    if not isinstance(raw, dict):
        issues.add("each task must be a mapping (id, prompt, judge, ...)", at, field=f"tasks[{at[1]}]")
        return None
    task_id = raw.get("id")
    label = task_id.strip() if isinstance(task_id, str) and task_id.strip() else f"#{at[1]}"
    before = len(issues.issues)
    issues.check_keys(raw, TASK_KEYS, at, what=f"task {label}", case=label)
    if not isinstance(task_id, str) or not task_id.strip():
        issues.add("must be a non-empty string, unique in the suite", (*at, "id"), field="id", case=label)
    elif label in first_line:
        issues.add(
            f"duplicate task id '{label}' — ids must be unique (first used on line {first_line[label]})",
            (*at, "id"),
            field="id",
            case=label,
        )
    else:
        first_line[label] = issues.doc.line_at((*at, "id")) if issues.doc else None
    prompt = raw.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        issues.add("must be a non-empty string", (*at, "prompt"), field="prompt", case=label)
    description = raw.get("description")
    if description is not None and not isinstance(description, str):
        issues.add("must be a string", (*at, "description"), field="description", case=label)
    timeout = raw.get("timeout_seconds", DEFAULT_TIMEOUT_S)
    if not _positive_number(timeout):
        issues.add(
            f"must be a positive number of seconds, got {timeout!r}",
            (*at, "timeout_seconds"),
            field="timeout_seconds",
            case=label,
        )
    grader = _judge(raw.get("judge"), "judge" in raw, at, label, suite_dir, issues)
    if len(issues.issues) > before or grader is None or not isinstance(prompt, str):
        return None
    return Case(
        name=label,
        prompt=prompt,
        description=description,
        timeout_s=float(timeout),
        graders=(grader,),
        line=issues.doc.line_at(at) if issues.doc else None,
    )


def _judge(
    judge: Any, present: bool, at: tuple, label: str, suite_dir: Path, issues: IssueList
) -> GraderSpec | None:
    where = (*at, "judge")
    if not present:
        issues.add("is missing — every task needs one (type: contains, pytest or llm-rubric)", at, field="judge", case=label)
        return None
    if not isinstance(judge, dict):
        issues.add("must be a mapping with a 'type'", where, field="judge", case=label)
        return None
    kind = judge.get("type")
    if kind not in JUDGE_KEYS:
        issues.add(
            f"must be one of {', '.join(JUDGE_KEYS)}, got {kind!r}",
            (*where, "type") if "type" in judge else where,
            field="judge.type",
            case=label,
        )
        return None
    issues.check_keys(judge, JUDGE_KEYS[kind], where, what=f"the {kind} judge", case=label)
    if kind == "contains":
        return _contains(judge, where, label, issues)
    if kind == "pytest":
        return _pytest(judge, where, label, suite_dir, issues)
    return _rubric(judge, where, label, issues)


def _contains(judge: dict[str, Any], where: tuple, label: str, issues: IssueList) -> ContainsGrader | None:
    expected = judge.get("expected")
    if not isinstance(expected, list) or not expected:
        issues.add("must be a non-empty list of keywords", (*where, "expected"),
                   field="judge.expected", case=label)
        return None
    bad = [i for i, k in enumerate(expected) if not isinstance(k, str) or not k.strip()]
    for i in bad:
        issues.add("must be a non-empty string", (*where, "expected", i),
                   field=f"judge.expected[{i}]", case=label)
    return None if bad else ContainsGrader(tuple(expected))


def _pytest(
    judge: dict[str, Any], where: tuple, label: str, suite_dir: Path, issues: IssueList
) -> PytestGrader | None:
    test_file = judge.get("test_file")
    at = (*where, "test_file")
    if not isinstance(test_file, str) or not test_file.strip():
        issues.add(f"must name a test file under {FIXTURES}/", at,
                   field="judge.test_file", case=label)
        return None
    problem = setup_path_problem(test_file)
    if problem is None and not test_file.startswith(f"{FIXTURES}/"):
        problem = f"is not under {FIXTURES}/"
    if problem:
        problem += f" — test files must lie in the suite's {FIXTURES}/ directory"
    else:
        problem = path_problem(suite_dir, test_file, want="file")
    if problem:
        issues.add(f"{test_file!r} {problem}", at, field="judge.test_file", case=label)
        return None
    files, links = collect_files(suite_dir / FIXTURES, root=suite_dir)
    for link in links:
        issues.add(f"{FIXTURES}/{link} is a symbolic link — fixtures must be regular files", at,
                   field="judge.test_file", case=label)
    pairs = [(suite_dir / FIXTURES / rel, f"{FIXTURES}/{rel}") for rel in files]
    return PytestGrader(fixtures=seed_files(pairs, root=suite_dir), test_file=test_file)


def _rubric(judge: dict[str, Any], where: tuple, label: str, issues: IssueList) -> RubricGrader | None:
    rubric = judge.get("rubric")
    threshold = judge.get("pass_threshold", DEFAULT_RUBRIC_THRESHOLD)
    ok = True
    if not isinstance(rubric, str) or not rubric.strip():
        issues.add("must be a non-empty string", (*where, "rubric"), field="judge.rubric", case=label)
        ok = False
    if not _number(threshold) or not 0.0 <= threshold <= 1.0:
        issues.add(f"must be a number from 0 to 1, got {threshold!r}",
                   (*where, "pass_threshold"), field="judge.pass_threshold", case=label)
        ok = False
    return RubricGrader(rubric, float(threshold)) if ok and isinstance(rubric, str) else None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _positive_number(value: Any) -> bool:
    return _number(value) and value > 0
