"""One run as the history keeps it (``HistoryEntry``), read from a line or a results document.

Two entries are *comparable* (``key``) when they share the suite file and content, the case
selection, runs, pass@k, adapter identity (model, loading mode, turns) and judge: the trend
(``scoring.trend``) compares a run only with the previous comparable entry. A rate that moved is
called improved or regressed only when the per-case change passes the sign-flip test (cases
present in both runs are the pairs); otherwise it moved within noise.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HISTORY_FORMAT = "skillab.history/2"
# Entries written before the comparability fields existed: read, never comparable to a new run.
_READABLE_FORMATS = ("skillab.history/1", HISTORY_FORMAT)
TRACKED_ARMS = ("with_skill", "without_skill", "original")


@dataclass(frozen=True)
class HistoryEntry:
    """One run, as the history keeps it. ``pass_rate`` maps an arm to its rate (or None)."""

    suite: str
    skill: str
    skill_hash: str
    adapter: str
    model: str | None
    pass_rate: dict[str, float | None]
    delta_pts: float | None
    original_delta_pts: float | None
    verdict: str
    cost_usd: float | None
    recorded_at: str
    runs: int = 1
    cases: int = 0
    format: str = HISTORY_FORMAT
    # Comparability (``key``, see the module docstring); empty on entries of the first format.
    suite_hash: str = ""
    case_selection: str = ""
    pass_k: int = 1
    adapter_identity: str = ""
    judge: str = ""
    # Per arm, per case: [runs passed, runs graded], the pairs of the trend's test.
    case_passes: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    original_hash: str = ""  # the original's content hash (``--against``)

    @property
    def key(self) -> tuple[Any, ...]:
        """What makes two runs comparable (an entry of the first format matches no new run)."""
        return (self.format, self.suite, self.model, self.adapter, self.suite_hash,
                self.case_selection, self.runs, self.pass_k, self.adapter_identity, self.judge)

    def to_line(self) -> bytes:
        return (json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":")) + "\n").encode()

    @classmethod
    def from_dict(cls, data: Any) -> HistoryEntry:
        """Read one parsed line; ``ValueError`` when it is not an entry this version reads."""
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if data.get("format") not in _READABLE_FORMATS:
            raise ValueError(f"format {data.get('format')!r} is not {HISTORY_FORMAT}")
        rates = data.get("pass_rate")
        if not isinstance(rates, dict):
            raise ValueError("'pass_rate' is not an object")
        try:
            return cls(
                suite=_text(data["suite"]),
                skill=_text(data["skill"]),
                skill_hash=_text(data["skill_hash"]),
                adapter=_text(data["adapter"]),
                model=None if data.get("model") is None else _text(data["model"]),
                pass_rate={arm: _rate(rates.get(arm)) for arm in TRACKED_ARMS},
                delta_pts=_rate(data.get("delta_pts")),
                original_delta_pts=_rate(data.get("original_delta_pts")),
                verdict=_text(data["verdict"]),
                cost_usd=_rate(data.get("cost_usd")),
                recorded_at=_text(data["recorded_at"]),
                runs=_count(data.get("runs", 1), "runs", least=1),
                cases=_count(data.get("cases", 0), "cases"),
                format=str(data["format"]),
                suite_hash=str(data.get("suite_hash", "")),
                case_selection=str(data.get("case_selection", "")),
                pass_k=_count(data.get("pass_k", 1), "pass_k", least=1),
                adapter_identity=str(data.get("adapter_identity", "")),
                judge=str(data.get("judge", "")),
                case_passes=_case_passes(data.get("case_passes")),
                original_hash=str(data.get("original_hash") or ""),
            )
        except KeyError as exc:
            raise ValueError(f"missing {exc.args[0]!r}") from None

    @classmethod
    def from_document(cls, doc: dict[str, Any]) -> HistoryEntry:
        """The entry for a results document."""
        comparison = doc.get("comparison") or {}
        compared = comparison.get("pass_rate") or {}
        rate = doc["pass_rate"]
        return cls(
            suite=suite_key(doc["suite"]["path"]),
            skill=doc["suite"]["skill"],
            skill_hash=doc["suite"]["skill_hash"],
            adapter=doc["adapter"]["name"],
            model=doc["models"].get("agent"),
            pass_rate={
                "with_skill": rate.get("with_skill"),
                "without_skill": rate.get("without_skill"),
                "original": compared.get("original"),
            },
            delta_pts=rate.get("delta_pts"),
            original_delta_pts=compared.get("delta_pts"),
            verdict=doc["verdict"],
            cost_usd=((doc.get("usage") or {}).get("total") or {}).get("cost_usd"),
            recorded_at=(doc.get("timings") or {}).get("finished_at")
            or datetime.now(UTC).isoformat(),
            runs=int(doc.get("runs", 1)),
            cases=int(doc.get("total_cases", 0)),
            suite_hash=str(doc["suite"].get("suite_hash", "")),
            case_selection=_digest(sorted({str(c.get("case_name")) for c in doc.get("cases") or ()})),
            pass_k=int(doc.get("pass_k", 1) or 1),
            adapter_identity=_digest(doc["adapter"].get("identity")),
            judge=_digest([doc["models"].get("judge"), doc["models"].get("judge_prompt_sha256")]),
            case_passes=case_passes(doc.get("cases") or ()),
            original_hash=str((comparison.get("original") or {}).get("skill_hash") or ""),
        )


def case_passes(records: Any) -> dict[str, dict[str, list[int]]]:
    """Per arm and case: [runs passed, runs graded]; an errored arm is not a graded run."""
    table: dict[str, dict[str, list[int]]] = {}
    for record in records:
        if record.get("outcome") == "error":
            continue
        for arm in TRACKED_ARMS:
            result = record.get(arm)
            if not result or result.get("errored"):
                continue
            cell = table.setdefault(arm, {}).setdefault(str(record.get("case_name")), [0, 0])
            cell[0] += bool(result.get("passed"))
            cell[1] += 1
    return table


def _case_passes(value: Any) -> dict[str, dict[str, list[int]]]:
    if not isinstance(value, dict):
        return {}
    return {str(arm): {str(c): _pair(v, f"case_passes.{arm}.{c}") for c, v in cases.items()}
            for arm, cases in value.items() if isinstance(cases, dict)}


def _pair(value: Any, field_name: str) -> list[int]:
    """[runs passed, runs graded], with passed <= graded (the sign-flip test's input)."""
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"{field_name!r} is not a [passed, graded] pair")
    passed, graded = (_count(v, field_name) for v in value)
    if passed > graded:
        raise ValueError(f"{field_name!r} has more runs passed than graded")
    return [passed, graded]


def _count(value: Any, field_name: str, *, least: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{field_name!r} is not a whole number of at least {least}")
    return value


def _digest(value: Any) -> str:
    import hashlib  # here: `validate` reads this module for the audit and never digests

    blob = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value


def _rate(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"expected a number, got {type(value).__name__}")
    if not math.isfinite(value):  # Python's JSON reads NaN and Infinity
        raise ValueError(f"expected a finite number, got {value}")
    return float(value)


def suite_key(path: str) -> str:
    """The suite's path relative to the current directory when below it, else absolute."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()
