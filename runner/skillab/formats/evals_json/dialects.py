"""The graders ``evals.json`` files keep beside skill-creator's keys, as public suites write them.

- ``checks``: entries like ``assertions`` (statements for the judge, or ``{type, ...}`` checks);
- ``must_have`` / ``must_not_have``: keyword patterns the final answer must (not) match,
  regardless of case; a pattern that is not a valid regular expression is matched literally;
- ``scorers``: ``{type: regex, pattern}`` is a pattern the final answer must match,
  ``{type: llm_judge, criterion}`` a statement for the judge; other types as in ``assertions``;
- ``expected_behavior`` (a list) and ``evaluation_criteria`` (a name → statement mapping, or a
  list): statements for the judge;
- ``fixture`` / ``workspace_dir``: a folder (relative to the skill's root) whose files the agent
  starts from, copied to the root of both arms' workspaces; when its ``kind: script`` assertions
  read the run folder (``sandbox/``, ``output.md``), the workspace is a git repository holding
  the fixture as its first commit, as that runner makes it (``git diff`` checks then work).

An eval whose only graders sit under a key none of these readers knows is refused in one line
(``unknown_grader_keys``): graded on finishing alone, it would pass in both arms.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...suite.loading import IssueList
from ...suite.model import ValidatorSpec
from ...suite.paths import path_problem
from ...yaml_source import YamlPath
from .assertions import assertion, keyword_check, relative_path

GRADER_KEYS = ("checks", "must_have", "must_not_have", "scorers", "expected_behavior", "evaluation_criteria")
WORKSPACE_KEYS = ("fixture", "workspace_dir")


def dialect_graders(item: dict, at: YamlPath, case: str, issues: IssueList, statements: list[str],
                    validators: list[ValidatorSpec]) -> None:
    """Add the statements and validators of the eval's dialect grader keys."""
    for key in ("checks", "scorers", "expected_behavior"):
        for index, entry in enumerate(_entries(item, key, at, issues, case)):
            assertion(entry, (*at, key, index), case, issues, statements, validators)
    criteria = item.get("evaluation_criteria")
    if isinstance(criteria, dict):
        for name, text in criteria.items():
            if isinstance(text, str) and text.strip():
                statements.append(f"{name}: {text.strip()}")
            else:
                issues.add("must map each criterion to a statement", (*at, "evaluation_criteria", name),
                           field=f"evals[{at[1]}].evaluation_criteria.{name}", case=case)
    else:
        for index, entry in enumerate(_entries(item, "evaluation_criteria", at, issues, case)):
            assertion(entry, (*at, "evaluation_criteria", index), case, issues, statements, validators)
    for key, present in (("must_have", True), ("must_not_have", False)):
        for index, pattern in enumerate(_entries(item, key, at, issues, case)):
            if not isinstance(pattern, str) or not pattern.strip():
                issues.add("must be a non-empty string (a keyword or pattern)", (*at, key, index),
                           field=f"evals[{at[1]}].{key}[{index}]", case=case)
                continue
            label = f"{'has' if present else 'lacks'} {pattern[:60]!r}"
            validators.append(keyword_check(pattern, present, f"{key}: {label}"))


def _entries(item: dict, key: str, at: YamlPath, issues: IssueList, case: str) -> list:
    raw = item.get(key)
    if raw is None:
        return []
    if isinstance(raw, (str, dict)) and key != "evaluation_criteria":
        return [raw]  # a single entry written without its list
    if not isinstance(raw, list):
        issues.add("must be a list", (*at, key), field=f"evals[{at[1]}].{key}", case=case)
        return []
    return raw


def workspace_folder(item: dict, at: YamlPath, root: Path, issues: IssueList, case: str) -> Path | None:
    """The folder the eval's ``fixture`` / ``workspace_dir`` names, checked; None when it names none."""
    for key in WORKSPACE_KEYS:
        rel = item.get(key)
        if rel is None:
            continue
        where = (*at, key)
        if not isinstance(rel, str) or not relative_path(rel):
            issues.add("must be a folder relative to the skill's root (no '..', not absolute)", where,
                       field=f"evals[{at[1]}].{key}", case=case)
            return None
        folder = root / rel
        problem = path_problem(root, rel, want="folder")
        if problem is not None:
            issues.add(f"{rel!r} is not a folder in {root}: it {problem} — name the folder the agent starts from", where,
                       field=f"evals[{at[1]}].{key}", case=case)
            return None
        return folder
    return None


def unknown_grader_keys(item: dict, known: tuple[str, ...]) -> list[str]:
    """Keys of the eval no reader knows that hold something: where its graders must be."""
    return [key for key, value in item.items()
            if key not in known and value not in (None, "", [], {}) and not isinstance(value, bool)]


def refusal(keys: list[str]) -> str:
    """The one line an eval with no grader skillab reads carries as its ``unsupported`` reason."""
    named = ", ".join(repr(k) for k in keys)
    return (f"its graders sit under {named}, which skillab does not read — graded on finishing alone it "
            "would pass in both arms; move them into 'expectations' or 'assertions', or run the suite "
            "with the tool that wrote it")


def looked_for(root: Path, name: str, places: list[Path]) -> str:
    """Where a ``skill_name`` was looked for, for the error that says it was not found."""
    shown = ", ".join(f"{p.relative_to(root).as_posix() or '.'}/SKILL.md" for p in places)
    return (f"names the skill {name!r}, but no SKILL.md for it was found below {root}: looked at {shown}, "
            f"and every SKILL.md up to {SEARCH_DEPTH} folders down whose folder or 'name:' is {name!r}")


SEARCH_DEPTH = 4
_SKIPPED = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", "dist", "build"})


def skill_places(root: Path, name: str) -> list[Path]:
    """The folders a skill named ``name`` is looked for in, in order."""
    return [root, root / name, root / "skills" / name, root / "skill" / name, root / ".claude" / "skills" / name,
            root / ".agents" / "skills" / name]


def search_skill(root: Path, name: str) -> Path | None:
    """A SKILL.md up to ``SEARCH_DEPTH`` folders below ``root`` whose folder or frontmatter
    ``name:`` is ``name``: the first in sorted order, so the answer never depends on the disk."""
    from ...skill.frontmatter import read_frontmatter

    frontier = [root]
    for _ in range(SEARCH_DEPTH):
        found: list[Path] = []
        deeper: list[Path] = []
        for folder in frontier:
            try:
                children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
            except OSError:
                continue
            for child in children:
                if child.name in _SKIPPED:
                    continue
                skill_md = child / "SKILL.md"
                if skill_md.is_file():
                    if child.name == name or _frontmatter_name(skill_md, read_frontmatter) == name:
                        found.append(child)
                deeper.append(child)
        if found:
            return found[0]
        frontier = deeper
    return None


def _frontmatter_name(path: Path, read: Any) -> str | None:
    try:
        name = read(path.read_text(encoding="utf-8", errors="replace")[:65536], path).meta.get("name")
    except Exception:  # noqa: BLE001 — a skill that does not parse is simply not this one
        return None
    return name if isinstance(name, str) else None


GIT_FIXTURE = ("git init -q && git add -A && git -c user.name=skillab -c user.email=skillab@localhost "
               "commit -q --allow-empty -m fixture")


def fixture_setup(folder: Path | None, validators: list[ValidatorSpec]) -> tuple[str, ...]:
    """The setup commands a fixture folder's run-folder scripts expect: a git repository."""
    from .assertions import RUN_DIR

    if folder is None or not any(v.cmd.startswith(RUN_DIR) for v in validators):
        return ()
    return (GIT_FIXTURE,)
