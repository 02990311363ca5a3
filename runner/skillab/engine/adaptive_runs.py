"""``--adaptive-runs`` in the engine: whether a later run of a case starts, and what the runs cut saved.

The rule is ``scoring.adaptive_runs``. An arm of a run past the first ``settle_after`` waits
until those first runs of its case finished (other arms start meanwhile); then it starts, or,
when they all agreed, is held. Held runs wait until nothing else is left to run; then, while
some ending of them could still change the lift sentence's claim (or the ``--min-delta-pts``
gate), the held runs of the next settled cases start, as many cases as fill the free slots;
once none could, the rest never start. The saving is measured, not planned: the arms that never
started, at the calls and cost per arm the run observed and the ``--concurrency`` that ran.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ..core.records import ArmRecord, CaseRecord
from ..core.run_info import AdaptiveRuns
from ..scoring.adaptive_runs import first_runs_settled, held_gate_settled, held_runs_settled, settle_after
from ..scoring.inference import ALPHA
from ..scoring.statistics import case_pairs

if TYPE_CHECKING:
    from ..agents.base import ArmName
    from .arm import ArmJob

# "wait": its case's first runs are running; "hold": its case settled, and whether its later
# runs are needed is decided once nothing else is left to run.
Gate = Literal["run", "skip", "wait", "hold"]


def plan_adaptive(runs: int, arms: int, *, sharded: bool, alpha: float = ALPHA, min_delta_pts: float | None = None,
                  gate_on: str = "point") -> tuple[AdaptivePlan | None, str | None]:
    """The plan for ``--adaptive-runs``, or None with the warning that says why it is off."""
    if sharded:
        return None, ("--adaptive-runs is off under --shard: a shard holds only some runs of a case, "
                      "so it cannot see the first runs that would settle it")
    if settle_after(runs) >= runs:
        return None, f"--adaptive-runs cuts nothing at --runs {runs}: every case keeps its first {settle_after(runs)} runs"
    return AdaptivePlan(runs, arms, alpha=alpha, min_delta_pts=min_delta_pts, gate_on=gate_on), None


@dataclass
class AdaptivePlan:
    runs: int
    arms: int
    # The bound the lift sentence is decided at (group-sequential's final look, else 5%).
    alpha: float = ALPHA
    min_delta_pts: float | None = None
    gate_on: str = "point"
    # Settled cases whose held runs start: an ending of them could change the verdict.
    released: set[str] = field(default_factory=set)
    # No ending of the runs still held could change it: they never start.
    closed: bool = False

    @property
    def settle_after(self) -> int:
        return settle_after(self.runs)

    def gate(self, run_index: int, case_name: str, case_records: list[CaseRecord]) -> Gate:
        """Whether an arm of run ``run_index`` of ``case_name`` starts, given its case's finished records."""
        if run_index < self.settle_after:
            return "run"
        state = first_runs_settled(case_records, self.runs)
        if state is None:
            return "wait"
        if not state or case_name in self.released:
            return "run"
        return "skip" if self.closed else "hold"

    def release(self, records: list[CaseRecord], held: Sequence[str], slots: int) -> None:
        """Nothing but the held runs of the settled cases ``held`` (in the order they would start)
        is left: close when no ending of them could change the verdict, else release the next
        cases, as many as fill ``slots`` arms in flight (at least one)."""
        _, pairs, _, _ = case_pairs(records)
        if held_runs_settled(pairs, len(held), self.runs, self.alpha) and (
                self.min_delta_pts is None
                or held_gate_settled(pairs, len(held), self.runs, self.min_delta_pts, self.gate_on)):
            self.closed = True
            return
        per_case = self.arms * (self.runs - self.settle_after)
        self.released.update(held[:max(1, slots // per_case)])

    def cut(self, records: list[CaseRecord], case_names: list[str]) -> list[str]:
        """The cases the rule settled (their first runs agreed) whose later runs never started,
        in suite order, whether the rule held them to the end or a stop came first."""
        return [name for name, later in self._settled(records, case_names) if not later]

    def _settled(self, records: list[CaseRecord], case_names: list[str]) -> list[tuple[str, bool]]:
        """The settled cases in suite order, each with whether any of its later runs ran."""
        by_case: dict[str, list[CaseRecord]] = {}
        for record in records:
            by_case.setdefault(record.case_name, []).append(record)
        return [(name, any(getattr(r, "run_index", 0) >= self.settle_after for r in found))
                for name in case_names if first_runs_settled(found := by_case.get(name, []), self.runs)]

    def cut_arms(self, records: list[CaseRecord], case_names: list[str]) -> int:
        return len(self.cut(records, case_names)) * (self.runs - self.settle_after) * self.arms

    def block(self, records: list[CaseRecord], case_names: list[str], *, arms_ran: list[ArmRecord],
              concurrency: int) -> AdaptiveRuns:
        """The results document's ``adaptive_runs`` block and its sentence."""
        from .stop_early import unstarted_cost  # HeldArms runs in every run; this only with --adaptive-runs

        settled = self._settled(records, case_names)
        cases = tuple(name for name, later in settled if not later)
        ran = len(settled) - len(cases)
        planned = len(case_names) * self.runs * self.arms
        not_started = self.cut_arms(records, case_names)
        calls, usd = unstarted_cost(arms_ran, not_started)
        money = f"~${usd:.2f}" if usd is not None else "an unknown cost"
        agreed = (f"adaptive runs: {len(settled)} of {len(case_names)} cases agreed on each of their first "
                  f"{self.settle_after} of {self.runs} runs")
        why = "they could have changed the verdict"
        what = (" and ran no more" if not ran else f"; their later runs ran: {why}" if not cases
                else f"; {len(cases)} ran no more, {ran} ran their later runs: {why}")
        sentence = (f"{agreed}{what}; saved {money} ({calls} model calls): {not_started} of {planned} arms "
                    f"never started at --concurrency {concurrency}")
        return AdaptiveRuns(runs=self.runs, settle_after=self.settle_after, cases_cut=cases,
                            arms_planned=planned, arms_not_started=not_started, saved_model_calls=calls,
                            saved_usd=None if usd is None else round(usd, 4), concurrency=concurrency,
                            sentence=sentence)


# A queued arm as the engine's loop holds it: its case's index, the job, its baseline-cache slot.
Queued = tuple[int, "ArmJob", "tuple[str, str] | None"]


class HeldArms:
    """The engine's side of ``plan``: which queued arm starts, waits or is held, and when held
    arms go back to the queue. ``pair(case, run)`` is a finished (case, run) record or None,
    ``records()`` every finished one, ``position(case)`` a case's place in the order cases
    start (``--stop-early``'s seeded order, else the suite's)."""

    def __init__(self, plan: AdaptivePlan | None, case_names: Sequence[str],
                 pair: Callable[[int, int], CaseRecord | None], records: Callable[[], list[CaseRecord]],
                 position: Callable[[int], int]):
        self.plan, self._names = plan, case_names
        self._pair, self._records, self._position = pair, records, position
        # Held arms started without their case's first runs (nothing left could finish them).
        self._forced: set[tuple[int, int, ArmName]] = set()
        # Cases whose later runs are held until nothing else is left.
        self._parked: set[int] = set()

    def gate(self, case_index: int, job: ArmJob) -> Gate:
        """"run" this arm, "skip" it (its case settled), or "wait" for the case's first runs."""
        if self.plan is None or (case_index, job.run_index, job.arm) in self._forced:
            return "run"
        case_records = [p for r in range(self.plan.runs) if (p := self._pair(case_index, r)) is not None]
        return self.plan.gate(job.run_index, job.case.name, case_records)

    def release(self, held: list[Queued], queue: deque[Queued], *, force: bool, halted: bool,
                slots: int) -> list[Queued]:
        """Held arms whose case's first runs finished go back to the front of the queue, in
        order, for the gate to start or skip. With ``force`` nothing else is left to run: arms
        still waiting for their case's first runs start (nothing could finish those), and then
        the rule decides about the held runs of settled cases (``AdaptivePlan.release``)."""
        if not held:
            return held
        # A held run of a settled case stays held until the rule decides (below): not gated
        # again at every finished arm.
        gates = [self.gate(i, job) if force or i not in self._parked else "hold" for i, job, _ in held]
        if force and "wait" in gates:
            self._forced.update((i, job.run_index, job.arm) for (i, job, _), g in zip(held, gates, strict=True)
                                if g == "wait")
            gates = ["run" if g == "wait" else g for g in gates]
        elif force and self.plan is not None and "hold" in gates and not halted:
            cases = sorted({i for (i, _, _), g in zip(held, gates, strict=True) if g == "hold"}, key=self._position)
            self.plan.release(self._records(), [self._names[i] for i in cases], slots)
            gates = [self.gate(i, job) for i, job, _ in held]
        self._parked = {i for (i, _, _), g in zip(held, gates, strict=True) if g == "hold"}
        ready = [g not in ("wait", "hold") for g in gates]
        queue.extendleft(reversed([item for item, go in zip(held, ready, strict=True) if go]))
        return [item for item, go in zip(held, ready, strict=True) if not go]
