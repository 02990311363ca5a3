"""Whether a directory holds a suite: what ``skillab validate DIR`` asks of each path and the
Action's discovery asks of each directory it walks, importable without the Action's types."""

from __future__ import annotations

from pathlib import Path

from ..errors import SuiteError
from ..skill.loader import SKILL_FILE
from ..suite.sniff import foreign_directory
from . import DEFAULT_REGISTRY, find_suite_file


def is_seed_suite_dir(directory: Path) -> bool:
    """A seed-format suite in its benchmark's own layout, apart from its skill. Each format's
    layout rule decides, not a file name alone: a stray task.md or criteria.json is not taken
    for a suite."""
    return any(fmt.layout(directory) for fmt in DEFAULT_REGISTRY.formats() if fmt.layout is not None)


def is_suite_dir(directory: Path) -> bool:
    """SKILL.md plus a file some suite format owns (a broken suite file still counts), or a
    seed-format suite in its own layout."""
    if not (directory / SKILL_FILE).is_file():
        return is_seed_suite_dir(directory)
    try:
        find_suite_file(directory)
        return True
    except SuiteError:
        # Two suite files, or a suite in a format skillab names but does not import: still a
        # suite, whose run reports the problem in one line.
        return any(DEFAULT_REGISTRY.for_filename(p.name) for p in directory.iterdir() if p.is_file()) or (
            foreign_directory(directory) is not None)
