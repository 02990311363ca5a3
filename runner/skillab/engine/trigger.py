"""Trigger trials: each query posed to the agent with the skill listed (and its siblings beside
it), recording which skills the agent loaded. The answer is not graded.

Every trial gets its own workspace, HOME, TMPDIR and skills directory (a fresh ``Workspace``),
so no trial sees another's files, settings or staged skills, whatever the concurrency. The
skills' host directories are hidden from the agent's commands: it finds the staged copies only.
"""

from __future__ import annotations

import tempfile
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..agents.base import ArmRequest
from ..core.events import Emit, Notice, TriggerTrialFinished, ignore
from ..core.usage import Usage
from ..errors import ProviderAuthError
from ..grading.trajectory import render_v1
from ..sandbox.process import stop_all_commands
from ..sandbox.scratch import private_dir
from ..sandbox.workspace import Workspace
from ..secrets import redact
from ..skill.loader import Skill
from ..suite.model import Case, Suite
from ..suite.trigger import TriggerQuery

if TYPE_CHECKING:
    from ..core.settings import RunConfig
    from .against import OriginalSkill
    from .prepare import Prepared

# "baseline": a query meant for a sibling, posed to the siblings alone, to tell what the
# candidate's arrival changed.
TrialArm = Literal["candidate", "original", "baseline"]
# Loading a skill is the agent's first move when it chooses to; a few turns leave room to look
# around first, and the adapters stop (or are cut off) soon after.
TRIGGER_MAX_TURNS = 4


@dataclass(frozen=True)
class TriggerTrial:
    """One query posed once. ``skill`` is the name of the skill under test in this trial."""

    query: str
    run_index: int
    arm: TrialArm
    skill: str
    loaded: tuple[str, ...] = ()
    error: str | None = None
    duration_ms: int = 0
    usage: Usage = field(default_factory=Usage)
    # The session as trajectory format v1: the evidence of what was loaded.
    transcript: str = ""

    @property
    def triggered(self) -> bool | None:
        """Loaded the skill under test: True even if the session failed later; unknown when it
        failed without loading it."""
        if self.skill in self.loaded:
            return True
        return None if self.error else False

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "run_index": self.run_index, "arm": self.arm,
                "triggered": self.triggered, "loaded": list(self.loaded), "error": self.error,
                "duration_ms": self.duration_ms, "usage": self.usage.to_dict(),
                "transcript": self.transcript}


@dataclass(frozen=True)
class TriggerPlan:
    queries: tuple[TriggerQuery, ...]
    skill: Skill
    siblings: tuple[Skill, ...] = ()
    original: Skill | None = None
    runs: int = 1
    concurrency: int = 4
    max_turns: int = TRIGGER_MAX_TURNS
    keep_workspaces: bool = False

    def trials(self) -> list[tuple[TriggerQuery, int, TrialArm, Skill, tuple[Skill, ...]]]:
        """(query, run, arm, skill under test, skills offered beside it), in run order."""
        arms: list[tuple[TrialArm, Skill, tuple[Skill, ...]]] = [("candidate", self.skill, self.siblings)]
        if self.original is not None:
            arms.append(("original", self.original, self.siblings))
        by_name = {s.name: s for s in self.siblings}
        planned = []
        for run in range(self.runs):
            for q in self.queries:
                planned += [(q, run, arm, skill, beside) for arm, skill, beside in arms]
                owner = by_name.get(q.owner or "")
                if owner is not None:
                    others = tuple(s for s in self.siblings if s is not owner)
                    planned.append((q, run, "baseline", owner, others))
        return planned


@dataclass
class TriggerRun:
    trials: list[TriggerTrial]
    interrupted: bool = False


def run_trigger_trials(plan: TriggerPlan, adapter: Any, emit: Emit = ignore) -> TriggerRun:
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


