"""Suite formats by name: the file names each one owns, and the loader that imports it.

A format is chosen by ``--format NAME`` or, without it, by the suite file's name. Loaders are
named as ``"module:function"`` in ``core.plugins`` and imported on first use, so a format's
module (and whatever it imports) costs nothing until a suite of that format is loaded, and
adding a format never creates an import cycle with this module. Formats other packages ship
(entry point group ``skillab.formats``) join the registry the first time it is asked.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import importlib
import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import plugins
from ..errors import SuiteError, SuiteIssue, UsageError
from ..skill.loader import SKILL_FILE
from .model import SeedFiles, Suite
from .yaml_source import YamlDocument, YamlPath, read_suite_text

Loader = Callable[[Path], Suite]

# The file names each built-in format owns, in the order a directory is searched: the native
# format first. Their loaders are named in ``core.plugins``.
_BUILTIN_FORMATS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("eval.yaml", ("eval.yaml", "eval.yml")),
    ("task_suite.yaml", ("task_suite.yaml",)),
    # Before skillsbench: a ruby-skill-bench eval directory holds a task.md too.
    ("ruby-skill-bench", ("criteria.json",)),
    ("skillsbench", ("task.md", "task.toml")),
    # The Agent Skills evaluation format, kept in evals/ beside SKILL.md.
    ("evals.json", ("evals/evals.json",)),
    # Last: a skill whose only suite is a trigger set (its queries are read by suite.trigger).
    ("trigger-evals", ("trigger-evals.json", "trigger_evals.json",
                       "evals/trigger-evals.json", "evals/trigger_evals.json")),
)
# Formats that share a file name with another and are told apart by what the file holds
# (``sniff.refine``): chosen by ``--format`` or by content, never by the file name alone.
_SNIFFED_FORMATS: tuple[tuple[str, str], ...] = (
    ("tessl", "criteria.json"),
)


@dataclass(frozen=True)
class SuiteFormat:
    """A registered format: its ``--format`` name, the file names it owns, its loader
    (a ``core.contracts.SuiteFormat``)."""

    name: str
    filenames: tuple[str, ...]
    loader: Loader

    def load(self, path: Path) -> Suite:
        return self.loader(path)


def lazy_loader(target: str) -> Loader:
    """A loader that imports ``"package.module:function"`` the first time it is called."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"loader target must look like 'package.module:function', not {target!r}")

    def load(path: Path) -> Suite:
        return getattr(importlib.import_module(module_name), attribute)(path)

    load.__qualname__ = f"lazy_loader({target!r})"
    return load


