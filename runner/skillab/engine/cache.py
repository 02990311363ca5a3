"""The without-skill baseline cache.

The without-skill arm does not depend on the skill under test, so repeat runs reuse it. An entry
is the whole graded arm record, keyed by the spec's baseline key and scoped by everything else
that could change that record: the adapter's identity (model, loading mode, max turns...), the
judge (its model and the SHA-256 of its prompt), the case definition (setup, graders) and the
bundled files the graders may call. The record keeps the model id the provider said it served;
a run served by another snapshot behind the same name misses (``get(served_model=...)``).
Errored arms are never stored: an outage must not be frozen into later runs.

The cache directory is outside every sandbox's view, and each entry is validated on load: it
must be for its own slot, not from the future, and its verdict must agree with the checks it
records (a flipped ``passed`` is caught). A bad entry is skipped with a warning and re-run.
"""

from __future__ import annotations

import hashlib
import json
import os
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import write_json
from ..core.records import ArmRecord

if TYPE_CHECKING:
    from ..core.settings import RunConfig
    from ..skill.loader import Skill
    from .arm import ArmJob

ENTRY_FORMAT = "skillab.baseline/1"
# A clock a little ahead on another machine sharing the cache is not tampering.
_CLOCK_SKEW_S = 300.0


def baseline_key(*, skill: str, case: str, prompt: str, run_index: int = 0) -> str:
    """The spec's 16-hex baseline key; run 0 keeps the single-run digest byte-identical."""
    payload: dict[str, Any] = {"skill": skill, "case": case, "prompt": prompt}
    if run_index:
        payload["trial"] = run_index
    blob = json.dumps(payload, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def scope_digest(parts: dict[str, Any]) -> str:
    """A stable digest of whatever must match for a cached baseline to be reused."""
    blob = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "skillab" / "baselines"


@dataclass
class BaselineCache:
    directory: Path
    ttl_days: float = 7.0
    # Entries skipped because they failed validation, for the run's warnings.
    warnings: list[str] = field(default_factory=list)

    def _path(self, scope: str, key: str) -> Path:
        return self.directory / scope / f"{key}.json"

    def get(self, scope: str, key: str, *, served_model: str | None = None) -> ArmRecord | None:
        """The cached record, or None when absent, expired, invalid or served by another model.

        ``served_model`` is the model id the provider reports serving in this run: a baseline
        recorded from another snapshot behind the same requested name is a miss.
        """
        path = self._path(scope, key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self._skip(path, f"unreadable ({type(exc).__name__})")
            return None
        try:
            record = _validated(data, scope, key)
        except (ValueError, KeyError, TypeError) as exc:
            self._skip(path, str(exc))
            return None
        if time.time() - float(data["created_at"]) > self.ttl_days * 86400:
            return None
        if record.served_model != served_model:
            return None
        record.cached = True
        return record

    def put(self, scope: str, key: str, record: ArmRecord, about: dict[str, Any] | None = None) -> None:
        """Store atomically; a failing disk only costs the cache, never the run. ``about``
        names the entry for people (skill, case, model: ``skillab cache list``); lookups never
        read it."""
        if record.errored:
            return
        path = self._path(scope, key)
        entry = {
            "format": ENTRY_FORMAT,
            "created_at": time.time(),
            "scope": scope,
            "key": key,
            "record": record.to_dict(),
        }
        if about:
            entry["about"] = about
        try:
            write_json(path, entry)
        except OSError:
            return

    def _skip(self, path: Path, reason: str) -> None:
        self.warnings.append(f"baseline cache entry {path} skipped and re-run: {reason}")


def _validated(data: Any, scope: str, key: str) -> ArmRecord:
    """The entry's record; ``ValueError`` saying why when the entry is not a valid one."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if data.get("format") != ENTRY_FORMAT:
        raise ValueError(f"format {data.get('format')!r} is not {ENTRY_FORMAT}")
    created = data.get("created_at")
    if isinstance(created, bool) or not isinstance(created, (int, float)) or not math.isfinite(created):
        raise ValueError("created_at is not a time")
    if created > time.time() + _CLOCK_SKEW_S:
        raise ValueError("created_at is in the future")
    for field_name, expected in (("scope", scope), ("key", key)):
        if field_name in data and data[field_name] != expected:
            raise ValueError(f"the entry belongs to another {field_name}")
    raw = data["record"]
    if not isinstance(raw, dict):
        raise ValueError("record is not an object")
    for flag in ("passed", "errored"):
        if not isinstance(raw.get(flag), bool):
            raise ValueError(f"record.{flag} is not a boolean")
    if raw["errored"]:
        raise ValueError("an errored arm is never cached")
    record = ArmRecord.from_dict(raw)
    checks = [v.passed for v in record.validator_results]
    checks += [e.passed for e in record.expectation_results]
    checks += [g.passed for g in record.graders]
    if record.passed != all(checks):
        raise ValueError("record.passed disagrees with the checks it records")
    return record


def baseline_slot(job: "ArmJob", skill: "Skill", config: "RunConfig", adapter: Any,
                  judge: Any | None) -> tuple[str, str]:
    """The cache's (scope, key) for a baseline arm: everything its verdict depends on."""
    from ..formats.grading import grading_scope
    from .prepare import sandbox_scope

    engine = config.engine
    scope = scope_digest(
        {
            "adapter": adapter.identity(),
            "judge": None if judge is None else [judge.model, judge.prompt_sha256],
            "case": job.case.to_spec_dict(),
            # SKILL.md edits keep the baseline; edits to graders the validators call must not.
            "bundled": skill.bundled_hash(),
            "default_max_turns": config.agent.max_turns,
            # Imported formats' graders and seeds; attempts per arm change the grade too.
            "grading": grading_scope(job.case),
            "pass_k": engine.pass_k,
            # A baseline that ran unsandboxed (or in another image) is not this run's baseline.
            "sandbox": sandbox_scope(),
            "pass_n": max(engine.pass_k, engine.pass_n),
        }
    )
    return scope, baseline_key(skill=skill.name, case=job.case.name, prompt=job.case.prompt,
                               run_index=job.run_index)
