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

    several, taken = len(args.paths) > 1, set[str]()
    for target in args.paths:
        prepared = prepare_suite(target, EngineSettings(suite_format=args.suite_format))
        directory = args.harbor / _subdirectory(prepared.skill.name, taken) if several else args.harbor
        report = export_suite(prepared.suite, prepared.skill, directory, DEFAULT_MAX_TURNS)
        print(f"{prepared.suite.path}: {len(report.tasks)} Harbor tasks in {directory}")
        for name, reason in report.skipped.items():
            print(f"  skipped {name}: {reason}")
    return EXIT_OK


def _subdirectory(skill: str, taken: set[str]) -> str:
    """One suite's folder of a several-suite export: a file name inside DIR (a skill's name is
    its author's text), never one an earlier suite of the same export already wrote."""
    from ..log.results import safe_file_name

    base = safe_file_name(skill)
    name, n = base, 1
    while name.casefold() in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name.casefold())
    return name


def cmd_import(args: argparse.Namespace) -> int:
    from ..harbor import import_job
    from ..log.results import redacted

    return publish(args, [redacted(import_job(args.harbor, args.tasks, reward_threshold=args.reward_threshold))])
