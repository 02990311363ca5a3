"""``skillab diff A B``: what changed between two results documents, and is it noise."""

from __future__ import annotations

import argparse
import json

from ..errors import EXIT_GATE, EXIT_OK
from ..reports.partial import interruption
from ..scoring.compare import compare_documents, render_diff
from .console import say
from .saved_results import finished_logs, load_results


def cmd_diff(args: argparse.Namespace) -> int:
    before, after = load_results(args.before), load_results(args.after)
    diffs, only_before, only_after = compare_documents(before, after, arm=args.arm, alpha=args.alpha)
    if args.json:
        print(json.dumps({"format": "skillab.diff/1", "before": str(args.before),
                          "after": str(args.after), "alpha": args.alpha,
                          "suites": [d.to_dict() for d in diffs],
                          "only_before": only_before, "only_after": only_after}, indent=2))
    else:
        print(render_diff(diffs, only_before, only_after, (str(args.before), str(args.after)), args.alpha))
        # A partial run's missing cases read as "only in" the other: say why they are missing.
        for label, path, docs in (("A", args.before, before), ("B", args.after, after)):
            # A suite only the checkpoint journal knows has no summary, and no headline to say.
            for log in finished_logs(path, [doc for doc in docs if "verdict" in doc]):
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
