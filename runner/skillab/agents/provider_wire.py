"""The provider an agent runtime's model calls go to through the credential proxy: its key, its
endpoint, the API paths the proxy forwards, and the header the proxy adds the key in. Mixed into
the adapters of runtimes that can be pointed at either provider (a Python agent, Copilot CLI)."""

from __future__ import annotations

from typing import ClassVar


class AnthropicWire:
    """The Anthropic Messages API."""

    provider: ClassVar[str] = "anthropic"
    key_env: ClassVar[str] = "ANTHROPIC_API_KEY"
    base_url_env: ClassVar[str] = "ANTHROPIC_BASE_URL"
    default_endpoint: ClassVar[str] = "https://api.anthropic.com"
    api_paths: ClassVar[tuple[str, ...] | None] = (r"/v1/messages(/count_tokens)?", r"/v1/models(/[^/]+)?")
    _api_key: str

    def credentials(self) -> dict[str, str]:
        return {"x-api-key": self._api_key}


class OpenAIWire:
    """The OpenAI API: chat completions and Responses."""

    provider: ClassVar[str] = "openai"
    key_env: ClassVar[str] = "OPENAI_API_KEY"
    base_url_env: ClassVar[str] = "OPENAI_BASE_URL"
    default_endpoint: ClassVar[str] = "https://api.openai.com/v1"
    api_paths: ClassVar[tuple[str, ...] | None] = (r"(/v1)?/chat/completions", r"(/v1)?/responses",
                                                   r"(/v1)?/models(/[^/]+)?")
    _api_key: str

    def credentials(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"}
