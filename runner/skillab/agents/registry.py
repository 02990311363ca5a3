"""Adapters and judges chosen by name, imported lazily so an optional part fails with advice."""

from __future__ import annotations

import importlib
from typing import Any

from ..core.settings import RunConfig
from ..errors import UsageError

ADAPTERS: dict[str, str] = {
    "mock": "skillab.agents.mock:MockAdapter",
    "llm": "skillab.agents.llm:LlmAdapter",
    "agent": "skillab.agents.agent:AgentAdapter",
    "claude-code": "skillab.agents.claude_code:ClaudeCodeAdapter",
    "codex": "skillab.agents.codex:CodexAdapter",
    "gemini-cli": "skillab.agents.gemini_cli:GeminiCliAdapter",
}
MOCK_JUDGE = "skillab.providers.mock:MockModel"
MODEL_JUDGE = "skillab.providers.judge_transport:ProviderJudgeTransport"


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def create_adapter(config: RunConfig) -> Any:
    """The adapter named by ``config.agent.adapter``, built from the agent's settings."""
    try:
        target = ADAPTERS[config.agent.adapter]
    except KeyError:
        raise UsageError(
            f"unknown adapter '{config.agent.adapter}' (choose from {', '.join(ADAPTERS)})"
        ) from None
    return _load(target).from_config(config)


def create_judge(config: RunConfig) -> Any:
    """The expectation judge: the mock judge for mock runs without a judge model, else a model."""
    from ..grading.judge import Judge

    if config.agent.adapter == "mock" and not config.judge.model.name:
        return Judge(_load(MOCK_JUDGE)())
    return Judge(_load(MODEL_JUDGE).from_config(config))
