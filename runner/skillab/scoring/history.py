"""Run history and trend: one compact JSON line per run, and how this run moved since the last.

The history file (default ``.skillab/history.jsonl`` in the current directory) is shared by
every run that points at it, possibly at once: each append holds an exclusive ``flock`` and
writes its line with one ``write`` on an ``O_APPEND`` descriptor, so lines never interleave. A
line that is not an entry (a crash mid-write, a hand edit, a newer skillab) is skipped with a
warning; the history is a convenience and never fails a run.

The trend (``scoring.trend``) compares a run with the previous *comparable* entry: the same
suite file and content, the same case selection, runs, pass@k, adapter identity (model, loading
mode, turns) and judge. A rate that moved is called improved or regressed only when the per-case
change passes the sign-flip test (cases present in both runs are the pairs); otherwise it moved
within noise.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import math
import os
import stat
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..core.runlog import RunLog
from .trend import TRACKED_ARMS, Trend, compute_trend, previous_comparable, same_skill_comparisons

HISTORY_FORMAT = "skillab.history/2"
# Entries written before the comparability fields existed: read, never comparable to a new run.
_READABLE_FORMATS = ("skillab.history/1", HISTORY_FORMAT)
# Warnings about unreadable lines are capped so a mangled file does not flood the report.
_MAX_LINE_WARNINGS = 3


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
    # Comparability (see the module docstring); empty on entries of the first format.
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
    def from_dict(cls, data: Any) -> "HistoryEntry":
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
    def from_document(cls, doc: dict[str, Any]) -> "HistoryEntry":
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
            or datetime.now(timezone.utc).isoformat(),
            runs=int(doc.get("runs", 1)),
            cases=int(doc.get("total_cases", 0)),
            suite_hash=str(doc["suite"].get("suite_hash", "")),
            case_selection=_digest(sorted({str(c.get("case_name")) for c in doc.get("cases") or ()})),
            pass_k=int(doc.get("pass_k", 1) or 1),
            adapter_identity=_digest((doc["adapter"].get("identity"))),
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


# -- the file ----------------------------------------------------------------------------------


@dataclass
class Recorded:
    """What recording a run gave: its trend (None when the history could not be used)."""

    trend: Trend | None
    warnings: list[str] = field(default_factory=list)


def parse_history(data: bytes, source: str) -> tuple[list[HistoryEntry], list[str]]:
    """Every readable entry, and one warning per skipped line (capped)."""
    entries: list[HistoryEntry] = []
    skipped: list[str] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            entries.append(HistoryEntry.from_dict(json.loads(raw)))
        except (ValueError, TypeError, RecursionError) as exc:  # JSON and Unicode errors are ValueErrors
            reason = ("not JSON" if isinstance(exc, json.JSONDecodeError) else
                      "nested too deep" if isinstance(exc, RecursionError) else str(exc))
            skipped.append(f"{source}:{number}: not a history entry ({reason}); line skipped")
    warnings = skipped[:_MAX_LINE_WARNINGS]
    if len(skipped) > _MAX_LINE_WARNINGS:
        warnings.append(f"{source}: {len(skipped) - _MAX_LINE_WARNINGS} more unreadable lines skipped")
    return entries, warnings


def read_history(path: Path) -> tuple[list[HistoryEntry], list[str]]:
    """The entries of ``path`` (none when it does not exist yet), and warnings."""
    path = Path(path)
    try:
        # Non-blocking: a FIFO committed in its place must not hang the run (see ``_not_a_file``).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"{path}: history cannot be read ({exc.strerror})"]
    try:
        if problem := _not_a_file(fd, path):
            return [], [problem]
        fcntl.flock(fd, fcntl.LOCK_SH)
        return parse_history(_read_all(fd), str(path))
    finally:
        os.close(fd)


def record_into(log: RunLog, path: Path) -> RunLog:
    """Record a finished run; its log with the trend and any history warnings."""
    recorded = record_run(log.to_json(), path)
    settings = dataclasses.replace(log.settings, trend=recorded.trend.to_dict() if recorded.trend else None,
                                   warnings=(*log.settings.warnings, *recorded.warnings))
    return dataclasses.replace(log, settings=settings)


def record_run(document: dict[str, Any], path: Path) -> Recorded:
    """Append the run's entry to ``path`` and return its trend; problems become warnings.

    The read of the previous entry and the append happen under one exclusive lock, so two runs
    finishing together each see a whole file and add a whole line.
    """
    path = Path(path)
    entry = HistoryEntry.from_document(document)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        return Recorded(None, [f"{path}: history cannot be opened ({exc.strerror}); this run is not recorded"])
    try:
        if problem := _not_a_file(fd, path):
            return Recorded(None, [problem + "; this run is not recorded"])
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = _read_all(fd)
        entries, warnings = parse_history(data, str(path))
        trend = compute_trend(entry, previous_comparable(entries, entry), str(path),
                              same_skill=same_skill_comparisons(entries, entry))
        line = entry.to_line()
        # A line cut short by a crash must not swallow this one.
        if data and not data.endswith(b"\n"):
            line = b"\n" + line
        try:
            _write_all(fd, line)
        except OSError as exc:
            warnings.append(f"{path}: history cannot be written ({exc.strerror}); this run is not recorded")
        return Recorded(trend, warnings)
    finally:
        os.close(fd)


def _not_a_file(fd: int, path: Path) -> str | None:
    """Why ``fd`` is no history file: the history may sit in a checkout, where a pull request can
    commit a link to ``/dev/zero`` (read forever) or a FIFO (no writer) in its place."""
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return None
    return f"{path}: history is not a regular file; not used"


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    # One write: with O_APPEND the line lands whole at the end. The loop only covers a short
    # write (a full disk), still under the lock.
    written = os.write(fd, data)
    while written < len(data):
        written += os.write(fd, data[written:])
