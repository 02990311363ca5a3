"""The files a session writes from its suites' logs: the results document (one suite's, or the
set), JUnit, the markdown and HTML reports, and per-arm transcripts."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.runlog import RunLog


@dataclass(frozen=True)
class Outputs:
    """Where each output goes; None leaves it out."""

    results: Path | None = None
    junit: Path | None = None
    markdown: Path | None = None
    html: Path | None = None
    trajectories: Path | None = None


def write_outputs(logs: Sequence[RunLog], outputs: Outputs, *, markdown: str | None = None,
                  announce: Callable[[str], None] = lambda _text: None,
                  failed: list[dict[str, Any]] | None = None) -> None:
    """Each output ``outputs`` names, announced as written; ``markdown`` is the report's text
    when the caller rendered it (with its own notes), else the plain report of ``logs``."""

    if outputs.markdown is not None:
        from ..reports.markdown import render_markdown

        text = render_markdown(logs) if markdown is None else markdown
        with _naming(outputs.markdown):
            outputs.markdown.parent.mkdir(parents=True, exist_ok=True)
            outputs.markdown.write_text(text, encoding="utf-8")
    if outputs.results is not None:
        from ..log.results import document_set, write_document

        with _naming(outputs.results):
            write_document(document_set([log.to_json() for log in logs], failed), outputs.results)
    if outputs.trajectories is not None:
        with _naming(outputs.trajectories):
            write_trajectories(logs, outputs.trajectories)
        announce(f"wrote {outputs.trajectories}/ (one transcript per arm)")
    if outputs.junit is not None:
        from ..reports.junit import write_junit

        with _naming(outputs.junit):
            write_junit(logs, outputs.junit)
        announce(f"wrote {outputs.junit} (JUnit XML)")
    if outputs.markdown is not None:
        announce(f"wrote {outputs.markdown} (markdown report)")
    if outputs.html is not None:
        from ..reports.html import write_html

        with _naming(outputs.html):
            write_html(logs, outputs.html)
        announce(f"wrote {outputs.html} (HTML report)")


@contextmanager
def _naming(path: Path) -> Iterator[None]:
    """A failed write names the output it was for (a write's error carries no file name)."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


def write_trajectories(logs: Sequence[RunLog], directory: Path) -> None:
    """One canonical v1 transcript per arm, ``<skill>/<case>.run<k>.<arm>.txt``, and per trigger
    trial, ``<skill>/trigger.<query>.run<k>.<arm>.txt``."""
    from ..log.results import safe_file_name

    for log in logs:
        base = directory / safe_file_name(log.settings.suite.skill)
        base.mkdir(parents=True, exist_ok=True)
        for record in log.records:
            for arm, result in (("with_skill", record.with_skill), ("without_skill", record.without_skill),
                                ("original", record.original)):
                if result is not None:
                    name = f"{safe_file_name(record.case_name)}.run{record.run_index + 1}.{arm}.txt"
                    (base / name).write_text(result.transcript + "\n", encoding="utf-8")
        for trial in log.settings.triggers.trial_records if log.settings.triggers is not None else ():
            name = f"trigger.{safe_file_name(trial.query)}.run{trial.run_index + 1}.{trial.arm}.txt"
            (base / name).write_text(trial.transcript + "\n", encoding="utf-8")
