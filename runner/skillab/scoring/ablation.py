"""Which part of a skill carries its lift: each leave-one-out variant against the full skill.

The evidence is the lift's own: per case, the full skill's with-skill passes against the
variant's, over the runs both measured (``statistics.case_statistics``, the same exact
sign-flip test, interval and power statement). Several parts are tested at once, so the claim
that one matters is held to a family-wise 5% with Holm's step-down over the parts: a skill with
no part that matters gets a "load-bearing" or "harmful" label at most 5% of the time, whatever
the number of parts.

- **load-bearing**: taking the part out loses lift beyond noise;
- **harmful**: taking it out gains lift beyond noise;
- **dead weight**: no contribution this suite can detect; the report gives the smallest one it
  could have detected, so "dead weight" is never read as "proven useless".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.ablation import Role
from ..core.statistics import LiftStatistics
from .aggregate import ERROR_DOMINATED_FLOOR, arm_passed
from .inference import ALPHA, CasePair, integer_scores, sign_flip_p
from .power_model import smallest_p
from .statistics import case_statistics


@dataclass(frozen=True)
class Contrast:
    """A part's per-case evidence before the family-wise correction."""

    pairs: list[CasePair]
    names: list[str]
    errored: int
    records: int


def contrast(full_records: Sequence[Any], variant_records: Sequence[Any]) -> Contrast:
    """Per case, passes of the full skill's with-skill arm against the variant's, over the runs
    where neither arm errored."""
    full = {(r.case_name, r.run_index): r.with_skill for r in full_records}
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    errored = records = 0
    for record in variant_records:
        mine, theirs = record.with_skill, full.get((record.case_name, record.run_index))
        if theirs is None:
            continue
        records += 1
        if mine is None or mine.errored or theirs.errored:
            errored += 1
            continue
        entry = counts[record.case_name]
        entry[0] += arm_passed(theirs)
        entry[1] += arm_passed(mine)
        entry[2] += 1
    names = list(counts)
    return Contrast([CasePair(*counts[n]) for n in names], names, errored, records)


def can_still_claim(found: Contrast, remaining: int, runs: int) -> bool:
    """Whether the ``remaining`` cases could still give the part a role. A role needs the part's
    Holm-adjusted p below 5%, so its raw p at least; the raw p is smallest when every remaining
    case goes the whole way in one direction (each case's score at its extreme), so when neither
    extreme reaches 5% no result can, and the variant may stop: exact curtailment of the label."""
    if remaining <= 0:
        return False
    for extreme in (CasePair(runs, 0, runs), CasePair(0, runs, runs)):
        p, _exact = sign_flip_p(integer_scores([*found.pairs, *([extreme] * remaining)]))
        if p < ALPHA:
            return True
    return False


def too_small_to_label(cases: int, parts: int) -> str | None:
    """Why no part can get a role at this size, or None: a role needs a part's Holm-adjusted p
    below 5%, so the smallest p the test can give (every case moving one way, ``2^(1 - n)``)
    below ``5% / parts``; said before any arm is spent."""
    if parts < 1 or smallest_p(cases) < ALPHA / parts:
        return None
    needed = next(n for n in range(1, 64) if smallest_p(n) < ALPHA / parts)
    return (f"this suite is too small to label any part: with {cases} case{'s' if cases != 1 else ''} "
            f"the smallest p is {smallest_p(cases):.3g}, and {parts} part{'s' if parts != 1 else ''} "
            f"(Holm) need one below {ALPHA / parts:.3g}; every part would read \"dead weight\". "
            f"{needed} cases or more can label one")


def _dead_weight_note(found: Contrast, tested: int) -> str:
    """What "no detectable contribution" means at this suite's power: the smallest contribution,
    of either sign, this suite detects with 80% power once Holm's correction over the ``tested``
    parts is paid (a lone contribution needs its p below 5% / ``tested``). The variant's pass rate
    does not bound a contribution the way a baseline bounds a lift: a part may hurt as well as help."""
    from .power import power_statement

    runs = max(1, round(sum(p.runs for p in found.pairs) / len(found.pairs)))
    either = power_statement([p.diff for p in found.pairs], baseline_rate=None, runs=runs,
                             alpha=ALPHA / max(tested, 1))
    if either is None or either.never_significant:
        return "no contribution detectable: this suite is too small to show one at any size"
    if either.detectable_lift_pts is not None:
        return f"no contribution detectable: this suite detects about {either.detectable_lift_pts:.0f} pts or more"
    return ("no contribution detectable: at this size, even the largest contribution would be found "
            "less than 80% of the time")


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (None stays None and counts as no test)."""
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(tested)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, index) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[index] = running
    return adjusted


def classify(contrasts: Sequence[Contrast | None], *, target_lift_pts: float = 10.0) -> list[dict[str, Any]]:
    """Each part's role and numbers (``None``: the part was not run). The fields of
    ``core.ablation.PartResult`` that come from the evidence."""
    stats: list[LiftStatistics | None] = []
    for found in contrasts:
        if found is None or not found.pairs:
            stats.append(None)
            continue
        withheld = None
        if found.records and found.errored / found.records > ERROR_DOMINATED_FLOOR:
            withheld = f"more than {ERROR_DOMINATED_FLOOR:.0%} of records errored"
        stats.append(case_statistics(found.pairs, names=found.names, subject="the part",
                                     target_lift_pts=target_lift_pts, withheld=withheld))
    adjusted = holm([s.p_value if s is not None else None for s in stats])
    tested = sum(p is not None for p in adjusted)
    results: list[dict[str, Any]] = []
    for found, s, p_adj in zip(contrasts, stats, adjusted):
        if found is None or s is None or s.lift_pts is None:
            note = "not run" if found is None else (s.withheld if s is not None and s.withheld else "no case measured")
            results.append({"role": "not measured", "contribution_pts": None, "ci95": None, "p_value": None,
                            "p_adjusted": None, "detectable_pts": None,
                            "n_cases": 0 if found is None else len(found.pairs),
                            "errored_records": 0 if found is None else found.errored, "note": note})
            continue
        detectable = s.power.detectable_lift_pts if s.power is not None else None
        role: Role = "dead weight"
        if p_adj is not None and p_adj < ALPHA:
            role = "load-bearing" if s.lift_pts > 0 else "harmful" if s.lift_pts < 0 else "dead weight"
        note = _dead_weight_note(found, tested) if role == "dead weight" else ""
        results.append({"role": role, "contribution_pts": s.lift_pts, "ci95": s.ci95, "p_value": s.p_value,
                        "p_adjusted": p_adj, "detectable_pts": detectable, "n_cases": s.n_cases,
                        "errored_records": found.errored, "note": note})
    return results


__all__ = ["Contrast", "can_still_claim", "classify", "contrast", "holm", "too_small_to_label"]
