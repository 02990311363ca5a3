"""``skillab merge``: one results document from the documents of ``run --shard I/N``."""

from __future__ import annotations

import argparse
import json
import os

from ..core.defaults import DEFAULT_HISTORY_PATH
from ..core.runlog import RunLog
from ..reports.terminal import render_table
from .console import say
from .report_files import write_reports
from .run import gate_exit


def cmd_merge(args: argparse.Namespace) -> int:
    from ..log.results import redacted
    from ..reports.shard_files import load_shards
    from ..scoring.merge import merge_shards

    logs = merge_shards(load_shards(args.documents))
    if not args.no_history:
        from ..scoring.trend import record_into

        # The merged run takes the place in the trend that its shards did not.
        logs = [record_into(log, args.history or DEFAULT_HISTORY_PATH) for log in logs]
    from ..session import into_ledger

    # The merged run's pairs are its shards': the ledger counts each once, whoever adds it.
    return publish(args, [into_ledger(redacted(log), args.evidence_ledger, os.environ) for log in logs])


def publish(args: argparse.Namespace, logs: list[RunLog]) -> int:
    """Write the document (one suite, or a set), the reports and the table; apply the gates."""
    from ..log.results import document_set, write_document

    documents = [log.to_json() for log in logs]
    merged = documents[0] if len(documents) == 1 else document_set(documents)
    write_document(merged, args.output)
    write_reports(args, logs)
    if args.json:
        print(json.dumps(merged, indent=2, ensure_ascii=False))
    else:
        print("\n\n".join(render_table(log) for log in logs))
    say(f"wrote {args.output} (results document)")
    return gate_exit(args, logs)
