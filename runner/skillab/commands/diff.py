"""``skillab diff A B``: what changed between two results documents, and is it noise."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..core.records import CaseRecord
from ..core.runlog import RunLog
from ..core.wire import from_wire
from ..errors import EXIT_GATE, EXIT_OK, UsageError
from ..reports.partial import interruption
from ..scoring.compare import compare_runs, render_diff
from .console import say
from .saved_results import finished_logs, load_results


def cmd_diff(args: argparse.Namespace) -> int:
    (before, logs_before), (after, logs_after) = _saved(args.before), _saved(args.after)
    diffs, only_before, only_after = compare_runs(before, after, arm=args.arm, alpha=args.alpha)
    if args.json:
        print(json.dumps({"format": "skillab.diff/1", "before": str(args.before),
                          "after": str(args.after), "alpha": args.alpha,
                          "suites": [d.to_dict() for d in diffs],
                          "only_before": only_before, "only_after": only_after}, indent=2))
    else:
        print(render_diff(diffs, only_before, only_after, (str(args.before), str(args.after)), args.alpha))
        # A partial run's missing cases read as "only in" the other: say why they are missing.
        for label, path, logs in (("A", args.before, logs_before), ("B", args.after, logs_after)):
            for log in logs:
                stopped = interruption(log)
                if stopped:
                    say(f"{label} {path}: {log.settings.suite.skill} is a partial run ({stopped}); "
                        "its missing cases are not compared")
    worse = [d for d in diffs if d.significant and len(d.regressed) > len(d.improved)]
    if args.fail_on_regression and worse:
        for d in worse:
            say(f"regression: {d.suite}: {len(d.regressed)} cases regressed (p={d.p_value:.3f})")
        return EXIT_GATE
    return EXIT_OK


def _saved(path: Path) -> tuple[dict[str, list[CaseRecord]], list[RunLog]]:
    """Each suite's records by skill name, in the file's order, and its finished runs. A suite
    only the checkpoint journal knows (a run killed outright) has records but no run."""
    records: dict[str, list[CaseRecord]] = {}
    logs: list[RunLog] = []
    for doc in load_results(path):
        if "verdict" in doc:
            [log] = finished_logs(path, [doc])
            logs.append(log)
            records[log.settings.suite.skill] = log.records
        else:
            records[str(doc["suite"]["skill"])] = _journal_records(path, doc)
    return records, logs


def _journal_records(path: Path, doc: dict[str, Any]) -> list[CaseRecord]:
    try:
        return from_wire(list[CaseRecord], doc["cases"], "cases")
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: not a skillab checkpoint journal ({exc})") from None
