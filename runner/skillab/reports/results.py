"""The results document (``results.json``): the spec's run aggregate plus skillab's extras.

Format ``skillab.results/1``. The spec's ``test-run-result`` fields sit at the top level so any
conforming consumer can read it; ``cases`` holds one spec ``test-case-result`` per (case, run).
The document is ``RunLog.to_json`` of a run's log, passed once through ``document``, which masks
every credential. This module also reads a live run's settings off its objects.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..atomic import write_json
from ..core.run_info import AdapterInfo, IsolationInfo, JudgeSampling, ModelsInfo, SuiteInfo
from ..core.runlog import FORMAT, RunLog, RunSettings
from ..core.wire import from_wire
from ..formats.grading import grading_scope
from ..sandbox.isolation import Isolation
from ..secrets import Redactor
from ..skill.loader import Skill
from ..suite.model import Suite

if TYPE_CHECKING:  # the engine imports this module
    from ..agents.base import Agent
    from ..core.settings import RunConfig
    from ..grading.judge import ExpectationJudge

SET_FORMAT = "skillab.results-set/1"


@dataclass(frozen=True)
class RunMeta:
    """The live objects of a run, which its recorded settings are read from."""

    suite: Suite
    skill: Skill
    config: RunConfig
    adapter: Agent
    judge: ExpectationJudge | None
    isolation: Isolation


def run_settings(meta: RunMeta, **state: Any) -> RunSettings:
    """A live run's settings, read off its objects. ``state`` is the rest of ``RunSettings``
    (timings, cache counts, interruption, shard...)."""
    config, judge = meta.config, meta.judge
    engine = config.engine
    return RunSettings(
        tool_version=__version__,
        suite=SuiteInfo(
            path=str(meta.suite.path),
            format=meta.suite.format,
            skill=meta.skill.name,
            skill_dir=str(meta.skill.root),
            skill_hash=meta.skill.content_hash(),
            suite_hash=suite_hash(meta.suite),
        ),
        adapter=AdapterInfo(meta.adapter.name, meta.adapter.identity()),
        models=ModelsInfo(
            agent=config.agent.model.name,
            judge=judge.model if judge is not None else None,
            judge_prompt_sha256=judge.prompt_sha256 if judge is not None else None,
            judge_same_family=_same_family(config.agent.model.name, judge),
            judge_sampling=_judge_sampling(judge),
        ),
        isolation=from_wire(IsolationInfo, meta.isolation.to_dict()),
        runs=engine.runs,
        pass_k=engine.pass_k,
        pass_n=max(engine.pass_k, engine.pass_n) if engine.pass_k > 1 or engine.pass_n > 1 else None,
        target_lift_pts=engine.target_lift_pts,
        cache_enabled=engine.cache_enabled,
        judge_usage=judge.usage if judge is not None else None,
        **state,
    )


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


def _redact_each(items: list[Any], redactor: Redactor) -> list[Any]:
    """Redacted copies, each original released as its copy is made: a large run's document
    then holds one copy of its cases at a time, not two."""
    copies = []
    for index, item in enumerate(items):
        copies.append(redactor.data(item))
        items[index] = None
    return copies


def _same_family(agent: str | None, judge: Any | None) -> bool:
    """Whether a model judge is of the agent's family (allowed only with --judge-same-family)."""
    if not agent or judge is None or not isinstance(getattr(judge, "model", None), str):
        return False
    from ..providers.model_family import model_family

    return model_family(agent) == model_family(judge.model)


def suite_hash(suite: Suite) -> str:
    """SHA-256 over every case's definition and grading: what "the same suite" means for a trend."""
    cases = [{"case": c.to_spec_dict(), "grading": grading_scope(c)} for c in suite.cases]
    blob = json.dumps(cases, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


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


def write_document(document: dict[str, Any], path: Path, *, compact: bool = False) -> None:
    """Write atomically, so a crash never leaves half a results file behind.

    ``compact`` skips indentation, which also lets json use its C encoder: checkpoints are
    written many times during a run and must stay cheap.
    """
    write_json(Path(path), document, indent=None if compact else 2)


def load_documents(path: Path) -> list[dict[str, Any]]:
    """The suite documents in a results file (one, or a set)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("format") == SET_FORMAT:
        return list(data["suites"])
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a skillab results document (format {data.get('format')!r})")
    return [data]


def _judge_sampling(judge: Any | None) -> JudgeSampling | None:
    """The judge's temperature and seed, as its transport sends them (None: no model judge)."""
    transport = getattr(judge, "transport", None)
    if transport is None or not hasattr(transport, "temperature"):
        return None
    return JudgeSampling(transport.temperature, transport.seed)
