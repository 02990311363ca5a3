"""The Action's ``mode: merge``: find the shard jobs' results documents and join them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..core.runlog import RunLog
from ..reports.shard_files import load_shards
from ..sandbox.trees import walk
from ..scoring.merge import MergeError, merge_shards
from .discovery import SuiteLocation
from .outcome import SuiteOutcome

RESULTS_FILE = "results.json"


def shard_files(root: Path, own_output: Path) -> list[Path]:
    """Every ``results.json`` under ``root`` (downloaded artifacts), outside the Action's own
    output directory, in a stable order. A shard job's directory holds its set of documents and,
    below it, each suite's own copy (``<suite>/results.json``): only the set is read."""
    # The walk keeps its own stack: a tree of any depth under ``path`` cannot stop the merge.
    found_files = (Path(current) / RESULTS_FILE for current, _dirs, files in walk(root) if RESULTS_FILE in files)
    everything = sorted((p for p in found_files if own_output not in p.parents),
                        key=lambda p: (len(p.parts), p))
    sets: set[Path] = set()
    for path in everything:
        if not any(d in sets for d in path.parents):
            sets.add(path.parent)
    found = sorted(p for p in everything if p.parent in sets)
    if not found:
        raise MergeError(f"mode 'merge': no {RESULTS_FILE} under {root}; download the shard "
                         "jobs' artifacts there first")
    return found


def merge_outcomes(root: Path, workspace: Path, own_output: Path, history: Path | None,
                   ledger: Path | None = None, environ: Mapping[str, str] | None = None,
                   ) -> tuple[list[tuple[RunLog, SuiteOutcome]], list[SuiteOutcome]]:
    """Each merged suite's (redacted) log with its outcome (the suite's location in the repository; its
    agent when several ran), recorded in the history as an unsharded run would be (the shards
    record nothing); and an outcome for each suite the shard jobs could not run
    (``failed_suites`` of their results files). With ``ledger`` (input ``evidence-ledger``) the
    merged pairs join the evidence ledger, signed with the key in ``environ``."""
    from ..log.results import redacted
    from ..scoring.trend import record_into
    from ..session import into_ledger

    files = shard_files(root, own_output)
    failed = failed_suites(files, workspace)
    shards = load_shards(files, allow_none=bool(failed))
    logs = []
    for log in merge_shards(shards):
        if history is not None:
            log = record_into(log, history)
        logs.append(into_ledger(redacted(log), ledger, environ or {}))
    # A run under several agents: each suite's outcome (and its results file) per agent.
    several = len({log.settings.adapter.name for log in logs}) > 1
    merged = [(log, SuiteOutcome(_location(log, workspace), agent=log.settings.adapter.name if several else None))
              for log in logs]
    return merged, failed


def failed_suites(files: list[Path], workspace: Path) -> list[SuiteOutcome]:
    """One outcome per suite (and agent) that a shard job named as failed, with its reason."""
    outcomes: dict[tuple[str, str | None], SuiteOutcome] = {}
    for path in files:
        try:
            entries = json.loads(path.read_text(encoding="utf-8")).get("failed_suites") or []
        except (OSError, ValueError, AttributeError) as exc:
            raise MergeError(f"{path}: cannot be read as a results document ({exc})") from None
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("suite"), str):
                raise MergeError(f"{path}: a failed_suites entry without a suite")
            rel, agent = entry["suite"], entry.get("agent")
            if (rel, agent) not in outcomes:
                why = f"{entry.get('failure') or 'failed'} (shard {entry.get('shard') or '?'})"
                outcomes[(rel, agent)] = SuiteOutcome(SuiteLocation(workspace / rel, rel), failure=why,
                                                      agent=agent if isinstance(agent, str) else None)
    return list(outcomes.values())


def _location(log: RunLog, workspace: Path) -> SuiteLocation:
    directory = Path(log.settings.suite.path).parent
    absolute = directory if directory.is_absolute() else workspace / directory
    try:
        rel = absolute.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        # The shards ran in another checkout path: the suite keeps the path they recorded.
        rel = directory.as_posix()
    return SuiteLocation(absolute, rel)