class FormatRegistry:
    """Formats by name; a directory is searched in registration order."""

    def __init__(self, *, with_plugins: bool = False) -> None:
        self._formats: dict[str, SuiteFormat] = {}
        self._sniffed: dict[str, SuiteFormat] = {}
        # Installed plugin formats join on first use: reading entry points costs a scan of
        # sys.path, which a run that never looks up a format should not pay.
        self._plugins_pending = with_plugins

    def _join_plugins(self) -> None:
        if not self._plugins_pending:
            return
        self._plugins_pending = False
        for name in plugins.plugins("formats"):
            fmt = plugins.load("formats", name)
            self.register(name, tuple(fmt.filenames), fmt.load)

    def register_sniffed(self, name: str, filename: str, loader: Loader) -> None:
        """A format whose file name another format owns: reached by ``--format`` or by content."""
        self._sniffed[name] = SuiteFormat(name, (filename,), loader)

    def register(self, name: str, filenames: tuple[str, ...], loader: Loader) -> None:
        """Add a format, or replace the one registered under ``name``."""
        if not name or not filenames:
            raise ValueError("a suite format needs a name and at least one file name")
        for other in self._formats.values():
            taken = set(other.filenames) & set(filenames)
            if other.name != name and taken:
                raise ValueError(
                    f"format {other.name!r} already owns {', '.join(sorted(taken))}"
                )
        self._formats[name] = SuiteFormat(name, tuple(filenames), loader)

    def names(self) -> tuple[str, ...]:
        self._join_plugins()
        return (*self._formats, *self._sniffed)

    def get(self, name: str) -> SuiteFormat:
        """The format called ``name``; an unknown name is a usage error listing the known ones."""
        self._join_plugins()
        if name in self._sniffed:
            return self._sniffed[name]
        try:
            return self._formats[name]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise UsageError(f"unknown suite format {name!r} — known formats: {known}") from None

    def for_filename(self, filename: str) -> SuiteFormat | None:
        """The format owning a file name (``evals.json``) or a path ending in one."""
        self._join_plugins()
        path = filename.replace(os.sep, "/")
        return next(
            (f for f in self._formats.values()
             if any(path == n or path.endswith("/" + n) or path == n.rsplit("/", 1)[-1] for n in f.filenames)),
            None,
        )

    def find(self, directory: Path, *, format: str | None = None) -> tuple[Path, str]:
        """The suite file in ``directory`` and its format name."""
        self._join_plugins()
        directory = Path(directory)
        candidates = [self.get(format)] if format else list(self._formats.values())
        if not directory.is_dir():
            message = "is not a directory" if directory.exists() else "does not exist"
            raise SuiteError([SuiteIssue(directory, message)])
        for fmt in candidates:
            present = [directory / n for n in fmt.filenames if (directory / n).is_file()]
            if len(present) > 1:
                names = " and ".join(p.name for p in present)
                raise SuiteError(
                    [SuiteIssue(directory, f"holds both {names} — keep only one suite file")]
                )
            if present:
                return present[0], fmt.name
        from .sniff import foreign_directory

        foreign = None if format else foreign_directory(directory)
        if foreign:
            raise SuiteError([foreign])
        looked_for = ", ".join(n for fmt in candidates for n in fmt.filenames)
        primary = candidates[0].filenames[0] if candidates else "suite file"
        raise SuiteError(
            [SuiteIssue(directory, f"no {primary} in {directory} (looked for: {looked_for})")]
        )

    def load(self, path: Path, *, format: str | None = None) -> Suite:
        """Load a suite from a skill directory or a suite file."""
        from .sniff import refine

        path = Path(path)
        chosen = self.get(format) if format else None
        if path.is_dir():
            file, name = self.find(path, format=format)
            chosen = self.get(name)
        elif not path.exists():
            raise SuiteError([SuiteIssue(path, "does not exist")])
        else:
            file = path
            chosen = chosen or self.for_filename(path.as_posix())
        if chosen is None:
            raise SuiteError([SuiteIssue(path, self._unknown_file_message(path))])
        if not format:
            # A file name several formats use (eval.yaml, criteria.json): what it holds decides.
            chosen = self.get(refine(file, chosen.name))
        suite = chosen.load(file)
        if suite.skill_dir is None:
            suite = dataclasses.replace(suite, skill_dir=file.parent)
        return suite

    def _unknown_file_message(self, path: Path) -> str:
        names = ", ".join(n for fmt in self._formats.values() for n in fmt.filenames)
        return (
            f"cannot tell the suite format from the file name {path.name!r} — name it one of "
            f"{names}, or pass --format ({', '.join(self._formats)})"
        )


DEFAULT_REGISTRY = FormatRegistry(with_plugins=True)
for _name, _filenames in _BUILTIN_FORMATS:
    DEFAULT_REGISTRY.register(_name, _filenames, lazy_loader(plugins.target("formats", _name)))
for _name, _filename in _SNIFFED_FORMATS:
    DEFAULT_REGISTRY.register_sniffed(_name, _filename, lazy_loader(plugins.target("formats", _name)))


def register_format(name: str, filenames: tuple[str, ...], loader: Loader) -> None:
    """Make a suite format available to ``load_suite`` and ``--format``."""
    DEFAULT_REGISTRY.register(name, filenames, loader)


def known_formats() -> tuple[str, ...]:
    return DEFAULT_REGISTRY.names()


def find_suite_file(directory: Path, *, format: str | None = None) -> tuple[Path, str]:
    """The suite file in a skill directory, and its format name."""
    return DEFAULT_REGISTRY.find(directory, format=format)


def load_suite(path: Path, *, format: str | None = None) -> Suite:
    """A skill directory's suite, or a suite file; raises ``SuiteError`` with every issue."""
    return DEFAULT_REGISTRY.load(path, format=format)


# --- what format loaders share ---------------------------------------------------------------

# Never part of a suite's files: version control and caches.
IGNORED_NAMES = frozenset({".git", "__pycache__", ".DS_Store", ".pytest_cache"})


def collect_files(directory: Path, *, skip: Collection[str] = ()) -> tuple[list[str], list[str]]:
    """Regular files below ``directory`` (relative POSIX paths, sorted) and the symbolic links
    found there, which loaders refuse: a link could stage any file of the host.

    ``skip`` names top-level entries to leave out; ``IGNORED_NAMES`` are left out at any depth.
    """
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


def seed_files(pairs: Sequence[tuple[Path, str]]) -> SeedFiles:
    """Seed files with the digest of their workspace paths and contents."""
    digest = hashlib.sha256()
    for source, target in pairs:
        digest.update(target.encode() + b"\0" + source.read_bytes() + b"\0")
    # Absolute, so staging does not depend on the directory a run started in.
    return SeedFiles(tuple((Path(os.path.abspath(s)), t) for s, t in pairs), digest.hexdigest())


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

