"""Orchestration: every (case, run) of a suite, both arms, concurrently, in a stable order."""

from __future__ import annotations

import tempfile
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import TYPE_CHECKING, Any

from ..agents.base import ArmName, MeasuredListing
from ..agents.context_budget import context_block
from ..agents.registry import create_adapter, create_judge
from ..core.events import (
    ArmFinished,
    CaseFinished,
    Emit,
    Event,
    Notice,
    RunFinished,
    RunStarted,
    SubscriberFailed,
    ignore,
)
from ..core.records import ArmRecord, CaseRecord
from ..core.run_info import JudgeConsistency
from ..core.runlog import RunLog, RunSettings
from ..core.settings import RunConfig
from ..heap import limit_arenas
from ..sandbox.backend import Choice, before_the_suite, require_sandbox
from ..sandbox.isolation import detect_isolation
from ..sandbox.process import allow_commands, stop_all_commands
from ..sandbox.scratch import run_scratch
from ..sandbox.workspace import drain_discarded
from ..scoring import classify_outcome
from ..scoring.inference import ALPHA
from ..scoring.summary import summarize
from ..skill.loader import Skill
from ..suite_audit import audit_suite, history_for
from .adaptive_runs import AdaptivePlan, HeldArms, plan_adaptive
from .arm import ArmContext, ArmJob, execute_arm
from .cache import BaselineCache, baseline_slot, cache_key, default_cache_dir
from .consistency import check_consistency
from .meta import RunMeta, run_settings, suite_hash
from .prepare import Prepared, prepare_suite, run_warnings, suite_sandbox
from .salvage import bare_log, failed_after_arms
from .shared_spend import fallback_line, refused_line, run_budget

if TYPE_CHECKING:
    from ..agents.base import Agent
    from ..budget.client import SharedBudget
    from ..grading.judge import ExpectationJudge
    from .against import OriginalSkill
    from .shard import ShardPlan
    from .stop_early import EarlyStop

# How long the main thread waits for an arm before looking again (Ctrl-C lands between waits).
POLL_S = 0.5


def arms_in_flight(concurrency: int) -> int:
    """Arms started at once for ``concurrency`` agents working at once.

    An arm's workspace set-up, validators and clean-up run outside its agent's slot (see
    ``ArmContext.agents``), so as many arms again are started to do them while every slot keeps
    an agent working. ``--concurrency 1`` stays one arm at a time, start to finish.
    """
    return 1 if concurrency <= 1 else 2 * concurrency


@dataclass
class RunReport:
    log: RunLog
    # Where --keep-workspaces left the arms' workspaces.
    kept_workspaces: Path | None = None


def run_suite(
    target: Path,
    config: RunConfig,
    *,
    emit: Emit = ignore,
    resume_from: dict[str, Any] | None = None,
    prepared: Prepared | None = None,
) -> RunReport:
    """Run a suite A/B, telling ``emit`` each step (``core.events``). Bad input raises a
    SkillabError before any case starts.

    ``resume_from`` is an earlier document of this suite: its finished, unerrored arms are
    kept and only the missing or errored ones run. ``prepared``: the suite as the preflight
    loaded it from ``target`` under ``config.engine``, so it is not parsed twice.
    """
    if prepared is None:
        prepared = prepare_suite(target, config.engine)
    with ExitStack() as stack:
        sandbox = suite_sandbox(prepared.suite, config, stack)
        require_sandbox(sandbox, config.agent.adapter)
        allow_commands()
        adapter = create_adapter(config)
        shard = config.engine.shard
        unwritten: list[str] = []
        publish(emit, RunStarted(str(prepared.suite.path), prepared.skill.name, len(prepared.graded),
                                 config.engine.runs, config.agent.adapter, config.agent.model.name,
                                 prepared.skill.content_hash(), str(shard) if shard else None,
                                 suite_hash(prepared.suite)), unwritten)
        needs_judge = any(c.needs_judge for c in prepared.graded)
        judge = create_judge(config) if needs_judge else None
        original, original_warnings = None, []
        if config.engine.against:
            # The run's optional parts are imported when asked for, so a plain run's start-up
            # pays for none of them.
            from .against import against_warnings, open_original

            original = stack.enter_context(open_original(config.engine.against, prepared.skill.root))
            original_warnings = against_warnings(adapter, original)
        placebo = None
        if config.engine.placebo:
            from ..skill.placebo import make_placebo

            placebo = make_placebo(prepared.skill, Path(stack.enter_context(
                tempfile.TemporaryDirectory(prefix="skillab-placebo-"))))
        execution = Execution(prepared, config, adapter, judge, emit, original, placebo=placebo,
                              warnings=[*prepared.suite.warnings, *prepared.skill.warnings,
                                        *run_warnings(config, judge), *original_warnings,
                                        *unwritten], sandbox=sandbox)
        if resume_from is not None:
            from .resume import check_resumable

            check_resumable(resume_from, adapter, judge)
            execution.resume(resume_from)
        report = execution.run()
        settings = report.log.settings
        if prepared.triggers and not adapter.discovers_skills:
            report.log = replace(report.log, settings=replace(settings, warnings=(
                *settings.warnings,
                f"{len(prepared.triggers)} trigger queries not run: the {adapter.name} adapter is "
                "never offered a skill to choose (use agent, claude-code or mock)")))
        elif prepared.triggers and not report.log.interrupted:
            from .trigger import run_triggers

            try:
                block = run_triggers(prepared, config, adapter, original, sandbox.backend, emit)
                report.log = summarize(replace(settings, triggers=block, interrupted=block.interrupted),
                                       report.log.records)
            except Exception as exc:  # the arms are kept whatever the trigger trials did
                report.log = bare_log(replace(settings, interrupted=True, partial=True,
                                              failure=failed_after_arms(exc)), report.log.records)
    emit(RunFinished(str(prepared.suite.path), report.log, report.log.interrupted,
                     sharded=config.engine.shard is not None))
    return report


