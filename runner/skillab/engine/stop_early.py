"""``--stop-early``: the seeded case order, and the check after each finished case.

The rule itself is ``scoring.stopping``; this module feeds it the cases that finished every
run, in the order they were drawn, and writes what happened into ``results.json``'s
``stop_early`` block: the design, the seed and order, the cases that ran, why it stopped and
what that saved.

Arms run concurrently, so a stop is decided while others are in flight: those finish and count,
and nothing after the stop starts. Group-sequential looks fall on known case counts, so the
engine starts no case past the next look until that look is decided (``admits``): the stop lands
on the look. The saving is measured, not planned: the arms that never started, at the
``--concurrency`` that ran.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.records import ArmRecord, CaseRecord
from ..core.run_info import StopEarly
from ..scoring.adaptive_runs import first_runs_settled
from ..scoring.inference import ALPHA, CasePair
from ..scoring.statistics import case_pairs
from ..scoring.stopping import StopDecision, curtail, group_sequential, next_look, stop_sentence


@dataclass
class EarlyStop:
    design: str
    seed: int
    order: list[int]
    runs: int
    arms: int
    min_delta_pts: float | None = None
    gate_on: str = "point"
    stopped_at: int | None = None
    reason: str = ""
    alpha: float = ALPHA
    checked: set[int] = field(default_factory=set)
    # Cases finished every run at the last check: where the next look lies.
    finished: int = 0
    # ``--adaptive-runs``: a case settled by agreement on its first runs is finished.
    adaptive: bool = False

    @classmethod
    def plan(cls, design: str, seed: int | None, cases: int, runs: int, arms: int, **gate: Any) -> EarlyStop:
        seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        order = list(range(cases))
        random.Random(seed).shuffle(order)
        return cls(design, seed, order, runs, arms, **gate)

    def check(self, records: list[CaseRecord], case_names: list[str]) -> bool:
        """After a case finished: whether the run may stop now (records are every finished pair)."""
        if self.stopped_at is not None:
            return True
        done = _finished_cases(records, self.runs, self.adaptive)
        self.finished = len(done)
        if len(done) in self.checked:
            return False
        self.checked.add(len(done))
        pairs = [done[name] for name in (case_names[i] for i in self.order) if name in done]
        remaining = len(self.order) - len(pairs)
        decision = self._decide(pairs, remaining)
        if decision.stop:
            self.stopped_at, self.reason, self.alpha = len(pairs), decision.reason, decision.alpha
        elif self.design == "group-sequential":
            self.alpha = decision.alpha
        return decision.stop

    def _decide(self, pairs: list[CasePair], remaining: int) -> StopDecision:
        if self.design == "curtail":
            return curtail(pairs, remaining, self.runs, min_delta_pts=self.min_delta_pts, gate_on=self.gate_on)
        return group_sequential(pairs, len(self.order), runs=self.runs)

    def admits(self, position: int) -> bool:
        """Whether the case at ``position`` of the seeded order may start now: with
        group-sequential looks, only cases up to the next undecided look."""
        if self.design != "group-sequential":
            return True
        look = next_look(self.finished, len(self.order))
        return look is None or position < look

    def block(self, records: list[CaseRecord], case_names: list[str], *, arms_ran: list[ArmRecord],
              concurrency: int, cut_arms: int = 0) -> StopEarly:
        """The results document's ``stop_early`` block; ``arms_ran`` is every arm that ran, in a
        finished case or not; ``cut_arms`` those ``--adaptive-runs`` never started."""
        ran = len({r.case_name for r in records})
        block = StopEarly(
            design=self.design,
            seed=self.seed,
            order=tuple(case_names[i] for i in self.order),
            planned_cases=len(self.order),
            cases_ran=ran,
            # Arms in flight when the rule fired may finish every case: then nothing was saved.
            stopped=self.stopped_at is not None and ran < len(self.order),
            reason=self.reason or None,
            alpha=self.alpha,
        )
        if not block.stopped:
            return block
        planned = len(self.order) * self.runs * self.arms
        # Arms ``--adaptive-runs`` cut were saved by that rule, not by this one.
        not_started = max(planned - len(arms_ran) - cut_arms, 0)
        saved_calls, saved_usd = unstarted_cost(arms_ran, not_started)
        sentence = stop_sentence(ran, len(self.order), self.reason, saved_usd, saved_calls)
        return replace(block, saved_model_calls=saved_calls,
                       saved_usd=None if saved_usd is None else round(saved_usd, 4),
                       sentence=f"{sentence}: {not_started} of {planned} arms never started "
                                f"at --concurrency {concurrency}",
                       arms_planned=planned, arms_not_started=not_started, concurrency=concurrency)


def unstarted_cost(arms_ran: list[ArmRecord], not_started: int) -> tuple[int, float | None]:
    """The model calls and dollars ``not_started`` arms would have cost, from the arms that ran:
    an arm that never started would have been fresh (not a cached baseline) as often as the ones
    that ran were, and made as many model calls and spent as much as they did on average."""
    fresh = [a for a in arms_ran if not a.cached]
    share = len(fresh) / len(arms_ran) if arms_ran else 1.0
    per_arm = sum(max(a.turns, 1) for a in fresh) / len(fresh) if fresh else 1.0
    priced = [a.usage.cost_usd for a in fresh if a.usage.cost_usd is not None]
    saved_usd = sum(priced) / len(priced) * not_started * share if priced else None
    return round(not_started * share * per_arm), saved_usd


def _finished_cases(records: list[CaseRecord], runs: int, adaptive: bool = False) -> dict[str, CasePair]:
    """Cases with every run finished, as the pass counts the statistics will count: over the
    comparable runs only (``scoring.statistics.case_pairs``), so the rule stops on the evidence
    the report shows. A finished case with no comparable run counts as finished, with no runs.
    With ``adaptive`` (``--adaptive-runs``) a case whose first runs settled it is finished too."""
    by_case: dict[str, list[CaseRecord]] = {}
    for record in records:
        by_case.setdefault(record.case_name, []).append(record)
    done = {name for name, found in by_case.items()
            if len(found) >= runs or adaptive and first_runs_settled(found, runs)}
    names, pairs, _, _ = case_pairs([r for r in records if r.case_name in done])
    comparable = dict(zip(names, pairs, strict=True))
    return {name: comparable.get(name, CasePair(0, 0, 0)) for name in by_case if name in done}
