"""When a run may stop early (``--stop-early``): the cases left can no longer change what it says.

``curtail`` is exact curtailment. After each case finishes (all its runs), every way the cases
still to run could come out is considered: a run stops only when the lift sentence's claim
(helps beyond noise / hurts beyond noise / cannot be told from noise) and a ``--min-delta-pts``
gate would be the same for all of them. The stopped run therefore says what the full run
would have said, with no error rate of its own. Errors are not outcomes here: a run whose
errors pass 25% is withheld either way. With several runs per case the outcomes are
enumerated only while there are at most ``_MAX_COMPLETIONS`` of them (so curtailment happens
near the end of the plan); a ``--gate-on lower-bound`` gate settles only when no outcome can
bring even the lift up to it.

``group-sequential`` looks at the finished cases at 1/2 and 3/4 of the plan and at the end
(``GROUP_SEQUENTIAL``), in both directions, so a skill that hurts is stopped and called harmful
like one that helps. An interim look stops with a claim at p < 0.0005 and p < 0.0015, the end at
p < 0.048: each look's sign-flip test is exact, so by the union bound the false claims stay at
or below 5% with no normal approximation. A non-binding futility stop at either look ends a run
only when neither a lift nor harm can still be shown: the conditional power under the current
trend to cross the final bound, in the direction the lift points (the likelier one), is below
5%, with the runs graded so far as the information seen. Futility never raises the false-claim
rate; ``benchmarks/adaptive_runs.py`` and ``benchmarks/calibration.py`` measure what it costs
in power, for "helps" and for "hurts", beside the fixed design. A run that stops for efficacy
says "beyond noise" at that look's bound.

``calls_saved`` is the plain count the benchmarks (and an A/A study on a real model) use.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

from .inference import ALPHA, CasePair, integer_scores, sign_flip_p
from .power_model import critical_count

Design = Literal["curtail", "group-sequential"]
DESIGNS: tuple[str, ...] = ("curtail", "group-sequential")
_MAX_COMPLETIONS = 5_000


@dataclass(frozen=True)
class SequentialPlan:
    """Group-sequential looks: where they fall, what each needs to stop, and the final bound."""

    # The interim looks, as shares of the planned cases (the last look is every case).
    looks: tuple[float, ...]
    # The two-sided sign-flip p each interim look needs to stop with a claim.
    bounds: tuple[float, ...]
    # The p the last look needs: the lift sentence's bound when no look stopped.
    final: float
    # Per interim look, a futility stop below this conditional power of crossing the final
    # bound (under the trend so far, in the direction the lift points); 0: no futility stop there.
    futility: tuple[float, ...]
    # How a stop's reason names the bounds.
    name: str


# Looks at 1/2 and 3/4 of the cases and at the end. Each look's sign-flip test is exact, so
# bounds that add up to 0.05 hold the false claims at or below 5% by the union bound, for any
# distribution of the cases (O'Brien-Fleming's 0.0042 / 0.0194 / 0.043 leaned on a normal
# approximation, and its final 0.043 cost up to 3 points of power): the interim bounds are
# strict, so the final look keeps 0.048. A look stops for futility below 5% conditional power;
# ``benchmarks/adaptive_runs.py`` compares the plans this was chosen from, by calls per correct
# verdict at power within 2 Monte Carlo SE of the fixed design's.
GROUP_SEQUENTIAL = SequentialPlan(looks=(0.5, 0.75), bounds=(0.0005, 0.0015), final=0.048,
                                  futility=(0.05, 0.05), name="interim")


@dataclass(frozen=True)
class StopDecision:
    stop: bool
    reason: str = ""
    # The p-value bound the lift sentence is decided at (the sign-flip test's 5% unless a
    # group-sequential look says otherwise).
    alpha: float = ALPHA


def claim(pairs: Sequence[CasePair], alpha: float = ALPHA) -> str:
    """The lift sentence's claim over ``pairs``: "helps", "hurts" or "noise"."""
    pairs = [p for p in pairs if p.runs > 0]
    if len(pairs) < 2:
        return "noise"
    scores = integer_scores(pairs)
    total = sum(scores)
    if total == 0 or sign_flip_p(scores)[0] >= alpha:
        return "noise"
    return "helps" if total > 0 else "hurts"


