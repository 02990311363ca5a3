"""``--resume``: which arms of an earlier document a run keeps, and when it must refuse to."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agents.base import ArmName
from ..core.records import ArmRecord
from ..core.wire import from_wire
from ..errors import UsageError
from ..scoring.outcomes import classify_outcome

if TYPE_CHECKING:
    from ..agents.base import Agent
    from ..grading.judge import ExpectationJudge

_ARMS: tuple[ArmName, ...] = ("with_skill", "without_skill", "original", "placebo")
UNFINISHED = "unfinished: the run stopped before this arm finished"


@dataclass(frozen=True)
class EarlierRun:
    """A document ``--resume`` reads (a results document, or the journal's partial one): the
    experiment it was, typed at the door. ``document`` keeps its records as written: a damaged
    record only means its arms run again (``kept_arms``)."""

    path: str
    skill_hash: str | None
    suite_hash: str | None
    adapter: str
    model: str | None
    document: dict[str, Any]

    @property
    def resolved(self) -> Path:
        return Path(self.path).resolve()

    @classmethod
    def read(cls, document: Any) -> EarlierRun:
        """``ValueError`` naming the field that keeps ``document`` from being resumed at all."""
        suite, adapter = _object(document, "suite"), _object(document, "adapter")
        models = _object(document, "models", missing={})
        if not isinstance(document.get("cases", []), list):
            raise ValueError(f"cases: expected a list, got {type(document['cases']).__name__}")
        path = from_wire(str, suite.get("path"), "suite.path")
        if "\0" in path:
            raise ValueError("suite.path: not a path (it holds a NUL)")
        return cls(path=path, skill_hash=_text(suite, "skill_hash", "suite."),
                   suite_hash=_text(suite, "suite_hash", "suite."),
                   adapter=from_wire(str, adapter.get("name"), "adapter.name"),
                   model=_text(models, "agent", "models."), document=document)


def _object(document: Any, key: str, *, missing: dict[str, Any] | None = None) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise ValueError(f"expected an object, got {type(document).__name__}")
    value = document.get(key, missing)
    if not isinstance(value, dict):
        raise ValueError(f"{key}: expected an object, got {type(value).__name__}")
    return value


def _text(block: dict[str, Any], key: str, prefix: str) -> str | None:
    value = block.get(key)
    return None if value is None else from_wire(str, value, prefix + key)


def check_resumable(document: dict[str, Any], adapter: Agent, judge: ExpectationJudge | None) -> None:
    """``--resume`` keeps arms only of the same experiment: the agent as configured (its
    identity: script, skill loading, turn cap...; not the endpoint, as the same model may be
    served from another address) and the judge that graded them."""
    def same(recorded: Any, current: Any) -> bool:
        return recorded is None or json.loads(json.dumps(current, default=str)) == recorded

    def agent(identity: Any) -> Any:
        return {k: v for k, v in identity.items() if k != "endpoint"} if isinstance(identity, dict) else identity

    models = document.get("models") or {}
    changed = [what for what, recorded, current in (
        ("agent configuration", agent((document.get("adapter") or {}).get("identity")), agent(adapter.identity())),
        ("judge model", models.get("judge") if judge is not None else None, judge.model if judge is not None else None),
        ("judge prompt", models.get("judge_prompt_sha256") if judge is not None else None,
         judge.prompt_sha256 if judge is not None else None),
    ) if not same(recorded, current)]
    if changed:
        raise UsageError(f"--resume: the {' and '.join(changed)} changed since that run; resuming "
                         "would mix arms of two experiments (run it afresh, or with the same settings)")


def kept_arms(document: dict[str, Any], cases: list[str], runs: int, units: set[tuple[str, int]] | None,
              *, with_original: bool, with_placebo: bool = False) -> tuple[dict[tuple[int, int, ArmName], ArmRecord], int]:
    """The finished, unerrored arms of ``document`` by (case index, run, arm), and how many came
    from the baseline cache. ``units``: a shard's (case, run) units; another shard's arms (a
    document resumed from it) are that shard's to report. A damaged record is not kept: its arms
    run again."""
    index = {name: i for i, name in enumerate(cases)}
    arms: dict[tuple[int, int, ArmName], ArmRecord] = {}
    hits = 0
    for record in document.get("cases", []):
        if not isinstance(record, dict):
            continue
        name = record.get("case_name")
        case_index = index.get(name) if isinstance(name, str) else None
        run_index = record.get("run_index", 0)
        if case_index is None or type(run_index) is not int or not 0 <= run_index < runs:
            continue
        if units is not None and (record.get("case_name"), run_index) not in units:
            continue
        for arm in _ARMS:
            data = record.get(arm)
            if not isinstance(data, dict) or not data or data.get("errored"):
                continue
            if (arm == "original" and not with_original) or (arm == "placebo" and not with_placebo):
                continue
            try:
                arms[(case_index, run_index, arm)] = ArmRecord.from_dict(data)
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
            hits += bool(data.get("cached"))
    return arms, hits


def with_journal(documents: list[dict[str, Any]], journal: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documents, each given the journal's arms that it lacks or holds only as errored;
    a suite only the journal knows is added as its partial document."""
    def experiment(doc: dict[str, Any]) -> tuple[Path, str]:
        return Path(doc["suite"]["path"]).resolve(), doc["adapter"]["name"]

    by_experiment = {experiment(d): d for d in documents}
    merged = list(documents)
    for partial in journal:
        doc = by_experiment.get(experiment(partial))
        if doc is None:
            merged.append({**partial, "cases": [settled(c) for c in partial["cases"]]})
            continue
        kept = {(c["case_name"], c["run_index"]): c for c in doc.get("cases", [])}
        arms = {(c["case_name"], c["run_index"], arm): c[arm] for c in doc.get("cases", [])
                for arm in _ARMS if c.get(arm)}
        changed: set[tuple[str, int]] = set()
        for case in partial["cases"]:
            for arm in _ARMS:
                key = (case["case_name"], case["run_index"], arm)
                if case.get(arm) and (key not in arms or arms[key].get("errored")):
                    arms[key] = case[arm]
                    changed.add(key[:2])
        cases: dict[tuple[str, int], dict[str, Any]] = {}
        for (name, run, arm), record in arms.items():
            case = cases.setdefault((name, run), dict(kept.get((name, run), {"case_name": name, "run_index": run})))
            case[arm] = record
        for pair in changed:
            cases[pair] = settled(cases[pair])
        merged[merged.index(doc)] = {**doc, "cases": list(cases.values())}
    return merged


def settled(case: dict[str, Any]) -> dict[str, Any]:
    """A case put together from journal arms, given the outcome its arms imply. A case the run
    left half-finished (one arm done) is an ``error`` whose missing arm says so: every report
    reads it, and ``--resume`` runs the missing arm again."""
    case = dict(case)
    missing = [arm for arm in ("with_skill", "without_skill") if not case.get(arm)]
    for arm in missing:
        case[arm] = ArmRecord(passed=False, errored=True, task_attempted=False, error=UNFINISHED).to_dict()
    if missing:
        arms = " and ".join(arm.replace("_", "-") for arm in missing)
        case["error"] = f"unfinished: the run stopped before its {arms} arm finished"
    with_arm, without_arm = case["with_skill"], case["without_skill"]
    case["outcome"] = classify_outcome(with_passed=bool(with_arm.get("passed")),
                                       without_passed=bool(without_arm.get("passed")),
                                       errored=bool(with_arm.get("errored") or without_arm.get("errored")))
    case.setdefault("tags", [])
    case.setdefault("error", None)
    return case
