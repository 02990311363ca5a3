"""Which suites to run: every suite under the action's ``path``, or those a pull request touches.

A suite lives in a skill directory (SKILL.md beside a suite file), or, for the seed formats, in
a directory of its own laid out as that benchmark lays it out (the skill elsewhere). A suite is
touched when any changed path lies inside its directory or its skill's, so editing
``scripts/grade.py`` re-runs the suite that grades with it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import UsageError
from ..formats import DEFAULT_REGISTRY, load_suite
from ..formats.suite_dirs import is_suite_dir
from ..sandbox.trees import walk
from ..skill.loader import SKILL_FILE

# Directories never searched for skills: VCS data, dependency trees, caches, build output.
SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".skillab",
     ".pytest_cache", ".mypy_cache", "dist", "build"}
)
# The pull request files API lists at most this many files; beyond it, changes go unseen.
PR_FILES_API_CAP = 3000


@dataclass(frozen=True)
class SuiteLocation:
    """A directory holding a suite (what ``skillab run`` is given). ``rel_dir`` is POSIX,
    relative to the workspace; ``watched`` adds the skill's directory when it lies elsewhere."""

    directory: Path
    rel_dir: str
    watched: tuple[str, ...] = ()

    def contains(self, repo_path: str) -> bool:
        return any(
            rel == "." or repo_path == rel or repo_path.startswith(rel + "/")
            for rel in (self.rel_dir, *self.watched)
        )


@dataclass(frozen=True)
class ChangedFile:
    """One entry of the pull request files API."""

    filename: str
    status: str = "modified"
    previous_filename: str | None = None

    @classmethod
    def from_api(cls, item: Any) -> ChangedFile:
        """One item of the files API; a malformed one raises ``GitHubError``."""
        from .client import field_of

        filename = field_of(item, "filename", str, "a pull request file")
        previous = item.get("previous_filename")
        return cls(filename, str(item.get("status") or "modified"),
                   previous if isinstance(previous, str) else None)

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.filename,) + ((self.previous_filename,) if self.previous_filename else ())


@dataclass(frozen=True)
class Selection:
    """The suites to run, and plain-language notes on what was left out and why."""

    suites: tuple[SuiteLocation, ...]
    notes: tuple[str, ...] = ()
    # True when the files API could not list every change and every suite runs instead.
    fell_back_to_all: bool = False


def resolve_inside(workspace: Path, value: str, name: str) -> Path:
    """An input naming a path inside the workspace; one that leaves it is refused."""
    path = (workspace / value).resolve()
    if path != workspace and workspace not in path.parents:
        raise UsageError(f"input '{name}' must stay inside the repository, got {value!r}")
    return path


def resolve_root(workspace: Path, path: str) -> Path:
    """The action's ``path`` inside the workspace; a path that leaves it is refused."""
    root = resolve_inside(workspace, path, "path")
    if not root.is_dir():
        raise UsageError(f"input 'path': {path!r} is not a directory in the repository")
    return root


def find_suites(workspace: Path, root: Path, warnings: list[str] | None = None) -> list[SuiteLocation]:
    """Every suite directory under ``root``, in path order. Symlinked directories are not followed.

    Any tree is searched, however deep (the walk keeps its own stack); a directory that cannot be
    read or looked into (a path past the system's length limit) is passed over, and ``warnings``
    gets one line for it: one odd directory never stops the search for the others.
    """
    skipped: list[str] = []
    found = []

    def unsearchable(exc: OSError, directory: object = None) -> None:
        skipped.append(f"{_shown(directory or exc.filename, workspace)} ({exc.strerror or exc})")

    for current, dirs, _files in walk(root, onerror=unsearchable):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        directory = Path(current)
        try:
            suite = is_suite_dir(directory)
        except OSError as exc:
            unsearchable(exc, current)
            continue
        if suite:
            rel = directory.relative_to(workspace).as_posix()
            found.append(SuiteLocation(directory, rel, _skill_elsewhere(directory, workspace)))
    if skipped and warnings is not None:
        more = f" and {len(skipped) - 1} more directories" if len(skipped) > 1 else ""
        warnings.append(f"not searched for skills: {skipped[0]}{more}")
    return found


def _shown(filename: object, workspace: Path) -> str:
    """A path for a message: relative to the workspace, and cut short when it runs long."""
    text = os.path.relpath(os.fsdecode(filename), workspace) if isinstance(filename, (str, bytes)) else "?"
    return text if len(text) <= 120 else f"{text[:60]}…{text[-40:]}"


def _skill_elsewhere(directory: Path, workspace: Path) -> tuple[str, ...]:
    """The skill directory a suite names, when it lies outside the suite's own directory."""
    try:
        skill_dir = load_suite(directory).skill_dir
    except Exception:  # noqa: BLE001 - a suite that cannot load is reported by its own run
        return ()  # the suite's own directory is still watched
    if skill_dir is None:
        return ()
    skill_dir, directory = skill_dir.resolve(), directory.resolve()
    inside_suite = skill_dir == directory or directory in skill_dir.parents
    if inside_suite or workspace.resolve() not in skill_dir.parents:
        return ()
    return (skill_dir.relative_to(workspace.resolve()).as_posix(),)


def select_all(suites: list[SuiteLocation]) -> Selection:
    return Selection(tuple(suites))


def select_changed(
    suites: list[SuiteLocation], changed: Iterable[ChangedFile], workspace: Path, root: Path
) -> Selection:
    """The suites whose skill directory holds a changed path, and notes on deleted skills."""
    changes = list(changed)
    if len(changes) >= PR_FILES_API_CAP:
        note = (
            f"The pull request changes {len(changes)} or more files, more than the files API "
            "lists, so every suite runs."
        )
        return Selection(tuple(suites), (note,), fell_back_to_all=True)
    paths = [p for change in changes for p in change.paths]
    picked = tuple(s for s in suites if any(s.contains(p) for p in paths))
    notes = _removed_notes(suites, changes, workspace, root)
    return Selection(picked, tuple(notes))


def _removed_notes(
    suites: list[SuiteLocation], changes: list[ChangedFile], workspace: Path, root: Path
) -> list[str]:
    """A note for each skill directory under ``root`` the PR deleted or left without a suite."""
    live = {s.rel_dir for s in suites}
    root_rel = root.relative_to(workspace).as_posix()
    notes = []
    seen: set[str] = set()
    for change in changes:
        if change.status not in ("removed", "renamed"):
            continue
        gone = change.previous_filename if change.status == "renamed" else change.filename
        if not gone:
            continue
        path = PurePosixPath(gone)
        # A suite file below its suite's directory (evals/evals.json) belongs to that directory.
        rel_dir = next((d for fmt in DEFAULT_REGISTRY.formats() if (d := fmt.suite_dir_of(path.as_posix()))),
                       path.parent.as_posix())
        inside = root_rel == "." or rel_dir == root_rel or rel_dir.startswith(root_rel + "/")
        if not inside or rel_dir in live or rel_dir in seen:
            continue
        is_skill_file = path.name == SKILL_FILE
        is_suite_file = DEFAULT_REGISTRY.for_filename(path.name) is not None
        if not (is_skill_file or is_suite_file):
            continue
        seen.add(rel_dir)
        if (workspace / rel_dir).is_dir():
            notes.append(f"{rel_dir} no longer holds a skill with a suite in this pull request: skipped.")
        else:
            notes.append(f"Skill {rel_dir} is deleted in this pull request: skipped.")
    return notes
