"""The run history as a reporter: each finished suite's document joins the trend."""

from __future__ import annotations

from pathlib import Path

from ..core.events import Event, RunFinished


class HistoryReporter:
    """Appends each whole, finished suite run to the history and gives its document the trend.
    A shard is part of a run: the merged document is the one that has a place in the trend."""

    name = "history"

    def __init__(self, path: Path):
        self.path = Path(path)

    def on_event(self, event: Event) -> None:
        if isinstance(event, RunFinished) and not event.interrupted and not event.sharded:
            from ..engine.history import record_into

            record_into(event.document, self.path)
