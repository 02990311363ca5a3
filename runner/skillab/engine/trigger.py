"""Trigger trials: each query posed to the agent with the skill listed (and its siblings beside
it), recording which skills the agent loaded. The answer is not graded.

Every trial gets its own workspace, HOME, TMPDIR and skills directory (a fresh ``Workspace``),
so no trial sees another's files, settings or staged skills, whatever the concurrency. The
skills' host directories are hidden from the agent's commands: it finds the staged copies only.
"""

from __future__ import annotations

import errno
import tempfile
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..agents.base import ArmRequest
from ..core.events import Emit, Notice, TriggerTrialFinished, ignore
from ..core.triggers import TriggerBlock
from ..errors import ProviderAuthError
from ..grading.trajectory import render_v1
from ..sandbox.disk_budget import workspace_full
from ..sandbox.process import stop_all_commands
from ..sandbox.scratch import private_dir
from ..sandbox.workspace import Workspace
from ..secrets import redact
from ..skill.loader import Skill
from ..suite.model import Case
from ..suite.trigger import TriggerQuery
from ..suite.trigger_plan import TRIGGER_MAX_TURNS, TrialArm, TriggerPlan, TriggerTrial

if TYPE_CHECKING:
    from ..agents.base import Agent
    from ..core.settings import RunConfig
    from .against import OriginalSkill
    from .prepare import Prepared


@dataclass
class TriggerRun:
    trials: list[TriggerTrial]
    interrupted: bool = False


def run_trigger_trials(plan: TriggerPlan, adapter: Agent, emit: Emit = ignore) -> TriggerRun:
    """Every trial of ``plan``, ``plan.concurrency`` at a time, in plan order."""
    planned = plan.trials()
    done: dict[int, TriggerTrial] = {}
    interrupted = False
    parent = Path(tempfile.mkdtemp(prefix="skillab-kept-")) if plan.keep_workspaces else None
    # Trials abandoned by a Ctrl-C may still be writing while the directory goes.
    with private_dir("skillab-trigger-") as scratch:
        root = parent or scratch
        pool = ThreadPoolExecutor(max_workers=max(1, plan.concurrency))
        try:
            pending: dict[Future[TriggerTrial], int] = {
                pool.submit(_trial, plan, adapter, root, *item): index
                for index, item in enumerate(planned)
            }
            while pending:
                finished, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in finished:
                    index = pending.pop(future)
                    trial = done[index] = future.result()
                    emit(TriggerTrialFinished(trial.query, trial.run_index, trial.arm,
                                              tuple(trial.loaded), trial.error))
        except KeyboardInterrupt:
            interrupted = True
            stop_all_commands()
        finally:
            pool.shutdown(wait=not interrupted, cancel_futures=True)
    return TriggerRun([done[i] for i in sorted(done)], interrupted)


def _trial(plan: TriggerPlan, adapter: Agent, root: Path, query: TriggerQuery, run_index: int,
           arm: TrialArm, skill: Skill, beside: tuple[Skill, ...]) -> TriggerTrial:
    # Labelled never by the arm (the agent sees it); a kept workspace can't be on the private tmpfs.
    workspace = Workspace.create(root, f"trigger-{query.name}-r{run_index}", budgeted=not plan.keep_workspaces)
    request = ArmRequest(
        case=Case(name=query.name, prompt=query.query, max_turns=plan.max_turns),
        arm="original" if arm == "original" else "with_skill",
        skill=skill,
        workspace=workspace.root,
        run_index=run_index,
        max_turns=plan.max_turns,
        hide=tuple(s.root.resolve() for s in (plan.skill, *plan.siblings)),
        siblings=beside,
        purpose="trigger",
    )
    try:
        result = adapter.run(request)
    except ProviderAuthError:
        raise
    except OSError as exc:
        if exc.errno != errno.ENOSPC or not workspace.budgeted:
            return _internal_error(query, run_index, arm, skill, exc)
        return TriggerTrial(query.name, run_index, arm, skill.name, error=workspace_full())
    except Exception as exc:  # an adapter bug must not take the other trials down
        return _internal_error(query, run_index, arm, skill, exc)
    finally:
        if not plan.keep_workspaces:
            workspace.cleanup()
    return TriggerTrial(
        query=query.name,
        run_index=run_index,
        arm=arm,
        skill=skill.name,
        loaded=tuple(result.skills_loaded),
        error=redact(result.error) if result.error else None,
        duration_ms=result.duration_ms,
        usage=result.usage,
        transcript=redact(render_v1(result.trajectory)),
    )


def _internal_error(query: TriggerQuery, run_index: int, arm: TrialArm, skill: Skill,
                    exc: Exception) -> TriggerTrial:
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return TriggerTrial(query.name, run_index, arm, skill.name, error=redact(f"internal error: {detail}"))


def run_triggers(prepared: Prepared, config: RunConfig, adapter: Agent,
                 original: OriginalSkill | None, emit: Emit = ignore) -> TriggerBlock:
    """Run a prepared suite's trigger trials; the results document's ``triggers`` block."""
    from ..scoring.trigger_summary import trigger_block

    plan = TriggerPlan(
        queries=prepared.triggers,
        skill=prepared.skill,
        siblings=prepared.siblings,
        original=original.skill if original is not None else None,
        runs=config.engine.runs,
        concurrency=config.engine.concurrency,
        max_turns=min(config.agent.max_turns, TRIGGER_MAX_TURNS),
        keep_workspaces=config.engine.keep_workspaces,
    )
    emit(Notice(f"trigger trials: {len(plan.queries)} queries x {plan.runs} run(s)"
                + (f", {len(plan.siblings)} sibling skill(s)" if plan.siblings else "")))
    run = run_trigger_trials(plan, adapter, emit)
    listing = None
    if plan.siblings and not run.interrupted:
        listing = adapter.skill_listing(tuple(sorted((plan.skill, *plan.siblings), key=lambda s: s.name)))
    block = trigger_block(plan, run.trials, listing=listing, warnings=prepared.crowd_warnings,
                          original_label=original.label if original is not None else None,
                          interrupted=run.interrupted)
    # Masked with the rest of the document when it is written (``reports.results.document``).
    return block
