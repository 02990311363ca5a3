"""The files a command writes besides the results document: every destination checked before
anything runs, and the optional reports written from finished logs. ``run``, ``report``,
``merge`` and ``regrade`` share them; ``report`` imports this, not the run command, so printing
a saved document does not load the engine's session."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.runlog import RunLog
from ..errors import OutputError
from .console import say


def check_destinations(args: argparse.Namespace) -> None:
    """Every path the run will write, checked before any case runs (exit 2, nothing spent).
    The history is not among them: a history that cannot be written is a warning, the run's
    results stand without it."""
    from ..writable import check_directory_destination, check_file_destination

    for flag, attr in (("--output", "output"), ("--junit", "junit"), ("--markdown", "markdown"),
                       ("--html", "html")):
        path = getattr(args, attr, None)
        if path is not None:
            check_file_destination(path, flag)
    for name, path in getattr(args, "reporter", None) or []:
        if path is not None:
            check_file_destination(path, f"--reporter {name}")
    if getattr(args, "trajectories", None) is not None:
        check_directory_destination(args.trajectories, "--trajectories")
    # A cache directory the user named must work; the default one degrades as it always has.
    if getattr(args, "cache_dir", None) is not None and not args.no_cache:
        check_directory_destination(args.cache_dir, "--cache-dir")


def write_reports(args: argparse.Namespace, logs: list[RunLog], *, results_path: Path | None = None) -> None:
    """The optional report files of the (redacted) logs, each announced; ``results_path``: the
    document they render, already written, which a failure message points back to."""
    from ..reports.reporters import write_reports as write_selected
    from ..session.outputs import Outputs, write_outputs

    outputs = Outputs(junit=args.junit, markdown=args.markdown, html=args.html,
                      trajectories=getattr(args, "trajectories", None))
    try:
        write_outputs(logs, outputs, announce=say)
        # Reporters by name (``--reporter NAME[=PATH]``): the built-ins again, or an installed plugin's.
        for written in write_selected(getattr(args, "reporter", None) or [], logs):
            say(f"wrote {written}")
    except OSError as exc:
        where = exc.filename or "a report"
        kept = (f"; {results_path} is whole, and `skillab report {results_path}` with the same report "
                "flags writes them again" if results_path is not None else "")
        raise OutputError(f"cannot write {where} ({exc.strerror or exc}){kept}") from None
