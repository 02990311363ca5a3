"""Choosing a provider for a model, finding its key, and building its client.

Which provider serves a model, in order: ``--provider``; ``claude*`` → anthropic and
``gemini*`` → gemini, with or without ``--base-url`` (then a proxy of that provider);
``--base-url`` (an OpenAI-compatible endpoint: Ollama, vLLM, LiteLLM, OpenRouter...); ``gpt*``, ``o1``/``o3``/
``o4``, ``chatgpt*`` and router ids with a slash (``openai/gpt-4o``, ``meta-llama/...``) →
openai; ``gemini*`` → gemini. ``--provider openai-responses`` sends OpenAI models through the
Responses API instead of chat completions. Anything else needs ``--provider`` or ``--base-url``.

Every provider fact (which names are its own, its key and base-URL variables, its package, whether
it streams) is read from its client class (``base.ModelProvider``); nothing here names one
provider but the OpenAI-compatible one, where an unknown model goes with ``--base-url``. Keys come
from the class's ``key_env`` only, and go to the client only. An OpenAI-compatible ``--base-url``
may run without a key (a local Ollama or vLLM needs none): the client then sends a placeholder,
and a server that does want a key answers 401, which stops the run with the same advice.

Timeouts, retries, concurrency and streaming come from ``ProviderTuning``; keys and endpoints
from ``Credentials`` (``core.settings``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..core import plugins
from ..core.contracts import ModelClient
from ..core.settings import JudgeSettings, ModelRole, ProviderTuning, RunConfig
from ..errors import MissingDependencyError, MissingKeyError, ProviderAuthError, UsageError
from ..secrets import declare_secret_env_var
from .base import ModelProvider, ProviderName
from .model_family import default_judge_model, model_family
from .retry import DEFAULT_PROVIDER_CONCURRENCY, RetryPolicy

KEYLESS_PLACEHOLDER = "skillab-keyless"
DEFAULT_TUNING = ProviderTuning()

# Where a model no provider claims goes with ``--base-url``: an OpenAI-compatible server.
OPENAI_COMPATIBLE = "openai"


@dataclass(frozen=True)
class ProviderSettings:
    """Everything needed to build one model client (the key excepted: it is read at build)."""

    provider: ProviderName
    model: str
    base_url: str | None = None
    timeout_s: float = 300.0
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency: int = DEFAULT_PROVIDER_CONCURRENCY
    stream: bool = False
    temperature: float | None = None
    seed: int | None = None
    # The budget service every shard of the run shares (``--budget-url``); None: this run's own.
    budget_url: str | None = None

    @property
    def client_class(self) -> type[ModelProvider]:
        return provider_class(self.provider)

    @property
    def key_env(self) -> str | None:
        """Where the key comes from (None: the provider needs no key)."""
        return self.client_class.key_env


def provider_class(name: str) -> type[ModelProvider]:
    """The client class of provider ``name``; one that is not a ``ModelProvider`` is refused
    naming its base, since the registry reads every fact from it."""
    try:
        found = plugins.load("models", name)
    except ImportError as exc:
        raise MissingDependencyError(f"the {name} provider cannot be imported ({exc})") from None
    if not (isinstance(found, type) and issubclass(found, ModelProvider)):
        raise UsageError(
            f"provider '{name}' ({plugins.target('models', name)}) is not a model client class: "
            "subclass skillab.providers.base.ModelProvider, whose defaults declare the facts"
        )
    if found.create is ModelClient.create:
        raise UsageError(f"provider '{name}' ({plugins.target('models', name)}) lacks create()")
    return found


def provider_of_name(model: str) -> ProviderName | None:
    """The provider a model name clearly belongs to (the first built-in whose ``model_names``
    match it), or None when the name does not say."""
    for name in plugins.BUILTINS["models"]:
        pattern = provider_class(name).model_names
        if pattern is not None and pattern.search(model):
            return name
    return None


def infer_provider(
    model: str, *, explicit: str | None = None, base_url: str | None = None
) -> ProviderName:
    if explicit:
        if not plugins.is_known("models", explicit):
            raise UsageError(f"unknown provider '{explicit}' (choose from {', '.join(plugins.names('models'))})")
        return explicit  # type: ignore[return-value]
    found = provider_of_name(model)
    if base_url:
        # A name of a provider with its own wire protocol keeps it: the URL is that provider's
        # proxy. Sending a claude-* model to an OpenAI client ends every arm in a 404.
        return found if found is not None else OPENAI_COMPATIBLE
    if found is None:
        raise UsageError(
            f"cannot tell which provider serves model '{model}': pass --provider "
            f"{{{','.join(plugins.names('models'))}}}, or --base-url for an OpenAI-compatible "
            "server (Ollama, vLLM...)"
        )
    return found


def agent_settings(agent: ModelRole, tuning: ProviderTuning = DEFAULT_TUNING) -> ProviderSettings:
    """The agent model's provider settings, from ``--model``, ``--provider`` and ``--base-url``."""
    if not agent.name:
        raise UsageError("this adapter needs a model: pass --model (or set SKILLAB_MODEL)")
    provider = infer_provider(agent.name, explicit=agent.provider, base_url=agent.base_url)
    return _sampled(_settings(tuning, provider, agent.name, agent.base_url), agent)


