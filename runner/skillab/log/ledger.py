"""The evidence ledger (``--evidence-ledger PATH``): one signed JSON line per run, shard or
re-run, appended under a lock like the history (``log.history.locked_append``).

A line names its key (the digest of the skill's content hash, the agent, the model and the suite
hash) and the graded (case, run) pairs the run added, each by an id derived from what both arms
did, in lists by kind: flips to pass, flips to fail, pairs whose arms agreed, and pairs where one
arm errored (``scoring.evidence_ledger``); and which pairs are one case's (``cases``): the
evidence is counted a case at a time (``scoring.evidence_ledger.case_votes``). A pair counts
once however many lines hold it (a shard's pairs and the merged document's are the same pairs,
and so are a regraded run's), so merging, reporting again or regrading never counts evidence
twice.

A line counts only when it carries the HMAC, under the key the baseline cache signs with, of its
content: a ledger file sits in a checkout or a restored cache, where a pull request can write
any line, and a forged line would be forged evidence. Each line also names the signature of the
key's line before it, so the lines of a key form one chain: a line cut out of the middle (an
unfavourable run dropped) ends the chain there, and the evidence is the chain's up to that
point, which an e-process allows (stopping early, even on a look at the data, keeps its level).
Unsigned, mis-signed, unchained and unreadable lines are skipped and counted; the ledger, like
the history, never fails a run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .history import locked_append

LINE_FORMAT = "skillab.evidence/1"
# Pairs where one arm errored are kept too, by what they would be against each claim: "err_fail"
# a flip to fail against "helps" (and no flip against "hurts"), "err_pass" the mirror.
KINDS = ("pass", "fail", "same", "err_fail", "err_pass")
# Lines written before errored pairs were kept hold none.
_OPTIONAL_KINDS = ("err_fail", "err_pass")
T = TypeVar("T")


@dataclass(frozen=True)
class LedgerLine:
    key: str
    recorded_at: str
    # Pair ids by kind: flips to pass, flips to fail, arms that agreed.
    pairs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # The signature of the key's line before this one ("" for the first).
    prev: str = ""
    # The pair ids of each case in this line; a pair in none (a line written before cases were
    # kept) is a case of its own.
    cases: tuple[tuple[str, ...], ...] = ()

    def payload(self) -> dict[str, Any]:
        return {"format": LINE_FORMAT, "key": self.key, "recorded_at": self.recorded_at, "prev": self.prev,
                **{kind: list(self.pairs.get(kind, ())) for kind in KINDS},
                **({"cases": [list(case) for case in self.cases]} if self.cases else {})}

    def to_line(self, secret: bytes) -> bytes:
        payload = self.payload()
        payload["sig"] = sign(payload, secret)
        return (json.dumps(payload, separators=(",", ":")) + "\n").encode()


def sign(payload: dict[str, Any], secret: bytes) -> str:
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(secret, LINE_FORMAT.encode() + b"\0" + blob, hashlib.sha256).hexdigest()


@dataclass
class Tally:
    """The pairs of one key, each once, grouped by the case and line that added them, and the
    lines they came from."""

    lines: int = 0
    skipped_lines: int = 0
    kinds: dict[str, str] = field(default_factory=dict)
    # The signature of the key's last line in the chain.
    head: str = ""
    # Each case of each line, by the pairs it added.
    units: list[tuple[str, ...]] = field(default_factory=list)

    def add(self, line: LedgerLine) -> int:
        """Count ``line``'s pairs not counted yet; how many were new. A line that adds none (a
        merged document after its shards) is no run of its own."""
        fresh: list[str] = []
        for kind in KINDS:
            for pair in line.pairs.get(kind, ()):
                if pair not in self.kinds:
                    self.kinds[pair] = kind
                    fresh.append(pair)
        grouped: set[str] = set()
        new = set(fresh)
        for case in line.cases:
            unit = tuple(p for p in case if p in new and p not in grouped)
            grouped.update(unit)
            if unit:
                self.units.append(unit)
        self.units.extend((p,) for p in fresh if p not in grouped)
        self.lines += bool(fresh)
        return len(fresh)

    def count(self, kind: str) -> int:
        return sum(1 for k in self.kinds.values() if k == kind)


def read_lines(data: bytes, key: str, secret: bytes) -> Tally:
    """The pairs of ``key`` in the ledger's ``data``, from the lines signed with ``secret``."""
    tally = Tally()
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        verified = _verified(raw, secret)
        if verified is None:
            tally.skipped_lines += 1
            continue
        line, sig = verified
        if line.key != key:
            continue
        if line.prev != tally.head:
            tally.skipped_lines += 1  # off the chain: a line before it was cut out
            continue
        tally.add(line)
        tally.head = sig
    return tally


def _verified(raw: bytes, secret: bytes) -> tuple[LedgerLine, str] | None:
    """The line and its signature, when it is signed with ``secret``."""
    try:
        payload = json.loads(raw)
        claimed = payload.pop("sig")
        if payload.get("format") != LINE_FORMAT or not isinstance(claimed, str):
            return None
        if not hmac.compare_digest(claimed, sign(payload, secret)):
            return None
        listed = {kind: payload.get(kind, []) if kind in _OPTIONAL_KINDS else payload[kind] for kind in KINDS}
        pairs = {kind: tuple(str(p) for p in ids) for kind, ids in listed.items()}
        cases = tuple(tuple(str(p) for p in case) for case in payload.get("cases", []))
        return LedgerLine(str(payload["key"]), str(payload["recorded_at"]), pairs, str(payload["prev"]), cases), claimed
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def append_line(path: Path, line: LedgerLine, secret: bytes,
                judge: Callable[[Tally, int], T]) -> tuple[T | None, list[str]]:
    """Add ``line``'s new pairs to the ledger at ``path``; ``judge`` is told the key's tally with
    them and how many were new, and its answer returned. A line with no new pair is not written."""
    def decide(data: bytes) -> tuple[T, bytes | None, list[str]]:
        tally = read_lines(data, line.key, secret)
        chained = dataclasses.replace(line, prev=tally.head)
        new = tally.add(chained)
        return judge(tally, new), chained.to_line(secret) if new else None, []

    return locked_append(Path(path), decide, "evidence ledger", "this run's evidence is not recorded")
