"""``skillab audit PATH...``: each suite checked against its skill and the run history before
any model call; ``--max-leaks N`` fails (exit 1) a suite whose answers the skill gives away."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..core.audit import AuditBlock
from ..core.defaults import DEFAULT_HISTORY_PATH
from ..core.wire import to_wire
from ..errors import EXIT_GATE, EXIT_OK, EXIT_USAGE, SkillabError, SuiteError
from .targets import suite_targets


def audit_path(path: Path, suite_format: str | None, history: Path | None) -> tuple[str, AuditBlock]:
    """The suite at ``path`` audited; raises ``SkillabError`` when it cannot be loaded."""
    from ..skill import load_skill
    from ..suite import load_suite
    from ..suite_audit import audit_suite, history_for

    suite = load_suite(path, format=suite_format)
    skill = load_skill(suite.skill_dir or suite.path.parent)
    entries = history_for(suite, history) if history is not None else []
    return str(suite.path), audit_suite(suite, skill, entries)


def cmd_audit(args: argparse.Namespace) -> int:
    failed, over = False, []
    documents = []
    history = None if args.no_history else args.history or DEFAULT_HISTORY_PATH
    for path in suite_targets(args.paths, args.suite_format):
        try:
            where, block = audit_path(path, args.suite_format, history)
        except SuiteError as exc:
            failed = True
            for issue in exc.issues:
                print(f"error: {issue}", file=sys.stderr)
            continue
        except SkillabError as exc:
            failed = True
            print(f"error: {exc}", file=sys.stderr)
            continue
        if args.max_leaks is not None and block.leaks > args.max_leaks:
            over.append(f"{where}: {block.leaks} answer leaks, more than --max-leaks {args.max_leaks}")
        if args.json:
            documents.append({"suite": where, **to_wire(block), "leaks": block.leaks})
            continue
        print(summary_line(where, block))
        for finding in block.findings:
            print(f"  {finding.one_line()}")
    if args.json:
        print(json.dumps(documents, indent=2))
    for line in over:
        print(f"gate: {line}", file=sys.stderr)
    return EXIT_USAGE if failed else EXIT_GATE if over else EXIT_OK


def summary_line(where: str, block: AuditBlock) -> str:
    if not block.findings:
        return f"audit: {where}: no findings"
    levels = ", ".join(f"{sum(f.severity == s for f in block.findings)} {s}" for s in ("high", "medium", "low")
                       if any(f.severity == s for f in block.findings))
    return f"audit: {where}: {len(block.findings)} findings ({levels}); {block.leaks} counted as leaks"
