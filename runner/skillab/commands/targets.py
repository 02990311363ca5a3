"""The suites a list of paths names."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def suite_targets(paths: Sequence[Path], suite_format: str | None) -> list[Path]:
    """Each path, with a directory that is not itself a suite replaced by every suite below it,
    found as the Action's ``path:`` finds them. A directory with none stays, so loading it says
    why."""
    from ..formats.suite_dirs import is_suite_dir

    targets: list[Path] = []
    for path in paths:
        if suite_format or not path.is_dir() or is_suite_dir(path):
            targets.append(path)
            continue
        from ..github.discovery import find_suites

        found = [location.directory for location in find_suites(path, path)]
        targets.extend(found or [path])
    return targets
