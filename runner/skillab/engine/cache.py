"""The without-skill baseline cache.

The without-skill arm does not depend on the skill under test, so repeat runs reuse it. An entry
is the whole graded arm record, keyed by the spec's baseline key and scoped by everything else
that could change that record: the adapter's identity (model, loading mode, max turns...), the
judge (its model and the SHA-256 of its prompt), the case definition (setup, graders) and the
bundled files the graders may call. The record keeps the model id the provider said it served;
a run served by another snapshot behind the same name misses (``get(served_model=...)``).
Errored arms are never stored: an outage must not be frozen into later runs.

The cache directory is outside every sandbox's view, and each entry is validated on load: it
must carry the HMAC of the cache's key over its content, be for its own slot, not from the
future, and its verdict must agree with the checks it records. A bad entry is skipped with a
warning and re-run.

The HMAC is what stops a forged baseline: a cache directory may sit in a checkout (the Action
keeps it in the workspace for ``actions/cache``), where a pull request can commit any file. The
key never does: it is ``SKILLAB_CACHE_KEY`` (the Action's ``cache-key`` input, a secret) when
set, else a random key made once in the user's own config directory (``cache_key``), so a
baseline only counts when this user, or a job holding the secret, wrote it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import write_json
from ..core.records import ArmRecord
from ..signing import KEY_ENV as KEY_ENV  # the key and signature live in ``signing``, named here too
from ..signing import cache_key as cache_key
from ..signing import entry_mac as entry_mac
from ..signing import key_file as key_file

if TYPE_CHECKING:
    from ..agents.base import Agent
    from ..core.settings import RunConfig
    from ..grading.judge import ExpectationJudge
    from ..sandbox.backend import Backend
    from ..skill.loader import Skill
    from .arm import ArmJob

ENTRY_FORMAT = "skillab.baseline/2"
# Skipped entries named in the warnings; the rest are counted.
_NAMED_SKIPS = 3
# An arm's record with its transcript is kilobytes to a few MiB; far beyond is no entry.
_MAX_ENTRY_BYTES = 256 * 1024 * 1024
# What reading an entry may raise on content that is no entry (any shape JSON can hold).
_BAD_CONTENT = (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError, OverflowError)
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
    # The signing key, or why there is none (then nothing is read or stored).
    key: bytes | str = field(default_factory=cache_key, repr=False)
    _skipped: int = field(default=0, init=False, repr=False)

    def _usable(self) -> bool:
        if isinstance(self.key, bytes):
            return True
        warning = f"baseline cache {self.directory} not used: {self.key}"
        if warning not in self.warnings:
            self.warnings.append(warning)
        return False

    def _path(self, scope: str, key: str) -> Path:
        return self.directory / scope / f"{key}.json"

    def get(self, scope: str, key: str, *, served_model: str | None = None) -> ArmRecord | None:
        """The cached record, or None when absent, expired, invalid or served by another model.

        ``served_model`` is the model id the provider reports serving in this run: a baseline
        recorded from another snapshot behind the same requested name is a miss.
        """
        path = self._path(scope, key)
        if not self._usable():
            return None
        try:
            data = json.loads(_read_entry(path))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError) as exc:
            why = exc if isinstance(exc, _NotAnEntry) else getattr(exc, "strerror", None) or type(exc).__name__
            self._skip(path, f"unreadable ({why})")
            return None
        try:
            _authentic(data, self.key)
            record = _validated(data, scope, key)
        except _BAD_CONTENT as exc:
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
        read it, and it is signed with the rest."""
        if record.errored or not self._usable():
            return
        assert isinstance(self.key, bytes)
        path = self._path(scope, key)
        entry: dict[str, Any] = {
            "format": ENTRY_FORMAT,
            "created_at": time.time(),
            "scope": scope,
            "key": key,
            "record": record.to_dict(),
        }
        if about:
            entry["about"] = about
        # Signed as it will be read back (JSON turns tuples into lists, keys into strings).
        entry["mac"] = entry_mac(self.key, json.loads(json.dumps(entry)))
        try:
            write_json(path, entry)
        except OSError:
            return

    def _skip(self, path: Path, reason: str) -> None:
        # A few named, then a count: a cache written with another key skips every entry.
        self._skipped += 1
        if self._skipped <= _NAMED_SKIPS:
            self.warnings.append(f"baseline cache entry {path} skipped and re-run: {reason}")
            return
        summary = f"baseline cache: {self._skipped - _NAMED_SKIPS} more entries skipped and re-run"
        if self._skipped > _NAMED_SKIPS + 1:
            self.warnings.pop()
        self.warnings.append(summary)


class _NotAnEntry(ValueError):
    pass


def _read_entry(path: Path) -> bytes:
    """An entry's bytes. The cache may sit in a checkout, where a link to ``/dev/zero`` (read
    forever) or a FIFO (never written) can stand in an entry's place: only a regular file of
    sane size, reached without a link, is read."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _NotAnEntry("not a regular file")
        if info.st_size > _MAX_ENTRY_BYTES:
            raise _NotAnEntry(f"{info.st_size} bytes, over {_MAX_ENTRY_BYTES}")
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(_MAX_ENTRY_BYTES + 1)
    finally:
        os.close(fd)


def _authentic(data: Any, key: bytes | str) -> None:
    """``ValueError`` unless the entry carries this cache key's HMAC over its content."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    mac = data.get("mac")
    if not isinstance(mac, str) or not isinstance(key, bytes):
        raise ValueError("the entry is not signed (written by another skillab version, or by hand)")
    if not hmac.compare_digest(mac, entry_mac(key, data)):
        raise ValueError("its signature does not match: written with another key, or edited")


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


def baseline_slot(job: ArmJob, skill: Skill, config: RunConfig, adapter: Agent,
                  judge: ExpectationJudge | None, sandbox: Backend) -> tuple[str, str]:
    """The cache's (scope, key) for a baseline arm under the run's ``sandbox``: everything its
    verdict depends on."""
    from ..formats.grading import grading_scope
    from .prepare import sandbox_scope

    engine = config.engine
    scope = scope_digest(
        {
            "adapter": adapter.identity(),
            # Only a case the judge grades depends on it: a validator-only case's baseline is the
            # same whether or not the run's selection holds a judged case.
            "judge": None if judge is None or not job.case.needs_judge else [judge.model, judge.prompt_sha256],
            "case": job.case.to_spec_dict(),
            # SKILL.md edits keep the baseline; edits to graders the validators call must not.
            "bundled": skill.bundled_hash(),
            "default_max_turns": config.agent.max_turns,
            # Imported formats' graders and seeds; attempts per arm change the grade too.
            "grading": grading_scope(job.case),
            "pass_k": engine.pass_k,
            # A baseline that ran unsandboxed (or in another image) is not this run's baseline.
            "sandbox": sandbox_scope(sandbox),
            "pass_n": max(engine.pass_k, engine.pass_n),
        }
    )
    return scope, baseline_key(skill=skill.name, case=job.case.name, prompt=job.case.prompt,
                               run_index=job.run_index)
