"""Reports by name (``--reporter NAME[=PATH]``; ``--junit``/``--markdown``/``--html`` are the
built-ins by their own flags). Names resolve through ``core.plugins`` (group
``skillab.reporters``), so an installed package can add a reporter."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core import plugins
from ..core.contracts import Reporter
from ..core.runlog import RunLog
from ..errors import UsageError


@dataclass(frozen=True)
class LogReporter:
    """A built-in report: one file rendered from the runs by ``render`` (``"module:function"``
    taking the logs and the path)."""

    description: str
    render: str

    def write(self, logs: Sequence[RunLog], path: Path | None) -> None:
        if path is None:
            raise UsageError(f"the {self.description} needs a path: --reporter NAME=PATH")
        module, _, function = self.render.partition(":")
        getattr(importlib.import_module(module), function)(logs, path)


JUNIT = LogReporter("JUnit XML", "skillab.reports.junit:write_junit")
MARKDOWN = LogReporter("markdown report", "skillab.reports.markdown:write_markdown")
HTML = LogReporter("HTML report", "skillab.reports.html:write_html")


def reporter(name: str) -> Reporter:
    """The reporter called ``name``; an unknown name is a usage error listing the known ones."""
    try:
        return plugins.load("reporters", name)
    except plugins.UnknownPlugin as exc:
        raise UsageError(f"unknown reporter {name!r} (choose from {', '.join(exc.available)})") from None


def write_reports(selected: Sequence[tuple[str, Path | None]], logs: Sequence[RunLog]) -> list[str]:
    """Write each selected report of the (written, redacted) logs; what each wrote, to
    announce."""
    if not selected:
        return []
    written = []
    for name, path in selected:
        chosen = reporter(name)
        chosen.write(logs, path)
        written.append(f"{path} ({chosen.description})" if path is not None else chosen.description)
    return written