def judge_model_for(agent_role: ModelRole, judge: JudgeSettings) -> str | None:
    """The judge model: ``--judge-model``; else one of another family than the agent's, because a
    model grading its own family's work tends to favour it; the agent's own model only with
    ``--judge-same-family``. A same-family ``--judge-model`` also needs that flag."""
    agent = agent_role.name
    same_family_ok = judge.same_family
    model = judge.model.name or (agent if same_family_ok or not agent else default_judge_model(agent))
    if model and agent and not same_family_ok and model_family(model) == model_family(agent):
        raise UsageError(
            f"the judge {model} is of the agent's family ({model_family(agent)}): judges favour "
            "their own family's answers. Pass --judge-model with a model of another family, or "
            "--judge-same-family to accept it (the report then says so)"
        )
    return model


def judge_settings(agent: ModelRole, judge: JudgeSettings,
                   tuning: ProviderTuning = DEFAULT_TUNING) -> ProviderSettings:
    """The judge model's settings, with the judge's own sampling (``--judge-temperature``,
    ``--judge-seed``); see ``_judge_endpoint``."""
    return _sampled(_judge_endpoint(agent, judge, tuning), judge.model)


def _sampled(settings: ProviderSettings, role: ModelRole) -> ProviderSettings:
    return replace(settings, temperature=role.temperature, seed=role.seed)


def _judge_endpoint(agent: ModelRole, judge: JudgeSettings,
                    tuning: ProviderTuning = DEFAULT_TUNING) -> ProviderSettings:
    """The judge model's settings (``judge_model_for`` picks the model).

    The judge goes where the agent goes (``--provider``, ``--base-url``) unless its name belongs
    to another provider than the agent's name does (a ``claude-*`` judge for a ``gpt-*`` agent,
    or the reverse): then it goes to that provider's own endpoint.
    """
    model = judge_model_for(agent, judge)
    if not model:
        raise UsageError("the LLM judge needs a model: pass --judge-model or --model")
    if judge.model.provider or judge.model.base_url:
        provider = infer_provider(model, explicit=judge.model.provider, base_url=judge.model.base_url)
        return _settings(tuning, provider, model, judge.model.base_url)
    if not agent.name:
        provider = infer_provider(model, explicit=agent.provider, base_url=agent.base_url)
        return _settings(tuning, provider, model, agent.base_url)
    agent_provider = infer_provider(agent.name, explicit=agent.provider, base_url=agent.base_url)
    agent_family = provider_of_name(agent.name) or agent_provider
    named = provider_of_name(model)
    if named is not None and named != agent_family:
        return _settings(tuning, named, model, None)
    return _settings(tuning, agent_provider, model, agent.base_url)


