"""Cases that cannot show a lift: near duplicates of another case (one measurement counted
twice), and, from the run history, cases every arm always passes (saturated) or always fails."""

from __future__ import annotations

from collections.abc import Iterator
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from ..core.audit import AuditFinding
from ..suite.model import Case
from .text import squeeze

if TYPE_CHECKING:
    from ..log.history_entry import HistoryEntry

# Two prompts are near the same when their characters match this closely (difflib's ratio, after
# lower-casing and squeezing whitespace): one changed value, word or short sentence stays above.
DUPLICATE_RATIO = 0.85
# Graded runs each arm needs in the history before a case is called saturated or always failing.
MIN_HISTORY_RUNS = 3
HISTORY_ARMS = ("with_skill", "without_skill")


def near_duplicates(cases: tuple[Case, ...], suite_file: str) -> Iterator[AuditFinding]:
    """Pairs of cases whose prompts are near the same and whose workspaces start the same (the
    same prompt over other fixtures is a different case)."""
    texts = [squeeze(c.prompt) for c in cases]
    starts = [_start(c) for c in cases]
    for i, case in enumerate(cases):
        for j in range(i):
            other = cases[j]
            if starts[i] != starts[j]:
                continue
            matcher = SequenceMatcher(None, texts[i], texts[j], autojunk=False)
            if matcher.real_quick_ratio() < DUPLICATE_RATIO or matcher.quick_ratio() < DUPLICATE_RATIO:
                continue
            score = matcher.ratio()
            if score < DUPLICATE_RATIO:
                continue
            yield AuditFinding(
                kind="near_duplicate", severity="high" if score == 1.0 else "medium", case=case.name,
                file=suite_file, line=case.line, other_case=other.name,
                detail=f"its prompt is {score:.0%} the same as case {other.name!r}'s, on the same workspace",
                fix=f"merge it with {other.name!r} or change its input: a duplicate counts one measurement twice")
            break


def _start(case: Case) -> tuple[object, ...]:
    return (tuple(sorted(case.setup.files.items())), case.setup.commands,
            case.seed.sha256 if case.seed else None)


def history_findings(cases: tuple[Case, ...], entries: list[HistoryEntry], suite_file: str,
                     min_runs: int = MIN_HISTORY_RUNS) -> Iterator[AuditFinding]:
    totals: dict[str, dict[str, list[int]]] = {}
    for entry in entries:
        for arm in HISTORY_ARMS:
            for name, (passed, graded) in entry.case_passes.get(arm, {}).items():
                tally = totals.setdefault(name, {}).setdefault(arm, [0, 0])
                tally[0] += passed
                tally[1] += graded
    for case in cases:
        arms = totals.get(case.name, {})
        if any(arms.get(arm, [0, 0])[1] < min_runs for arm in HISTORY_ARMS):
            continue
        runs = min(arms[arm][1] for arm in HISTORY_ARMS)
        if all(arms[arm][0] == arms[arm][1] for arm in HISTORY_ARMS):
            yield AuditFinding(
                kind="saturated", severity="medium", case=case.name, file=suite_file, line=case.line,
                detail=f"both arms passed every one of their {runs}+ graded runs in the history",
                fix="make the task harder or drop it: a case the baseline always passes cannot show a lift")
        elif all(arms[arm][0] == 0 for arm in HISTORY_ARMS):
            yield AuditFinding(
                kind="always_failing", severity="medium", case=case.name, file=suite_file, line=case.line,
                detail=f"no arm passed any of its {runs}+ graded runs in the history",
                fix="check the grader against a known-good answer, or make the task feasible")
