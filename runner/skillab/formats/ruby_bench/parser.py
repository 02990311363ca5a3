"""ruby-skill-bench evals: an eval directory imported as one A/B case.

    evals/skills/<skill>/<eval>/
        task.md          the prompt, verbatim
        criteria.json    how the work is scored (below)
        *                every other file: the workspace both arms start from

``criteria.json``::

    {"context": "what the eval checks",
     "dimensions": [{"name": "correctness", "max_score": 30, "description": "optional"}, ...],
     "pass_threshold": 70,    (default 70)
     "minimum_delta": 10}     (default 10)

The dimensions must include correctness, skill_adherence, code_quality, test_coverage and
documentation, may add custom ones, and their max scores must sum to exactly 100.

How it maps onto the A/B model: a dimension judge scores each arm blind, per dimension, with
reasons; an arm passes when its total reaches ``pass_threshold``, which gives the usual outcome
(flip_to_pass, ...). ruby-skill-bench's own verdict — the with-skill total reaches
``pass_threshold`` and beats the without-skill total by at least ``minimum_delta`` — is
reported beside it as the criteria verdict.

The skill is found as ruby-skill-bench lays repositories out: the nearest ``skills/<name>/``
whose name is the ``target_name`` of the eval's ``metadata.json``, or the eval directory's or
one of its parents' (``evals/skills/<skill>/<eval>`` →
``skills/<skill>``), else the only skill in the nearest ``skills/`` directory.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from ...errors import SuiteError, SuiteIssue
from ...skill.loader import SKILL_FILE
from ...suite.json_source import parse_located_json
from ...suite.loading import (
    IssueList,
    collect_files,
    find_skill,
    read_prompt_file,
    seed_files,
)
from ...suite.model import Case, Suite
from ...yaml_source import YamlDocument, YamlPath, read_suite_text
from .specs import Dimension, DimensionGrader

FORMAT_NAME = "ruby-skill-bench"
CRITERIA_FILE = "criteria.json"
TASK_FILE = "task.md"
REQUIRED_DIMENSIONS = ("correctness", "skill_adherence", "code_quality", "test_coverage", "documentation")
TOTAL = 100
DEFAULT_PASS_THRESHOLD = 70.0
DEFAULT_MINIMUM_DELTA = 10.0
TOP_KEYS = ("context", "dimensions", "pass_threshold", "minimum_delta")
DIMENSION_KEYS = ("name", "max_score", "description")
# Not the workspace: the eval's definition, and skillab's mock script.
METADATA_FILE = "metadata.json"
EVAL_FILES = frozenset({CRITERIA_FILE, TASK_FILE, METADATA_FILE, "mock-responses.yaml"})
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def load_ruby_bench(path: Path) -> Suite:
    """Load the eval directory that holds ``path`` (its ``criteria.json``)."""
    issues = IssueList(path)
    eval_dir = path.parent
    doc = parse_located_json(read_suite_text(path), path)
    issues.doc = doc
    grader = _criteria(doc, issues)
    prompt = _task(eval_dir, issues)
    seed = _workspace(eval_dir, issues)
    skill_dir = _skill_dir(eval_dir, issues)
    issues.raise_if_any()
    case = Case(
        name=eval_dir.name,
        prompt=prompt,
        description=grader.context or None,
        graders=(grader,),
        seed=seed,
        line=1,
    )
    return Suite(path=path, format=FORMAT_NAME, cases=(case,), skill_dir=skill_dir)


# --- criteria.json ---------------------------------------------------------------------------


def _criteria(doc: YamlDocument, issues: IssueList) -> DimensionGrader:
    value = doc.value
    for dup in doc.duplicates:
        issues.add(f"duplicate key {dup.key!r} (first on line {dup.first_line}) — JSON readers keep "
                   "only one of them", line=dup.line, field=str(dup.key))
    if not isinstance(value, dict):
        issues.add("must be a JSON object with context, dimensions, pass_threshold and minimum_delta")
        return DimensionGrader("", ())
    issues.check_keys(value, TOP_KEYS, (), what="the criteria")
    context = value.get("context", "")
    if not isinstance(context, str):
        issues.add("must be a string", ("context",), field="context")
        context = ""
    threshold = _bounded(value, "pass_threshold", DEFAULT_PASS_THRESHOLD, issues, low=0.0)
    delta = _bounded(value, "minimum_delta", DEFAULT_MINIMUM_DELTA, issues, low=-TOTAL)
    dimensions = _dimensions(value, issues)
    return DimensionGrader(context, dimensions, threshold, delta)


def _bounded(value: dict[str, Any], key: str, default: float, issues: IssueList, *, low: float) -> float:
    raw = value.get(key, default)
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or not low <= raw <= TOTAL:
        issues.add(f"must be a number from {low:g} to {TOTAL}, got {json.dumps(raw)}", (key,), field=key)
        return default
    return float(raw)


def _dimensions(value: dict[str, Any], issues: IssueList) -> tuple[Dimension, ...]:
    raw = value.get("dimensions")
    if "dimensions" not in value:
        issues.add(f"is missing — list the scoring dimensions ({', '.join(REQUIRED_DIMENSIONS)}, ...)",
                   field="dimensions")
        return ()
    if not isinstance(raw, list) or not raw:
        issues.add("must be a non-empty list of {name, max_score, description?}", ("dimensions",), field="dimensions")
        return ()
    dimensions: list[Dimension] = []
    seen: dict[str, int | None] = {}
    for index, item in enumerate(raw):
        dimension = _dimension(item, ("dimensions", index), issues, seen)
        if dimension is not None:
            dimensions.append(dimension)
    if len(dimensions) == len(raw):
        missing = [name for name in REQUIRED_DIMENSIONS if name not in seen]
        if missing:
            issues.add(f"must include {', '.join(missing)} (required: {', '.join(REQUIRED_DIMENSIONS)}; "
                       "custom dimensions may be added)", ("dimensions",), field="dimensions")
        total = sum(d.max_score for d in dimensions)
        if total != TOTAL:
            issues.add(f"max_score values sum to {total}; they must sum to exactly {TOTAL}",
                       ("dimensions",), field="dimensions")
    return tuple(dimensions)


def _dimension(item: Any, at: YamlPath, issues: IssueList, seen: dict[str, int | None]) -> Dimension | None:
    field = f"dimensions[{at[1]}]"
    if not isinstance(item, dict):
        issues.add("must be an object {name, max_score, description?}", at, field=field)
        return None
    before = len(issues.issues)
    issues.check_keys(item, DIMENSION_KEYS, at, what=f"dimension #{at[1]}")
    name, max_score, description = item.get("name"), item.get("max_score"), item.get("description")
    if not isinstance(name, str) or not _NAME.match(name):
        issues.add(f"must be a lower_snake_case name, got {json.dumps(name)}", (*at, "name"), field=f"{field}.name")
    elif name in seen:
        issues.add(f"duplicate dimension {name!r} (first on line {seen[name]})", (*at, "name"), field=f"{field}.name")
    else:
        seen[name] = issues.doc.line_at((*at, "name")) if issues.doc else None
    if isinstance(max_score, bool) or not isinstance(max_score, int) or not 0 < max_score <= TOTAL:
        issues.add(f"must be a whole number from 1 to {TOTAL}, got {json.dumps(max_score)}",
                   (*at, "max_score"), field=f"{field}.max_score")
    if description is not None and not isinstance(description, str):
        issues.add("must be a string", (*at, "description"), field=f"{field}.description")
    if len(issues.issues) > before or not isinstance(name, str) or not isinstance(max_score, int):
        return None
    return Dimension(name, max_score, description or None)


# --- the eval directory ----------------------------------------------------------------------


def _task(eval_dir: Path, issues: IssueList) -> str:
    # Verbatim: the prompt is the file as written.
    return read_prompt_file(eval_dir / TASK_FILE, issues,
                            missing=f"a ruby-skill-bench eval needs a {TASK_FILE} holding the prompt")


def _workspace(eval_dir: Path, issues: IssueList):
    files, links = collect_files(eval_dir, root=eval_dir, skip=EVAL_FILES)
    for link in links:
        issues.issues.append(SuiteIssue(eval_dir / link, "is a symbolic link — workspace files must be "
                                        "regular files inside the eval directory"))
    return seed_files([(eval_dir / rel, rel) for rel in files], root=eval_dir)


def _skill_dir(eval_dir: Path, issues: IssueList) -> Path | None:
    if (eval_dir / SKILL_FILE).is_file():
        issues.issues.append(SuiteIssue(eval_dir / SKILL_FILE, "lies in the eval directory, whose files are "
                                        "the agent's workspace — keep the skill in skills/<name>/"))
        return None
    target = _target_name(eval_dir)
    names = [*([target] if target else []), eval_dir.name, *(parent.name for parent in eval_dir.parents)]
    found = find_skill(eval_dir.parent, names) or _only_skill(eval_dir)
    if found is None:
        issues.issues.append(SuiteIssue(eval_dir, "cannot tell which skill this eval evaluates — keep it in "
                                        "skills/<name>/ where <name> is the eval directory's name or one of "
                                        "its parents' (evals/skills/<name>/<eval>), or keep one skill in a "
                                        "skills/ directory above the eval"))
    return found


def _target_name(eval_dir: Path) -> str | None:
    """The skill an eval names in its ``metadata.json`` (``target_name``), if it names one."""
    path = eval_dir / METADATA_FILE
    if not path.is_file():
        return None
    try:
        value = parse_located_json(read_suite_text(path), path).value
    except SuiteError:
        return None
    target = value.get("target_name") if isinstance(value, dict) else None
    return target.strip() if isinstance(target, str) and target.strip() else None


def _only_skill(eval_dir: Path) -> Path | None:
    """The skill in the nearest ``skills/`` directory above the eval, when it holds just one."""
    for base in eval_dir.parents:
        skills = base / "skills"
        if skills.is_dir():
            found = [d for d in sorted(skills.iterdir()) if (d / SKILL_FILE).is_file()]
            return found[0] if len(found) == 1 else None
    return None
