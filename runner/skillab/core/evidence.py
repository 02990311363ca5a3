"""The evidence ledger's block of a results document (``--evidence-ledger``): what every run of
the same skill content, agent, model and suite has accumulated, this run included.

Plain data; ``scoring.eprocess`` computes the evidence and ``log.ledger`` keeps the ledger.
Field order is wire order (``core.wire``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

LedgerVerdict = Literal["helps", "hurts", "undecided"]


@dataclass(frozen=True)
class EvidenceBlock:
    """The ledger's evidence for this run's skill content, agent, model and suite."""

    ledger: str
    # The digest of the skill content hash, agent, model and suite hash the evidence is for.
    key: str
    # Ledger lines (runs, shards, re-runs) the evidence is from, this run's included.
    runs: int
    # Graded (case, run) pairs counted, and the differing ones among them.
    pairs: int
    flips_to_pass: int
    flips_to_fail: int
    # Natural logs of the e-values (they can pass any float's range).
    log_e_helps: float
    log_e_hurts: float
    # The e-value either direction is claimed at (2/alpha).
    threshold: float
    verdict: LedgerVerdict
    # The confidence sequence of the net share of differing cases the skill decides, in points.
    low_pts: float
    high_pts: float
    # More cases up (with none down) a "helps" needs, and the mirror for "hurts"; None:
    # more than the search looks for (or already claimed the other way).
    more_for_helps: int | None
    more_for_hurts: int | None
    # This run's pairs that entered the ledger; those left out because an arm came from the
    # baseline cache (its baseline already counted once); ledger lines not signed with the key.
    added_pairs: int
    skipped_cached: int
    skipped_lines: int
    # Pairs where one arm errored: counted against each claim, as the flip they would be.
    errored_pairs: int = 0
    # What the e-values are judged on: each case of each run, up or down by the sign of its pairs'
    # net difference (the errored arms counted against "helps").
    cases_up: int = 0
    cases_down: int = 0

    @property
    def e_helps(self) -> float:
        return math.exp(min(self.log_e_helps, 700.0))

    @property
    def e_hurts(self) -> float:
        return math.exp(min(self.log_e_hurts, 700.0))

    def sentence(self) -> str:
        """One line every report shows."""
        head = {"helps": "helps (anytime-valid, 5%)", "hurts": "hurts (anytime-valid, 5%)",
                "undecided": "undecided"}[self.verdict]
        text = (f"{head}: {self.runs} run(s), {self.flips_to_pass} flips to pass / {self.flips_to_fail} to "
                f"fail over {self.pairs} pairs, {self.cases_up} case(s) up / {self.cases_down} down (a vote "
                f"per case and run); e-value helps {_e(self.e_helps)}, hurts {_e(self.e_hurts)} "
                f"(claimed at {self.threshold:g}); net share of differing cases {self.low_pts:+.1f} to "
                f"{self.high_pts:+.1f} pts (confidence sequence)")
        if self.verdict == "undecided":
            text += f"; {_needed(self.more_for_helps, 'up', 'helps')}, {_needed(self.more_for_hurts, 'down', 'hurts')}"
        if self.errored_pairs:
            text += f"; {self.errored_pairs} pair(s) where one arm errored counted against each claim"
        if self.skipped_cached:
            text += f"; {self.skipped_cached} pair(s) with a cached baseline not counted"
        if self.skipped_lines:
            text += f"; {self.skipped_lines} ledger line(s) not signed with this key ignored"
        return text


def _e(value: float) -> str:
    return f"{value:.3g}" if value < 1e6 else f"{value:.2e}"


def _needed(count: int | None, direction: str, claim: str) -> str:
    if count is None:
        return f'"{claim}" needs more than any suite gives'
    return f'"{claim}" needs {count} more case(s) {direction}'
