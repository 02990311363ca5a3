"""Suite formats by name, and loading a suite: ``--format NAME`` chooses one, or else the
suite file's name does (what it holds decides between formats sharing a file name).

Formats are searched in registration order; ``formats/__init__.py`` registers the built-ins,
native first. A format's parser (and whatever it imports) is imported on first use.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import plugins
from ..errors import SuiteError, SuiteIssue, UsageError
from ..suite.model import Suite
from .base import FormatPlugin, Loader, SuiteFormat, lazy, recognises

if TYPE_CHECKING:  # a type only: `validate` loads no run types
    from ..core.runlog import RunLog


class _Builtin:
    """A built-in format by its name and file names, its package not imported yet: finding a
    suite file then imports only the format that owns it."""

    __slots__ = ("name", "filenames", "sniffed")

    def __init__(self, name: str, filenames: tuple[str, ...], sniffed: bool) -> None:
        self.name, self.filenames, self.sniffed = name, filenames, sniffed

    def recognises(self, path: str) -> bool:
        return recognises(self.filenames, path)


def lazy_loader(target: str) -> Loader:
    """A loader that imports ``"package.module:function"`` the first time it is called."""
    return lazy(target)


class FormatRegistry:
    """Formats by name; a directory is searched in registration order."""

    def __init__(self, *, with_plugins: bool = False) -> None:
        self._formats: dict[str, SuiteFormat | _Builtin] = {}
        self._sniffed: dict[str, SuiteFormat | _Builtin] = {}
        # Installed plugin formats (entry point group ``skillab.formats``, a
        # ``base.FormatPlugin``) join when a built-in does not answer, or a listing asks:
        # reading entry points scans sys.path and imports importlib.metadata (tens of ms).
        self._plugins_pending = with_plugins

    def _join_plugins(self) -> bool:
        """Join the installed plugin formats; whether any were pending (so a miss may retry)."""
        if not self._plugins_pending:
            return False
        self._plugins_pending = False
        for name in plugins.plugins("formats"):
            fmt: FormatPlugin = plugins.load("formats", name)
            self.add(SuiteFormat(name, tuple(fmt.filenames), fmt.load))
        return True

    def register(self, name: str, filenames: tuple[str, ...], loader: Loader) -> None:
        """Add a format that only parses, or replace the one registered under ``name``."""
        self.add(SuiteFormat(name, tuple(filenames), loader))

    def add_builtin(self, name: str, filenames: tuple[str, ...], *, sniffed: bool = False) -> None:
        """Add the built-in format ``name`` (``core.plugins``), imported when it is first used."""
        self.add(_Builtin(name, tuple(filenames), sniffed))

    def _loaded(self, fmt: SuiteFormat | _Builtin) -> SuiteFormat:
        if not isinstance(fmt, _Builtin):
            return fmt
        loaded: SuiteFormat = plugins.load("formats", fmt.name)
        (self._sniffed if fmt.sniffed else self._formats)[fmt.name] = loaded  # keeps its place
        return loaded

    def add(self, fmt: SuiteFormat | _Builtin) -> None:
        """Add a format, or replace the one registered under its name."""
        if fmt.sniffed:
            # Its file name is another format's: reached by ``--format`` or by content.
            self._sniffed[fmt.name] = fmt
            return
        if not fmt.name or not fmt.filenames:
            raise ValueError("a suite format needs a name and at least one file name")
        for other in self._formats.values():
            taken = set(other.filenames) & set(fmt.filenames)
            if other.name != fmt.name and taken:
                raise ValueError(
                    f"format {other.name!r} already owns {', '.join(sorted(taken))}"
                )
        self._formats[fmt.name] = fmt

    def formats(self) -> tuple[SuiteFormat, ...]:
        """Every format, file-name formats in search order, then the sniffed ones."""
        self._join_plugins()
        return tuple(self._loaded(f) for f in (*self._formats.values(), *self._sniffed.values()))

    def names(self) -> tuple[str, ...]:
        self._join_plugins()
        return (*self._formats, *self._sniffed)

    def get(self, name: str) -> SuiteFormat:
        """The format called ``name``; an unknown name is a usage error listing the known ones."""
        if name not in self._formats and name not in self._sniffed:
            self._join_plugins()
        if name in self._sniffed:
            return self._loaded(self._sniffed[name])
        try:
            return self._loaded(self._formats[name])
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise UsageError(f"unknown suite format {name!r} — known formats: {known}") from None

    def of_logs(self, logs: Sequence[RunLog]) -> tuple[SuiteFormat, ...]:
        """The formats that wrote these runs (``suite.format``), in order of first appearance: a
        report asks them alone for their sections, loading no other format."""
        found: dict[str, SuiteFormat] = {}
        for log in logs:
            name = log.settings.suite.format
            if name not in found:
                try:
                    found[name] = self.get(name)
                except UsageError:  # a plugin format no longer installed: nothing of its own
                    continue
        return tuple(found.values())

    def for_filename(self, filename: str) -> SuiteFormat | None:
        """The format owning a file name (``evals.json``) or a path ending in one."""
        path = filename.replace(os.sep, "/")
        found = next((f for f in self._formats.values() if f.recognises(path)), None)
        if found is not None:
            return self._loaded(found)
        return self.for_filename(filename) if self._join_plugins() else None

    def find(self, directory: Path, *, format: str | None = None) -> tuple[Path, str]:
        """The suite file in ``directory`` and its format name (the first in search order)."""
        return self.find_all(directory, format=format)[0]

    def find_all(self, directory: Path, *, format: str | None = None) -> list[tuple[Path, str]]:
        """Every suite file in ``directory`` with its format name, in search order (at least one)."""
        directory = Path(directory)
        candidates = [self.get(format)] if format else list(self._formats.values())
        if not directory.is_dir():
            message = "is not a directory" if directory.exists() else "does not exist"
            raise SuiteError([SuiteIssue(directory, message)])
        found: list[tuple[Path, str]] = []
        for fmt in candidates:
            present = [directory / n for n in fmt.filenames if "*" not in n and (directory / n).is_file()]
            # A name with a ``*`` (a case folder of an eval folder): its first match names the suite.
            globbed = [p for n in fmt.filenames if "*" in n for p in sorted(directory.glob(n)) if p.is_file()]
            present = present or globbed[:1]
            if len(present) > 1:
                names = " and ".join(p.relative_to(directory).as_posix() for p in present)
                raise SuiteError(
                    [SuiteIssue(directory, f"holds both {names} — keep only one suite file")]
                )
            found.extend((p, fmt.name) for p in present)
        if found:
            return found
        if directory.is_dir() and self._join_plugins():
            return self.find_all(directory, format=format)
        from ..suite.sniff import foreign_directory

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
        path = Path(path)
        chosen = self.get(format) if format else None
        if path.is_dir():
            return self._load_directory(path, format)
        if not path.exists():
            raise SuiteError([SuiteIssue(path, "does not exist")])
        else:
            file = path
            chosen = chosen or self.for_filename(path.as_posix())
        if chosen is None:
            raise SuiteError([SuiteIssue(path, self._unknown_file_message(path))])
        return self._load_file(file, chosen, format)

    def _load_file(self, file: Path, chosen: SuiteFormat, format: str | None) -> Suite:
        from ..suite.sniff import refine

        if not format:
            # A file name several formats use (eval.yaml, criteria.json): what it holds decides.
            chosen = self.get(refine(file, chosen.name))
        suite = chosen.parse(file)
        from ..suite.shell_syntax import nul_byte_issues

        if nul_byte_issues(suite):
            raise SuiteError(nul_byte_issues(suite))
        if suite.skill_dir is None:
            suite = dataclasses.replace(suite, skill_dir=file.parent)
        return suite

    def _load_directory(self, directory: Path, format: str | None) -> Suite:
        """The first suite file in ``directory`` that loads. One that does not (a file of
        another tool's dialect under a name skillab owns) never blocks a good one beside it:
        it is reported as a warning; when none loads, the first file's problems are raised."""
        failed: list[tuple[Path, SuiteError]] = []
        found = self.find_all(directory, format=format)
        for index, (file, name) in enumerate(found):
            try:
                suite = self._load_file(file, self.get(name), format)
            except SuiteError as exc:
                failed.append((file, exc))
                continue
            skipped = [_skipped_warning(bad, exc, suite.path) for bad, exc in failed]
            # Another suite beside the one that runs is said, never dropped in silence (a trigger
            # set beside it is not another suite: its queries join the run's trigger trials).
            skipped += [f"{other}: a {other_format} suite beside {suite.path.name}, not run here — run it with "
                        f"`skillab run {other}`" for other, other_format in found[index + 1:]
                        if other_format != "trigger-evals" and self._loads(other, other_format, format)]
            return dataclasses.replace(suite, warnings=(*skipped, *suite.warnings)) if skipped else suite
        # None loads: the first file's problems, as its format reads them (a later name may be
        # part of the first format's own layout, as a ruby-skill-bench eval's task.md is).
        raise failed[0][1]

    def _loads(self, file: Path, name: str, format: str | None) -> bool:
        """Whether ``file`` loads as a suite of its own (a ruby-skill-bench eval's task.md does not)."""
        try:
            self._load_file(file, self.get(name), format)
            return True
        except SuiteError:
            return False

    def _unknown_file_message(self, path: Path) -> str:
        names = ", ".join(n for fmt in self._formats.values() for n in fmt.filenames)
        return (
            f"cannot tell the suite format from the file name {path.name!r} — name it one of "
            f"{names}, or pass --format ({', '.join(self._formats)})"
        )


def _skipped_warning(bad: Path, exc: SuiteError, used: Path) -> str:
    """One line for a suite file that did not load, beside the one that runs: its first
    problem and how many there are, not all of them."""
    first = exc.first
    where = f"{bad}:{first.line}" if first.line and first.path == bad else str(first.path)
    text = str(first).removeprefix(where).removeprefix(": ")
    more = f" (and {len(exc.issues) - 1} more problems: `skillab validate <that file>`)" if len(exc.issues) > 1 else ""
    return f"{where}: not loaded, {text}{more}; running {used.name} beside it instead"
