"""pass@k from n >= k attempts per arm: the unbiased estimator of Chen et al. (2021).

``pass@k = 1 - C(n - c, k) / C(n, k)`` over the ``n`` graded attempts of which ``c`` passed.
An errored attempt is missing, not a failure: it leaves ``n`` smaller. When fewer than ``k``
attempts were graded, the plug-in ``1 - (1 - c/n)^k`` stands in and says so. pass@1 (``c/n``) is
always reported beside it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..core.summary import PassAtK, PassAtKArm

ARMS = ("with_skill", "without_skill", "original")


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """The unbiased estimate (plug-in below k graded attempts); None without a graded attempt."""
    if n <= 0:
        return None
    if n < k:
        return 1 - (1 - c / n) ** k
    if n - c < k:
        return 1.0
    return 1 - math.comb(n - c, k) / math.comb(n, k)


def run_summary(cases: Iterable[dict[str, Any]], k: int) -> PassAtK | None:
    """Per arm: the mean over cases of each case's mean over runs of pass@k and pass@1."""
    per_arm: dict[str, dict[str, list[tuple[float, float]]]] = {}
    attempts = 0
    plug_in = 0
    for record in cases:
        for arm in ARMS:
            summary = ((record.get(arm) or {}).get("extra") or {}).get("pass_k")
            if not summary or summary.get("pass_at_k") is None:
                continue
            attempts = max(attempts, int(summary.get("n", 0)))
            plug_in += summary.get("estimator") == "plug-in"
            per_arm.setdefault(arm, {}).setdefault(str(record.get("case_name")), []).append(
                (float(summary["pass_at_k"]), float(summary["pass_at_1"]))
            )
    if not per_arm:
        return None

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    rates: dict[str, PassAtKArm] = {}
    for arm, by_case in per_arm.items():
        case_k = [mean([v[0] for v in runs]) for runs in by_case.values()]
        case_1 = [mean([v[1] for v in runs]) for runs in by_case.values()]
        rates[arm] = PassAtKArm(round(mean(case_k), 4), round(mean(case_1), 4), len(by_case))
    delta = None
    if "with_skill" in rates and "without_skill" in rates:
        delta = round((rates["with_skill"].pass_at_k - rates["without_skill"].pass_at_k) * 100, 2)
    return PassAtK(k=k, attempts=attempts, estimator="unbiased (Chen et al. 2021)", plug_in_arms=plug_in,
                   arms=rates, delta_pts=delta)