def _trial(plan: TriggerPlan, adapter: Any, root: Path, query: TriggerQuery, run_index: int,
           arm: TrialArm, skill: Skill, beside: tuple[Skill, ...]) -> TriggerTrial:
    workspace = Workspace.create(root, f"trigger-{query.name}-r{run_index}")  # never the arm: the agent sees it
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
    except Exception as exc:  # an adapter bug must not take the other trials down
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return TriggerTrial(query.name, run_index, arm, skill.name, error=redact(f"internal error: {detail}"))
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


@dataclass(frozen=True)
class Crowd:
    """The skills offered beside the candidate, their own should-trigger queries, and what was
    wrong with the ones left out."""

    siblings: tuple[Skill, ...] = ()
    queries: tuple[TriggerQuery, ...] = ()
    warnings: tuple[str, ...] = ()


def load_crowd(directory: Path, candidate: Skill) -> Crowd:
    """The skills in ``directory`` (each a subdirectory holding SKILL.md) but the candidate,
    found by path or by name. A sibling that does not load is left out with a warning, and one
    whose queries do not load is offered without them: they are not what is under test."""
    from ..errors import SkillabError, UsageError
    from ..agents.skill_view import folder_name
    from ..skill.loader import SKILL_FILE, load_skill
    from ..formats.trigger.siblings import sibling_queries

    directory = Path(directory)
    if not directory.is_dir():
        raise UsageError(f"--siblings {directory}: not a directory")
    own = candidate.root.resolve()
    siblings: dict[str, Skill] = {}
    queries: list[TriggerQuery] = []
    warnings: list[str] = []
    for sub in sorted(p for p in directory.iterdir() if (p / SKILL_FILE).is_file()):
        if sub.resolve() == own:
            continue
        try:
            sibling = load_skill(sub)
        except SkillabError as exc:
            warnings.append(f"sibling {sub.name} left out: {exc}")
            continue
        if sibling.name == candidate.name or sibling.name in siblings:
            warnings.append(f"sibling {sub.name} left out: another skill is named {sibling.name}")
            continue
        # Agents find each skill in a folder named after it: two names that make one folder
        # would overwrite each other, and reading one would count as loading both.
        clash = next((s.name for s in (candidate, *siblings.values())
                      if folder_name(s.name) == folder_name(sibling.name)), None)
        if clash is not None:
            warnings.append(f"sibling {sub.name} left out: its name {sibling.name!r} would be staged in "
                            f"the same folder as {clash!r}")
            continue
        siblings[sibling.name] = sibling
        try:
            queries += sibling_queries(sub, sibling.name)
        except SkillabError as exc:
            warnings.append(f"sibling {sibling.name}'s trigger queries left out: {exc}")
    return Crowd(tuple(siblings.values()), tuple(queries), tuple(warnings))


def select_queries(queries: list[TriggerQuery], suite: Suite, names: tuple[str, ...],
                   tags: tuple[str, ...]) -> list[TriggerQuery]:
    """The trigger queries a ``--case``/``--tag`` selection keeps: trigger-only cases as the
    suite selected them; trigger set entries by name (they carry no tags)."""
    if not names and not tags:
        return queries
    cases = {c.name for c in suite.cases}
    file_names = {q.name for q in queries} - {c.name for c in suite.cases if c.trigger_only}
    return [q for q in queries if q.name in cases or (q.name in file_names and q.name in names)]


def run_triggers(prepared: "Prepared", config: "RunConfig", adapter: Any,
                 original: "OriginalSkill | None", emit: Emit = ignore) -> dict[str, Any]:
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
    probe = getattr(adapter, "skill_listing", None)
    listing = None
    if plan.siblings and callable(probe) and not run.interrupted:
        listing = probe(tuple(sorted((plan.skill, *plan.siblings), key=lambda s: s.name)))
    block = trigger_block(plan, run.trials, listing=listing, warnings=prepared.crowd_warnings,
                          original_label=original.label if original is not None else None,
                          interrupted=run.interrupted)
    # Masked with the rest of the document when it is written (``reports.results.document``).
    return block
