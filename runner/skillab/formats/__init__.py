"""Suite formats: one package per format, each exposing one ``SuiteFormat`` (``base.py``).

``BUILTIN_FORMATS`` lists the formats skillab ships, by name, in the order a directory is
searched: the native format first. ``DEFAULT_REGISTRY`` is what ``load_suite`` and ``--format``
use; ``register_format`` adds to it. A format's package is imported when it is first used (a
suite of its own is found, or every format is listed), and its parser and judges after that.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core import plugins
from ..suite.model import Suite
from .base import Grader, Loader, SuiteFormat, lazy
from .registry import FormatRegistry, lazy_loader

# Each built-in's file names, and whether it shares them with another and is told apart by
# content, as its package's FORMAT says (tests/suite/test_suite_formats.py holds them equal): finding
# a suite file needs only these. Named in ``core.plugins`` in search order: eval.yaml first;
# ruby-skill-bench before skillsbench (its eval directory holds a task.md too); the trigger set
# last; tessl shares criteria.json with ruby-skill-bench, skillgrade eval.yaml with the native
# format: each is chosen by content or --format.
BUILTIN_FILENAMES: dict[str, tuple[tuple[str, ...], bool]] = {
    "eval.yaml": (("eval.yaml", "eval.yml"), False),
    "task_suite.yaml": (("task_suite.yaml",), False),
    "ruby-skill-bench": (("criteria.json",), False),
    "skillsbench": (("task.md", "task.toml"), False),
    "evals.json": (("evals/evals.json", "evals.json"), False),
    "claude-plugin-eval": (("evals/*/case.yaml", "evals/*/prompt.md", "*/case.yaml", "*/prompt.md", "case.yaml"),
                           False),
    "trigger-evals": (("trigger-evals.json", "trigger_evals.json", "evals/trigger-evals.json",
                       "evals/trigger_evals.json"), False),
    "tessl": (("criteria.json",), True),
    "skillgrade": (("eval.yaml", "eval.yml"), True),
}

DEFAULT_REGISTRY = FormatRegistry(with_plugins=True)
for _name in plugins.BUILTINS["formats"]:
    _filenames, _sniffed = BUILTIN_FILENAMES[_name]
    DEFAULT_REGISTRY.add_builtin(_name, _filenames, sniffed=_sniffed)


def __getattr__(name: str) -> Any:
    # Importing every format package is paid only by a caller that asks for all of them.
    if name == "BUILTIN_FORMATS":
        return {n: plugins.load("formats", n) for n in plugins.BUILTINS["formats"]}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


__all__ = [
    "BUILTIN_FORMATS",
    "DEFAULT_REGISTRY",
    "FormatRegistry",
    "Grader",
    "SuiteFormat",
    "find_suite_file",
    "known_formats",
    "lazy",
    "lazy_loader",
    "load_suite",
    "register_format",
]
