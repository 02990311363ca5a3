"""``RunConfig`` for a test, from the flag names a user knows (``adapter``, ``model``...)."""

from __future__ import annotations

from dataclasses import fields

from skillab.core.settings import AgentSettings, EngineSettings, JudgeSettings, ModelRole, ProviderTuning, RunConfig

_ENGINE = {f.name for f in fields(EngineSettings)}
_AGENT = {"adapter", "skill_loading", "mock_responses", "mock_latency_ms", "timeout_s"}
_TUNING = {f.name for f in fields(ProviderTuning)}


def run_config(*, model=None, provider=None, base_url=None, judge_model=None, judge_same_family=False,
               max_turns=None, **flags) -> RunConfig:
    unknown = set(flags) - _ENGINE - _AGENT - _TUNING
    assert not unknown, f"not a setting: {sorted(unknown)}"
    agent = AgentSettings(model=ModelRole(model, provider, base_url),
                          **({"max_turns": max_turns} if max_turns else {}),
                          **{k: v for k, v in flags.items() if k in _AGENT})
    return RunConfig(
        engine=EngineSettings(**{k: v for k, v in flags.items() if k in _ENGINE}),
        agent=agent,
        judge=JudgeSettings(model=ModelRole(judge_model), same_family=judge_same_family),
        tuning=ProviderTuning(**{k: v for k, v in flags.items() if k in _TUNING}),
    )


def agent_settings_of(config: RunConfig):
    from skillab.providers.registry import agent_settings

    return agent_settings(config.agent.model, config.provider_tuning)


def judge_settings_of(config: RunConfig):
    from skillab.providers.registry import judge_settings

    return judge_settings(config.agent.model, config.judge, config.provider_tuning)


def judge_model_of(config: RunConfig):
    from skillab.providers.registry import judge_model_for

    return judge_model_for(config.agent.model, config.judge)
