"""Adapters and judges chosen by name, imported lazily so an optional part fails with advice.
Adapter names resolve through ``core.plugins`` (group ``skillab.agents``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import plugins
from ..core.settings import RunConfig
from ..errors import UsageError
from .base import Agent

if TYPE_CHECKING:
    from ..grading.judge import ExpectationJudge

# Every member of the contract (what ``isinstance(adapter, Agent)`` checks), to name a lacking one.
_AGENT_MEMBERS = {*Agent.__annotations__, *(n for n, v in vars(Agent).items() if callable(v) and n[0] != "_")}


def create_adapter(config: RunConfig) -> Agent:
    """The adapter named by ``config.agent.adapter``, built from the agent's settings."""
    try:
        factory = plugins.load("agents", config.agent.adapter)
    except plugins.UnknownPlugin as exc:
        raise UsageError(
            f"unknown adapter '{config.agent.adapter}' (choose from {', '.join(exc.available)})"
        ) from None
    adapter = factory.from_config(config)
    if not isinstance(adapter, Agent):
        # A plugin's class is checked here, once, so the engine reads every capability as a
        # plain attribute; subclassing ``Agent`` gives the optional ones their defaults.
        missing = [m for m in sorted(_AGENT_MEMBERS) if not hasattr(adapter, m)]
        raise UsageError(
            f"adapter '{config.agent.adapter}' ({plugins.target('agents', config.agent.adapter)}) lacks "
            f"{', '.join(missing)}: subclass skillab.agents.base.Agent, whose defaults declare "
            "the optional capabilities"
        )
    return adapter


def create_judge(config: RunConfig) -> ExpectationJudge:
    """The expectation judge over the run's judge model client (``providers.registry.client_for``:
    the mock model for a mock run given no judge model)."""
    from ..grading.judge import Judge
    from ..providers.registry import client_for

    return Judge(client_for(config, role="judge"))