def curtail(pairs: Sequence[CasePair], remaining: int, runs: int, *, min_delta_pts: float | None = None,
            gate_on: str = "point") -> StopDecision:
    """Whether no outcome of ``remaining`` more cases (``runs`` each) can change the claim or gate."""
    if remaining <= 0:
        return StopDecision(False)
    if runs == 1 and all(p.runs == 1 for p in pairs):
        settled = _one_run_settled(pairs, remaining)
    else:
        settled = _settled(pairs, remaining, runs)
    if not settled:
        return StopDecision(False)
    if min_delta_pts is not None and not _gate_settled(pairs, remaining, runs, min_delta_pts, gate_on):
        return StopDecision(False)
    what = "the lift sentence" + (" and the lift gate" if min_delta_pts is not None else "")
    return StopDecision(True, f"{what} could no longer change")


def _one_run_settled(pairs: Sequence[CasePair], remaining: int) -> bool:
    """One run per case: the claim is exact McNemar's on the counts of cases up and down."""
    up = sum(1 for p in pairs if p.diff > 0)
    down = sum(1 for p in pairs if p.diff < 0)
    claims = set()
    for a in range(remaining + 1):
        for b in range(remaining - a + 1):
            u, d = up + a, down + b
            claims.add("helps" if u >= critical_count(u + d) and u > d
                       else "hurts" if d >= critical_count(u + d) and d > u else "noise")
            if len(claims) > 1:
                return False
    return True


def _settled(pairs: Sequence[CasePair], remaining: int, runs: int) -> bool:
    # The two extreme endings first: when the run is not settled they usually show it at once.
    best = claim([*pairs, *[CasePair(runs, 0, runs)] * remaining])
    if best != claim([*pairs, *[CasePair(0, runs, runs)] * remaining]):
        return False
    outcomes = _completions(remaining, runs)
    if outcomes is None:
        return False
    claims = {best}
    for extra in outcomes:
        claims.add(claim([*pairs, *extra]))
        if len(claims) > 1:
            return False
    return True


def _completions(remaining: int, runs: int) -> list[list[CasePair]] | None:
    """Every multiset of outcomes of ``remaining`` cases (with-passes minus without-passes)."""
    values = range(-runs, runs + 1)
    if math.comb(remaining + len(values) - 1, len(values) - 1) > _MAX_COMPLETIONS:
        return None
    out = []
    for combo in itertools.combinations_with_replacement(values, remaining):
        out.append([CasePair(max(v, 0), max(-v, 0), runs) for v in combo])
    return out


def _gate_settled(pairs: Sequence[CasePair], remaining: int, runs: int, threshold: float, gate_on: str) -> bool:
    n = len(pairs) + remaining
    done = sum(p.diff for p in pairs)
    low, high = 100 * (done - remaining) / n, 100 * (done + remaining) / n
    if high < threshold:
        return True  # fails whatever happens (the interval's lower bound is below the lift)
    return gate_on == "point" and low >= threshold


def group_sequential(pairs: Sequence[CasePair], planned: int, *, runs: int,
                     plan: SequentialPlan = GROUP_SEQUENTIAL) -> StopDecision:
    """The look (if ``len(pairs)`` reaches one) and what it decides; ``runs`` per case planned."""
    done = len(pairs)
    looks = len(plan.looks) + 1
    for look, (share, bound, futility) in enumerate(zip(plan.looks, plan.bounds, plan.futility, strict=True)):
        if done != look_size(share, planned) or done >= planned:
            continue
        said = claim(pairs, alpha=bound)
        if said != "noise":
            return StopDecision(True, f"look {look + 1} of {looks} crossed its {plan.name} bound "
                                      f"(p < {bound:g})", alpha=bound)
        # The information seen is the runs graded, not the cases: a case --adaptive-runs
        # settled, or one with errored runs, has runs still to come or missing.
        seen = sum(p.runs for p in pairs) / (planned * runs)
        if trend_power(pairs, seen, plan.final) < futility:
            return StopDecision(True, f"look {look + 1} of {looks}: neither a lift nor harm can still be "
                                      f"shown (non-binding futility stop)", alpha=bound)
    return StopDecision(False, alpha=plan.final)


