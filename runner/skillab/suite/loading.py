"""What suite loaders share: located issue lists, the files of a suite directory, seed files,
the skill a suite names, prompt files and workspace paths."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SandboxError, SuiteError, SuiteIssue
from ..skill.loader import SKILL_FILE
from ..yaml_source import YamlDocument, YamlPath, read_suite_text
from .model import SeedFiles
from .paths import escape_problem, read_below, refuse_outside

# Never part of a suite's files: version control and caches.
IGNORED_NAMES = frozenset({".git", "__pycache__", ".DS_Store", ".pytest_cache"})


def collect_files(directory: Path, *, root: Path, skip: Collection[str] = ()) -> tuple[list[str], list[str]]:
    """Regular files below ``directory`` (relative POSIX paths, sorted) and the symbolic links
    found there, which loaders refuse: a link could stage any file of the host. ``directory``
    lies in the suite's folder ``root``; when it, or a folder between them, is itself a link
    (or it is outside ``root``) that is a ``SuiteError`` naming it, and nothing is walked.

    ``skip`` names top-level entries to leave out; ``IGNORED_NAMES`` are left out at any depth.
    """
    problem = escape_problem(root, directory)
    if problem is not None:
        raise SuiteError([SuiteIssue(directory, problem)])
    files: list[str] = []
    links: list[str] = []
    for current, dirnames, filenames in os.walk(directory):
        top = Path(current) == directory
        kept = []
        for name in sorted(dirnames):
            rel = os.path.relpath(os.path.join(current, name), directory)
            if name in IGNORED_NAMES or (top and name in skip):
                continue
            if os.path.islink(os.path.join(current, name)):
                links.append(Path(rel).as_posix())
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if name in IGNORED_NAMES or (top and name in skip):
                continue
            path = os.path.join(current, name)
            rel = Path(os.path.relpath(path, directory)).as_posix()
            if os.path.islink(path):
                links.append(rel)
            elif os.path.isfile(path):
                files.append(rel)
    return sorted(files), sorted(links)


def seed_files(pairs: Sequence[tuple[Path, str]], *, root: Path) -> SeedFiles:
    """Seed files with the digest of their workspace paths and contents. Every source must be a
    regular file below the suite's folder ``root`` with no link on the way (``suite.paths``):
    a ``SuiteError`` names each that is not, so no loader stages a link, whatever it checked."""
    import hashlib  # on use: validating an eval.yaml suite never hashes

    digest = hashlib.sha256()
    issues: list[SuiteIssue] = []
    for source, target in pairs:
        problem = refuse_outside(root, source, want="file")
        try:
            data = read_below(root, source)[0] if problem is None else b""
        except SandboxError as exc:  # swapped for a link since the check
            problem = str(exc)
        if problem is not None:
            issues.append(SuiteIssue(Path(source), problem))
            continue
        digest.update(target.encode() + b"\0" + data + b"\0")
    if issues:
        raise SuiteError(issues)
    # Absolute, so staging does not depend on the directory a run started in.
    return SeedFiles(tuple((Path(os.path.abspath(s)), t) for s, t in pairs), digest.hexdigest(),
                     Path(os.path.abspath(root)))


def find_skill(start: Path, names: Sequence[str]) -> Path | None:
    """The nearest ``skills/<name>/`` or ``<name>/`` directory holding a SKILL.md, looking in
    ``start`` and then in each directory above it; ``names`` are tried in order at each level.
    A relative ``start`` is taken from the current directory, so the walk still reaches above it."""
    start = Path(os.path.abspath(start))
    for base in (start, *start.parents):
        for name in names:
            if not name or name in (".", "..") or "/" in name:
                continue
            for candidate in (base / "skills" / name, base / name):
                if (candidate / SKILL_FILE).is_file():
                    return candidate
    return None


@dataclass
class IssueList:
    """Located issues of one suite file, collected so a loader reports every problem at once.

    ``doc`` maps paths inside the document to lines (YAML, JSON and TOML loaders all fill one).
    """

    path: Path
    doc: YamlDocument | None = None
    issues: list[SuiteIssue] = field(default_factory=list)
    # Added to every line: where the document starts in its file (frontmatter after '---').
    line_offset: int = 0

    def add(
        self,
        message: str,
        at: YamlPath = (),
        *,
        field: str | None = None,
        case: str | None = None,
        line: int | None = None,
    ) -> None:
        if line is None and self.doc is not None:
            found = self.doc.line_at(at)
            line = found + self.line_offset if found is not None else None
        self.issues.append(SuiteIssue(self.path, message, line=line, case=case, field=field))

    def check_keys(
        self, value: dict[Any, Any], allowed: Sequence[str], at: YamlPath, *, what: str, case: str | None = None
    ) -> None:
        """One issue per key of ``value`` that ``allowed`` does not list."""
        for key in value:
            if key in allowed:
                continue
            import difflib

            close = difflib.get_close_matches(str(key), list(allowed), n=1)
            hint = f"did you mean '{close[0]}'?" if close else "allowed: " + ", ".join(allowed)
            self.add(f"{what} has unknown key {key!r} — {hint}", (*at, key), field=str(key), case=case)

    def raise_if_any(self) -> None:
        if self.issues:
            unique = list(dict.fromkeys(self.issues))
            raise SuiteError(sorted(unique, key=lambda issue: issue.line or 0))


def read_prompt_file(path: Path, issues: IssueList, *, missing: str) -> str:
    """The text of a file that holds a prompt; a missing, unreadable or blank one is an issue
    (``missing`` says what the file is for)."""
    if not path.is_file() or path.is_symlink():
        issues.issues.append(SuiteIssue(path, f"is missing — {missing}"))
        return ""
    try:
        text = read_suite_text(path)
    except SuiteError as exc:
        issues.issues.extend(exc.issues)
        return ""
    if not text.strip():
        issues.issues.append(SuiteIssue(path, "is empty — it holds the prompt", line=1))
    return text
