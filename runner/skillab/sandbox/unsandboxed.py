"""The ``none`` backend: commands run on the host as skillab's own user.

Used only when asked for by name (``--sandbox none``), or for a mock run on a host where no
backend works. What still holds is the allowlisted environment, a private HOME and TMPDIR in the
workspace, rlimits and the kill of the process group; none of it is a boundary, and every report
says "unsandboxed".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .limits import describe_limits
from .view import View, Wrapped


class Unsandboxed:
    name = "none"

    def problem(self) -> str | None:
        return None

    def wrap(self, argv: Sequence[str], view: View, env: Mapping[str, str]) -> Wrapped:
        return Wrapped(list(argv), dict(env))

    def guarantees(self) -> dict[str, Any]:
        return {
            "enforced_by": "nothing: commands run on the host as skillab's own user",
            "view": "the whole host filesystem, writable wherever skillab's user can write",
            "secrets": "the environment is an allowlist, but files and /proc of the host are readable",
            "network": "the host network",
            "privileges": "skillab's own user",
            "lifetime": "its process group is killed when the command ends",
            "limits": describe_limits(),
        }
