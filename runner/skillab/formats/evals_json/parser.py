"""The Agent Skills evaluation format: ``evals/evals.json`` beside SKILL.md.

Anthropic's skill-creator writes it (its ``references/schemas.md``) and agentskills.io documents
it::

    {"skill_name": "pdf",
     "evals": [{"id": 1,
                "prompt": "the task",
                "expected_output": "what success looks like, in words",
                "files": ["evals/files/sample.pdf"],       relative to the skill's root
                "expectations": ["The output includes X"],
                "assertions": ["a statement", {"text": "a statement"},
                               {"name": "n", "type": "contains", "value": "X"}]}]}

How it maps onto the A/B model:

- each eval is one case, named ``eval-<id>`` (or its ``name``);
- ``files`` are copied into both arms' workspaces at the same relative path, so a prompt that
  names ``evals/files/sample.pdf`` finds it; nothing else under ``evals/`` reaches any arm;
- ``expectations`` and statement assertions (a string, or an object with ``text``) are judged
  one by one with ``expected_output`` shown to the judge as the reference; the case passes when
  every one holds (skill-creator's grader marks each expectation pass/fail the same way). An
  eval with nothing else to grade by is judged on its ``expected_output`` itself;
- deterministic assertions become validators on the final output (``response.txt``) or the
  workspace: ``contains``, ``not_contains``, ``regex``, ``not_regex``, ``equals``,
  ``file_exists``, ``file_not_exists``, ``file_contains``, ``command``.

Keys the format's writers add beside the documented ones (``passed``/``evidence`` left in an
assertion by a grading pass, a ``description``) are accepted, and the grader keys of public
dialects are read (``dialects.py``); other unknown keys are a warning, except on an eval with no
grader skillab reads, which is refused. Trigger sets beside it (``trigger-evals.json``) are not
read here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ...errors import SuiteError
from ...skill.loader import SKILL_FILE, SUITE_FILES, is_skill_file
from ...suite.json_source import parse_located_json
from ...suite.loading import IssueList, collect_files, seed_files
from ...suite.model import Case, SeedFiles, Setup, Suite, ValidatorSpec
from ...suite.paths import RULE, path_problem
from ...yaml_source import YamlPath, read_suite_text
from .assertions import assertion, entry_field, relative_path
from .dialects import (
    GRADER_KEYS,
    WORKSPACE_KEYS,
    dialect_graders,
    fixture_setup,
    looked_for,
    refusal,
    search_skill,
    skill_places,
    unknown_grader_keys,
    workspace_folder,
)
from .specs import ChecklistGrader, ChecklistItem

FORMAT_NAME = "evals.json"
# ``skill`` and ``test_cases``: the same two keys as some public suites name them.
TOP_KEYS = ("skill_name", "skill", "evals", "test_cases", "description", "invocation", "notes")
# Keys tolerated without a word: documented, written by skill-creator's own tooling, or a grader
# or workspace key of a dialect (``dialects.py``).
EVAL_KEYS = ("id", "name", "prompt", "expected_output", "files", "expectations", "assertions",
             "description", "eval_name", "tags", "should_trigger", *GRADER_KEYS, *WORKSPACE_KEYS)
# Keys that say something about an eval without grading it: never taken for its graders.
_NOT_GRADERS = ("difficulty", "category", "title", "notes", "note", "version", "type", "mode", "priority")
MAX_NAME_CHARS = 128


def load_evals_json(path: Path) -> Suite:
    """Load ``evals/evals.json``; the skill is the directory that holds ``evals/``."""
    doc = parse_located_json(read_suite_text(path), path)
    issues = IssueList(path, doc)
    warnings: list[str] = []
    skill_root = path.parent.parent if path.parent.name == "evals" else path.parent
    for dup in doc.duplicates:
        issues.add(f"duplicate key {dup.key!r} (first on line {dup.first_line}) — JSON readers keep only "
                   "one of them", line=dup.line, field=str(dup.key))
    value = doc.value
    if isinstance(value, list):
        issues.add("is a JSON array — the Agent Skills format is an object {\"skill_name\": ..., \"evals\": "
                   "[...]}; a list of {query, should_trigger} is a trigger set (name it trigger-evals.json)")
        issues.raise_if_any()
    if not isinstance(value, dict):
        issues.add("must be a JSON object {\"skill_name\": ..., \"evals\": [...]}")
        issues.raise_if_any()
    _unknown_keys(value, TOP_KEYS, (), "the file", issues, warnings)
    name_key = "skill_name" if "skill_name" in value else "skill"
    name = value.get(name_key)
    if name is not None and (not isinstance(name, str) or len(name) > MAX_NAME_CHARS):
        issues.add(f"must be a string of at most {MAX_NAME_CHARS} characters", (name_key,), field=name_key)
        name = None
    skill_dir = _skill_dir(skill_root, name)
    if skill_dir is None:
        issues.add(looked_for(skill_root, name, skill_places(skill_root, name)), (name_key,), field=name_key)
        issues.raise_if_any()
    assert skill_dir is not None  # raised above
    cases_key = "evals" if "evals" in value or "test_cases" not in value else "test_cases"
    raw = value.get(cases_key)
    if not isinstance(raw, list) or not raw:
        issues.add("must be a non-empty list of evals {id, prompt, expected_output, files, expectations}",
                   (cases_key,), field=cases_key)
        issues.raise_if_any()
    cases: list[Case] = []
    seen: dict[str, int | None] = {}
    for index, item in enumerate(raw):
        case = _case(item, (cases_key, index), skill_root, skill_dir, issues, warnings, seen)
        if case is not None:
            cases.append(case)
    issues.raise_if_any()
    return Suite(path=path, format=FORMAT_NAME, cases=tuple(cases), skill_dir=skill_dir,
                 warnings=tuple(_merge_repeats(warnings)))


def _unknown_keys(value: dict, allowed: tuple[str, ...], at: YamlPath, what: str, issues: IssueList,
                  warnings: list[str]) -> None:
    for key in value:
        if key not in allowed:
            line = issues.doc.line_at((*at, key)) if issues.doc else None
            warnings.append(f"{issues.path}:{line}: {what} has the key {key!r}, which skillab does not use "
                            f"(known: {', '.join(allowed)}) — ignored")


def _merge_repeats(warnings: list[str]) -> list[str]:
    """One warning per unknown eval key, and per skill file kept from the baseline, however many
    evals carry it."""
    merged: dict[str, list[str]] = {}
    for warning in warnings:
        match = re.search(r"eval #\d+ has the key ('[^']*')|eval \S+ (lists .+ in 'files' — .*|has a structured .*)",
                      warning)
        merged.setdefault(match.group(1) or match.group(2) if match else warning, []).append(warning)
    return [_counted(group) for group in merged.values()]


def _counted(group: list[str]) -> str:
    """The first of the same warning for several evals, saying how many evals it is."""
    if len(group) == 1:
        return group[0]
    return re.sub(r"eval (#\d+ has|\S+ lists|\S+ has)",
                  lambda m: f"{len(group)} evals " + ("have" if m.group(1).endswith("has") else "list"),
                  group[0], count=1)


def _skill_dir(root: Path, name: Any) -> Path | None:
    """The skill beside ``evals/``; else, in a repository that keeps ``evals/`` at its root and
    the skill in a folder, the one ``skill_name`` names (``dialects.skill_places``, then a
    bounded search by folder and frontmatter name). None: named, and found nowhere."""
    if (root / SKILL_FILE).is_file() or not isinstance(name, str) or not relative_path(name) \
            or len(Path(name).parts) != 1:
        return root
    for candidate in skill_places(root, name)[1:]:
        if (candidate / SKILL_FILE).is_file():
            return candidate
    return search_skill(root, name)


def named_skill_dir(path: Path) -> Path | None:
    """The skill folder an ``evals.json`` outside any skill names by ``skill_name``, if any."""
    try:
        value = parse_located_json(read_suite_text(path), path).value
    except SuiteError:
        return None
    root = path.parent.parent if path.parent.name == "evals" else path.parent
    name = value.get("skill_name", value.get("skill")) if isinstance(value, dict) else None
    found = _skill_dir(root, name)
    return None if found == root else found


def _case(item: Any, at: tuple[str, int], root: Path, skill: Path, issues: IssueList, warnings: list[str],
          seen: dict[str, int | None]) -> Case | None:
    field = f"evals[{at[1]}]"
    if not isinstance(item, dict):
        issues.add("must be an object {id, prompt, expected_output, files, expectations}", at, field=field)
        return None
    before = len(issues.issues)
    _unknown_keys(item, EVAL_KEYS, at, f"eval #{at[1]}", issues, warnings)
    name = _case_name(item, at, issues)
    line = issues.doc.line_at(at) if issues.doc else None
    if name in seen:
        issues.add(f"duplicate eval {name!r} (first on line {seen[name]}) — ids must be unique", (*at, "id"),
                   field=f"{field}.id")
    seen[name] = line
    prompt = item.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        issues.add("must be a non-empty string: the task the agent is given", (*at, "prompt"),
                   field=f"{field}.prompt", case=name)
    reference = item.get("expected_output")
    if isinstance(reference, (dict, list)) and reference:
        # A structured description of success (Qson8/wechat-writing-skill's sections and limits):
        # the judge reads it as JSON, as skill-creator's grader reads the file.
        warnings.append(f"{issues.path}:{issues.doc.line_at((*at, 'expected_output')) if issues.doc else None}: "
                        f"eval {name} has a structured expected_output — the judge is shown it as JSON")
        reference = json.dumps(reference, ensure_ascii=False, indent=1)
    if reference is not None and not isinstance(reference, str):
        issues.add("must be a string describing the expected result", (*at, "expected_output"),
                   field=f"{field}.expected_output", case=name)
        reference = None
    statements = _strings(item, "expectations", at, issues, name)
    validators: list[ValidatorSpec] = []
    for index, entry in enumerate(_list(item, "assertions", at, issues, name)):
        assertion(entry, (*at, "assertions", index), name, issues, statements, validators)
    dialect_graders(item, at, name, issues, statements, validators)
    folder = workspace_folder(item, at, root, issues, name)
    seed = _files(item, at, root, skill, issues, name, warnings, folder)
    trigger = item.get("should_trigger")
    if trigger is not None and not isinstance(trigger, bool):
        issues.add("must be true or false", (*at, "should_trigger"), field=f"{field}.should_trigger", case=name)
    if len(issues.issues) > before or not isinstance(prompt, str):
        return None
    expected = reference = (reference or "").strip() or None
    unsupported = None
    if not statements and not validators:
        elsewhere = unknown_grader_keys(item, (*EVAL_KEYS, *_NOT_GRADERS))
        if reference is None and elsewhere:
            unsupported = refusal(elsewhere)
        elif reference is None:
            warnings.append(f"{issues.path}:{line}: eval {name} has no expected_output, expectations or "
                            "assertions — it is graded on whether the agent finishes without error")
        else:
            # Nothing else to grade by: the description of success is the one statement judged.
            statements, reference = [reference], None
    graders: tuple[ChecklistGrader, ...] = ()
    if statements:
        items = tuple(ChecklistItem(f"#{i + 1} {text[:60]}", text, 1.0) for i, text in enumerate(statements))
        graders = (ChecklistGrader(items=items, reference=reference, pass_threshold=float(len(items)), context=""),)
    return Case(
        name=name,
        prompt=prompt.strip(),
        description=expected or None,
        validators=tuple(validators),
        graders=graders,
        seed=seed,
        setup=Setup(commands=fixture_setup(folder, validators)),
        tags=tuple(t for t in item.get("tags", ()) if isinstance(t, str)) if isinstance(item.get("tags"), list) else (),
        should_trigger=trigger if isinstance(trigger, bool) else None,
        line=line,
        unsupported=unsupported,
    )


def _case_name(item: dict, at: tuple[str, int], issues: IssueList) -> str:
    key = "name" if "name" in item else "eval_name" if "eval_name" in item else "id"
    explicit = item.get(key) if key != "id" else None
    if isinstance(explicit, str) and explicit.strip():
        name = explicit.strip()
    else:
        key = "id"
        raw = item.get("id")
        if raw is None:
            issues.add("is missing — each eval needs an id (a unique integer)", at, field=f"evals[{at[1]}].id")
            return f"eval-{at[1] + 1}"
        if isinstance(raw, bool) or not isinstance(raw, (int, str)) or (isinstance(raw, str) and not raw.strip()):
            issues.add(f"must be an integer or a string, got {json.dumps(raw)[:40]}", (*at, "id"),
                       field=f"evals[{at[1]}].id")
            return f"eval-{at[1] + 1}"
        name = f"eval-{str(raw).strip()}"
    if len(name) > MAX_NAME_CHARS or not name.isprintable():
        issues.add(f"must be printable and at most {MAX_NAME_CHARS} characters", (*at, key),
                   field=f"evals[{at[1]}].{key}")
        return f"eval-{at[1] + 1}"
    return name


def _list(item: dict, key: str, at: YamlPath, issues: IssueList, case: str) -> list:
    raw = item.get(key, [])
    if raw is None:
        return []
    if not isinstance(raw, list):
        issues.add("must be a list", (*at, key), field=f"evals[{at[1]}].{key}", case=case)
        return []
    return raw


def _strings(item: dict, key: str, at: YamlPath, issues: IssueList, case: str) -> list[str]:
    found = []
    for index, text in enumerate(_list(item, key, at, issues, case)):
        if not isinstance(text, str) or not text.strip():
            issues.add("must be a non-empty string", (*at, key, index), field=f"evals[{at[1]}].{key}[{index}]",
                       case=case)
        else:
            found.append(text.strip())
    return found


def _owned(skill: Path, path: Path) -> bool:
    try:
        return is_skill_file(skill, path.relative_to(skill).as_posix())
    except ValueError:
        return False


def _sample(paths: list[str], shown: int = 3) -> str:
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(paths[:shown]) + more


def _files(item: dict, at: YamlPath, root: Path, skill: Path, issues: IssueList, case: str,
           warnings: list[str], folder: Path | None = None) -> SeedFiles | None:
    """``files`` at their path relative to the skill's root, and the ``fixture`` folder's files at
    the workspace's root (the repository the agent starts from)."""
    pairs: list[tuple[Path, str]] = []
    listed: list[tuple[Path, list[tuple[Path, str]], YamlPath]] = []
    if folder is not None:
        key = next(k for k in WORKSPACE_KEYS if item.get(k) is not None)
        listed.append((folder, [], (*at, key)))
    for index, rel in enumerate(_list(item, "files", at, issues, case)):
        field = f"evals[{at[1]}].files[{index}]"
        where = (*at, "files", index)
        if not isinstance(rel, str) or not relative_path(rel):
            issues.add("must be a path relative to the skill's directory (no '..', not absolute)", where,
                       field=field, case=case)
            continue
        problem = path_problem(root, rel)
        if problem is not None:
            issues.add(f"{rel!r} is not a file in {root}: it {problem}", where, field=field, case=case)
            continue
        source = root / rel
        listed.append((source, [(source, Path(rel).as_posix())] if source.is_file() else [], where))
    for source, found, where in listed:
        if source.is_dir():
            found = _below(source, root, where, issues, case)
        # The skill's own files (SKILL.md, its references and scripts) reach the with-skill arm as
        # the skill; copying them into every arm would hand the baseline the skill.
        withheld = [target for path, target in found if _owned(skill, path)]
        pairs.extend((path, target) for path, target in found if target not in withheld)
        if withheld:
            line = issues.doc.line_at(where) if issues.doc else None
            what = ("it is the skill" if withheld == [SKILL_FILE] else
                    "it is part of the skill" if source.is_file() else
                    f"it holds the skill's own files ({_sample(withheld)})")
            rel = source.relative_to(root).as_posix() if source.is_relative_to(root) else str(source)
            warnings.append(f"{issues.path}:{line}: eval {case} lists {rel} in '{where[2]}' — "
                            f"{what}, so only the with-skill arm gets it")
    return seed_files(pairs, root=root) if pairs else None


def _below(source: Path, root: Path, where: YamlPath, issues: IssueList, case: str) -> list[tuple[Path, str]]:
    """The files in folder ``source``, each with its path relative to ``root`` (the skill's, for
    ``files``), or to ``source`` itself (the folder the agent starts from). A folder's suite files
    (this evals.json, trigger sets) hold the answers; a repository's .git is nobody's input; a
    link in it is refused (``suite.paths``)."""
    files, links = collect_files(source, root=root)
    for link in links:
        issues.add(f"{source.relative_to(root).as_posix()}/{link} is a symbolic link — {RULE}", where,
                   field=entry_field(where), case=case)
    base = source if where[2] in WORKSPACE_KEYS else root
    return [(source / rel, (source / rel).relative_to(base).as_posix()) for rel in files
            if Path(rel).name not in SUITE_FILES]
