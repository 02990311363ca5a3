"""The isolation a run's commands get, as the results document discloses it.

A summary of the run's sandbox backend (``backend.Choice``): its name, whether commands have no
network and their own pid namespace, and the guarantees it enforces with what enforces them.
"""

from __future__ import annotations

from typing import Any

from ..core.run_info import IsolationInfo
from .backend import Choice


def detect_isolation(choice: Choice, agent: dict[str, Any] | None = None) -> IsolationInfo:
    """The isolation commands get under the run's backend, and ``agent``: how the agent's own
    work is confined (``agents.base.Agent.sandbox_profile``, with the adapter's name)."""
    described, unsandboxed = choice.describe(), choice.unsandboxed
    detail = f"unsandboxed: {choice.reason}" if unsandboxed else described["enforced_by"]
    # network and backend both carry the backend's name ("none" when commands run unsandboxed).
    return IsolationInfo(network=choice.backend.name, backend=choice.backend.name, detail=detail,
                         pid_namespace=not unsandboxed, unsandboxed=unsandboxed,
                         guarantees=described, agent=agent or {})
