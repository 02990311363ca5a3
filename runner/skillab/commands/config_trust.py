"""What a repository's config file may not decide on its own: in a checked-out pull request the
file is the author's, and the reviewer's keys, machine and files are not theirs to reach.

A value that widens what the run reaches (where the keys go, which sandbox, what stays on disk,
paths outside the file's own tree, code named by import path) needs the user's consent: the
flag given on the command line, or ``--trust-config``. Anything else a file may set freely.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The backends a file may choose: each confines a suite's commands at least as bwrap does.
CONFINING_SANDBOXES = ("bwrap", "image")


@dataclass(frozen=True)
class FromFile:
    """A parser default the config file gave, until ``config_file.finish`` admits it. Shown in
    ``--help`` as the value itself."""

    key: str
    value: Any

    def __str__(self) -> str:
        return str(self.value)


def _endpoint(value: Any, root: Path) -> str | None:
    return f"{value!r} would receive your API key and every transcript" if value else None


def _provider(value: Any, root: Path) -> str | None:
    return f"{value!r} chooses which of your keys is sent, and where" if value else None


def _sandbox(value: Any, root: Path) -> str | None:
    if value in (None, *CONFINING_SANDBOXES):
        return None
    return f"{value!r} would run the suite's commands on this machine outside skillab's sandbox"


def _keep(value: Any, root: Path) -> str | None:
    return "keeps every arm's workspace (what the agent and the suite's commands wrote) on this machine" \
        if value else None


def _adapter(value: Any, root: Path) -> str | None:
    named = [name for name in (value or ()) if ":" in name]
    return f"{', '.join(named)} would import and run code on this machine, outside any sandbox" if named else None


def _inside(value: Any, root: Path) -> str | None:
    if value is None:
        return None
    # Resolved, so a link inside the tree that leads out of it is out of it.
    resolved = Path(value).resolve()
    if resolved.is_relative_to(root.resolve()):
        return None
    return f"{value} is outside {root}"


# Key -> the reason its value needs consent, or None when the file may set it.
RULES: dict[str, Callable[[Any, Path], str | None]] = {
    "base-url": _endpoint,
    "provider": _provider,
    "sandbox": _sandbox,
    "keep-workspaces": _keep,
    "adapter": _adapter,
    **{key: _inside for key in ("output", "html", "markdown", "junit", "trajectories", "cache-dir",
                                "history", "siblings")},
}


def refusal(key: str, value: Any, root: Path) -> str | None:
    """Why the config file at ``root`` may not set ``key`` to ``value`` unasked; None if it may."""
    rule = RULES.get(key)
    return rule(value, root) if rule is not None else None
