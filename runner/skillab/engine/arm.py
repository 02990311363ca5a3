"""One arm of one (case, run): prepare its workspace, let the agent work, grade what it did.

With ``--pass-k K`` an arm makes n >= K attempts (``--pass-n``, default K), each in a fresh
workspace prepared from setup, and never stops early: the unbiased pass@k estimator needs every
attempt. An errored attempt is missing, not a failure; the arm is errored only when every
attempt errored, or when any attempt tampered with the graders' files. The arm passes when any
graded attempt passed. Its record keeps the deciding attempt's output and grades, counts the
time, turns, tool calls and tokens of every attempt, and gives the attempts, pass@k and pass@1
in ``ArmRecord.pass_k``.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import time
import traceback
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agents.base import Agent, AgentResult, ArmName, ArmRequest
from ..core.checks import ExpectationResult, GraderResult, ValidatorResult
from ..core.records import ArmRecord, Contamination, PassKAttempt, PassKSummary
from ..core.usage import sum_usage
from ..errors import ProviderAuthError
from ..formats.grading import run_graders
from ..grading.blinding import blind_transcript
from ..grading.graders import GradingInput, stage_seed
from ..grading.trajectory import render_v1
from ..grading.validators import run_validators
from ..grading.workspace_diff import changes, render_changes, shown, snapshot
from ..sandbox.backend import Backend
from ..sandbox.disk_budget import workspace_full
from ..sandbox.pristine import changes as tampered
from ..sandbox.pristine import describe_tampering, fingerprint, tops
from ..sandbox.process import stopping
from ..sandbox.setup import prepare
from ..sandbox.workspace import Workspace
from ..scoring.pass_at_k import pass_at_k
from ..secrets import redact
from ..skill.loader import Skill
from ..suite.model import Case
from .audit import find_contamination

if TYPE_CHECKING:
    from ..grading.judge import ExpectationJudge


@dataclass(frozen=True)
class ArmJob:
    case: Case
    arm: ArmName
    run_index: int
    # The skill this arm loads; None for the without-skill arm.
    skill: Skill | None


@dataclass(frozen=True)
class ArmContext:
    """What every arm of a run shares."""

    adapter: Agent
    judge: ExpectationJudge | None
    # The skill under test: its bundled files are staged for setup and validators in every arm.
    skill: Skill
    workspace_parent: Path
    max_turns: int
    # The run's sandbox backend (``prepare.suite_sandbox``): every command of every arm runs
    # under it, through the arm's ``Workspace`` and its ``ArmRequest``.
    sandbox: Backend
    keep_workspaces: bool = False
    # pass@k's k (``--pass-k``) and the attempts per arm (``--pass-n``, at least k).
    pass_k: int = 1
    pass_n: int = 0
    # Held while an agent works (``--concurrency`` of them at once); set-up, grading and clean-up
    # run outside it, so a slot is never idle while an arm's validators run.
    agents: AbstractContextManager[Any] = field(default_factory=nullcontext)


def execute_arm(job: ArmJob, ctx: ArmContext) -> ArmRecord:
    """Run one arm to a graded record. Anything that breaks becomes ``errored``, never a fail."""
    # Never the arm: the path is the agent's working directory and reaches the judge's transcript.
    label = f"{job.case.name}-r{job.run_index}"
    if job.case.unsupported:
        return ArmRecord(
            passed=False, errored=True, task_attempted=False, error=f"unsupported: {job.case.unsupported}"
        )
    n = max(ctx.pass_k, ctx.pass_n)
    if n <= 1:
        return _attempt(job, ctx, label)
    attempts = [_attempt(job, ctx, f"{label}-a{number}") for number in range(1, n + 1)]
    return combine_attempts(attempts, ctx.pass_k)


def combine_attempts(attempts: list[ArmRecord], k: int) -> ArmRecord:
    """One arm record from its pass@k attempts (see the module docstring)."""
    graded = [a for a in attempts if not a.errored]
    passes = sum(1 for a in graded if a.passed)
    deciding = next((a for a in graded if a.passed), graded[-1] if graded else attempts[-1])
    passed = passes > 0
    errored = not graded
    error = None
    if errored:
        error = f"all {len(attempts)} attempts errored; first error: {attempts[0].error}"
    # Tampering in one attempt is not a missing attempt: the whole arm is errored.
    tampered = next((a for a in attempts if a.tampering), None)
    if tampered is not None:
        deciding, passed, errored, error = tampered, False, True, tampered.error
    usage = sum_usage(a.usage for a in attempts)
    summary = PassKSummary(
        k=k,
        n=len(attempts),
        graded=len(graded),
        passes=passes,
        pass_at_k=pass_at_k(len(graded), passes, k),
        pass_at_1=passes / len(graded) if graded else None,
        estimator="unbiased" if len(graded) >= k else "plug-in",
        passed_on=attempts.index(deciding) + 1 if passed else None,
        attempts=[
            PassKAttempt(number, a.passed and not a.errored, a.errored, a.error, a.duration_ms, a.total_tokens)
            for number, a in enumerate(attempts, start=1)
        ],
    )
    return dataclasses.replace(
        deciding,
        passed=passed,
        errored=errored,
        error=error,
        duration_ms=sum(a.duration_ms for a in attempts),
        turns=sum(a.turns for a in attempts),
        tool_call_count=sum(a.tool_call_count for a in attempts),
        usage=usage,
        contaminated=any(a.contaminated for a in attempts),
        pass_k=summary,
    )


def _attempt(job: ArmJob, ctx: ArmContext, label: str) -> ArmRecord:
    # A kept workspace must outlive the run, so it cannot be on skillab's private tmpfs.
    workspace = Workspace.create(ctx.workspace_parent, label, backend=ctx.sandbox,
                                 budgeted=not ctx.keep_workspaces)
    try:
        return _execute(job, ctx, workspace)
    except ProviderAuthError:
        raise
    except OSError as exc:
        if exc.errno != errno.ENOSPC or not workspace.budgeted:
            return _internal_error(exc)
        return ArmRecord(passed=False, errored=True, error=workspace_full())
    except Exception as exc:  # an adapter or grader bug must not take the other cases down
        return _internal_error(exc)
    finally:
        if not ctx.keep_workspaces:
            workspace.discard()


def _internal_error(exc: Exception) -> ArmRecord:
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return ArmRecord(passed=False, errored=True, error=redact(f"internal error: {detail}"))


@dataclass(frozen=True)
class _AgentRun:
    """What the agent did: its result, how long it worked, where the workspace started (for
    the diff) and the graders' files it changed (``_watch``)."""

    result: AgentResult
    elapsed_s: float
    before: dict[str, str]
    tampering: tuple[str, ...]


