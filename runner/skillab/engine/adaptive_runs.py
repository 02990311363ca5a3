"""``--adaptive-runs`` in the engine: whether a later run of a case starts, and what the runs cut saved.

The rule is ``scoring.adaptive_runs``. An arm of a run past the first ``settle_after`` waits
until those first runs of its case finished (other arms start meanwhile); then it starts, or,
when they all agreed, never does. The saving is measured, not planned: the arms that never
started, at the calls and cost per arm the run observed and the ``--concurrency`` that ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..core.records import ArmRecord, CaseRecord
from ..core.run_info import AdaptiveRuns
from ..scoring.adaptive_runs import first_runs_settled, settle_after
from .stop_early import unstarted_cost

Gate = Literal["run", "skip", "wait"]


def plan_adaptive(runs: int, arms: int, *, sharded: bool) -> tuple[AdaptivePlan | None, str | None]:
    """The plan for ``--adaptive-runs``, or None with the warning that says why it is off."""
    if sharded:
        return None, ("--adaptive-runs is off under --shard: a shard holds only some runs of a case, "
                      "so it cannot see the first runs that would settle it")
    if settle_after(runs) >= runs:
        return None, f"--adaptive-runs cuts nothing at --runs {runs}: every case keeps its first {settle_after(runs)} runs"
    return AdaptivePlan(runs, arms), None


@dataclass
class AdaptivePlan:
    runs: int
    arms: int

    @property
    def settle_after(self) -> int:
        return settle_after(self.runs)

    def gate(self, run_index: int, case_records: list[CaseRecord]) -> Gate:
        """Whether an arm of run ``run_index`` starts, given its case's finished records."""
        if run_index < self.settle_after:
            return "run"
        state = first_runs_settled(case_records, self.runs)
        return "wait" if state is None else "skip" if state else "run"

    def cut(self, records: list[CaseRecord], case_names: list[str]) -> list[str]:
        """The cases the rule settled (their first runs agreed), in suite order: their later
        runs never started, whether the gate skipped them or a stop came first."""
        by_case: dict[str, list[CaseRecord]] = {}
        for record in records:
            by_case.setdefault(record.case_name, []).append(record)
        return [name for name in case_names if first_runs_settled(by_case.get(name, []), self.runs)]

    def cut_arms(self, records: list[CaseRecord], case_names: list[str]) -> int:
        return len(self.cut(records, case_names)) * (self.runs - self.settle_after) * self.arms

    def block(self, records: list[CaseRecord], case_names: list[str], *, arms_ran: list[ArmRecord],
              concurrency: int) -> AdaptiveRuns:
        """The results document's ``adaptive_runs`` block and its sentence."""
        cases = tuple(self.cut(records, case_names))
        planned = len(case_names) * self.runs * self.arms
        not_started = self.cut_arms(records, case_names)
        calls, usd = unstarted_cost(arms_ran, not_started)
        money = f"~${usd:.2f}" if usd is not None else "an unknown cost"
        sentence = (f"adaptive runs: {len(cases)} of {len(case_names)} cases agreed on each of their first "
                    f"{self.settle_after} of {self.runs} runs and ran no more; saved {money} ({calls} model "
                    f"calls): {not_started} of {planned} arms never started at --concurrency {concurrency}")
        return AdaptiveRuns(runs=self.runs, settle_after=self.settle_after, cases_cut=cases,
                            arms_planned=planned, arms_not_started=not_started, saved_model_calls=calls,
                            saved_usd=None if usd is None else round(usd, 4), concurrency=concurrency,
                            sentence=sentence)
