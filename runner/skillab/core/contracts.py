"""The contracts the layers meet at, as structural protocols: whatever has these members plugs in,
built-in or shipped by another package (``core.plugins``).

A contract whose types belong to a layer above the core lives with them, typed: the agent's in
``agents.base.Agent`` (``run(ArmRequest) -> AgentResult``), a plugin suite format's in
``formats.base.FormatPlugin`` (``load(path) -> Suite``) and a self-grading grader spec's in
``grading.graders.SelfGrading`` (``grade(GradingInput) -> GraderResult``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .messages import Message, ModelResponse, ToolSpec
from .runlog import RunLog


@runtime_checkable
class ModelClient(Protocol):
    """A chat model behind one provider. Retries, the concurrency cap and pricing live inside.

    ``create`` raises ``ProviderAuthError`` when the credentials are rejected (stop the run) and
    ``ProviderError`` when the call failed after retries (the arm is errored). A provider's client
    class subclasses ``providers.base.ModelProvider``, which gives these members their defaults
    and adds the facts the provider registry reads.
    """

    provider: str
    model: str
    # The run's sampling for this role (``--temperature``/``--seed``, ``--judge-*``).
    sampling_temperature: float | None = None
    sampling_seed: int | None = None
    # Whether ``create`` takes a JSON schema the reply must follow (``json_schema``).
    takes_json_schema: bool = False
    # Answers by a fixed rule (the mock): nothing is billed or sampled, so neither is recorded.
    scripted: bool = False

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
    ) -> ModelResponse: ...


@runtime_checkable
class Reporter(Protocol):
    """Writes a report of finished runs, selected with ``skillab run --reporter NAME[=PATH]``.

    ``logs`` are the runs read back from their written (redacted) results documents, one per
    suite and agent; ``path`` is the PATH the user gave, or None. ``description`` names the
    report in the line that announces it (``wrote PATH (description)``).
    """

    description: str

    def write(self, logs: Sequence[RunLog], path: Path | None) -> None: ...