def _settings(
    tuning: ProviderTuning, provider: ProviderName, model: str, base_url: str | None
) -> ProviderSettings:
    policy = RetryPolicy(
        max_attempts=tuning.max_attempts,
        base_delay_s=tuning.retry_base_delay_s,
        deadline_s=tuning.call_deadline_s,
    )
    return ProviderSettings(
        provider=provider,
        model=model,
        base_url=base_url,
        timeout_s=tuning.request_timeout_s,
        policy=policy,
        concurrency=tuning.provider_concurrency or DEFAULT_PROVIDER_CONCURRENCY,
        stream=tuning.stream,
        budget_url=tuning.budget_url,
    )


def resolve_base_url(
    settings: ProviderSettings, environ: Mapping[str, str] | None = None
) -> str | None:
    env = os.environ if environ is None else environ
    variable = settings.client_class.base_url_env
    return settings.base_url or (env.get(variable) if variable else None) or None


def require_api_key(settings: ProviderSettings, environ: Mapping[str, str] | None = None) -> str:
    """The provider's key from the environment; if unset, ``ProviderAuthError`` naming it."""
    env = os.environ if environ is None else environ
    if settings.key_env is None:
        return KEYLESS_PLACEHOLDER
    key = env.get(settings.key_env, "").strip()
    if key:
        # Whatever the variable is called, its value is masked in everything written.
        declare_secret_env_var(settings.key_env)
        return key
    if settings.client_class.keyless_at_base_url and resolve_base_url(settings, env):
        return KEYLESS_PLACEHOLDER
    raise MissingKeyError(
        f"model {settings.model} needs an API key for {settings.provider}: set {settings.key_env} "
        f"(export {settings.key_env}=...) and run again",
        key_env=settings.key_env, needs=f"model {settings.model} needs an API key for {settings.provider}",
    )


def create_client(
    settings: ProviderSettings, environ: Mapping[str, str] | None = None
) -> ModelProvider:
    """The client for ``settings``; raises before any call when no key is set."""
    client_class = settings.client_class
    api_key = require_api_key(settings, environ)
    base_url = resolve_base_url(settings, environ)
    common: dict[str, Any] = dict(
        api_key=api_key,
        base_url=base_url,
        timeout_s=settings.timeout_s,
        policy=settings.policy,
        concurrency=settings.concurrency,
    )
    if client_class.streams:
        common["stream"] = settings.stream
    # Passed only when set, so a plugin client that samples its own way is built as before.
    if settings.temperature is not None:
        common["temperature"] = settings.temperature
    if settings.seed is not None:
        common["seed"] = settings.seed
    if settings.budget_url and _takes_budget(client_class):
        from ..budget.client import shared_budget

        common["budget"] = shared_budget(settings.budget_url, environ if environ is not None else os.environ)
    try:
        return client_class(settings.model, **common)
    except ImportError as exc:
        package = client_class.package or settings.provider
        raise MissingDependencyError(
            f"the {settings.provider} provider needs the '{package}' package: "
            f"pip install '{package}' ({exc})"
        ) from None


def _takes_budget(client_class: type[ModelProvider]) -> bool:
    """Whether the client asks the shared budget before each attempt: every SDK-backed one (the
    built-ins); the mock model costs nothing, and a plugin's own client is built as it expects."""
    from .sdk_client import SdkClient

    return issubclass(client_class, SdkClient)


Role = Literal["agent", "judge"]


# The mock model, which judges an ``--adapter mock`` run given no judge model.
MOCK = ProviderSettings(provider="mock", model="mock-judge")


def client_for(config: RunConfig, role: Role = "agent") -> ModelProvider:
    """The model client for the agent or the judge of a run; no key for a judge is a clear error
    that says the way out."""
    agent = config.agent.model
    if role == "agent":
        return create_client(agent_settings(agent, config.provider_tuning), config.credentials.environ)
    if config.agent.adapter == "mock" and not config.judge.model.name:
        return create_client(MOCK, config.credentials.environ)
    try:
        return create_client(judge_settings(agent, config.judge, config.provider_tuning), config.credentials.environ)
    except ProviderAuthError as exc:
        if config.judge.model.name or config.judge.same_family:
            raise
        raise ProviderAuthError(
            f"{exc}. The judge defaults to a model of another family than the agent's; pass "
            "--judge-model to choose it, or --judge-same-family to let the agent's family judge"
        ) from None
