"""The sandbox: private workspaces and the one place commands are run.

Setup commands, validators, graders, agent tools and agent CLIs all run through ``run_command``
under one backend (``backend``: ``bwrap``, or ``none`` by name): a view of their own workspace
and the read-only system only, a scrubbed environment, no network (agent CLIs reach only the
credential proxy), resource limits, and nothing left running afterwards.

The names load on first use, so importing one submodule (the CLI's ``guard``) loads no other.
"""

from ..lazy import lazy_exports

_EXPORTS = {
    "Choice": ".backend",
    "View": ".view",
    "choose_sandbox": ".backend",
    "default_backend": ".backend",
    "require_sandbox": ".backend",
    "looks_secret": ".environment",
    "scrubbed_env": ".environment",
    "detect_isolation": ".isolation",
    "CommandResult": ".process",
    "run_command": ".process",
    "SetupResult": ".setup",
    "prepare": ".setup",
    "Workspace": ".workspace",
    "run_in": ".workspace",
    "safe_join": ".workspace",
}
__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
