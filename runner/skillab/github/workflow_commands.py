"""GitHub Actions workflow commands: annotations, log groups, step outputs and the job summary.

Everything printed here goes through GitHub's escaping rules, so text from a suite or a model
can neither end a command early nor start a command of its own. The runner reads two command
forms: ``::name::`` at the start of a line (after blanks), and the legacy ``##[name]`` ANYWHERE
in a line; both are broken with a zero-width space wherever they occur in text we echo, while
bidi and zero-width characters already in that text are shown as ``<U+XXXX>``.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

from ..core.inert_text import LEGACY_COMMAND as _LEGACY
from ..core.inert_text import ZWSP, neutralize, reveal

AnnotationLevel = Literal["error", "warning", "notice"]


def escape_data(text: str) -> str:
    """A command's message: ``%``, CR and LF are encoded so the command stays on one line, and
    no legacy ``##[`` command can hide in it."""
    text = _LEGACY.sub("#" + ZWSP + "#", reveal(text))
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value: also ``:`` and ``,``, which delimit the properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass(frozen=True)
class Annotation:
    """One ``::error``/``::warning``/``::notice`` line, located in a file when possible."""

    level: AnnotationLevel
    message: str
    file: str | None = None
    line: int | None = None
    title: str | None = None

    def render(self) -> str:
        props = []
        if self.file:
            props.append(f"file={escape_property(self.file)}")
        if self.line is not None:
            props.append(f"line={int(self.line)}")
        if self.title:
            props.append(f"title={escape_property(self.title)}")
        head = f"::{self.level}" + (" " + ",".join(props) if props else "")
        return f"{head}::{escape_data(self.message)}"


class Log:
    """The step's log: plain lines, annotations and collapsible groups, on one stream."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stdout

    def line(self, text: str = "") -> None:
        for part in text.splitlines() or [""]:
            print(neutralize(part), file=self.stream, flush=True)

    def annotate(self, annotation: Annotation) -> None:
        print(annotation.render(), file=self.stream, flush=True)

    def error(self, message: str, *, file: str | None = None, line: int | None = None) -> None:
        self.annotate(Annotation("error", message, file, line))

    def warning(self, message: str, *, file: str | None = None, line: int | None = None) -> None:
        self.annotate(Annotation("warning", message, file, line))

    def notice(self, message: str) -> None:
        self.annotate(Annotation("notice", message))

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        print(f"::group::{escape_data(title)}", file=self.stream, flush=True)
        try:
            yield
        finally:
            print("::endgroup::", file=self.stream, flush=True)


def format_output(name: str, value: str, *, delimiter: str | None = None) -> str:
    """One ``$GITHUB_OUTPUT`` entry in the heredoc form, safe for any value on any line count."""
    delimiter = delimiter or f"ghadelimiter_{uuid.uuid4()}"
    if delimiter in name or delimiter in value:
        raise ValueError("the output delimiter occurs in the output itself")
    if not name or "\n" in name or "<<" in name:
        raise ValueError(f"invalid output name {name!r}")
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def write_outputs(path: Path, outputs: dict[str, str]) -> None:
    """Append step outputs to the ``$GITHUB_OUTPUT`` file, each under its own random delimiter."""
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in outputs.items():
            handle.write(format_output(name, value))


def append_summary(path: Path, markdown: str) -> None:
    """Append markdown to ``$GITHUB_STEP_SUMMARY`` (the file is shared by the job's steps)."""
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(markdown if markdown.endswith("\n") else markdown + "\n")


def write_step_files(log: Log, summary_path: Path | None, summary: str,
                     output_path: Path | None, outputs: dict[str, str]) -> None:
    """The job summary and the step outputs; a file the process may not write is annotated."""
    for path, write, what in ((summary_path, lambda p: append_summary(p, summary), "job summary"),
                              (output_path, lambda p: write_outputs(p, outputs), "step outputs")):
        if path is None:
            continue
        try:
            write(path)
        except OSError as exc:
            log.error(f"skillab could not write the {what} to {path} ({exc.strerror or exc}) "
                      f"as uid {os.geteuid()}: give that user write access to the runner's files")
