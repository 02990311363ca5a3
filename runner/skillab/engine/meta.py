"""What a run records about itself: its settings, read off the live objects it ran with, and the
suite's content hash (what "the same suite" means for a trend and for ``--resume``)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..core.run_info import AdapterInfo, IsolationInfo, ModelsInfo, SuiteInfo
from ..core.runlog import RunSettings
from ..formats.grading import grading_scope
from ..skill.loader import Skill
from ..suite.model import Suite

if TYPE_CHECKING:
    from ..agents.base import Agent
    from ..core.settings import RunConfig
    from ..grading.judge import ExpectationJudge


@dataclass(frozen=True)
class RunMeta:
    """The live objects of a run, which its recorded settings are read from."""

    suite: Suite
    skill: Skill
    config: RunConfig
    adapter: Agent
    judge: ExpectationJudge | None
    isolation: IsolationInfo


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
            judge_sampling=judge.sampling if judge is not None else None,
        ),
        isolation=meta.isolation,
        runs=engine.runs,
        pass_k=engine.pass_k,
        pass_n=max(engine.pass_k, engine.pass_n) if engine.pass_k > 1 or engine.pass_n > 1 else None,
        target_lift_pts=engine.target_lift_pts,
        cache_enabled=engine.cache_enabled,
        judge_usage=judge.usage if judge is not None else None,
        config=config.config_source,
        **state,
    )


def suite_hash(suite: Suite) -> str:
    """SHA-256 over every case's definition and grading: what "the same suite" means for a trend."""
    cases = [{"case": c.to_spec_dict(), "grading": grading_scope(c)} for c in suite.cases]
    blob = json.dumps(cases, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def _same_family(agent: str | None, judge: ExpectationJudge | None) -> bool:
    """Whether a model judge is of the agent's family (allowed only with --judge-same-family)."""
    if not agent or judge is None:
        return False
    from ..providers.model_family import model_family

    return model_family(agent) == model_family(judge.model)

