"""What beside a SKILL.md belongs to the evaluation, not to the skill: the files a suite found
there grades with or seeds into both arms. The with-skill agent is given the skill's bundled
files, so anything left in would let it read the grader that scores it (and only that arm)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

# A suite file beside SKILL.md whose whole folder of graders or fixtures is evaluation material.
SUITE_DIRS = {"task_suite.yaml": ("fixtures",)}
_EVAL_YAML = ("eval.yaml", "eval.yml")
# skillgrade's deterministic graders live in graders/ beside its eval.yaml (its README's layout).
SKILLGRADE_GRADERS = "graders"


def is_skillgrade(value: Any) -> bool:
    """skillgrade's eval.yaml: a list of ``tasks`` beside ``version: "1"`` or ``defaults``, or
    holding an ``instruction`` (waza's tasks are file patterns beside a ``skill``)."""
    if not isinstance(value, dict) or "cases" in value or "skill" in value and "graders" in value:
        return False
    tasks = value.get("tasks")
    return isinstance(tasks, list) and (str(value.get("version")) == "1" or "defaults" in value
                                        or any(isinstance(t, dict) and "instruction" in t for t in tasks))


def eval_material(directory: Path) -> frozenset[str]:
    """Paths relative to ``directory`` (a file, or a folder and all below it) that a suite beside
    its SKILL.md uses to grade or seed the arms."""
    found = {d for suite, dirs in SUITE_DIRS.items() if (directory / suite).is_file() for d in dirs}
    for name in _EVAL_YAML:
        value = _peek_yaml(directory / name)
        if is_skillgrade(value):
            found |= _skillgrade_material(directory, value)
    return frozenset(found)


def is_material(rel: Path, material: frozenset[str]) -> bool:
    return any(rel.as_posix() == m or rel.as_posix().startswith(m + "/") for m in material)


def _skillgrade_material(directory: Path, value: dict) -> set[str]:
    found = {SKILLGRADE_GRADERS}
    for task in value["tasks"]:
        if not isinstance(task, dict):
            continue
        refs = [task.get("instruction")]
        refs += [e.get("src") for e in task.get("workspace") or [] if isinstance(e, dict)]
        refs += [g.get(k) for g in task.get("graders") or [] if isinstance(g, dict) for k in ("run", "rubric")]
        found |= {ref for ref in map(_relative_ref, refs) if ref and (directory / ref).exists()}
    return found


def _relative_ref(raw: Any) -> str | None:
    """A value that names a path below the suite's folder (skillgrade reads such values as files)."""
    if not isinstance(raw, str) or "\n" in raw.strip() or not raw.strip() or len(raw) >= 300:
        return None
    ref = raw.strip()
    if os.path.isabs(ref) or ".." in Path(ref).parts:
        return None
    return Path(ref).as_posix()


def _peek_yaml(path: Path) -> Any:
    if not path.is_file():  # a FIFO would block the open; the suite's loader refuses it in one line
        return None
    from ..errors import SuiteError
    from ..yaml_source import parse_yaml, read_suite_text

    try:
        text = read_suite_text(path)
        # Only skillgrade's suite is wanted, and it has a ``tasks`` key: a text that spells it
        # nowhere (not even through a double-quoted escape) is not parsed a second time here.
        if "tasks" not in text and "\\" not in text:
            return None
        return parse_yaml(text, path).value
    except SuiteError:
        return None
