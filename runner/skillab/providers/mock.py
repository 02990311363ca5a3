"""The mock model (``--provider mock``): a model client like the others, deterministic, keyless.

It judges an ``--adapter mock`` run (``providers.registry.client_for`` picks it when no judge
model is given), and serves any role it is chosen for:

- a grader's message (the expectation judge, the rubric, checklist and dimension judges) is
  answered with the mock judge's rule (``grading.mock_judge``), read back by the message's
  fenced data blocks, so a mock run exercises the real prompt building and reply parsing;
- any other message is answered by restating it, the same way every time, so a mock answer
  never manufactures lift.

The scripted answers of ``--adapter mock`` are the adapter's (``suite.mock_script``). No
network and no key; nothing is billed or sampled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.messages import Message, ModelResponse, ToolSpec
from ..core.usage import Usage
from ..grading.judge import fenced_blocks
from ..grading.mock_judge import reply
from .base import ModelProvider


class MockClient(ModelProvider):
    """See the module docstring."""

    provider = "mock"
    scripted = True

    def __init__(self, model: str = "mock-judge", **settings: Any) -> None:
        # The registry's common settings (key, endpoint, timeout, retries) mean nothing here.
        super().__init__(model)

    def create(
        self,
        messages: Sequence[Message],
        *,
        system: str,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 4096,
        temperature: float | None = None,
        seed: str = "",
        json_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        user = next((m.text or "" for m in reversed(messages) if m.role == "user"), "")
        blocks = fenced_blocks(user)
        text = reply(blocks) if blocks else f"[mock answer] The request was: {user.strip()}"
        return ModelResponse(text=text, tool_calls=[], usage=Usage(), stop_reason="end_turn")
