"""The Action's ``mode: merge``: find the shard jobs' results documents and join them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..reports.merge import MergeError, load_shards, merge_shards
from .discovery import SuiteLocation

RESULTS_FILE = "results.json"


def shard_files(root: Path, own_output: Path) -> list[Path]:
    """Every ``results.json`` under ``root`` (downloaded artifacts), outside the Action's own
    output directory, in a stable order."""
    found = sorted(p for p in root.rglob(RESULTS_FILE) if own_output not in p.parents)
    if not found:
        raise MergeError(f"mode 'merge': no {RESULTS_FILE} under {root}; download the shard "
                         "jobs' artifacts there first")
    return found


def merge_outcomes(root: Path, workspace: Path, own_output: Path,
                   history: Path | None) -> Iterator[tuple[dict[str, Any], SuiteLocation]]:
    """Each merged suite document with the suite's location in the repository, recorded in the
    history as an unsharded run would be (the shards record nothing)."""
    from ..scoring.history import record_into
    from ..reports.results import document

    for log in merge_shards(load_shards(shard_files(root, own_output))):
        if history is not None:
            log = record_into(log, history)
        merged = document(log)
        yield merged, _location(merged, workspace)


def _location(document: dict[str, Any], workspace: Path) -> SuiteLocation:
    directory = Path(document["suite"]["path"]).parent
    absolute = directory if directory.is_absolute() else workspace / directory
    try:
        rel = absolute.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        # The shards ran in another checkout path: the suite keeps the path they recorded.
        rel = directory.as_posix()
    return SuiteLocation(absolute, rel)
