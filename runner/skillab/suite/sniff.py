"""Telling formats apart by what a file holds, when several share its name.

``eval.yaml`` is the skillevaluation spec's file name, and also waza's, Vally's, dotnet/skills',
Agent Eval Harness's and skillgrade's (imported: ``formats/skillgrade``); ``criteria.json`` is ruby-skill-bench's and
Tessl's. The marker keys below come
from each format's published schema (see docs/suite-formats.md). A format skillab imports
is loaded; a format it does not import gets one line naming the format and what to do, instead of
a list of schema errors about keys that belong to another tool.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import SuiteError, SuiteIssue
from ..skill.eval_material import is_skillgrade

_EVAL_YAML = ("eval.yaml", "eval.yml")


def refine(file: Path, format_name: str) -> str:
    """The format ``file`` is in, given the one its name suggests; raises ``SuiteError`` with one
    line for a known format skillab does not import."""
    if file.name == "criteria.json":
        value = _peek_json(file)
        if isinstance(value, dict) and (value.get("type") == "weighted_checklist" or "checklist" in value):
            return "tessl"
        return format_name
    if file.name in _EVAL_YAML:
        if _has_top_level_cases(file):
            return format_name  # the native format: no second parse
        value = _peek_yaml(file)
        if is_skillgrade(value):
            return "skillgrade"
        foreign = foreign_eval_yaml(value)
        if foreign is not None:
            raise SuiteError([SuiteIssue(file, foreign)])
    return format_name


def foreign_eval_yaml(value: Any) -> str | None:
    """One line for an ``eval.yaml`` written for another tool, or None when it is not one."""
    if not isinstance(value, dict) or "cases" in value:
        return None
    keys = set(value)
    if "stimuli" in keys:
        return _unsupported("a Vally eval spec (it has 'stimuli')", "run it with `vally eval`, or rewrite each "
                            "stimulus as an eval.yaml case (prompt, validators, expectations)")
    if isinstance(value.get("scenarios"), list):
        return _unsupported("a dotnet/skills skill-validator eval.yaml (it has 'scenarios')",
                            "run it with dotnet/skills' skill-validator (eng/skill-validator), or rewrite each "
                            "scenario as an eval.yaml case")
    if isinstance(value.get("judges"), list) and ("execution" in keys or "dataset" in keys):
        return _unsupported("an Agent Eval Harness eval.yaml (it has 'judges' with 'execution'/'dataset')",
                            "run it with opendatahub-io/agent-eval-harness (`/eval-run`), or rewrite each dataset "
                            "case as an eval.yaml case (prompt, validators, expectations)")
    if "skill" in keys and ("tasks" in keys or "graders" in keys or "metrics" in keys):
        return _unsupported("a waza eval spec (it has 'skill' with 'tasks'/'graders')",
                            "run it with `waza run`, or rewrite its tasks as eval.yaml cases")
    return None


def foreign_directory(directory: Path) -> SuiteIssue | None:
    """One line for a skill directory whose only suite is in a format skillab does not import."""
    # Vally names its specs *.eval.yaml (dotnet/skills: eval.vally.yaml), beside the skill or in tests/.
    for folder in (directory, directory / "tests"):
        for path in sorted([*folder.glob("*.eval.yaml"), *folder.glob("*.vally.yaml")])[:20] if folder.is_dir() else []:
            message = foreign_eval_yaml(_peek_yaml(path))
            if message:
                return SuiteIssue(path, message)
    evals = directory / "evals"
    if not evals.is_dir():
        return None
    for path in sorted(evals.glob("*.y*ml"))[:20]:
        if path.name in _EVAL_YAML:
            message = foreign_eval_yaml(_peek_yaml(path))
            if message:
                return SuiteIssue(path, message)
            continue
        value = _peek_yaml(path)
        if isinstance(value, dict) and "prompt" in value and "criteria" in value:
            return SuiteIssue(path, _unsupported(
                "a skill-eval-action case (evals/*.yaml with prompt and criteria)",
                "run it with skill-bench/skill-eval-action, or move its prompt and criteria into "
                "evals/evals.json (prompt, expectations)"))
    return None


_PROMPTFOO = re.compile(r"^promptfooconfig\.(?:ya?ml|json|js|cjs|mjs|ts)$")
# How deep below a folder with no suite of its own the tools' spec files are looked for, and how
# many, so a repository root is answered in one line without walking the whole tree.
_BELOW_DEPTH, _BELOW_FILES = 3, 200
_FOREIGN_NAMES = ("eval.yaml", "eval.yml", "*.eval.yaml", "eval.vally.yaml", "*.vally.yaml")


def foreign_file(path: Path) -> str | None:
    """One line for a file of another tool passed as a suite (a promptfoo config), or None."""
    if _PROMPTFOO.match(path.name) or (path.suffix in (".yaml", ".yml") and _is_promptfoo(_peek_yaml(path))):
        return _unsupported("a promptfoo config", "run it with `promptfoo eval`, or rewrite each of its tests as an "
                            "eval.yaml case (prompt, validators, expectations) beside the skill's SKILL.md")
    return None


def _is_promptfoo(value: Any) -> bool:
    return isinstance(value, dict) and "prompts" in value and "providers" in value and "tests" in value


def foreign_below(directory: Path) -> SuiteIssue | None:
    """For a folder with no suite of its own (a repository root): a promptfoo config in it, or
    the first other tool's spec a few levels below it, in one line naming the tool."""
    for path in sorted(directory.glob("promptfooconfig.*")):
        message = foreign_file(path)
        if message:
            return SuiteIssue(path, message)
    seen = 0
    for depth in range(1, _BELOW_DEPTH + 1):
        pattern = "/".join(["*"] * depth)
        for name in _FOREIGN_NAMES:
            for path in sorted(directory.glob(f"{pattern}/{name}")):
                seen += 1
                if seen > _BELOW_FILES:
                    return None
                message = foreign_eval_yaml(_peek_yaml(path))
                if message:
                    levels = f"{depth} level{'s' if depth > 1 else ''} below {directory}"
                    return SuiteIssue(path, f"{message} ({levels}, which holds no suite of its own)")
    return None


_TOP_LEVEL_CASES = re.compile(r"(?m)^cases\s*:")


def _has_top_level_cases(path: Path) -> bool:
    if not path.is_file():  # a FIFO would block the open; the loader refuses it in one line
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return False
    return _TOP_LEVEL_CASES.search(head) is not None


def _unsupported(what: str, todo: str) -> str:
    return f"is {what}, a format skillab does not import — {todo}"


def _peek_yaml(path: Path) -> Any:
    from ..yaml_source import parse_yaml, read_suite_text

    try:
        return parse_yaml(read_suite_text(path), path).value
    except SuiteError:
        return None  # the format's own loader reports it


def _peek_json(path: Path) -> Any:
    from ..yaml_source import read_suite_text
    from .json_source import parse_located_json

    try:
        return parse_located_json(read_suite_text(path), path).value
    except SuiteError:
        return None