@dataclass(frozen=True)
class _Session:
    """The agent's session as every reader sees it: redacted."""

    final_output: str
    transcript: str


@dataclass(frozen=True)
class _Grades:
    """What grading found (nothing, for an arm that was not graded): the workspace diff and
    every check's result."""

    files_changed: list[str] = field(default_factory=list)
    files_deleted: list[str] = field(default_factory=list)
    validator_results: list[ValidatorResult] = field(default_factory=list)
    expectation_results: list[ExpectationResult] = field(default_factory=list)
    graders: list[GraderResult] = field(default_factory=list)


def _execute(job: ArmJob, ctx: ArmContext, workspace: Workspace) -> ArmRecord:
    # Formats whose graders never call the skill's files keep them out of skill-less arms.
    staged = job.skill is not None or job.case.skill_files_in_every_arm
    failure = _prepare(job, ctx, workspace, staged)
    if failure is not None:
        return _errored(failure, workspace, ctx)
    run = _run_agent(job, ctx, workspace, staged)
    if run is None:
        # Interrupted while this arm waited for a slot: no agent starts after a stop.
        return _errored("the run stopped before this arm's agent started", workspace, ctx)
    result = run.result
    session = _Session(final_output=redact(result.final_output), transcript=redact(render_v1(result.trajectory)))
    # An arm whose agent failed, or touched the graders' files, is errored and not graded.
    errored = result.error is not None or bool(run.tampering)
    error = redact(result.error) if result.error else None
    if run.tampering:
        error = describe_tampering(list(run.tampering))
    contamination = _contamination(job, ctx, result)
    grades = _Grades() if errored else _grade(job, ctx, workspace, run, session)
    record = ArmRecord(
        passed=False,
        errored=errored,
        error=error,
        duration_ms=result.duration_ms,
        turns=result.turns,
        tool_call_count=result.tool_call_count,
        usage=result.usage,
        final_output=session.final_output,
        transcript=session.transcript,
        skill_activated=result.skill_activated,
        contaminated=contamination is not None,
        workspace=str(workspace.root) if ctx.keep_workspaces else None,
        # Which backend confined this arm: a cached baseline keeps the one it ran under.
        sandbox=ctx.sandbox.name,
        served_model=result.served_model or None,
        stop_reason=result.stop_reason or None,
        contamination=contamination,
        tampering=list(run.tampering),
        files_changed=grades.files_changed,
        files_deleted=grades.files_deleted,
        validator_results=grades.validator_results,
        expectation_results=grades.expectation_results,
        graders=grades.graders,
    )
    return record if errored else decided(record)


