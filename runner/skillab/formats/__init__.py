"""Suite formats: one package per format, each exposing one ``SuiteFormat`` (``base.py``).

``BUILTIN_FORMATS`` lists the formats skillab ships, by name, in the order a directory is
searched: the native format first. ``DEFAULT_REGISTRY`` is what ``load_suite`` and ``--format``
use; ``register_format`` adds to it. A format's parser and judges load on first use.
"""

from __future__ import annotations

from pathlib import Path

from ..core import plugins
from ..suite.model import Suite
from .base import Grader, Loader, SuiteFormat, lazy
from .registry import FormatRegistry, lazy_loader

# Named in ``core.plugins`` in search order: eval.yaml first; ruby-skill-bench before
# skillsbench (its eval directory holds a task.md too); the trigger set last; tessl shares
# criteria.json with ruby-skill-bench and is chosen by content or --format.
BUILTIN_FORMATS: dict[str, SuiteFormat] = {name: plugins.load("formats", name) for name in plugins.BUILTINS["formats"]}

DEFAULT_REGISTRY = FormatRegistry(with_plugins=True)
for _format in BUILTIN_FORMATS.values():
    DEFAULT_REGISTRY.add(_format)


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
