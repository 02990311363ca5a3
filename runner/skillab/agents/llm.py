"""The ``llm`` adapter: one completion per arm, no tools.

The with-skill arm carries the SKILL.md body in its system prompt; the without-skill arm does
not. Turns and tool calls are honestly 1 and 0. An answer cut at ``max_tokens`` says so
(``stop_reason: max_tokens``): the arm then fails rather than being graded as if whole.
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING, Any

from ..core.contracts import ModelClient
from ..core.messages import Message
from ..errors import ProviderError, UsageError
from ..grading.trajectory import ModelTurn, Trajectory
from ..secrets import redact
from .base import Agent, AgentResult, ArmRequest, sampling
from .skill_view import INLINE_TEMPLATE, inline_section

if TYPE_CHECKING:
    from ..core.settings import RunConfig

DEFAULT_MAX_TOKENS = 4096

SYSTEM_PROMPT = """\
You are a capable assistant. Answer the user's request directly and completely in one reply.
"""


class LlmAdapter(Agent):
    name = "llm"
    staging_dirs: tuple[str, ...] = ()  # the skill is in the system prompt
    # Each response names the model served; the baseline cache is keyed on it.
    reports_served_model = True

    def __init__(
        self,
        client: ModelClient,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        endpoint: str | None = None,
    ):
        self.client = client
        self.max_tokens = max_tokens
        self.endpoint = endpoint

    @classmethod
    def from_config(cls, config: RunConfig) -> LlmAdapter:
        from ..providers.registry import agent_settings, create_client, resolve_base_url

        if config.agent.skill_loading != "inline":
            raise UsageError(
                f"--skill-loading {config.agent.skill_loading} needs an agent that can read files: use "
                + ("--adapter openai-agents" if config.agent.skill_loading == "lazy" else "--adapter agent")
            )
        settings = agent_settings(config.agent.model, config.provider_tuning)
        environ = config.credentials.environ
        return cls(create_client(settings, environ), endpoint=resolve_base_url(settings, environ),
                   max_tokens=config.agent.max_tokens or DEFAULT_MAX_TOKENS)

    def identity(self) -> dict[str, Any]:
        return {
            "adapter": self.name,
            "provider": self.client.provider,
            "model": self.client.model,
            "endpoint": redact(self.endpoint) if self.endpoint else None,
            "skill_loading": "inline",
            "max_tokens": self.max_tokens,
            **sampling(self.client),
            "system_prompt_sha256": hashlib.sha256(
                f"{SYSTEM_PROMPT}\0{INLINE_TEMPLATE}".encode()
            ).hexdigest(),
        }

    def run(self, request: ArmRequest) -> AgentResult:
        started = time.monotonic()
        system = SYSTEM_PROMPT + (inline_section(request.skill) if request.skill else "")
        trajectory = Trajectory(user_input=request.case.prompt)
        try:
            response = self.client.create(
                [Message.user(request.case.prompt)],
                system=system,
                max_tokens=self.max_tokens,
                seed=f"{request.case.name}\0{request.arm}\0{request.run_index}",
            )
        except ProviderError as exc:
            return AgentResult(
                final_output="",
                trajectory=trajectory,
                duration_ms=int((time.monotonic() - started) * 1000),
                turns=0,
                error=redact(str(exc)),
            )
        said = redact(response.text)
        trajectory.turns.append(ModelTurn(text=said or None, latency_ms=response.latency_ms))
        return AgentResult(
            final_output=said,
            trajectory=trajectory,
            usage=response.usage,
            duration_ms=int((time.monotonic() - started) * 1000),
            turns=1,
            served_model=response.served_model,
            stop_reason="max_tokens" if response.stop_reason == "max_tokens" else None,
        )
