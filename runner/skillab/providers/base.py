"""The built-in providers' names, and where each one's key and base URL come from.

The seam itself (``ModelClient``) is in ``core.contracts``, the provider-neutral message types
adapters speak in ``core.messages``.
"""

from __future__ import annotations

from typing import Literal

ProviderName = Literal["anthropic", "openai", "openai-responses", "gemini"]
PROVIDERS: tuple[ProviderName, ...] = ("anthropic", "openai", "openai-responses", "gemini")

# Where each provider's key and base URL come from; nowhere else reads them.
KEY_ENV: dict[ProviderName, str] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
}
BASE_URL_ENV: dict[ProviderName, str] = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
    "openai-responses": "OPENAI_BASE_URL",
    "gemini": "GOOGLE_GEMINI_BASE_URL",
}
