"""The sandbox seam: the backends that enforce what a command may see (``view.View``).

Every command skillab runs for a suite (setup, validators, graders, agent tools, agent CLIs)
goes through ``run_command``, which hands its argv and ``View`` to the backend it is given:

* ``bwrap`` (bubblewrap): the default wherever it works. See ``bwrap.py`` for the view.
* ``image``: bwrap on the root filesystem of a task's own image (``image.py``), per suite;
* ``none``: only when asked for by name (``--sandbox none``); every report then says
  "unsandboxed";
* another package's backend, named by its entry point (group ``skillab.sandboxes``,
  ``core.plugins``): used when asked for by name and only if its ``problem()`` is None.

A run chooses its backend once (``choose_sandbox``) and passes it along, as httpx passes a
client's transport: on the engine's arm context to each ``Workspace`` (setup, validators,
graders) and ``ArmRequest`` (the agent's tools and CLI). Nothing is kept process-wide, so two
runs in one process may use two backends. Without a choice, ``bwrap`` is used when it works here
and ``none`` otherwise, marked as a fallback so a non-mock run refuses it (``require_sandbox``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..core.choices import SANDBOX_CHOICES
from ..errors import UsageError
from .view import View, Wrapped

HOW_TO_GET_ONE = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap) on a Linux host that allows unprivileged user namespaces, or pass "
    "--sandbox none to run suite commands and the agent UNSANDBOXED"
)


class Backend(Protocol):
    name: str

    def problem(self) -> str | None:
        """Why this backend cannot run commands here; None when it can."""
        ...

    def wrap(self, argv: Sequence[str], view: View, env: Mapping[str, str]) -> Wrapped:
        ...

    def guarantees(self) -> dict[str, Any]:
        """What the backend enforces, and by what, for the results document."""
        ...


@dataclass(frozen=True)
class Choice:
    """A run's backend and how it was chosen."""

    backend: Backend
    # True when nobody asked for it and it is ``none`` because nothing better works here.
    fallback: bool = False
    reason: str = ""

    @property
    def unsandboxed(self) -> bool:
        return self.backend.name == "none"

    def describe(self) -> dict[str, Any]:
        described = {"backend": self.backend.name, **self.backend.guarantees()}
        if self.unsandboxed:
            described["unsandboxed"] = True
            described["reason"] = self.reason
        return described


def default_backend() -> Backend:
    """The backend of a command no run chose one for (a CLI's ``--version``, a test's
    workspace): bwrap where it works, else none, as for a run without ``--sandbox``."""
    return choose_sandbox(None).backend


def before_the_suite(name: str | None) -> Choice:
    """The backend ``--sandbox name`` gives, for what runs before a suite's own is chosen (a
    CLI's ``--version``, the plan's cache lookups): ``image`` is built per suite from its
    Dockerfile, so the default stands in for it."""
    return choose_sandbox(None if name == "image" else name)


INSTALL_CLI = ("install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf "
               "install bubblewrap) on a Linux host that allows unprivileged user namespaces; "
               "--sandbox none says you mean it")
INSTALL_ACTION = ("the Action's image carries bubblewrap, so this runner blocks user namespaces: run "
                  "on a GitHub-hosted runner, or set the action's `sandbox: none` input to say you mean it")


def fallback_warning(choice: Choice, how: str = INSTALL_CLI) -> str | None:
    """What a run that fell back to no sandbox says before its first case (``how``: what to do
    about it, in the words of the CLI or of the Action)."""
    if not choice.fallback:
        return None
    return (f"WARNING: no sandbox ({choice.reason}): the suite's validators and setup commands run "
            f"UNSANDBOXED on this machine. To sandbox them: {how}")


def require_sandbox(choice: Choice, adapter: str) -> None:
    """Fail closed: only a mock run may fall back to no sandbox without asking for it."""
    if choice.fallback and adapter != "mock":
        raise UsageError(
            f"no sandbox backend works on this host ({choice.reason}), and the {adapter} "
            f"adapter runs model-chosen commands. To fix: {HOW_TO_GET_ONE}"
        )


def sandbox_names() -> tuple[str, ...]:
    """Every ``--sandbox`` name: the built-ins, then the installed plugins by name."""
    from ..core import plugins  # the registry is read only when a name is asked for

    return (*SANDBOX_CHOICES, *plugins.plugins("sandboxes"))


def is_sandbox_name(name: str) -> bool:
    from ..core import plugins

    return name in SANDBOX_CHOICES or plugins.is_known("sandboxes", name)


def _backend(name: str) -> Backend:
    from ..core import plugins

    try:
        backend: Backend = plugins.load("sandboxes", name)()
    except plugins.UnknownPlugin:
        raise UsageError(f"unknown sandbox {name!r} (choose from {', '.join(sandbox_names())})") from None
    return backend


def choose_sandbox(name: str | None) -> Choice:
    """The backend named ``name`` (``--sandbox``, the Action's input); ``None``: the best that
    works here. Raises ``UsageError`` (exit 2) when the named backend cannot work here."""
    if name == "none":
        return Choice(_backend("none"), reason="asked for by --sandbox none")
    if name == "image":
        raise UsageError("--sandbox image applies to a suite that brings a Dockerfile "
                         "(a SkillsBench task's environment/Dockerfile)")
    chosen = _backend(name or "bwrap")
    problem = chosen.problem()
    if problem is None:
        return Choice(chosen)
    if name is not None:
        how = HOW_TO_GET_ONE if name == "bwrap" else "install what it needs, or choose another with --sandbox"
        raise UsageError(f"--sandbox {name} does not work here: {problem}. To fix: {how}")
    return Choice(_backend("none"), fallback=True, reason=f"bwrap does not work here: {problem}")
