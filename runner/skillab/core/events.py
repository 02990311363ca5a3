"""What a run reports while it goes: one typed event per step the engine finishes.

The engine emits them in order to one ``Emit`` callable; reporters (progress, the terminal,
the checkpoint journal) subscribe to the stream through ``Broadcast``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from .records import ArmRecord, CaseRecord
from .runlog import RunLog
from .usage import Usage


@dataclass(frozen=True)
class RunStarted:
    """A suite's arms are about to run."""

    suite: str  # the suite file's path
    skill: str
    cases: int
    runs: int
    adapter: str
    model: str | None = None
    skill_hash: str = ""
    shard: str | None = None
    # ``engine.meta.suite_hash``: ``--resume`` refuses arms graded by another suite version.
    suite_hash: str = ""


@dataclass(frozen=True)
class ArmFinished:
    """One arm of one (case, run) is graded (or came from the baseline cache)."""

    suite: str
    skill: str
    case: str
    run_index: int
    arm: str  # with_skill, without_skill or original
    record: ArmRecord


@dataclass(frozen=True)
class CaseFinished:
    """Every arm of one (case, run) is in: the pair is classified."""

    skill: str
    done: int
    planned: int
    record: CaseRecord
    # The judge's usage over the suite so far (cumulative), when a model judges: its share of
    # the live cost, which no arm record carries.
    judge_usage: Usage | None = None


@dataclass(frozen=True)
class TriggerTrialFinished:
    """One trigger trial: which skills the agent loaded for a query, or why it errored."""

    query: str
    run_index: int
    arm: str
    loaded: tuple[str, ...]
    error: str | None = None


@dataclass(frozen=True)
class Notice:
    """Something the person watching the run should know now (a stop, a new phase)."""

    text: str


@dataclass(frozen=True)
class RunFinished:
    """A suite's run log is complete (``interrupted`` when it stopped early)."""

    suite: str
    log: RunLog
    interrupted: bool
    sharded: bool = False


Event = RunStarted | ArmFinished | CaseFinished | TriggerTrialFinished | Notice | RunFinished
Emit = Callable[[Event], None]


class Subscriber(Protocol):
    """Anything that follows a run's events; ``name`` says what it writes, for warnings."""

    name: str

    def on_event(self, event: Event) -> None: ...


class SubscriberFailed(Exception):
    """A subscriber could not write what it keeps (a full disk): the run goes on without it."""

    def __init__(self, name: str, error: OSError):
        super().__init__(f"a {name} could not be written ({error.strerror or error})")


class Broadcast:
    """One ``Emit`` for many subscribers: each gets every event, in order. A subscriber that
    fails with ``OSError`` does not keep the others from theirs; the first failure is raised
    after, as ``SubscriberFailed``."""

    def __init__(self, subscribers: Iterable[Subscriber] = ()):
        self.subscribers = list(subscribers)

    def __call__(self, event: Event) -> None:
        failed: SubscriberFailed | None = None
        for subscriber in self.subscribers:
            try:
                subscriber.on_event(event)
            except OSError as exc:
                failed = failed or SubscriberFailed(subscriber.name, exc)
        if failed is not None:
            raise failed


def ignore(event: Event) -> None:
    """The ``Emit`` of a run nobody watches."""
