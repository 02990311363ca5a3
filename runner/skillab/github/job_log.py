"""What the Action's job log shows of a run: each event as a line, with paths as the repository
names them; a run without a sandbox said first, in the Action's words (the input to set); and
each provider retry wait as it happens."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.settings import RunConfig
from ..errors import SkillabError
from ..secrets import redact


def job_log(log: Any, env: Mapping[str, str], workspace: Path, configs: Sequence[RunConfig]) -> Any:
    """The session's reporter for ``log`` (the Action's), after the start-of-run warnings."""
    from ..providers.retry import on_retry
    from ..reports.progress import LineReporter
    from ..sandbox.backend import INSTALL_ACTION, choose_sandbox, fallback_warning

    for name in {c.engine.sandbox for c in configs if c.engine.sandbox != "image"}:
        try:
            warning = fallback_warning(choose_sandbox(name), INSTALL_ACTION)
        except SkillabError:
            continue  # a backend that cannot work here: each suite reports it as it runs
        if warning:
            log.warning(warning)
            break
    on_retry(lambda text: log.line("  waiting: " + redact(text, env)))
    # The runner's checkout directory is noise in a log: paths start at the repository.
    root = f"{Path(workspace).resolve()}/"
    return LineReporter(lambda text: log.line("  " + redact(text.replace(root, ""), env)))
