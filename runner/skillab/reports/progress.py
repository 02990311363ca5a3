"""Live progress on stderr while a run goes: a ``rich`` bar on a terminal, ``[n/N]`` lines
otherwise (pipes, CI logs), nothing with ``--quiet``.

Both show the same facts: records done of planned, elapsed time, ETA, tokens and cost so far,
and failures so far. ``NO_COLOR`` turns colour off (rich honours it; plain lines have none).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from ..core.events import CaseFinished, Event, Notice, RunStarted, TriggerTrialFinished

FAILING = ("flip_to_fail", "fail_kept", "error")


class Tally:
    """Running totals over the finished records of every suite of the run."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.tokens = 0
        self.cost: float | None = None
        self.failures = 0
        self.errors = 0
        # Each suite's judge usage so far: the events carry it cumulative, so the latest counts.
        self._judges: dict[str, Any] = {}

    def add(self, tick: CaseFinished) -> None:
        for arm in (tick.record.with_skill, tick.record.without_skill, tick.record.original):
            if arm is None or arm.cached:
                continue
            self.tokens += arm.usage.total_tokens
            if arm.usage.cost_usd is not None:
                self.cost = (self.cost or 0.0) + arm.usage.cost_usd
        if tick.judge_usage is not None:
            before = self._judges.get(tick.skill)
            self._judges[tick.skill] = tick.judge_usage
            self.tokens += tick.judge_usage.total_tokens - (before.total_tokens if before else 0)
            spent = (tick.judge_usage.cost_usd or 0.0) - ((before.cost_usd or 0.0) if before else 0.0)
            if tick.judge_usage.cost_usd is not None:
                self.cost = (self.cost or 0.0) + spent
        if tick.record.outcome == "error":
            self.errors += 1
        elif tick.record.outcome in FAILING:
            self.failures += 1

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def eta(self, done: int, planned: int) -> float | None:
        if done <= 0 or planned <= done:
            return None
        return self.elapsed() / done * (planned - done)

    def usage_text(self) -> str:
        cost = "" if self.cost is None else f" · ${self.cost:.4f}"
        return f"{self.tokens:,} tokens{cost}"


def clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = int(seconds)
    return f"{seconds // 60:d}:{seconds % 60:02d}" if seconds < 3600 else f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class PlainProgress:
    """One line per finished record: ``[3/40] case (run 1): flip_to_pass · 0:12 elapsed ...``."""

    name = "progress display"

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self.tally = Tally()

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def message(self, text: str) -> None:
        print(f"skillab: {text}", file=self.stream, flush=True)

    def on_event(self, event: Event) -> None:
        show(self, event)

    def tick(self, tick: CaseFinished) -> None:
        self.tally.add(tick)
        record = tick.record
        versus = f"; vs original: {record.original_outcome}" if record.original_outcome else ""
        print(
            f"[{tick.done}/{tick.planned}] {record.case_name} (run {record.run_index + 1}): "
            f"{record.outcome}{versus} · {clock(self.tally.elapsed())} elapsed · "
            f"ETA {clock(self.tally.eta(tick.done, tick.planned))} · {self.tally.usage_text()} · "
            f"{self.tally.failures} failed, {self.tally.errors} errored",
            file=self.stream, flush=True,
        )


class LiveProgress:
    """A rich progress bar, redrawn in place; finished failures are printed above it."""

    name = "progress display"

    def __init__(self, stream: IO[str]):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.tally = Tally()
        self.console = Console(file=stream, stderr=stream is sys.stderr)
        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA {task.fields[eta]} · {task.fields[usage]} · {task.fields[failures]}"),
            console=self.console,
            transient=True,
        )
        self.task: Any = None

    def __enter__(self) -> LiveProgress:
        self.bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.bar.stop()

    def message(self, text: str) -> None:
        self.console.print(f"skillab: {text}", markup=False, highlight=False)

    def on_event(self, event: Event) -> None:
        show(self, event)

    def tick(self, tick: CaseFinished) -> None:
        self.tally.add(tick)
        record = tick.record
        if self.task is None or self.bar.tasks[self.task].description != tick.skill:
            self.task = self.bar.add_task(tick.skill, total=tick.planned, eta="--:--", usage="",
                                          failures="")
        if record.outcome in FAILING:
            style = "red" if record.outcome != "error" else "yellow"
            self.console.print(f"[{style}]{record.outcome}[/{style}] {_escape(record.case_name)} "
                               f"(run {record.run_index + 1})", highlight=False)
        self.bar.update(
            self.task, completed=tick.done,
            eta=clock(self.tally.eta(tick.done, tick.planned)),
            usage=self.tally.usage_text(),
            failures=f"{self.tally.failures} failed, {self.tally.errors} errored",
        )


def describe(event: Event) -> str | None:
    """The line a log shows for an event, or None for events it does not show."""
    if isinstance(event, RunStarted):
        part = f", shard {event.shard}" if event.shard else ""
        return (f"running {event.suite}: {event.cases} cases x {event.runs} run(s), "
                f"adapter {event.adapter}{part}")
    if isinstance(event, CaseFinished):
        record = event.record
        versus = f"; vs original: {record.original_outcome}" if record.original_outcome else ""
        return f"{record.case_name} (run {record.run_index + 1}): {record.outcome}{versus}"
    if isinstance(event, TriggerTrialFinished):
        return (f"trigger {event.query} (run {event.run_index + 1}, {event.arm}): "
                + (f"error: {event.error}" if event.error else f"loaded {', '.join(event.loaded) or 'nothing'}"))
    if isinstance(event, Notice):
        return event.text
    return None


def show(display: PlainProgress | LiveProgress, event: Event) -> None:
    """A display's share of the event stream: finished cases move the bar, the rest are lines."""
    if isinstance(event, CaseFinished):
        display.tick(event)
        return
    text = describe(event)
    if text is not None:
        display.message(text)


class LineReporter:
    """Every event as one line handed to ``write`` (the Action's log)."""

    name = "log"

    def __init__(self, write: Callable[[str], None]):
        self.write = write

    def on_event(self, event: Event) -> None:
        text = describe(event)
        if text is not None:
            self.write(text)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def open_progress(quiet: bool, stream: IO[str] | None = None) -> PlainProgress | LiveProgress | None:
    """The display for this process: none when quiet, live on an interactive terminal outside
    CI, plain lines otherwise."""
    if quiet:
        return None
    stream = stream or sys.stderr
    interactive = hasattr(stream, "isatty") and stream.isatty()
    if interactive and not os.environ.get("CI") and os.environ.get("TERM") != "dumb":
        return LiveProgress(stream)
    return PlainProgress(stream)
