"""Secrets: which environment variables hold them, and masking anything shaped like one.

Keys reach only the provider clients. Everything skillab writes or shows (results, transcripts,
reports, error messages) passes through ``redact`` first, so a key a model echoes back, or one a
provider quotes in an error, never lands in an output.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MASK = "[REDACTED]"

# Variables skillab itself reads or that CI commonly carries; their values are always masked.
SECRET_ENV_VARS: frozenset[str] = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "OPENAI_API_KEY",
        "OPENROUTER_API_KEY",
        "GROQ_API_KEY",
        "DEEPSEEK_API_KEY",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "INPUT_GITHUB-TOKEN",
        "INPUT_ANTHROPIC-API-KEY",
        "INPUT_OPENAI-API-KEY",
        "INPUT_GEMINI-API-KEY",
        "INPUT_CACHE-KEY",
        "SKILLAB_CACHE_KEY",
        "GEMINI_API_KEY",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    }
)

# Any other variable whose name says it holds a credential is treated the same way.
_SECRET_NAME = re.compile(
    r"(API[_-]?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE[_-]?KEY)", re.IGNORECASE
)

# Shapes of well-known credentials, masked wherever they appear, whoever wrote them. Each starts
# with a literal, so the regex engine skips ahead to the candidates; a shape must also start a
# word (checked on the match, ``mask_key_shapes``), or every "task-", "disk-" or "risk-" in a
# path or case name would be masked.
_KEY_SHAPES = re.compile(
    "|".join(
        [
            r"sk-ant-[A-Za-z0-9_\-]{8,}",  # Anthropic
            r"sk-(?:proj-|svcacct-|or-v1-)?[A-Za-z0-9_\-]{16,}",  # OpenAI, OpenRouter
            r"gh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
            r"github_pat_[A-Za-z0-9_]{20,}",  # GitHub fine-grained tokens
            r"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key ids
            r"xox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack
            r"gsk_[A-Za-z0-9]{20,}",  # Groq
        ]
    )
)
# A password in a URL (``--base-url https://user:password@proxy/v1``), and a key in its query
# (``?api-key=...``): the URL itself is recorded and shown. The `://` or `?key=` is kept.
_URL_SECRETS = re.compile(
    r"(://)[^\s/:@\"\\]+:[^\s/@\"\\]+(?=@)"
    r"|([?&](?:key|apikey|api-key|api_key|token|access_token)=)[^\s&#\"\\]+"
)


def mask_key_shapes(text: str) -> str:
    """``text`` with every credential-shaped string masked (see ``_KEY_SHAPES``, ``_URL_SECRETS``)."""
    if "://" in text or "=" in text:
        text = _URL_SECRETS.sub(lambda m: (m.group(1) or m.group(2)) + MASK, text)
    found = _KEY_SHAPES.search(text)
    if found is None:
        return text
    parts, kept = [], 0
    while found is not None:
        at = found.start()
        if at and text[at - 1].isascii() and text[at - 1].isalnum():
            # Inside a word: not a key here, but one may start later inside this match.
            found = _KEY_SHAPES.search(text, at + 1)
            continue
        parts += [text[kept:at], MASK]
        kept = found.end()
        found = _KEY_SHAPES.search(text, kept)
    parts.append(text[kept:])
    return "".join(parts)


# Strings up to this length are masked once per redactor and remembered (``Redactor._short``).
_MEMO_LEN = 64
# A value shorter than this is too common a string to mask on sight ("1", "true", "x").
_MIN_LITERAL_LEN = 8


# Variables a model provider read its key from (``declare_secret_env_var``), whatever they are called.
_DECLARED: set[str] = set()


def declare_secret_env_var(name: str) -> None:
    """Mask ``name``'s value from now on: a provider's key variable need not look like one."""
    if name.upper() not in _DECLARED:
        _DECLARED.add(name.upper())
        is_secret_env_var.cache_clear()


@functools.lru_cache(maxsize=4096)
def is_secret_env_var(name: str) -> bool:
    """True for a variable that holds a credential: a known or declared name, or a name that
    says so."""
    upper = name.upper()
    return upper in SECRET_ENV_VARS or upper in _DECLARED or bool(_SECRET_NAME.search(name))


def secret_values(
    environ: Mapping[str, str] | None = None,
    is_secret: Callable[[str], bool] = is_secret_env_var,
) -> list[str]:
    """The current values of every secret variable, longest first (so overlaps mask fully).

    Names are classified first and only secret ones are read: redaction runs on every string
    skillab stores, and decoding the whole environment each time showed up in profiles.
    """
    env = os.environ if environ is None else environ
    values = {env[name] for name in list(env) if is_secret(name)}
    return sorted((v for v in values if len(v) >= _MIN_LITERAL_LEN), key=len, reverse=True)


@dataclass(frozen=True)
class Redactor:
    """Masks key-shaped strings and the literal values of known secrets.

    Build one per document (``from_environ``) when redacting many strings: reading the secret
    values is the costly part, the masking itself is one pass of each value and one regex.
    """

    values: tuple[str, ...] = ()

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Redactor:
        return cls(tuple(secret_values(environ)))

    def text(self, text: str) -> str:
        if not text:
            return text
        for value in self.values:
            if value in text:
                text = text.replace(value, MASK)
        return mask_key_shapes(text)

    def data(self, value: Any) -> Any:
        """A JSON-like value with every string in it (keys included) masked."""
        if isinstance(value, str):
            return self._short(value) if len(value) <= _MEMO_LEN else self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value

    def dumps(self, value: Any) -> str:
        """``json.dumps(self.data(value), ensure_ascii=False)``, masked on the encoded text.

        Masking the encoded text is two C passes where walking the value is a Python call per
        string. It is exact: a secret is matched in its JSON-escaped form, neither it nor the
        key shapes contain a quote or backslash (a secret that does is masked string by string),
        and one that matched outside a string (a number, say) leaves text that does not parse,
        so that value is masked string by string too.
        """
        if self._encoded is None:
            return json.dumps(self.data(value), ensure_ascii=False)
        text = json.dumps(value, ensure_ascii=False)
        masked = text
        for secret in self._encoded:
            if secret in masked:
                masked = masked.replace(secret, MASK)
        if masked is not text:
            try:
                json.loads(masked)
            except ValueError:
                return json.dumps(self.data(value), ensure_ascii=False)
        return mask_key_shapes(masked)

    @functools.cached_property
    def _encoded(self) -> tuple[str, ...] | None:
        encoded = tuple(json.dumps(v, ensure_ascii=False)[1:-1] for v in self.values)
        return None if any('"' in e or "\\" in e for e in encoded) else encoded

    # Bounded, and keyed by the instance too, so each redactor's secrets stay its own.
    @functools.lru_cache(maxsize=8192)  # noqa: B019
    def _short(self, text: str) -> str:
        # A document repeats the same keys and short values (labels, outcomes) thousands of times.
        return self.text(text)


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with key-shaped strings and the values of secret variables replaced by a mask."""
    return Redactor.from_environ(environ).text(text) if text else text


def redact_data(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """A JSON-like value with every string in it (keys included) passed through ``redact``."""
    return Redactor.from_environ(environ).data(value)
