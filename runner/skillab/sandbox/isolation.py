"""The isolation a run's commands get, as the results document discloses it.

A summary of the run's sandbox backend (``backend.Choice``): its name, whether commands have no
network and their own pid namespace, and the guarantees it enforces with what enforces them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .backend import Choice


@dataclass(frozen=True)
class Isolation:
    """How commands are isolated in this run."""

    # The backend's name: "bwrap", or "none" when commands run unsandboxed.
    network: str
    detail: str
    # The command sees only its own processes (private /proc).
    pid_namespace: bool = False
    guarantees: dict[str, Any] = field(default_factory=dict)
    # How the adapter's agent is confined (its model calls and its own process), per adapter.
    agent: dict[str, Any] = field(default_factory=dict)

    @property
    def unsandboxed(self) -> bool:
        return self.network == "none"

    def to_dict(self) -> dict[str, Any]:
        return {
            "network": self.network,
            "backend": self.network,
            "detail": self.detail,
            "pid_namespace": self.pid_namespace,
            "unsandboxed": self.unsandboxed,
            "guarantees": self.guarantees,
            "agent": self.agent,
        }


def detect_isolation(choice: Choice, agent: dict[str, Any] | None = None) -> Isolation:
    """The isolation commands get under the run's backend, and ``agent``: how the agent's own
    work is confined (``agents.base.Agent.sandbox_profile``, with the adapter's name)."""
    agent = agent or {}
    if choice.unsandboxed:
        return Isolation("none", f"unsandboxed: {choice.reason}", False, choice.describe(), agent)
    described = choice.describe()
    return Isolation(choice.backend.name, described["enforced_by"], True, described, agent)