def look_size(share: float, planned: int) -> int:
    """The finished cases a look at ``share`` of the plan is taken at."""
    return max(2, math.ceil(share * planned))


def next_look(done: int, planned: int, plan: SequentialPlan = GROUP_SEQUENTIAL) -> int | None:
    """The case count of the next interim look after ``done`` finished cases (None: none left)."""
    for share in plan.looks:
        size = look_size(share, planned)
        if size > done and size < planned:
            return size
    return None


def trend_power(pairs: Sequence[CasePair], share: float, final: float = GROUP_SEQUENTIAL.final) -> float:
    """Conditional power, under the trend seen so far (in whichever direction the lift points),
    of crossing the ``final`` bound once the remaining ``1 - share`` of the runs ran."""
    if share <= 0:
        return 1.0  # nothing graded yet: no trend to extrapolate
    scores = integer_scores([p for p in pairs if p.runs > 0]) if pairs else []
    spread = math.sqrt(sum(x * x for x in scores))
    z = abs(sum(scores)) / spread if spread else 0.0
    final_z = NormalDist().inv_cdf(1 - final / 2)
    if share >= 1:
        return 1.0 if z >= final_z else 0.0
    return NormalDist().cdf((z / math.sqrt(share) - final_z) / math.sqrt(1 - share))


def calls_saved(planned_cases: int, ran_cases: int, runs: int, arms: int, calls_per_arm: float) -> int:
    """Model calls a stop saved: the arms of the cases that never ran, at the observed calls per arm."""
    return round(max(planned_cases - ran_cases, 0) * runs * arms * calls_per_arm)


def stop_sentence(ran: int, planned: int, reason: str, saved_usd: float | None, saved_calls: int) -> str:
    money = f"~${saved_usd:.2f}" if saved_usd is not None else "an unknown cost"
    return f"stopped at {ran} of {planned} cases: {reason}; saved {money} ({saved_calls} model calls)"


@dataclass(frozen=True)
class Replay:
    """What ``--stop-early`` would have done on a run whose per-case results are known."""

    stopped_at: int | None  # cases run before the stop; None when every case ran
    reason: str
    claim_full: str  # the full run's claim ("helps", "hurts", "noise")
    claim_stopped: str  # the stopped run's claim, at its own bound
    cases: int

    @property
    def cases_saved(self) -> int:
        return 0 if self.stopped_at is None else self.cases - self.stopped_at


def replay(pairs: Sequence[CasePair], design: str, runs: int, *, min_delta_pts: float | None = None,
           gate_on: str = "point", plan: SequentialPlan = GROUP_SEQUENTIAL) -> Replay:
    """Run the stopping rule over ``pairs`` in the order given (shuffle them first, as the engine
    does with its seed), one case at a time as with ``--concurrency 1``; ``plan`` the looks of
    group-sequential (the benchmarks compare others)."""
    planned = len(pairs)
    alpha = plan.final if design == "group-sequential" else ALPHA
    full = claim(pairs, alpha)
    for k in range(2, planned):
        done = list(pairs[:k])
        if design == "curtail":
            decision = curtail(done, planned - k, runs, min_delta_pts=min_delta_pts, gate_on=gate_on)
        else:
            decision = group_sequential(done, planned, runs=runs, plan=plan)
        if decision.stop:
            return Replay(k, decision.reason, full, claim(done, decision.alpha), planned)
    return Replay(None, "", full, full, planned)
