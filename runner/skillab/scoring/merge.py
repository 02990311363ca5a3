"""``skillab merge``: one results document from the documents of ``run --shard I/N``
(``reports.shard_files.load_shards`` reads them).

The merged document is ``summarize`` over every shard's records, so it is the document an
unsharded run would have written (timings aside). Merging fails closed: a file that is not a
shard, a missing or duplicated shard, an interrupted shard, or shards that disagree on the suite,
the settings, the plan or the skillab version stop it with an error naming the culprit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .. import __version__
from ..core.records import CaseRecord
from ..core.run_info import JudgeConsistency, ShardMarker
from ..core.runlog import RunLog, RunSettings
from ..core.usage import Usage, sum_usage
from ..core.wire import to_wire
from ..errors import UsageError
from .summary import summarize


class MergeError(UsageError):
    """The shards cannot be joined into one honest document."""


@dataclass(frozen=True)
class ShardDocument:
    """One suite's run log from one shard (its document read), and the file it came from."""

    source: str
    log: RunLog
    marker: ShardMarker

    @property
    def label(self) -> str:
        return f"{self.source} (shard {self.marker.index}/{self.marker.count})"


# What every shard of one run must agree on, and how an error names it (the results format is
# agreed on by reading the document at all).
_AGREED: tuple[tuple[str, Callable[[ShardDocument], Any]], ...] = (
    ("skillab version", lambda d: d.log.settings.tool_version),
    ("suite", lambda d: d.log.settings.suite),
    ("adapter", lambda d: d.log.settings.adapter),
    ("models", lambda d: d.log.settings.models),
    ("isolation", lambda d: d.log.settings.isolation),
    ("runs", lambda d: d.log.settings.runs),
    ("pass_k", lambda d: d.log.settings.pass_k),
    ("attempts per arm (--pass-n)", lambda d: d.log.settings.pass_n),
    ("target lift (--target-lift-pts)", lambda d: d.marker.target_lift_pts),
    ("baseline cache setting", lambda d: d.log.settings.cache_enabled),
    ("trigger-only cases", lambda d: d.log.settings.trigger_only),
    ("original skill (--against)", lambda d: d.log.settings.original),
    ("shard count", lambda d: d.marker.count),
    ("selected cases", lambda d: d.marker.cases),
    ("shard plan", lambda d: d.marker.plan_sha256),
)


def merge_shards(shards: list[ShardDocument]) -> list[RunLog]:
    """One merged document per suite (and agent, for ``--adapter A,B``), in the order they first
    appear."""
    groups: dict[tuple[str, str, str], list[ShardDocument]] = {}
    for shard in shards:
        settings = shard.log.settings
        groups.setdefault((settings.suite.path, settings.suite.skill, settings.adapter.name), []).append(shard)
    return [merge_suite(group) for group in groups.values()]


def merge_suite(group: list[ShardDocument]) -> RunLog:
    """The document of one suite from all of its shards."""
    _check_agreement(group)
    written_by = group[0].log.settings.tool_version
    if written_by != __version__:
        # The merged summary is this version's: it must be the one the shards' runs would compute.
        raise MergeError(f"{group[0].label} was written by skillab {written_by}, this is skillab "
                         f"{__version__}; merge with the version that ran the shards")
    by_index = _check_complete(group)
    order = {name: i for i, name in enumerate(by_index[1].marker.cases)}
    records: list[CaseRecord] = []
    runs: list[RunSettings] = []
    for shard in by_index.values():
        settings, found = shard.log.settings, shard.log.records
        _check_units(shard, found)
        runs.append(settings)
        records.extend(found)
    records.sort(key=lambda r: (order[r.case_name], r.run_index))
    settings = replace(
        runs[0],
        cache_hits=sum(s.cache_hits for s in runs),
        cache_arms=sum(s.cache_arms for s in runs),
        judge_usage=_total_usage([s.judge_usage for s in runs]),
        started_at=min(s.started_at for s in runs),
        finished_at=max(s.finished_at for s in runs),
        warnings=tuple(dict.fromkeys(w for s in runs for w in s.warnings)),
        planned_cases=sum(s.planned_cases or 0 for s in runs),
        judge_consistency=_pooled_consistency([s.judge_consistency for s in runs]),
        trend=None,
        # One shard's view of the ledger is not the merged run's: merge --evidence-ledger reads it again.
        evidence=None,
        shard=None,
    )
    return summarize(settings, records)


def _check_agreement(group: list[ShardDocument]) -> None:
    reference = group[0]
    for name, read in _AGREED:
        expected = to_wire(read(reference))
        for other in group[1:]:
            found = to_wire(read(other))
            if found != expected:
                expected, found = _differing(expected, found)
                raise MergeError(
                    f"the shards disagree on the {name}: {reference.label} has {_show(expected)}, "
                    f"{other.label} has {_show(found)}; merge only the shards of one run"
                )


def _check_complete(group: list[ShardDocument]) -> dict[int, ShardDocument]:
    skill = group[0].log.settings.suite.skill
    count = group[0].marker.count
    by_index: dict[int, ShardDocument] = {}
    for shard in group:
        index = shard.marker.index
        if index in by_index:
            raise MergeError(f"{skill}: shard {index}/{count} appears twice, in "
                             f"{by_index[index].source} and {shard.source}")
        if shard.log.settings.interrupted or shard.log.settings.stopped:
            why = shard.log.settings.stopped or "it was interrupted"
            raise MergeError(f"{skill}: {shard.label} holds a partial run ({why}); run that shard "
                             "again")
        by_index[index] = shard
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        have = ", ".join(f"{i}/{count}" for i in sorted(by_index))
        raise MergeError(f"{skill}: shard {', '.join(f'{i}/{count}' for i in missing)} is missing "
                         f"(have {have}); run it and merge again")
    return dict(sorted(by_index.items()))


def _check_units(shard: ShardDocument, records: list[CaseRecord]) -> None:
    planned = set(shard.marker.units)
    found = [(r.case_name, r.run_index) for r in records]
    if len(set(found)) != len(found) or set(found) != planned:
        absent = sorted(planned - set(found))
        extra = sorted(set(found) - planned)
        raise MergeError(f"{shard.label}: its cases do not match its plan "
                         f"(missing {_units(absent)}; unplanned or repeated {_units(extra)})")


def _units(units: list[tuple[str, int]]) -> str:
    return ", ".join(f"{name} run {run + 1}" for name, run in units[:5]) or "none"


def _total_usage(usages: list[Usage | None]) -> Usage | None:
    present = [u for u in usages if u is not None]
    return sum_usage(present) if present else None


def _pooled_consistency(checks: list[JudgeConsistency | None]) -> JudgeConsistency | None:
    """The shards' judge consistency checks as one: each re-asked a sample of its own verdicts,
    so the pooled check counts every verdict, every re-ask and every agreement."""
    from ..core.checks import ConsistencyCheck

    present = [c for c in checks if c]
    if not present:
        return None
    pooled = ConsistencyCheck(sum(c.verdicts for c in present), sum(c.sampled for c in present),
                              sum(c.agreed for c in present), sum(c.errored for c in present),
                              floor=present[0].floor)
    return pooled.block()


def _differing(a: Any, b: Any) -> tuple[Any, Any]:
    """Two mappings narrowed to the keys where they differ, so a long value (the suite, the
    isolation) names what changed rather than being cut off before it."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return a, b
    keys = [k for k in {**a, **b} if a.get(k) != b.get(k)]
    return {k: a.get(k) for k in keys}, {k: b.get(k) for k in keys}


def _show(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 160 else text[:157] + "..."
