"""The environment a sandboxed command gets: an allowlist, never the runner's own.

Setup commands, validators and agent tools are author- or model-controlled shell, and the
runner holds provider keys and the GitHub token. Only the locale categories, timezone, terminal
(each only when its value looks like such a name) and PATH's absolute entries are inherited;
HOME and TMPDIR point inside the workspace, so ``~/.aws/credentials`` and friends are out of
reach through a ``$HOME``-relative path.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from ..secrets import is_secret_env_var, secret_values

_INHERITED = frozenset({"PATH", "LANG", "TZ", "TERM"})
# The locale categories glibc reads, and no other LC_ name (LC_MY_PAT is anyone's variable).
_LOCALE = frozenset({"LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC",
                     "LC_TIME", "LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE",
                     "LC_MEASUREMENT", "LC_IDENTIFICATION"})
_ALLOWED = tuple(sorted(_INHERITED | _LOCALE))
# What a locale, timezone or terminal name looks like (C.UTF-8, en_US.UTF-8@euro, Europe/Paris,
# xterm-256color); any other value is not passed on.
_NAME_VALUE = re.compile(r"^[A-Za-z0-9_.@:+/-]{0,64}$")
# Whole families that hold credentials or Action inputs (INPUT_GITHUB-TOKEN, ...).
_NEVER_PREFIXES = ("ANTHROPIC_", "OPENAI_", "GITHUB_", "AWS_", "INPUT_")
# Broader than what reports redact: any KEY, AUTH but not AUTHOR (GIT_AUTHOR_NAME passes), and
# API as a whole word (MY_API_URL).
_SECRET_NAME = re.compile(r"KEY|AUTH(?!OR)|(?:^|_)API(?:_|$)")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


@functools.lru_cache(maxsize=4096)
def looks_secret(name: str) -> bool:
    """Whether an environment variable name suggests it holds a credential."""
    upper = name.upper()
    return (
        upper.startswith(_NEVER_PREFIXES)
        or is_secret_env_var(name)
        or _SECRET_NAME.search(upper) is not None
    )


@dataclass(frozen=True)
class Inherited:
    """The allowlisted variables commands take from the runner's environment, read once per
    arm (its ``Workspace``, its agent's ``Toolbox``) rather than once per command. The secret
    values an ``extra`` entry must not carry are read at each command: a key set meanwhile
    still counts."""

    env: Mapping[str, str]


def inherited() -> Inherited:
    """The runner's environment as commands may see it now (see ``scrubbed_env``)."""
    # The allowlisted names are looked up, not the whole environment decoded and filtered.
    found = ((name, os.environ.get(name)) for name in _ALLOWED)
    env = {
        name: value
        for name, value in found
        if value is not None and not looks_secret(name) and (name == "PATH" or _NAME_VALUE.match(value))
    }
    # A relative PATH entry (".", or an empty one) would find programs in the workspace first.
    path = ":".join(entry for entry in env.get("PATH", "").split(":") if entry.startswith("/"))
    env["PATH"] = path or DEFAULT_PATH
    return Inherited(MappingProxyType(env))


def scrubbed_env(home: Path, tmpdir: Path, extra: Mapping[str, str] | None = None,
                 base: Inherited | None = None) -> dict[str, str]:
    """The allowlisted environment plus ``extra``, minus anything that looks like a secret.

    An ``extra`` entry is dropped when its name looks secret or its value carries the value
    of a secret-looking variable in the runner's own environment. ``base``: the runner's
    environment as ``inherited`` read it for this arm (None: read now).
    """
    base = base or inherited()
    env = dict(base.env)
    if extra:
        secrets = _secret_values()
        for name, value in extra.items():
            if looks_secret(name) or any(secret in value for secret in secrets):
                continue
            env[name] = value
    # Last, so an ``extra`` entry cannot point them back at the real home.
    env["HOME"] = str(home)
    env["TMPDIR"] = str(tmpdir)
    return env


def _secret_values() -> list[str]:
    return secret_values(is_secret=looks_secret)
