"""``skillab export --harbor`` and ``skillab import --harbor``: hand a suite to Harbor and read
its trials back (see ``skillab.harbor``)."""

from __future__ import annotations

import argparse

from ..core.defaults import DEFAULT_MAX_TURNS
from ..core.settings import EngineSettings
from ..errors import EXIT_OK
from .merge import publish


def cmd_export(args: argparse.Namespace) -> int:
    from ..engine import prepare_suite
    from ..harbor import export_suite

    several = len(args.paths) > 1
    for target in args.paths:
        prepared = prepare_suite(target, EngineSettings(suite_format=args.suite_format))
        directory = args.harbor / prepared.skill.name if several else args.harbor
        report = export_suite(prepared.suite, prepared.skill, directory, DEFAULT_MAX_TURNS)
        print(f"{prepared.suite.path}: {len(report.tasks)} Harbor tasks in {directory}")
        for name, reason in report.skipped.items():
            print(f"  skipped {name}: {reason}")
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from ..harbor import import_job
    from ..reports.results import document

    return publish(args, [document(import_job(args.harbor, args.tasks, reward_threshold=args.reward_threshold))])
