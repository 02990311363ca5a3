"""The checkpoint: a journal of finished arms, one JSON line each, appended as they land.

A run killed outright (SIGKILL, power loss) keeps every arm that finished; ``--resume`` reads
the journal beside the results document it names, so those arms do not run again. Appending
one line per arm costs the same at the first arm as at the ten-thousandth, where rebuilding
the whole document each time grew with the run. The journal goes once a run finishes whole.

A line the disk has no room for is taken back (the file is cut to its last whole line) and the
journal stops there, so what it holds stays readable; ``failure`` says why it stopped.
``--resume`` puts the journal's arms into the documents it read (``engine.resume.with_journal``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.events import ArmFinished, Event, RunStarted
from ..secrets import Redactor

FORMAT = "skillab.checkpoint/1"
ARMS = ("with_skill", "without_skill", "original", "placebo")


def journal_path(results: Path) -> Path:
    """``results.json`` → ``results.checkpoint.jsonl`` beside it."""
    results = Path(results)
    return results.with_name(f"{results.stem}.checkpoint.jsonl")


class Checkpoint:
    """Appends each finished arm to the journal, redacted as the document is."""

    name = "checkpoint"

    def __init__(self, path: Path, redactor: Redactor, *, append: bool = False):
        self.path = Path(path)
        self.redactor = redactor
        self._append = append
        self._fd: int | None = None
        self._suite: dict[str, Any] = {}
        # Why the journal stopped taking arms (a full disk), or None.
        self.failure: str | None = None

    def on_event(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._suite = {"path": event.suite, "skill": event.skill, "skill_hash": event.skill_hash,
                           "suite_hash": event.suite_hash, "adapter": event.adapter, "model": event.model}
            self._write({"format": FORMAT, "suite": self._suite})
        elif isinstance(event, ArmFinished):
            self._write({"suite": event.suite, "adapter": self._suite.get("adapter"),
                         "case_name": event.case, "run_index": event.run_index, "arm": event.arm,
                         "record": event.record.to_dict()})

    def _write(self, entry: dict[str, Any]) -> None:
        if self.failure is not None:
            return
        line = (self.redactor.dumps(entry) + "\n").encode("utf-8")
        end = None
        try:
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                mode = os.O_APPEND if self._append else os.O_TRUNC
                self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | mode | os.O_CLOEXEC, 0o644)
            end = os.lseek(self._fd, 0, os.SEEK_END)
            written = 0
            while written < len(line):
                written += os.write(self._fd, line[written:])
        except OSError as exc:
            self.failure = f"{self.path} stopped taking arms ({exc.strerror or exc})"
            if self._fd is not None and end is not None:
                try:
                    os.ftruncate(self._fd, end)  # the half line goes; the whole ones stay
                except OSError:
                    pass

    def close(self, *, complete: bool) -> None:
        """Done: a complete run needs no journal, an incomplete one keeps it for ``--resume``."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if complete:
            self.path.unlink(missing_ok=True)


def read_journal(path: Path, on_skip: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """The journal as one partial document per suite (suite, adapter, models and the finished
    arms as cases), as ``--resume`` reads a results document. A line that is not a journal
    entry (cut short by a kill, or damaged) is skipped, its number told to ``on_skip``: its arm
    runs again."""
    # One suite may run under several agents (``--adapter A,B``): each is its own experiment.
    suites: dict[tuple[str, str], dict[str, Any]] = {}
    cases: dict[tuple[str, str], dict[tuple[str, int], dict[str, Any]]] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if _is_header(entry):
            suite = entry["suite"]
            which = (suite["path"], suite["adapter"])
            suites[which] = {
                "suite": {"path": suite["path"], "skill": suite["skill"], "skill_hash": suite["skill_hash"],
                          "suite_hash": suite.get("suite_hash")},
                "adapter": {"name": suite["adapter"]},
                "models": {"agent": suite["model"]},
            }
            cases.setdefault(which, {})
        elif _is_arm(entry):
            which = (entry["suite"], entry["adapter"])
            if which not in suites:
                continue
            key = (entry["case_name"], entry["run_index"])
            case = cases[which].setdefault(key, {"case_name": key[0], "run_index": key[1]})
            case[entry["arm"]] = entry["record"]
        elif line.strip() and on_skip is not None:
            on_skip(number)
    return [{**doc, "cases": list(cases[which].values())} for which, doc in suites.items()]


def _is_header(entry: Any) -> bool:
    suite = entry.get("suite") if isinstance(entry, dict) and "format" in entry else None
    return isinstance(suite, dict) and all(isinstance(suite.get(k), str)
                                           for k in ("path", "skill", "skill_hash", "adapter"))


def _is_arm(entry: Any) -> bool:
    return (isinstance(entry, dict) and "format" not in entry
            and isinstance(entry.get("suite"), str) and isinstance(entry.get("case_name"), str)
            and type(entry.get("run_index")) is int and entry["run_index"] >= 0
            and entry.get("arm") in ARMS and isinstance(entry.get("record"), dict))
