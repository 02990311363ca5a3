"""The process around ``Action``: whom it runs as, how it stops, and what it writes when it
cannot even start (a bad input or event)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from ..errors import EXIT_INTERRUPTED, SkillabError
from ..reports import escape
from ..secrets import redact
from .action import Action
from .runtime import drop_to_owner, stop_on_signals
from .workflow_commands import Log, write_step_files


def main(argv: Sequence[str] | None = None, *, env: Mapping[str, str] | None = None,
         stdout: TextIO | None = None) -> int:
    """Run the action; ``env`` defaults to the process environment (tests pass their own).

    As the container's process (``env`` None) it also drops to the workspace owner's uid and
    turns SIGTERM into the same clean stop as SIGINT; see ``runtime``.
    """
    argparse.ArgumentParser(
        prog="skillab action",
        description="GitHub Action entrypoint: reads INPUT_* and GITHUB_* environment variables.",
    ).parse_args(list(argv or []))
    environ = os.environ if env is None else env
    log = Log(stdout)
    restore = stop_on_signals()
    try:
        if env is None:
            identity = drop_to_owner(Path(os.environ.get("GITHUB_WORKSPACE") or "."), os.environ)
            if identity.note:
                log.line(f"skillab: {identity.note}")
        try:
            action = Action(environ, log)
        except SkillabError as exc:
            return could_not_start(exc, environ, log)
        code = action.run()
    except KeyboardInterrupt:
        log.error("skillab: interrupted before the run started")
        code = EXIT_INTERRUPTED
    finally:
        restore()
    if code == EXIT_INTERRUPTED and env is None:
        # Arm threads the engine abandoned must not hold the exit; everything is written.
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)
    return code


def could_not_start(exc: SkillabError, environ: Mapping[str, str], log: Log) -> int:
    """A bad input or event: one annotation, a summary line, and ``verdict: error``."""
    message = redact(str(exc), environ)
    log.error(message)
    summary, output = environ.get("GITHUB_STEP_SUMMARY"), environ.get("GITHUB_OUTPUT")
    write_step_files(
        log,
        Path(summary) if summary else None,
        f"## ⚠️ skillab could not run\n\n{escape.inline(message, 2000)}\n",
        Path(output) if output else None,
        {"verdict": "error", "delta-pts": "", "suites": "[]", "results-path": "", "report-path": "",
         "html-path": ""},
    )
    return exc.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
