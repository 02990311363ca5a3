"""Tessl eval scenarios: one scenario directory imported as one A/B case.

    <tile>/evals/<scenario>/
        task.md          the prompt, verbatim
        criteria.json    {"context": ..., "type": "weighted_checklist",
                          "checklist": [{"name", "description", "max_score", "category"?}, ...]}
        scenario.json    Tessl's metadata about the scenario (optional; a threshold may sit here)
        *                every other file: the workspace both arms start from

It shares ``task.md`` + ``criteria.json`` with ruby-skill-bench; ``sniff.refine`` tells them apart
by the ``weighted_checklist`` type (ruby-skill-bench has ``dimensions``). Each checklist item is
judged on its own against the arm's output and the files it changed; the arm's score is the sum
of the ``max_score`` of the items met, and it passes at the threshold: ``pass_threshold`` (or
``threshold``) in criteria.json or scenario.json, as a percentage of the total, else 70%.

The skill is the tile's: the nearest directory above the scenario holding a SKILL.md, else the
skills of its ``skills/`` directory, else the skills its ``tile.json`` declares (several are given
to the with-skill arm together).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ...errors import SuiteIssue
from ...skill.loader import SKILL_FILE
from ...suite.json_source import parse_located_json
from ...suite.loading import IssueList, collect_files, read_prompt_file, seed_files
from ...suite.model import Case, Suite
from ...yaml_source import read_suite_text
from ..evals_json.specs import ChecklistGrader, ChecklistItem

FORMAT_NAME = "tessl"
TASK_FILE, CRITERIA_FILE, SCENARIO_FILE = "task.md", "criteria.json", "scenario.json"
TILE_FILE = "tile.json"
TOP_KEYS = ("context", "type", "checklist", "pass_threshold", "threshold", "metadata")
ITEM_KEYS = ("name", "description", "max_score", "category", "source")
DEFAULT_THRESHOLD_PCT = 70.0
# capability.txt (.text in older tiles) names the skill instruction a scenario tests: Tessl's
# metadata about the scenario, not a file the agent starts from.
EVAL_FILES = frozenset({TASK_FILE, CRITERIA_FILE, SCENARIO_FILE, "mock-responses.yaml", "capability.txt",
                        "capability.text"})


def load_tessl(path: Path) -> Suite:
    """Load the scenario directory that holds ``path`` (its criteria.json)."""
    scenario = path.parent
    doc = parse_located_json(read_suite_text(path), path)
    issues = IssueList(path, doc)
    warnings: list[str] = []
    value = doc.value
    if not isinstance(value, dict):
        issues.add("must be a JSON object {context, type: weighted_checklist, checklist}")
        issues.raise_if_any()
    for key in value:
        if key not in TOP_KEYS:
            warnings.append(f"{path}:{doc.line_at((key,))}: the criteria have the key {key!r}, which skillab "
                            "does not use — ignored")
    if value.get("type", "weighted_checklist") != "weighted_checklist":
        issues.add(f"type {value.get('type')!r} is not one skillab reads — Tessl scenarios use "
                   "'weighted_checklist'", ("type",), field="type")
    context = value.get("context", "")
    if not isinstance(context, str):
        issues.add("must be a string", ("context",), field="context")
        context = ""
    items = _items(value.get("checklist"), issues)
    threshold_pct = _threshold(value, scenario / SCENARIO_FILE, issues)
    prompt = read_prompt_file(scenario / TASK_FILE, issues, missing=f"a Tessl scenario needs a {TASK_FILE}")
    files, links = collect_files(scenario, root=scenario, skip=EVAL_FILES)
    for link in links:
        issues.issues.append(SuiteIssue(scenario / link, "is a symbolic link — scenario files must be regular files"))
    skill_dir = _skill_dir(scenario, issues)
    issues.raise_if_any()
    total = sum(item.weight for item in items)
    grader = ChecklistGrader(items=items, pass_threshold=round(total * threshold_pct / 100, 6), context=context)
    case = Case(
        name=scenario.name,
        prompt=prompt,
        description=context or None,
        graders=(grader,),
        seed=seed_files([(scenario / rel, rel) for rel in files], root=scenario) if files else None,
        line=1,
    )
    return Suite(path=path, format=FORMAT_NAME, cases=(case,), skill_dir=skill_dir, warnings=tuple(warnings))


def _items(raw: Any, issues: IssueList) -> tuple[ChecklistItem, ...]:
    if not isinstance(raw, list) or not raw:
        issues.add("must be a non-empty list of {name, description, max_score}", ("checklist",), field="checklist")
        return ()
    items, seen = [], set()
    for index, item in enumerate(raw):
        at, field = ("checklist", index), f"checklist[{index}]"
        if not isinstance(item, dict):
            issues.add("must be an object {name, description, max_score}", at, field=field)
            continue
        issues.check_keys(item, ITEM_KEYS, at, what=f"checklist item #{index}")
        name, description, score = item.get("name"), item.get("description"), item.get("max_score")
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            issues.add("must be a non-empty string of at most 200 characters", (*at, "name"), field=f"{field}.name")
            continue
        if name in seen:
            issues.add(f"duplicate checklist item {name!r}", (*at, "name"), field=f"{field}.name")
        seen.add(name)
        if not isinstance(description, str) or not description.strip():
            issues.add("must be a non-empty string: what the judge checks", (*at, "description"),
                       field=f"{field}.description")
            continue
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) or score <= 0:
            issues.add(f"must be a positive number, got {json.dumps(score)}", (*at, "max_score"),
                       field=f"{field}.max_score")
            continue
        items.append(ChecklistItem(name.strip(), description.strip(), float(score)))
    return tuple(items)


def _threshold(value: dict, scenario_file: Path, issues: IssueList) -> float:
    sources: list[tuple[dict, Path]] = [(value, issues.path)]
    if scenario_file.is_file():
        meta = parse_located_json(read_suite_text(scenario_file), scenario_file).value
        if isinstance(meta, dict):
            sources.append((meta, scenario_file))
    for source, where in sources:
        for key in ("pass_threshold", "threshold"):
            if key in source:
                raw = source[key]
                if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw <= 100:
                    issues.issues.append(SuiteIssue(where, f"must be a percentage from 0 to 100, got {raw!r}",
                                                    field=key))
                    return DEFAULT_THRESHOLD_PCT
                # A fraction (0.8) and a percentage (80) both occur; up to 1 reads as a fraction.
                return float(raw) * 100 if raw <= 1 else float(raw)
    return DEFAULT_THRESHOLD_PCT


def _skill_dir(scenario: Path, issues: IssueList) -> Path | None:
    for base in scenario.parents:
        if (base / SKILL_FILE).is_file():
            return base
        skills = base / "skills"
        if skills.is_dir():
            found = sorted(d for d in skills.iterdir() if (d / SKILL_FILE).is_file())
            if len(found) == 1:
                return found[0]
            if found:
                return skills  # the tile's skills, given together (skill.loader.load_skill_set)
        if (base / TILE_FILE).is_file():
            return _tile_skills(base, scenario, issues)
    issues.issues.append(SuiteIssue(scenario, "cannot tell which skill this scenario evaluates — keep it in "
                                    "<tile>/evals/<scenario>/ below the tile's SKILL.md"))
    return None


def _tile_skills(tile: Path, scenario: Path, issues: IssueList) -> Path | None:
    """The skills a tile's ``tile.json`` declares (``"skills": {name: {"path": ".../SKILL.md"}}``),
    all given to the with-skill arm as Tessl installs the whole tile."""
    manifest = tile / TILE_FILE
    doc = parse_located_json(read_suite_text(manifest), manifest)
    value = doc.value
    declared = value.get("skills") if isinstance(value, dict) else None
    if not isinstance(declared, dict) or not declared:
        ships = [k for k in ("docs", "steering", "rules") if isinstance(value, dict) and k in value]
        shipped = f" (it ships {' and '.join(ships)} only)" if ships else ""
        issues.issues.append(SuiteIssue(scenario, f"the tile's {manifest} declares no skills{shipped} — skillab "
                                        "evaluates a skill, so this scenario has nothing to give the with-skill arm"))
        return None
    folders: list[Path] = []
    for name, entry in declared.items():
        rel = entry.get("path") if isinstance(entry, dict) else None
        target = tile / rel if isinstance(rel, str) and not Path(rel).is_absolute() and ".." not in Path(rel).parts \
            else None
        if target is None or target.name != SKILL_FILE or not target.is_file():
            issues.issues.append(SuiteIssue(manifest, f"skill {name!r}: 'path' must name a {SKILL_FILE} inside "
                                            f"the tile, got {rel!r}", line=doc.line_at(("skills", name)),
                                            field=f"skills.{name}.path"))
            return None
        folders.append(target.parent)
    if len(folders) == 1:
        return folders[0]
    parents = {folder.parent for folder in folders}
    if len(parents) > 1:
        issues.issues.append(SuiteIssue(manifest, "the tile's skills sit in several folders "
                                        f"({', '.join(sorted(str(p.relative_to(tile)) for p in parents))}); "
                                        "skillab gives several skills together from one folder",
                                        line=doc.line_at(("skills",)), field="skills"))
        return None
    return parents.pop()  # the tile's skills, given together (skill.loader.load_skill_set)