def _prepare(job: ArmJob, ctx: ArmContext, workspace: Workspace, staged: bool) -> str | None:
    """Stage the skill's files and the case's seed, run its setup; the reason it failed, if it did."""
    workspace.stage(ctx.skill.root, ctx.skill.bundled if staged else ())
    stage_seed(workspace, job.case.seed)
    setup = prepare(workspace, job.case.setup)
    if not setup.ok:
        return f"setup failed: {setup.error}"
    if staged:
        workspace.keep_pristine(ctx.skill.bundled)
    return None


def _run_agent(job: ArmJob, ctx: ArmContext, workspace: Workspace, staged: bool) -> _AgentRun | None:
    """Let the agent work in ``workspace`` (in one of the run's agent slots); None when the run
    stopped before it could start."""
    request = ArmRequest(
        case=job.case,
        arm=job.arm,
        skill=job.skill,
        workspace=workspace.root,
        run_index=job.run_index,
        max_turns=job.case.max_turns or ctx.max_turns,
        # The without-skill agent must not reach the skill's own directory on the host either.
        hide=(ctx.skill.root.resolve(),) if job.skill is None else (),
        sandbox=ctx.sandbox,
    )
    # What the agent changed is reported (and a grader that reads its work sees it): remember
    # where it started.
    before = snapshot(workspace.root)
    tampering: list[str] = []
    with _agent_view(workspace, job, ctx, tampering if staged else None), ctx.agents:
        if stopping():
            return None
        started = time.monotonic()
        result: AgentResult = ctx.adapter.run(request)
        elapsed_s = time.monotonic() - started
    return _AgentRun(result, elapsed_s, before, tuple(tampering))


def _contamination(job: ArmJob, ctx: ArmContext, result: AgentResult) -> Contamination | None:
    """The skill's own text found in the without-skill arm's session, if any."""
    if job.skill is not None:
        return None
    finding = find_contamination(result, ctx.skill, job.case, ctx.adapter.staging_dirs)
    if not finding.contaminated:
        return None
    return Contamination(len(finding.fingerprints), list(finding.paths))


def _grade(job: ArmJob, ctx: ArmContext, workspace: Workspace, run: _AgentRun, session: _Session) -> _Grades:
    """Every check of the case on what the agent left: validators, expectations, the format's
    graders, then the time and answer budgets."""
    found = changes(workspace.root, run.before)
    work = render_changes(workspace.root, run.before, found) if _judges_work(job.case) else ""
    # Graders see the bundled files as they were before the agent started, whatever it left.
    workspace.pin_pristine()
    validator_results = run_validators(job.case.validators, workspace, run.result.final_output)
    expectation_results: list[ExpectationResult] = []
    if job.case.expectations:
        if ctx.judge is None:
            raise RuntimeError("case has expectations but the run has no judge")
        # The judge is another provider's model: it sees the redacted session, like any reader,
        # blinded in every arm alike so it cannot tell which arm it grades.
        expectation_results = ctx.judge.grade_all(
            list(job.case.expectations),
            prompt=job.case.prompt,
            transcript=blind_transcript(session.transcript, (ctx.skill, job.skill)),
            final_output=session.final_output,
        )
    calls = tuple((c.name, json.dumps(c.args, sort_keys=True, default=str))
                  for c in run.result.trajectory.tool_calls)
    graded = _format_graders(job, ctx, workspace, session, run.result.skill_activated, work, calls)
    if job.case.timeout_s is not None and run.elapsed_s > job.case.timeout_s:
        graded.append(_over_time(job.case.timeout_s, run.elapsed_s))
    if run.result.stop_reason == "max_tokens":
        graded.append(_truncated())
    return _Grades(
        files_changed=[redact(shown(rel)) for rel in found[0]],
        files_deleted=[redact(shown(rel)) for rel in found[1]],
        validator_results=validator_results,
        expectation_results=expectation_results,
        graders=graded,
    )


NO_VERDICT = "a check produced no verdict (see the errored validator, expectation or grader)"