def publish(emit: Emit, event: Event, warnings: list[str]) -> None:
    """``emit(event)``; a subscriber that cannot write (a full disk) becomes a warning, once."""
    try:
        emit(event)
    except SubscriberFailed as exc:
        # A full disk costs the checkpoint or the display, never the run: the final document is
        # written anyway.
        warning = f"{exc}; the run went on"
        if warning not in warnings:
            warnings.append(warning)


class Execution:
    """One run of one suite; holds the state that the finished arms accumulate into."""

    # ``judge``: ``agents.registry.create_judge``'s, or None when no case asks a judge;
    # ``sandbox``: the run's backend (``prepare.suite_sandbox``), passed to every arm; None: the
    # one ``config`` names (``--sandbox``), chosen here (``before_the_suite``).
    def __init__(self, prepared: Prepared, config: RunConfig, adapter: Agent, judge: ExpectationJudge | None,
                 emit: Emit | None = None, original: OriginalSkill | None = None,
                 warnings: list[str] | None = None, *, sandbox: Choice | None = None,
                 placebo: Skill | None = None):
        self.prepared = prepared
        self.sandbox = sandbox or before_the_suite(config.engine.sandbox)
        self.warnings: list[str] = list(warnings or [])
        # The original skill of ``--against``: a third arm per (case, run), never cached.
        self.original: OriginalSkill | None = original
        self._original_ref = original.ref() if original is not None else None
        # The skill's placebo (``--placebo``): another arm per (case, run), never cached.
        self.placebo = placebo
        self._listing_counts: dict[str, MeasuredListing | None] = {}
        self.config = config
        self.adapter = adapter
        self.judge = judge
        self.emit = emit or ignore
        self.cache = (
            BaselineCache(config.engine.cache_dir or default_cache_dir(), config.engine.cache_ttl_days,
                          key=cache_key(config.credentials.environ))
            if config.engine.cache_enabled
            else None
        )
        self.plan: ShardPlan | None = None
        if config.engine.shard is not None:
            from .shard import plan_shards

            self.plan = plan_shards(prepared.graded, config.engine.runs, config.engine.shard,
                                    config.agent.max_turns)
        self.arms: dict[tuple[int, int, ArmName], ArmRecord] = {}
        self.cache_hits = 0
        self.spent_usd = 0.0
        self.arm_spend_usd = 0.0
        self.stopped: str | None = None
        # The run-wide budget shared with the other shards (``--budget-url``), once the run starts.
        self.shared: SharedBudget | None = None
        engine = config.engine
        arms = 2 + (original is not None) + (placebo is not None)
        self.early: EarlyStop | None = None
        if engine.stop_early and engine.shard is None:
            from .stop_early import EarlyStop

            # Curtailment reads a settled case as unfinished (any ending): its held runs could
            # still change the claim, and a curtailed run says what every run would have said.
            self.early = EarlyStop.plan(engine.stop_early, engine.stop_seed, len(prepared.graded), engine.runs,
                                        arms, min_delta_pts=engine.min_delta_pts, gate_on=engine.gate_on,
                                        adaptive=engine.adaptive_runs and engine.stop_early == "group-sequential")
        self.adaptive: AdaptivePlan | None = None
        if engine.adaptive_runs:
            from ..scoring.stopping import GROUP_SEQUENTIAL

            self.adaptive, why_off = plan_adaptive(
                engine.runs, arms, sharded=engine.shard is not None, min_delta_pts=engine.min_delta_pts,
                gate_on=engine.gate_on,
                alpha=GROUP_SEQUENTIAL.final if self.early is not None and self.early.design == "group-sequential" else ALPHA)
            self.warnings += [why_off] if why_off else []
        # Each case's place in the seeded order of ``--stop-early``.
        self._positions = {case: i for i, case in enumerate(self.early.order)} if self.early else {}
        self.held = HeldArms(self.adaptive, [c.name for c in prepared.graded], self._pair, self.records,
                             lambda i: self._positions.get(i, i))
        self.kept_workspaces: Path | None = None
        self.consistency: JudgeConsistency | None = None
        # Before any model call, as `skillab audit` finds it: the suite and skill as this run has them.
        self.audit = audit_suite(prepared.suite, prepared.skill,
                                 history_for(prepared.suite, engine.history_path) if engine.history_path else ())
        self.started = datetime.now(UTC)
        self._lock = threading.Lock()
        # (case, run) pairs with every arm finished: a progress tick counts without a scan.
        self._pairs_done = 0

    # -- planning --------------------------------------------------------------------------

    def _jobs(self) -> list[tuple[int, ArmJob]]:
        skill = self.prepared.skill
        mine = set(self.plan.units) if self.plan is not None else None
        jobs = []
        runs, cases = range(self.config.engine.runs), list(enumerate(self.prepared.graded))
        # --stop-early: every run of a case before the next case, in the seeded order.
        units = ([(r, cases[i]) for i in self.early.order for r in runs] if self.early is not None
                 else [(r, c) for r in runs for c in cases])
        for run_index, (case_index, case) in units:
            if mine is not None and (case.name, run_index) not in mine:
                continue
            jobs.append((case_index, ArmJob(case, "with_skill", run_index, skill)))
            jobs.append((case_index, ArmJob(case, "without_skill", run_index, None)))
            if self.original is not None:
                jobs.append((case_index, ArmJob(case, "original", run_index, self.original.skill)))
            if self.placebo is not None:
                jobs.append((case_index, ArmJob(case, "placebo", run_index, self.placebo)))
        # Arms kept from a resumed document do not run again.
        return [(i, job) for i, job in jobs if (i, job.run_index, job.arm) not in self.arms]

    @property
    def planned(self) -> int:
        if self.plan is not None:
            return len(self.plan.units)
        return len(self.prepared.graded) * self.config.engine.runs

    def resume(self, document: dict[str, Any]) -> None:
        """Keep the finished, unerrored arms of an earlier document of the same suite."""
        from .resume import kept_arms

        mine = set(self.plan.units) if self.plan is not None else None
        arms, hits = kept_arms(document, [c.name for c in self.prepared.graded], self.config.engine.runs,
                               mine, with_original=self.original is not None,
                               with_placebo=self.placebo is not None)
        self.arms.update(arms)
        self.cache_hits += hits
        self._pairs_done = len(self.records())

    def _cache_slot(self, job: ArmJob) -> tuple[str, str] | None:
        if self.cache is None or job.arm != "without_skill":
            return None
        return baseline_slot(job, self.prepared.skill, self.config, self.adapter, self.judge,
                             self.sandbox.backend)

    # -- execution -------------------------------------------------------------------------

    def run(self) -> RunReport:
        jobs = self._jobs()
        interrupted = False
        self.shared = run_budget(self.config)
        self._fell_back()
        with run_scratch() as scratch:
            ctx = ArmContext(
                adapter=self.adapter,
                judge=self.judge,
                skill=self.prepared.skill,
                workspace_parent=self._workspace_parent(scratch),
                max_turns=self.config.agent.max_turns,
                sandbox=self.sandbox.backend,
                keep_workspaces=self.config.engine.keep_workspaces,
                pass_k=self.config.engine.pass_k,
                pass_n=self.config.engine.pass_n,
                agents=threading.BoundedSemaphore(max(1, self.config.engine.concurrency)),
            )
            limit_arenas()
            pool = ThreadPoolExecutor(max_workers=arms_in_flight(self.config.engine.concurrency))
            try:
                self._drive(pool, ctx, jobs)
            except KeyboardInterrupt:
                interrupted = True
                # Arms still running are abandoned; their sandboxed commands must not outlive us.
                stop_all_commands()
            finally:
                # Unstarted arms are dropped; running ones finish in the background and are ignored.
                pool.shutdown(wait=not interrupted, cancel_futures=True)
                drain_discarded()
            try:
                # The consistency check asks the judge again: not after a stop at the cost cap.
                if not interrupted and self.stopped is None:
                    self._check_judge()
                return self._report(interrupted or self.stopped is not None)
            except Exception as exc:  # whatever failed, the finished arms are the run's to keep
                return self._salvage(exc)

    def _workspace_parent(self, scratch: Path) -> Path:
        if not self.config.engine.keep_workspaces:
            return scratch
        self.kept_workspaces = Path(tempfile.mkdtemp(prefix="skillab-kept-"))
        return self.kept_workspaces

    def _drive(self, pool: ThreadPoolExecutor, ctx: ArmContext, jobs: list[tuple[int, ArmJob]]) -> None:
        """Submit arms as slots free up, so a cost cap stops new work within two arms per slot.

        Finished arms arrive on a completion queue, so the loop costs the same per arm however
        long the run (waiting on the set of pending futures costs a pass over it per wake-up).

        A baseline is reused only if the model served now is the one that produced it, so with
        an adapter that reports its served model, cached lookups wait for the first fresh arm to
        say which model answered.
        """
        queue = deque((case_index, job, self._cache_slot(job)) for case_index, job in jobs)
        waiting: list[tuple[int, ArmJob, tuple[str, str] | None]] = []
        # --adaptive-runs: later runs whose case's first runs are still running.
        held: list[tuple[int, ArmJob, tuple[str, str] | None]] = []
        pending: dict[Future[ArmRecord], tuple[int, ArmJob, tuple[str, str] | None]] = {}
        finished: SimpleQueue[Future[ArmRecord]] = SimpleQueue()
        settled = not self.adapter.reports_served_model
        served: str | None = None
        lookups = True
        slots = arms_in_flight(self.config.engine.concurrency)
        while queue or pending or waiting or held:
            held = self.held.release(held, queue, force=not pending and not queue and not waiting,
                                     halted=self._halted(), slots=slots)
            while queue and len(pending) < slots and not self._halted() and self._admits(queue[0][0], pending):
                case_index, job, slot = queue.popleft()
                gate = self.held.gate(case_index, job)
                if gate in ("wait", "hold"):
                    held.append((case_index, job, slot))
                    continue
                if gate == "skip":
                    continue
                if slot and not settled:
                    waiting.append((case_index, job, slot))
                    continue
                # A slot is given only where there is a cache (``_cache_slot``).
                hit = (self.cache.get(*slot, served_model=served)
                       if slot and lookups and self.cache is not None else None)
                if hit is not None:
                    self.cache_hits += 1
                    self._finish(case_index, job, hit)
                    continue
                future = pool.submit(execute_arm, job, ctx)
                pending[future] = (case_index, job, slot)
                future.add_done_callback(finished.put)
            if not pending:
                if self._halted():
                    break
                if held and not waiting:
                    continue  # the loop's top releases them
                if not waiting:
                    break
                # No fresh arm reported its model: the cache cannot be checked, so run.
                settled, lookups = True, False
                queue.extendleft(reversed(waiting))
                waiting = []
                continue
            try:
                future = finished.get(timeout=POLL_S)
            except Empty:
                continue
            case_index, job, slot = pending.pop(future)
            record = future.result()
            if slot and self.cache is not None:
                self.cache.put(*slot, record, about={
                    "skill": self.prepared.skill.name, "case": job.case.name, "run_index": job.run_index,
                    "suite": str(self.prepared.suite.path), "adapter": self.adapter.name,
                    "model": self.config.agent.model.name})
            self._spend(record)
            self._finish(case_index, job, record)
            if not settled and not record.errored:
                # A provider that names no model leaves nothing to check: run them.
                served = record.served_model
                settled, lookups = True, bool(served)
                queue.extendleft(reversed(waiting))
                waiting = []

    def _admits(self, case_index: int, pending: dict[Future[ArmRecord], Any]) -> bool:
        """Whether ``--stop-early`` lets this case start now (a look it lies past is undecided);
        with nothing in flight every case may start, so a held run never stalls."""
        if self.early is None or not pending:
            return True
        return self.early.admits(self._positions[case_index])

    def _halted(self) -> bool:
        return self.stopped is not None or (self.early is not None and self.early.stopped_at is not None)

    def _spend(self, record: ArmRecord) -> None:
        if not record.cached and record.usage.cost_usd is not None:
            self.arm_spend_usd += record.usage.cost_usd
        # The judge's calls are billed too; the judge keeps the running total.
        judged = self.judge.usage if self.judge is not None else None
        self.spent_usd = self.arm_spend_usd + ((judged.cost_usd or 0.0) if judged is not None else 0.0)
        cap = self.config.engine.max_cost_usd
        if cap is not None and self.spent_usd >= cap and self.stopped is None:
            self.stopped = f"cost cap ${cap:g} reached (${self.spent_usd:.4f} spent)"
            self._publish(Notice(f"stopping: {self.stopped}; arms already running finish"))
        refused = refused_line(self.shared)
        if refused is not None and self.stopped is None:
            self.stopped = refused
            self._publish(Notice(f"stopping: {self.stopped}; arms already running finish"))
        self._fell_back()

    def _fell_back(self) -> None:
        """Say once, as it happens and in the report, that the shared budget is not in use."""
        line = fallback_line(self.shared, self.config.engine.max_cost_usd)
        if line is not None and line not in self.warnings:
            self.warnings.append(line)
            self._publish(Notice(line))

    def _check_judge(self) -> None:
        """Re-ask the judge a sample of its verdicts (see ``consistency``)."""
        if self.judge is None:
            return
        skills = [self.prepared.skill] + ([self.original.skill] if self.original is not None else [])
        skills += [self.placebo] if self.placebo is not None else []
        check = check_consistency(
            self.records(), self.judge, prompts={c.name: c.prompt for c in self.prepared.graded},
            skills=skills, share=self.config.judge.consistency,
        )
        self.consistency = check.block() if check is not None else None

    def _finish(self, case_index: int, job: ArmJob, record: ArmRecord) -> None:
        with self._lock:
            self.arms[(case_index, job.run_index, job.arm)] = record
            pair = self._pair(case_index, job.run_index)
            if pair is not None:
                self._pairs_done += 1
                done = self._pairs_done
        skill = self.prepared.skill.name
        self._publish(ArmFinished(str(self.prepared.suite.path), skill, job.case.name, job.run_index,
                                  job.arm, record))
        if pair is not None:
            self._publish(CaseFinished(skill, done, self.planned, pair,
                                       self.judge.usage if self.judge is not None else None))
            if self.early is not None and self.early.stopped_at is None and self.early.check(
                    self.records(), [c.name for c in self.prepared.graded]):
                self._publish(Notice(f"stopping early: {self.early.reason}; arms already running finish"))

    def _publish(self, event: Event) -> None:
        publish(self.emit, event, self.warnings)

    def _pair(self, case_index: int, run_index: int) -> CaseRecord | None:
        with_arm = self.arms.get((case_index, run_index, "with_skill"))
        without_arm = self.arms.get((case_index, run_index, "without_skill"))
        original_arm = self.arms.get((case_index, run_index, "original"))
        placebo_arm = self.arms.get((case_index, run_index, "placebo"))
        if with_arm is None or without_arm is None or (self.original is not None and original_arm is None):
            return None
        if self.placebo is not None and placebo_arm is None:
            return None
        case = self.prepared.graded[case_index]
        outcome = classify_outcome(
            with_passed=with_arm.passed,
            without_passed=without_arm.passed,
            errored=with_arm.errored or without_arm.errored,
        )
        # Candidate vs original uses the same classifier, the original standing in for the baseline.
        original_outcome = None if original_arm is None else classify_outcome(
            with_passed=with_arm.passed,
            without_passed=original_arm.passed,
            errored=with_arm.errored or original_arm.errored,
        )
        return CaseRecord(
            case_name=case.name,
            outcome=outcome,
            with_skill=with_arm,
            without_skill=without_arm,
            run_index=run_index,
            tags=case.tags,
            original=original_arm,
            original_outcome=original_outcome,
            placebo=placebo_arm,
            placebo_outcome=None if placebo_arm is None else classify_outcome(
                with_passed=with_arm.passed, without_passed=placebo_arm.passed,
                errored=with_arm.errored or placebo_arm.errored),
        )

    def records(self) -> list[CaseRecord]:
        """Finished (case, run) records in suite order, run-major within a case."""
        with self._lock:
            found = []
            for case_index in range(len(self.prepared.graded)):
                for run_index in range(self.config.engine.runs):
                    pair = self._pair(case_index, run_index)
                    if pair is not None:
                        found.append(pair)
            return found

    def _report(self, interrupted: bool) -> RunReport:
        if self.cache is not None:
            self.warnings.extend(w for w in self.cache.warnings if w not in self.warnings)
        records = self.records()
        return RunReport(self._log(records, interrupted=interrupted), self.kept_workspaces)

    def _measured_listing(self, skill: Skill) -> MeasuredListing | None:
        """The agent's own count of ``skill``'s listing entry, asked once per skill."""
        key = str(skill.root)
        if key not in self._listing_counts:
            self._listing_counts[key] = self.adapter.measured_listing(skill, self.sandbox.backend)
        return self._listing_counts[key]

    def _salvage(self, exc: Exception) -> RunReport:
        """The log of a run that failed once its arms had run (the statistics, a block of the
        report): a partial run naming the failure, without the statistics, so its document keeps
        every finished arm. Should the partial log fail too, the bare one: the suite, the
        settings and the records."""
        failure = failed_after_arms(exc)
        records = self.records()
        try:
            log = self._log(records, interrupted=True, failure=failure)
        except Exception:
            log = bare_log(self._settings(records, interrupted=True, failure=failure, blocks=False), records)
        return RunReport(log, self.kept_workspaces)

    def _log(self, records: list[CaseRecord], *, interrupted: bool, failure: str | None = None) -> RunLog:
        return summarize(self._settings(records, interrupted=interrupted, failure=failure), records)

    def _settings(self, records: list[CaseRecord], *, interrupted: bool, failure: str | None,
                  blocks: bool = True) -> RunSettings:
        """The run's settings; without ``blocks`` only what needs no computing (the bare log of
        a run whose blocks failed)."""
        profile = self.adapter.sandbox_profile(self.sandbox.backend) if blocks else None
        agent = {"adapter": self.adapter.name, **profile} if profile is not None else None
        meta = RunMeta(self.prepared.suite, self.prepared.skill, self.config, self.adapter,
                       self.judge, detect_isolation(self.sandbox, agent))
        names = [c.name for c in self.prepared.graded]
        engine = self.config.engine
        computed: dict[str, Any] = {} if not blocks else dict(
            original=self._original_ref,
            stop_early=(self.early.block(records, names, arms_ran=list(self.arms.values()),
                                         concurrency=engine.concurrency,
                                         cut_arms=self.adaptive.cut_arms(records, names)
                                         if self.adaptive is not None else 0)
                        if self.early is not None else None),
            adaptive_runs=(self.adaptive.block(records, names, arms_ran=list(self.arms.values()),
                                               concurrency=engine.concurrency)
                           if self.adaptive is not None else None),
            judge_consistency=self.consistency,
            audit=self.audit,
            context_budget=context_block(self.prepared.skill, self.adapter.name,
                                         self.original.skill if self.original is not None else None,
                                         measure=self._measured_listing),
            shard=self.plan.marker(target_lift_pts=engine.target_lift_pts) if self.plan is not None else None,
        )
        return run_settings(
            meta,
            failure=failure,
            partial=failure is not None,
            trigger_only=tuple(c.name for c in self.prepared.trigger_only),
            cache_hits=self.cache_hits,
            cache_arms=len(records) if self.cache is not None else 0,
            started_at=self.started,
            finished_at=datetime.now(UTC),
            interrupted=interrupted,
            warnings=tuple(self.warnings),
            planned_cases=self.planned,
            stopped=self.stopped,
            **computed,
        )
