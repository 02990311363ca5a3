"""A run's pairs added to the evidence ledger, and the accumulated evidence it reports
(``--evidence-ledger``; the e-process is ``scoring.eprocess``, the file ``log.ledger``).

A pair enters only when both its arms ran in this run. A without-skill arm from the baseline
cache was drawn once and paired again with every later with-skill arm: given that one draw, the
direction of each later flip is decided before the agent runs (a cached failing baseline makes
every difference a flip to pass), so those pairs are not fresh evidence and are left out.

The evidence is counted a case at a time (``case_votes``): each case of each run,
shard or re-run is one vote, up or down by the sign of its pairs' net difference. The runs of a
case within one run of the suite can all repeat one draw (an agent that answers the case alike
every time), and counted as flips of their own they made one lucky case look like many.

Errors never decide a claim here either (``error_account``): a pair where one arm errored is
kept, as what it would be against each claim (the errored with-skill arm failed and the errored
without-skill arm passed, against "helps"; the reverse against "hurts"). Dropped, they let an
arm that errors on the runs it would fail leave only its flips to pass, and re-run after re-run
a skill that does nothing reached "helps". Counted against it, the e-value for each claim is at
most the one of the pairs' true outcomes, so it keeps its level however the errors fall. A pair
where both arms errored (an outage around them) says nothing either way and stays out.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from datetime import UTC, datetime
from pathlib import Path

from ..core.evidence import EvidenceBlock, LedgerVerdict
from ..core.records import CaseRecord
from ..core.runlog import RunLog
from ..log.ledger import LedgerLine, Tally, append_line
from .aggregate import arm_passed
from .eprocess import confidence_sequence, log_e_helps, log_e_hurts, log_threshold, more_needed
from .error_account import errored_arms, failed_by_its_own_hand
from .inference import ALPHA

_KIND = {"flip_to_pass": "pass", "flip_to_fail": "fail", "pass_kept": "same", "fail_kept": "same"}
# What a pair of each kind adds to its case's net difference, against each claim: an errored
# arm counts against the claim (``pair_kind``).
_NET = {"helps": {"pass": 1, "fail": -1, "err_fail": -1}, "hurts": {"pass": 1, "fail": -1, "err_pass": 1}}


def ledger_key(log: RunLog) -> str:
    """What "the same experiment" is for the ledger: skill content, agent, model and suite."""
    s = log.settings
    parts = {"skill_hash": s.suite.skill_hash, "agent": s.adapter.name, "model": s.models.agent,
             "suite_hash": s.suite.suite_hash or s.suite.path}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def pair_id(record: CaseRecord) -> str:
    """A pair's id, from what both its arms did: the same pair in a shard and in the merged
    document, or regraded, has the same id; a re-run's pairs have their own."""
    parts = [record.case_name, record.run_index]
    for arm in (record.with_skill, record.without_skill):
        parts += [arm.final_output, arm.transcript, arm.detail or ""]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:20]


def pair_kind(record: CaseRecord) -> str | None:
    """The ledger kind of a record's pair (``log.ledger.KINDS``); None when it is no evidence (both
    arms errored, or the case errored before either ran)."""
    if record.error is not None:
        return None
    kind = _KIND.get(record.outcome)
    if kind is not None or record.outcome != "error":
        return kind
    with_errored, without_errored = errored_arms(record)
    if with_errored == without_errored:
        return None
    other = arm_passed(record.without_skill if with_errored else record.with_skill)
    if failed_by_its_own_hand(record):  # the errored arm failed, as the lift counts it
        return ("fail" if other else "same") if with_errored else ("pass" if other else "same")
    # Against "helps" the errored with-skill arm failed: a flip to fail where the other passed.
    return "err_fail" if other == with_errored else "err_pass"


def run_pairs(log: RunLog) -> tuple[dict[str, tuple[str, ...]], tuple[tuple[str, ...], ...], int]:
    """This run's pairs by kind, each case's pairs, and how many were left out for a cached arm."""
    pairs: dict[str, list[str]] = {"pass": [], "fail": [], "same": [], "err_fail": [], "err_pass": []}
    cases: dict[str, list[str]] = {}
    cached = 0
    for record in log.records:
        kind = pair_kind(record)
        if kind is None:
            continue
        if record.with_skill.cached or record.without_skill.cached:
            cached += 1
            continue
        pid = pair_id(record)
        pairs[kind].append(pid)
        cases.setdefault(record.case_name, []).append(pid)
    return {k: tuple(v) for k, v in pairs.items()}, tuple(tuple(v) for v in cases.values()), cached


def record_evidence(log: RunLog, path: Path, secret: bytes, alpha: float = ALPHA) -> RunLog:
    """Add ``log``'s pairs to the ledger at ``path``; the log with the accumulated evidence (and
    any ledger warnings)."""
    pairs, cases, cached = run_pairs(log)
    line = LedgerLine(ledger_key(log), datetime.now(UTC).isoformat(timespec="seconds"), pairs, cases=cases)

    def judge(tally: Tally, added: int) -> EvidenceBlock:
        return evidence_block(tally, str(path), line.key, added=added, cached=cached, alpha=alpha)

    block, warnings = append_line(Path(path), line, secret, judge)
    settings = dataclasses.replace(log.settings, evidence=block,
                                   warnings=(*log.settings.warnings, *warnings))
    return dataclasses.replace(log, settings=settings)


def case_votes(tally: Tally, claim: str) -> tuple[int, int]:
    """The cases the skill moved up and down, against ``claim`` ("helps" or "hurts"): one per
    case and ledger line, by the sign of its pairs' net difference (see the module doc)."""
    weights = _NET[claim]
    up = down = 0
    for unit in tally.units:
        net = sum(weights.get(tally.kinds[p], 0) for p in unit)
        up, down = up + (net > 0), down + (net < 0)
    return up, down


def evidence_block(tally: Tally, ledger: str, key: str, *, added: int, cached: int,
                   alpha: float = ALPHA) -> EvidenceBlock:
    up, down = tally.count("pass"), tally.count("fail")
    # Each claim, and each side of the confidence sequence, judged on the cases (one vote per case
    # and run), with the errored pairs against it.
    against_helps, against_hurts = case_votes(tally, "helps"), case_votes(tally, "hurts")
    helps, hurts = log_e_helps(*against_helps), log_e_hurts(*against_hurts)
    bar = log_threshold(alpha)
    verdict: LedgerVerdict = "helps" if helps >= bar else "hurts" if hurts >= bar else "undecided"
    low, high = confidence_sequence(*against_helps, alpha)[0], confidence_sequence(*against_hurts, alpha)[1]
    return EvidenceBlock(
        ledger=ledger, key=key, runs=tally.lines, pairs=len(tally.kinds), flips_to_pass=up, flips_to_fail=down,
        log_e_helps=round(helps, 6), log_e_hurts=round(hurts, 6), threshold=round(math.exp(bar), 6),
        verdict=verdict, low_pts=low, high_pts=high,
        more_for_helps=None if verdict == "hurts" else more_needed(*against_helps, helps=True, alpha=alpha),
        more_for_hurts=None if verdict == "helps" else more_needed(*against_hurts, helps=False, alpha=alpha),
        added_pairs=added, skipped_cached=cached, skipped_lines=tally.skipped_lines,
        errored_pairs=tally.count("err_fail") + tally.count("err_pass"),
        cases_up=against_helps[0], cases_down=against_helps[1],
    )
