"""``--shard I/N``: which (case, run) units of a suite this machine runs.

A unit is one (case, run) with all its arms, so every pair is graded and classified where it
ran. The plan is a pure function of the selected cases, ``--runs``, the default turn cap and N:
every shard computes the same plan without talking to the others, and it stays the same for as
long as those do. It deliberately ignores the baseline cache, whose contents differ between
machines. Units are balanced by expected cost (longest first onto the least loaded shard), the
cost being what a case lets the agent and the graders spend (see ``expected_cost``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.settings import Shard as ShardSetting
from ..errors import UsageError
from ..suite.model import Case

if TYPE_CHECKING:  # `--help` reads the shard setting from here: the results' types load with a run
    from ..core.run_info import ShardMarker

_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")

Unit = tuple[str, int]


class Shard(ShardSetting):
    """A shard setting parsed from what the user writes (``2/3``)."""

    @classmethod
    def parse(cls, text: str, *, source: str = "--shard", environ: Mapping[str, str] | None = None) -> Shard:
        """``I/N``, or ``auto``: the index and count the scheduler gave this job (``from_scheduler``)."""
        if (text or "").strip() == "auto":
            return cls.from_scheduler(os.environ if environ is None else environ, source=source)
        match = _SHARD.fullmatch(text or "")
        if not match:
            raise UsageError(f"{source} takes I/N (for example 2/3), got {text!r}")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or not 1 <= index <= count:
            raise UsageError(f"{source} {text!r}: I must be between 1 and N, and N at least 1")
        return cls(index, count)

    @classmethod
    def from_scheduler(cls, environ: Mapping[str, str], *, source: str = "--shard") -> Shard:
        """This job's shard from its scheduler's variables, the first found of: a Kubernetes
        Indexed Job (``JOB_COMPLETION_INDEX``, 0-based; the count from ``JOB_COMPLETIONS``,
        which the Job passes from its ``.spec.completions``: Kubernetes sets none), a SLURM array
        (``SLURM_ARRAY_TASK_ID`` over ``_MIN``, ``_STEP`` and ``_COUNT`` or ``_MAX``), and a GitHub
        Actions matrix (``SKILLAB_SHARD_INDEX``/``_COUNT`` from ``strategy.job-index``/``-total``,
        which GitHub gives expressions only)."""
        for reader in (_kubernetes, _slurm, _github_matrix):
            found = reader(environ, source)
            if found is not None:
                index, count, where = found
                if count < 1 or not 0 <= index < count:
                    raise UsageError(f"{source} auto: {where} gives shard {index + 1} of {count}, "
                                     "outside 1..N")
                return cls(index + 1, count)
        raise UsageError(
            f"{source} auto: no scheduler's shard variables are set: JOB_COMPLETION_INDEX with "
            "JOB_COMPLETIONS (a Kubernetes Indexed Job), SLURM_ARRAY_TASK_ID (a SLURM array), or "
            "SKILLAB_SHARD_INDEX with SKILLAB_SHARD_COUNT (a GitHub Actions matrix); or pass I/N")


def _number(environ: Mapping[str, str], name: str, source: str) -> int | None:
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise UsageError(f"{source} auto: {name}={raw!r} is not a whole number")
    return int(raw)


def _kubernetes(environ: Mapping[str, str], source: str) -> tuple[int, int, str] | None:
    return _index_and_count(environ, source, "JOB_COMPLETION_INDEX", "JOB_COMPLETIONS",
                            "add JOB_COMPLETIONS (the Job's .spec.completions) to the container's env",
                            "the Indexed Job")


def _slurm(environ: Mapping[str, str], source: str) -> tuple[int, int, str] | None:
    task = _number(environ, "SLURM_ARRAY_TASK_ID", source)
    if task is None:
        return None
    low = _number(environ, "SLURM_ARRAY_TASK_MIN", source) or 0
    step = _number(environ, "SLURM_ARRAY_TASK_STEP", source) or 1
    high = _number(environ, "SLURM_ARRAY_TASK_MAX", source)
    count = _number(environ, "SLURM_ARRAY_TASK_COUNT", source)
    if count is None and high is None:
        raise UsageError(f"{source} auto: SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_COUNT "
                         "or SLURM_ARRAY_TASK_MAX: run it as an array job (sbatch --array)")
    if (task - low) % step:
        raise UsageError(f"{source} auto: SLURM array task {task} is not on the array's step "
                         f"({low}, every {step})")
    spanned = (high - low) // step + 1 if high is not None else None
    if count is not None and spanned is not None and count != spanned:
        raise UsageError(f"{source} auto: the SLURM array is not a range ({count} tasks over "
                         f"{low}..{high}): use --array=0-{count - 1} (a % limit is fine), or pass I/N")
    return (task - low) // step, count if count is not None else spanned or 0, "the SLURM array"


def _github_matrix(environ: Mapping[str, str], source: str) -> tuple[int, int, str] | None:
    return _index_and_count(environ, source, "SKILLAB_SHARD_INDEX", "SKILLAB_SHARD_COUNT",
                            "set it from ${{ strategy.job-total }}", "the job matrix")


def _index_and_count(environ: Mapping[str, str], source: str, index_name: str, count_name: str,
                     hint: str, where: str) -> tuple[int, int, str] | None:
    """A 0-based index in ``index_name`` with its count in ``count_name`` (None: no index)."""
    index = _number(environ, index_name, source)
    if index is None:
        return None
    count = _number(environ, count_name, source)
    if count is None:
        raise UsageError(f"{source} auto: {index_name} is set without {count_name}: {hint}")
    return index, count, where


def expected_cost(case: Case, default_max_turns: int) -> float:
    """What a case may spend, in turn-sized units: the agent's turn cap, one per validator, two
    per judged expectation or grader, scaled by a declared time budget over the default 10 min."""
    turns = case.max_turns or default_max_turns
    grading = len(case.validators) + 2 * len(case.expectations) + 2 * len(case.graders)
    budget = (case.timeout_s / 600.0) if case.timeout_s else 1.0
    return (turns + grading) * max(budget, 0.1)


@dataclass(frozen=True)
class ShardPlan:
    """Every unit of a run and the shard (1-based) that runs it."""

    shard: ShardSetting
    cases: tuple[str, ...]
    runs: int
    assignment: dict[Unit, int]

    @property
    def units(self) -> tuple[Unit, ...]:
        """This shard's units, in suite order."""
        return tuple(u for u in self.all_units() if self.assignment[u] == self.shard.index)

    def all_units(self) -> list[Unit]:
        return [(name, run) for name in self.cases for run in range(self.runs)]

    def digest(self) -> str:
        """Identifies the whole plan: shards of one run agree on it, or were planned apart."""
        table = [[name, run, self.assignment[(name, run)]] for name, run in self.all_units()]
        return hashlib.sha256(json.dumps(table).encode()).hexdigest()

    def marker(self, *, target_lift_pts: float) -> ShardMarker:
        """What a shard's results document says about the shard (``merge`` checks it), plus
        the lift the merged power statement is sized for, which a shard's own numbers may not show."""
        from ..core.run_info import ShardMarker

        return ShardMarker(self.shard.index, self.shard.count, self.digest(), tuple(self.cases),
                           tuple(self.units), target_lift_pts)


def plan_shards(cases: tuple[Case, ...], runs: int, shard: ShardSetting, default_max_turns: int) -> ShardPlan:
    """Assign each (case, run) to a shard: greedy longest-processing-time, ties broken by suite
    order, so the plan depends on nothing but its arguments."""
    order = {case.name: i for i, case in enumerate(cases)}
    costs = {case.name: expected_cost(case, default_max_turns) for case in cases}
    units = [(case.name, run) for case in cases for run in range(runs)]
    units.sort(key=lambda u: (-costs[u[0]], u[1], order[u[0]]))
    load = [0.0] * shard.count
    assignment: dict[Unit, int] = {}
    for unit in units:
        target = min(range(shard.count), key=lambda i: (load[i], i))
        load[target] += costs[unit[0]]
        assignment[unit] = target + 1
    return ShardPlan(shard, tuple(c.name for c in cases), runs, assignment)
