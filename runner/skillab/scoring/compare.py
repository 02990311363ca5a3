"""Two runs of the same suites compared case by case (``skillab diff A B``).

Each case's pass rate for one arm (over its runs) in A and in B: a case whose rate rose
improved, one whose rate fell regressed. Whether the change is more than noise is decided by
``noise_test`` on the per-case changes alone; it is one function so the test can be swapped.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..core.records import ArmRecord, CaseRecord
from .inference import sign_flip_p


def noise_test(changes: list[int]) -> tuple[float, str]:
    """Two-sided sign-flip test on the per-case changes (integers on a common scale), the same
    case-level test as the lift's. With one run per case it is the exact sign test on the
    flips (McNemar's)."""
    p, exact = sign_flip_p(changes)
    return p, ("exact" if exact else "approximate") + " sign-flip test on the per-case changes"


@dataclass
class SuiteDiff:
    suite: str
    arm: str
    rate_before: float | None
    rate_after: float | None
    improved: list[str] = field(default_factory=list)
    regressed: list[str] = field(default_factory=list)
    errored: list[str] = field(default_factory=list)
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    unchanged: int = 0
    p_value: float = 1.0
    method: str = ""
    significant: bool = False

    @property
    def delta_pts(self) -> float | None:
        if self.rate_before is None or self.rate_after is None:
            return None
        return round((self.rate_after - self.rate_before) * 100, 2)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "delta_pts": self.delta_pts}


Records = Sequence[CaseRecord]


def compare_runs(before: Mapping[str, Records], after: Mapping[str, Records], *, arm: str,
                 alpha: float) -> tuple[list[SuiteDiff], list[str], list[str]]:
    """Per suite present in both (each run's records by skill name); and the suites only in one side."""
    diffs = [_suite_diff(name, before[name], after[name], arm, alpha) for name in before if name in after]
    return diffs, [n for n in before if n not in after], [n for n in after if n not in before]


def _suite_diff(name: str, before: Records, after: Records, arm: str, alpha: float) -> SuiteDiff:
    counts_a, errors_a = _case_counts(before, arm)
    counts_b, errors_b = _case_counts(after, arm)
    rates_a = {case: passes / max(1, n) for case, (passes, n) in counts_a.items()}
    rates_b = {case: passes / max(1, n) for case, (passes, n) in counts_b.items()}
    diff = SuiteDiff(name, arm, _mean(rates_a, rates_b), _mean(rates_b, rates_a))
    compared: list[str] = []
    for case in rates_a:
        if case not in rates_b:
            diff.only_before.append(case)
    for case in rates_b:
        if case not in rates_a:
            diff.only_after.append(case)
            continue
        if case in errors_a or case in errors_b:
            diff.errored.append(case)
            continue
        compared.append(case)
        if rates_b[case] > rates_a[case]:
            diff.improved.append(case)
        elif rates_b[case] < rates_a[case]:
            diff.regressed.append(case)
        else:
            diff.unchanged += 1
    # Pass counts over different numbers of runs, put on one integer scale.
    scale = math.lcm(*(n for case in compared for n in (counts_a[case][1], counts_b[case][1])), 1)
    changes = [counts_b[c][0] * (scale // counts_b[c][1]) - counts_a[c][0] * (scale // counts_a[c][1])
               for c in compared]
    diff.p_value, diff.method = noise_test(changes)
    diff.significant = diff.p_value < alpha
    return diff


def _case_counts(records: Records, arm: str) -> tuple[dict[str, tuple[int, int]], set[str]]:
    """Each case's (passes, unerrored runs) for ``arm``; the cases with no unerrored run."""
    passes: dict[str, list[bool]] = defaultdict(list)
    seen: dict[str, None] = {}
    for record in records:
        seen.setdefault(record.case_name)
        data: ArmRecord | None = getattr(record, arm)
        if data is not None and not data.errored:
            passes[record.case_name].append(data.passed)
    counts = {case: (sum(passes[case]), len(passes[case])) for case in seen}
    return counts, {case for case in seen if not passes[case]}


def _mean(rates: dict[str, float], other: dict[str, float]) -> float | None:
    """The mean pass rate over the cases both runs measured, so the rates are comparable."""
    shared = [rate for case, rate in rates.items() if case in other]
    return round(sum(shared) / len(shared), 4) if shared else None


def render_diff(diffs: list[SuiteDiff], only_before: list[str], only_after: list[str],
                labels: tuple[str, str], alpha: float) -> str:
    lines = [f"skillab diff · A {labels[0]} → B {labels[1]}"]
    for d in diffs:
        rate = ("n/a" if d.rate_before is None or d.rate_after is None else
                f"{d.rate_before * 100:.1f}% → {d.rate_after * 100:.1f}% ({d.delta_pts:+.2f} pts)")
        lines += ["", f"  suite        {d.suite}", f"  {d.arm.replace('_', ' '):<12} pass rate {rate}"]
        if d.regressed:
            lines.append(f"  regressed    {', '.join(d.regressed)}")
        if d.improved:
            lines.append(f"  improved     {', '.join(d.improved)}")
        lines.append(f"  unchanged    {d.unchanged} cases")
        if d.errored:
            lines.append(f"  not compared {', '.join(d.errored)} (errored in A or B)")
        if d.only_before or d.only_after:
            lines.append(f"  only in A    {', '.join(d.only_before) or '-'} · only in B "
                         f"{', '.join(d.only_after) or '-'}")
        judged = "more than noise" if d.significant else "cannot be told from noise"
        lines.append(f"  noise        {len(d.improved)} improved vs {len(d.regressed)} regressed: "
                     f"p={d.p_value:.3f} ({d.method}, alpha {alpha:g}): {judged}")
    for side, names in (("A", only_before), ("B", only_after)):
        if names:
            lines += ["", f"  suites only in {side}: {', '.join(names)}"]
    if not diffs:
        lines += ["", "  no suite is in both documents"]
    return "\n".join(lines)
