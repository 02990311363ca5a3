"""The results document (``results.json``): the spec's run aggregate plus skillab's extras.

Format ``skillab.results/1``. The spec's ``test-run-result`` fields sit at the top level so any
conforming consumer can read it; ``cases`` holds one spec ``test-case-result`` per (case, run).
The document is ``RunLog.to_json`` of a run's log, passed once through ``document``, which masks
every credential.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import __version__
from ..atomic import write_json
from ..core.runlog import FORMAT, RunLog
from ..secrets import Redactor

SET_FORMAT = "skillab.results-set/1"


def document(log: RunLog, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The results document of ``log``: the one gate every string of it passes (model answers,
    validator output, judge reasons, error messages, trigger transcripts) before anything
    writes or shows it. ``environ`` names the secrets to mask by value (the process
    environment, plus keys handed over as Action inputs: ``Credentials.environ``)."""
    doc = log.to_json()
    redactor = Redactor.from_environ(environ)
    cases, doc["cases"] = doc["cases"], []
    redacted = redactor.data(doc)
    redacted["cases"] = _redact_each(cases, redactor)
    return redacted


def redacted(log: RunLog, environ: Mapping[str, str] | None = None) -> RunLog:
    """``log`` with every credential masked (``document``), typed again: what a session yields,
    writes and shows."""
    return RunLog.from_json(document(log, environ))


def _redact_each(items: list[Any], redactor: Redactor) -> list[Any]:
    """Redacted copies, each original released as its copy is made: a large run's document
    then holds one copy of its cases at a time, not two."""
    copies = []
    for index, item in enumerate(items):
        copies.append(redactor.data(item))
        items[index] = None
    return copies


# Bytes of a name made from a suite's, case's or query's text. Callers add a suffix of their
# own (``.run3.without_skill.txt``), and a file name may hold 255 bytes at most.
NAME_MAX_BYTES = 120


def safe_file_name(text: str, *, fallback: str = "_") -> str:
    """A file name made from a suite's or case's own name: letters, digits, ``-_.`` only, and at
    most ``NAME_MAX_BYTES``; a longer one keeps its start and a digest of the whole, so two
    long names stay two files."""
    name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text).strip(".")
    if len(name.encode()) > NAME_MAX_BYTES:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        head = name.encode()[:NAME_MAX_BYTES - len(digest) - 1].decode("utf-8", "ignore")
        name = f"{head}-{digest}"
    return name or fallback


def document_set(documents: list[dict[str, Any]], failed: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Several suites' documents in one file (``skillab run A B``); ``failed``: the suites that
    produced none, with why (a shard job's, so the merge job can report them)."""
    data = {"format": SET_FORMAT, "tool": {"name": "skillab", "version": __version__},
            "suites": documents}
    return {**data, "failed_suites": failed} if failed else data


def write_document(document: dict[str, Any], path: Path) -> None:
    """Write atomically, so a crash never leaves half a results file behind."""
    write_json(Path(path), document, indent=2)


def load_documents(path: Path) -> list[dict[str, Any]]:
    """The suite documents in a results file (one, or a set): objects, read as strict JSON;
    ``ValueError`` saying what does not fit otherwise (a file is anyone's to craft)."""
    data = read_json(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"a JSON {_json_type(data)} at the top, not a results document's object")
    if data.get("format") == SET_FORMAT:
        suites = data.get("suites")
        if not isinstance(suites, list) or not all(isinstance(doc, dict) for doc in suites):
            raise ValueError("`suites` is not a list of results documents")
        documents = list(suites)
    elif data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a skillab results document (format {str(data.get('format'))[:80]!r})")
    else:
        documents = [data]
    return documents


# A results document's integers are counts and milliseconds; beyond this one is crafted.
_MAX_INT = 2**63


def read_json(text: str) -> Any:
    """``text`` as strict JSON: no ``NaN`` or ``Infinity``, no number beyond a float's range or
    an int64's, no nesting deeper than the parser's recursion allows; ``ValueError`` otherwise."""
    try:
        return json.loads(text, parse_constant=_not_json, parse_float=_finite, parse_int=_bounded)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _bounded(text: str) -> int:
    value = int(text)
    if abs(value) >= _MAX_INT:
        raise ValueError(f"the integer {text[:40]}... is out of range")
    return value


def _json_type(value: Any) -> str:
    return {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")
