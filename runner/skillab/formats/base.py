"""The shape of a suite format: what skillab asks a format, and nothing else.

A format is one package under ``skillab/formats/`` exposing one ``SuiteFormat``: the file names
that make a path its suite, the parser, the graders its parser writes into ``Case.graders``,
the layout Action discovery finds its suites by, and the report sections it adds. Everything
heavy (a parser, a judge) is named as ``"module:function"`` and imported on first use, so
listing every format costs nothing until one of them loads a suite.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..suite.model import Suite

if TYPE_CHECKING:  # types only: listing the formats loads no run or grading types
    from ..core.checks import GraderResult
    from ..core.runlog import RunLog
    from ..grading.graders import GradingInput

Loader = Callable[[Path], Suite]
# A grader function: (its spec from Case.graders, the arm's GradingInput) -> GraderResult.
Grade = Callable[[Any, "GradingInput"], "GraderResult"]
# Whether a directory holds this format's suite laid out as its benchmark lays it out
# (no SKILL.md beside it): how Action discovery finds the suite a changed path belongs to.
Layout = Callable[[Path], bool]
# Markdown text the report escapes: (text, limit) -> safe inline text (``reports.escape.inline``).
Inline = Callable[[object, int], str]
# A markdown section over (display name, run) pairs, given the report's escaping for whatever a
# model or a suite wrote; "" when it has nothing to say.
MarkdownSection = Callable[[Sequence[tuple[str, "RunLog"]], Inline], str]
# Terminal lines for one run; [] when it has nothing to say.
TerminalSection = Callable[["RunLog"], list[str]]


def lazy(target: str) -> Callable[..., Any]:
    """A function that imports ``"package.module:function"`` the first time it is called."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"loader target must look like 'package.module:function', not {target!r}")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module_name), attribute)(*args, **kwargs)

    call.__qualname__ = f"lazy_loader({target!r})"
    return call


def recognises(filenames: Sequence[str], path: str) -> bool:
    """Whether ``path`` (a file name, or a POSIX path ending in one) names one of ``filenames``
    (a ``*`` stands for one folder name)."""
    return any(_tail(n, path) is not None or ("*" not in n and path == n.rsplit("/", 1)[-1]) for n in filenames)


def _tail(name: str, path: str) -> str | None:
    """The part of ``path`` before its ending ``name`` ("" for ``path == name``), or None."""
    if "*" not in name:
        return path[: -len(name)] if path == name or path.endswith("/" + name) else None
    parts, pattern = path.split("/"), name.split("/")
    if len(parts) < len(pattern) or not all(fnmatch.fnmatchcase(p, q) for p, q in zip(parts[-len(pattern):], pattern)):
        return None
    return "/".join(parts[: -len(pattern)])


@dataclass(frozen=True)
class Grader:
    """One grader a format's cases use: the spec type its parser writes into ``Case.graders``,
    the function that grades it, and the judge prompts it sends (a cached baseline follows
    their edits; empty for a grader that asks no judge)."""

    spec: type
    grade: Grade
    prompts: Callable[[], tuple[str, ...]] | None = None


@runtime_checkable
class FormatPlugin(Protocol):
    """A suite format another package installs (entry point group ``skillab.formats``): the file
    names it owns (searched in a skill directory, and used by the Action's discovery) and its
    loader, which returns a ``Suite`` or raises ``SuiteError`` listing every issue. It joins the
    registry as a ``SuiteFormat`` that only parses."""

    filenames: tuple[str, ...]

    def load(self, path: Path) -> Suite: ...


@dataclass(frozen=True)
class SuiteFormat:
    """A suite format: its ``--format`` name, the file names that make a path its suite, its
    parser, its graders, its discovery layout and its report sections.

    ``sniffed``: the format shares its file name with another and is told apart by content
    (``suite.sniff.refine``) or chosen by ``--format``, never by the file name alone.
    """

    name: str
    filenames: tuple[str, ...]
    parse: Loader
    graders: tuple[Grader, ...] = ()
    layout: Layout | None = None
    markdown_section: MarkdownSection | None = None
    terminal_section: TerminalSection | None = None
    sniffed: bool = False

    @property
    def loader(self) -> Loader:
        return self.parse

    def recognises(self, path: str) -> bool:
        """Whether ``path`` (a file name, or a POSIX path ending in one) names this format's suite."""
        return recognises(self.filenames, path)

    def suite_dir_of(self, path: str) -> str | None:
        """The directory of the suite ``path`` names (``a/evals/evals.json`` → ``a``), or None."""
        for name in self.filenames:
            tail = _tail(name, path)
            if tail is not None:
                return tail.rstrip("/") or "."
        return None
