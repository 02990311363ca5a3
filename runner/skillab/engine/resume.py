"""``--resume``: which arms of an earlier document a run keeps, and when it must refuse to."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..agents.base import ArmName
from ..core.records import ArmRecord
from ..errors import UsageError

if TYPE_CHECKING:
    from ..agents.base import Agent
    from ..grading.judge import ExpectationJudge

_ARMS: tuple[ArmName, ...] = ("with_skill", "without_skill", "original")


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
              *, with_original: bool) -> tuple[dict[tuple[int, int, ArmName], ArmRecord], int]:
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
            if arm == "original" and not with_original:
                continue
            try:
                arms[(case_index, run_index, arm)] = ArmRecord.from_dict(data)
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
            hits += bool(data.get("cached"))
    return arms, hits
