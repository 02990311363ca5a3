"""Adapters and judges chosen by name, imported lazily so an optional part fails with advice.
Adapter names resolve through ``core.plugins`` (group ``skillab.agents``)."""

from __future__ import annotations

import importlib
from typing import Any

from ..core import plugins
from ..core.contracts import Agent
from ..core.settings import RunConfig
from ..errors import UsageError

MOCK_JUDGE = "skillab.providers.mock:MockModel"
MODEL_JUDGE = "skillab.providers.judge_transport:ProviderJudgeTransport"


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def adapter_names() -> tuple[str, ...]:
    """Every ``--adapter`` name: the built-ins, then the installed plugins."""
    return plugins.names("agents")


def create_adapter(config: RunConfig) -> Agent:
    """The adapter named by ``config.agent.adapter``, built from the agent's settings."""
    try:
        factory = plugins.load("agents", config.agent.adapter)
    except plugins.UnknownPlugin as exc:
        raise UsageError(
            f"unknown adapter '{config.agent.adapter}' (choose from {', '.join(exc.available)})"
        ) from None
    return factory.from_config(config)


def create_judge(config: RunConfig) -> Any:
    """The expectation judge: the mock judge for mock runs without a judge model, else a model."""
    from ..grading.judge import Judge

    if config.agent.adapter == "mock" and not config.judge.model.name:
        return Judge(_load(MOCK_JUDGE)())
    return Judge(_load(MODEL_JUDGE).from_config(config))
