"""The judge's transport: one temperature-0 completion from the pinned judge model.

Also home of the judge-independence check: a judge from the agent's own family tends to favour
its own kind of answer, so the run carries a warning when they match.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import TYPE_CHECKING, Any

from ..core.usage import Usage
from ..core.contracts import ModelClient
from ..core.messages import Message
from .registry import client_for

if TYPE_CHECKING:
    from ..core.settings import RunConfig

JUDGE_MAX_TOKENS = 1024


class ProviderJudgeTransport:
    """``JudgeTransport`` over a ``ModelClient``: raises ``ProviderError`` when the call fails."""

    def __init__(self, client: ModelClient):
        self._client = client
        self.model = client.model
        self.provider = client.provider
        # The judge's temperature: ``--judge-temperature``, else 0 (the most repeatable).
        configured = getattr(client, "sampling_temperature", None)
        self.temperature = 0.0 if configured is None else configured
        self.seed = getattr(client, "sampling_seed", None)
        self._usage = Usage()
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: RunConfig) -> "ProviderJudgeTransport":
        """The judge model (``judge_model_for``); no key is a clear error that says the way out."""
        from ..errors import ProviderAuthError

        try:
            return cls(client_for(config, role="judge"))
        except ProviderAuthError as exc:
            if config.judge.model.name or config.judge.same_family:
                raise
            raise ProviderAuthError(
                f"{exc}. The judge defaults to a model of another family than the agent's; pass "
                "--judge-model to choose it, or --judge-same-family to let the agent's family judge"
            ) from None

    @property
    def usage(self) -> Usage:
        """Tokens (and cost, when priced) of every judge call so far."""
        with self._lock:
            return self._usage.add(Usage())

    # ``complete`` takes the reply's JSON schema (the judge passes its verdict's).
    takes_schema = True

    def complete(self, *, system: str, user: str, schema: dict[str, Any] | None = None) -> str:
        # Seeded by the message, so a retried grading call backs off the same way on a rerun.
        seed = hashlib.sha256(user.encode()).hexdigest()[:16]
        # Structured output where the client can ask for it: a small local judge then writes
        # the verdict's JSON and nothing else.
        asks = schema is not None and getattr(self._client, "takes_json_schema", False)
        structured = {"json_schema": schema} if asks else {}
        response = self._client.create(
            [Message.user(user)],
            system=system,
            max_tokens=JUDGE_MAX_TOKENS,
            temperature=self.temperature,
            seed=seed,
            **structured,
        )
        with self._lock:
            self._usage = self._usage.add(response.usage)
        return response.text


_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")
_FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("anthropic", re.compile(r"claude")),
    ("openai", re.compile(r"^(gpt|chatgpt|o1|o3|o4)(\b|[-_.])|(^|/)(gpt|o1|o3|o4)(\b|[-_.])")),
    ("google", re.compile(r"gemini|gemma")),
    ("meta", re.compile(r"llama")),
    ("mistral", re.compile(r"mistral|mixtral|codestral|ministral")),
    ("alibaba", re.compile(r"qwen")),
    ("deepseek", re.compile(r"deepseek")),
    ("xai", re.compile(r"grok")),
)


# A judge of another family than the agent's, for runs that do not name one.
_CROSS_FAMILY_JUDGE = {"anthropic": "gpt-4.1-mini"}
_DEFAULT_JUDGE = "claude-haiku-4-5"


def default_judge_model(agent_model: str) -> str:
    """A small model of another family than ``agent_model``'s."""
    return _CROSS_FAMILY_JUDGE.get(model_family(agent_model), _DEFAULT_JUDGE)


def model_family(model: str) -> str:
    """The vendor family a model id belongs to (``anthropic/claude-x`` and ``claude-x`` agree)."""
    name = model.lower()
    for family, pattern in _FAMILIES:
        if pattern.search(name):
            return family
    vendor, slash, rest = name.partition("/")
    return vendor if slash else _DATE_SUFFIX.sub("", name)


def judge_independence_warning(agent_model: str | None, judge_model: str | None) -> str | None:
    """A warning when the judge is the agent model or of its family; None when independent."""
    if not agent_model or not judge_model:
        return None
    if _DATE_SUFFIX.sub("", agent_model.lower()) == _DATE_SUFFIX.sub("", judge_model.lower()):
        return (
            f"the judge model is the agent model ({judge_model}): a model grading its own work "
            "tends to favour it; pass --judge-model with a model from another family"
        )
    family = model_family(agent_model)
    if family == model_family(judge_model):
        return (
            f"the judge model {judge_model} is of the agent's family ({family}, agent "
            f"{agent_model}): judges favour their own family's answers; pass --judge-model with "
            "a model from another family"
        )
    return None
