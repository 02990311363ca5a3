"""What a repository's config file may set unasked.

A ``skillab.toml`` or ``[tool.skillab]`` in a pull request is as untrusted as the agent: a value
that widens what the run reaches (where the key and transcripts go, which key is sent, an
unconfining sandbox, kept workspaces, code imported on the host, a path outside the file's tree)
needs the user's consent (``--trust-config``). Each rule takes the file's value and the file's
folder and says why it needs that consent, or None when the file may set it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

# A config file's value -> why it needs the user's consent, or None when the file may set it.
TrustRule = Callable[[Any, Path], "str | None"]

# The backends a config file may choose unasked: each confines a suite's commands at least as
# bwrap does.
CONFINING_SANDBOXES = ("bwrap", "image")


def endpoint(value: Any, root: Path) -> str | None:
    return f"{value!r} would receive your API key and every transcript" if value else None


def provider(value: Any, root: Path) -> str | None:
    return f"{value!r} chooses which of your keys is sent, and where" if value else None


def sandbox(value: Any, root: Path) -> str | None:
    if value in (None, *CONFINING_SANDBOXES):
        return None
    return f"{value!r} would run the suite's commands on this machine outside skillab's sandbox"


def kept(value: Any, root: Path) -> str | None:
    return ("keeps every arm's workspace (what the agent and the suite's commands wrote) on this "
            "machine") if value else None


def import_path(value: Any, root: Path) -> str | None:
    named = [name for name in (value or ()) if ":" in name]
    return f"{', '.join(named)} would import and run code on this machine, outside any sandbox" if named else None


def inside(value: Any, root: Path) -> str | None:
    if value is None:
        return None
    # Resolved, so a link inside the tree that leads out of it is out of it.
    if Path(value).resolve().is_relative_to(root.resolve()):
        return None
    return f"{value} is outside {root}"
