"""``skillab report RESULTS``: the reports of a finished run, rendered again; nothing runs."""

from __future__ import annotations

import argparse

from ..errors import EXIT_OK, UsageError
from ..reports.terminal import render_table
from .report_files import check_destinations, write_reports
from .saved_results import finished_logs, load_results


def cmd_report(args: argparse.Namespace) -> int:
    """Re-render the reports of a results document; nothing runs."""
    check_destinations(args)
    documents = load_results(args.results)
    if any("verdict" not in doc for doc in documents):
        # A run killed outright (SIGKILL), or without room for its document, leaves only its
        # checkpoint journal: no aggregate to show.
        raise UsageError(f"{args.results}: only the checkpoint journal of an unfinished run is there (the run "
                         "was killed, or had no room to write its results); the journal keeps the finished "
                         f"arms: `skillab run ... --resume {args.results}` finishes the run and writes the document")
    logs = finished_logs(args.results, documents)
    print("\n\n".join(render_table(log, verbose=args.verbose) for log in logs))
    write_reports(args, logs)
    return EXIT_OK