def decided(record: ArmRecord) -> ArmRecord:
    """``record`` (an arm that reached grading) passed, failed or errored by its checks; a
    regrade decides a re-judged arm by the same rule."""
    checks: list[ValidatorResult | ExpectationResult | GraderResult] = [
        *record.validator_results, *record.expectation_results, *record.graders]
    # A check that gave its verdict without a model (a validator, a test run, the time or answer
    # budget) and failed decides the arm: a judge that could not be read changes nothing then.
    without_model: list[ValidatorResult | GraderResult] = [*record.validator_results, *record.graders]
    failed_for_sure = any(
        not check.passed and not check.errored and getattr(check, "kind", None) not in JUDGED_KINDS
        for check in without_model
    )
    record.errored = not failed_for_sure and any(check.errored for check in checks)
    record.passed = not record.errored and all(check.passed for check in checks)
    if record.errored and not record.error:
        record.error = NO_VERDICT
    return record


# Grader kinds whose verdict is a model's: they never decide an arm alone when another errored.
JUDGED_KINDS = ("llm-rubric", "dimensions", "checklist")


def _truncated() -> GraderResult:
    return GraderResult(
        kind="truncated",
        label="the answer was complete (not cut at max_tokens)",
        passed=False,
        reason="the model's answer reached the max_tokens budget and was cut short: it is not "
               "graded as if whole (raise --max-tokens, or the server's context, to give it room)",
    )


def _judges_work(case: Case) -> bool:
    return any(g.reads_work for g in case.graders)


def _format_graders(
    job: ArmJob, ctx: ArmContext, workspace: Workspace, session: _Session,
    skill_activated: bool | None, work: str, tool_calls: tuple[tuple[str, str], ...] = (),
) -> list[GraderResult]:
    if not job.case.graders:
        return []
    if job.case.needs_judge and ctx.judge is None:
        raise RuntimeError("case has judged graders but the run has no judge")
    grading = GradingInput(
        workspace=workspace,
        prompt=job.case.prompt,
        final_output=session.final_output,
        # Only the rubric judge reads the transcript: blinded like the expectation judge's.
        transcript=blind_transcript(session.transcript, (ctx.skill, job.skill)),
        work=work,
        judge=ctx.judge,
        tool_calls=tool_calls,
        skill_activated=skill_activated,
    )
    return run_graders(job.case, grading)


def _over_time(limit_s: float, elapsed_s: float) -> GraderResult:
    return GraderResult(
        kind="timeout",
        label=f"the agent finished within timeout_seconds ({limit_s:g} s)",
        passed=False,
        reason=f"the agent took {elapsed_s:.1f} s, over the case's {limit_s:g} s",
    )


@contextmanager
def _agent_view(
    workspace: Workspace, job: ArmJob, ctx: ArmContext, tampering: list[str] | None
) -> Iterator[None]:
    """The bundled files the agent finds while it works; validators always get the candidate's.

    The without-skill agent finds none. The original arm (``--against``) finds the original
    skill's own files in their place, so the old SKILL.md's references resolve, and the placebo
    arm (``--placebo``) the placebo's, laid out as the skill's are; the candidate's
    come back before grading, so every arm is graded by the same graders. ``tampering``, when
    given, receives the paths under the bundled files' top-level entries that the agent changed.
    """
    watched = tops(ctx.skill.bundled)
    if job.skill is None:
        with workspace.withdraw(ctx.skill.bundled), _watch(workspace, watched, tampering):
            yield
    elif job.arm in ("original", "placebo") and job.skill.root != ctx.skill.root:
        with workspace.withdraw(ctx.skill.bundled):
            workspace.stage(job.skill.root, job.skill.bundled)
            watched += [top for top in tops(job.skill.bundled) if top not in watched]
            with _watch(workspace, watched, tampering):
                yield
    else:
        with _watch(workspace, watched, tampering):
            yield


@contextmanager
def _watch(workspace: Workspace, watched: list[str], tampering: list[str] | None) -> Iterator[None]:
    """Fingerprint the watched entries before and after the block; the changed paths go to
    ``tampering`` (see ``sandbox.pristine``)."""
    if tampering is None or not watched:
        yield
        return
    before = fingerprint(workspace.root, watched)
    yield
    tampering.extend(tampered(before, fingerprint(workspace.root, watched)))


def _errored(message: str, workspace: Workspace, ctx: ArmContext) -> ArmRecord:
    record = ArmRecord(passed=False, errored=True, error=redact(message))
    if ctx.keep_workspaces:
        record.workspace = str(workspace.root)
    return record
