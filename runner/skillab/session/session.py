"""``Session``: N suites run one after another under one set of reporters, each suite's
log handed on as it lands (redacted: the only form of it anything writes or shows), the spend
cap shared, a stop or Ctrl-C ending the whole."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.events import Broadcast, Subscriber
from ..core.runlog import RunLog
from ..core.settings import RunConfig
from ..suite.mock_script import MOCK_RESPONSES_FILE

if TYPE_CHECKING:
    from ..engine.prepare import Prepared


@dataclass(frozen=True)
class SuiteRun:
    """One suite to run, under one agent's settings."""

    target: Path
    config: RunConfig
    # An earlier document of this suite whose finished arms are kept (``--resume``).
    resume_from: dict[str, Any] | None = None
    # The suite as the preflight loaded it under ``config.engine``: the run uses it instead of
    # parsing the suite again (a 5,000-case suite takes seconds to parse).
    prepared: Prepared | None = field(default=None, repr=False, compare=False)


@dataclass
class SessionResult:
    # Each suite's log, every credential masked (``log.results.redacted``).
    logs: list[RunLog] = field(default_factory=list)
    # Where --keep-workspaces left each suite's arm workspaces.
    kept_workspaces: list[Path] = field(default_factory=list)
    interrupted: bool = False
    # Why the run stopped early (the spend cap), when it did.
    stopped: str | None = None
    # One line per suite that failed once its arms had run (``RunSettings.failure``): its
    # document holds every finished arm.
    failures: list[str] = field(default_factory=list)


# What to do when a suite fails to run: return True to go on with the next suite, False to
# stop; raise to end the session.
OnError = Callable[[SuiteRun, Exception], bool]
OnDocument = Callable[[SuiteRun, RunLog], None]
# Wraps each suite's run and the handling of its failure (the Action's log group).
Around = Callable[[SuiteRun], AbstractContextManager]
# The suite's own settings, worked out as it starts (may fail like the run: see OnError).
Configure = Callable[[SuiteRun, RunConfig], RunConfig]


def suite_config(config: RunConfig, target: Path) -> RunConfig:
    """Per-suite settings: a mock run picks up the skill's own mock-responses.yaml."""
    agent = config.agent
    if agent.adapter != "mock" or agent.mock_responses is not None:
        return config
    directory = target if target.is_dir() else target.parent
    scripted = directory / MOCK_RESPONSES_FILE
    return replace(config, agent=replace(agent, mock_responses=scripted)) if scripted.is_file() else config


def spent_usd(logs: Sequence[RunLog]) -> float:
    return sum(log.summary.usage.total.cost_usd or 0.0 for log in logs)


def recorded(log: RunLog, config: RunConfig) -> RunLog:
    """``log`` with its trend, once the run has its place in the history (``--history``). A shard
    is part of a run: the merged document is the one that has a place in the trend."""
    history = config.engine.history_path
    if history is None or log.interrupted or config.engine.shard is not None:
        return log
    from ..scoring.trend import record_into
    from ..signing import cache_key

    # The key of the baseline cache: the Action's cache-key input reaches it this way.
    return record_into(log, history, cache_key(config.credentials.environ))


def ledgered(log: RunLog, config: RunConfig) -> RunLog:
    """``log`` with the evidence the ledger accumulated, its pairs added (``--evidence-ledger``).
    Every shard, re-run and interrupted run adds what it graded: the evidence is anytime-valid."""
    return into_ledger(log, config.engine.evidence_ledger, config.credentials.environ)


def into_ledger(log: RunLog, ledger: Path | None, environ: Mapping[str, str]) -> RunLog:
    """``log`` (redacted, as every later reader sees its pairs) added to the evidence ledger at
    ``ledger``, signed with the baseline cache's key from ``environ``; as it was without one."""
    if ledger is None:
        return log
    from ..engine.cache import cache_key
    from ..scoring.evidence_ledger import record_evidence

    secret = cache_key(environ)
    if isinstance(secret, str):
        warning = f"{ledger}: evidence ledger not used: its lines are signed with the baseline cache's key, and {secret}"
        return replace(log, settings=replace(log.settings, warnings=(*log.settings.warnings, warning)))
    return record_evidence(log, Path(ledger), secret)


def kept_if_failing(step: Callable[[RunLog, RunConfig], RunLog], log: RunLog, config: RunConfig) -> RunLog:
    """``step(log, config)``; if it fails, ``log`` as a partial run naming the failure (its
    arms are kept in its document: ``engine.salvage.failed_after_arms``)."""
    try:
        return step(log, config)
    except Exception as exc:
        from ..engine.salvage import failed_after_arms

        settings = replace(log.settings, interrupted=True, failure=failed_after_arms(exc))
        return replace(log, settings=settings)


class Session:
    """Runs suites with the engine, telling every reporter each event."""

    def __init__(self, reporters: Iterable[Subscriber] = (), *, on_document: OnDocument | None = None,
                 on_error: OnError | None = None, around: Around | None = None,
                 configure: Configure | None = None):
        self.emit = Broadcast(reporters)
        self.on_document = on_document
        self.on_error = on_error
        self.around = around or (lambda _run: nullcontext())
        self.configure = configure or (lambda _run, config: config)

    def run(self, runs: Iterable[SuiteRun]) -> SessionResult:
        from ..engine import run_suite
        from ..log.results import document

        result = SessionResult()
        for item in runs:
            log, kept, go_on = None, None, True
            with self.around(item):
                try:
                    config = self.configure(item, suite_config(item.config, item.target))
                    config = self._within_cap(config, result.logs)
                    # Settings changed for this suite may select other cases: then it is loaded anew.
                    ready = item.prepared if config.engine == item.config.engine else None
                    report = run_suite(item.target, config, emit=self.emit, resume_from=item.resume_from,
                                       prepared=ready)
                    kept = report.kept_workspaces
                    # Redaction happens here, once, on what is written and shown
                    # (``log.results.redacted``); the unmasked log goes before its masked copy
                    # is read back, so a large run holds two copies at most, not three.
                    doc = document(kept_if_failing(recorded, report.log, config), config.credentials.environ)
                    del report
                    # Pairs enter the ledger as every later reader sees them: redacted.
                    log = kept_if_failing(ledgered, RunLog.from_json(doc), config)
                    del doc
                except KeyboardInterrupt:
                    result.interrupted = True
                    break
                except Exception as exc:
                    if self.on_error is None:
                        raise
                    go_on = self.on_error(item, exc)
            if log is None:
                if go_on:
                    continue
                break
            result.logs.append(log)
            if kept is not None:
                result.kept_workspaces.append(kept)
            if self.on_document is not None:
                self.on_document(item, log)
            if log.settings.failure is not None:
                result.failures.append(f"{item.target}: {log.settings.failure}")
                continue
            if log.stopped:
                result.stopped = log.stopped
                break
            if log.interrupted:
                result.interrupted = True
                break
        return result

    @staticmethod
    def _within_cap(config: RunConfig, logs: Sequence[RunLog]) -> RunConfig:
        """The spend cap is the session's: each suite gets what the earlier ones left."""
        cap = config.engine.max_cost_usd
        if cap is None or not logs:
            return config
        left = max(1e-9, cap - spent_usd(logs))
        return replace(config, engine=replace(config.engine, max_cost_usd=left))
