"""The key skillab signs what it keeps in a checkout with, and the signature.

A baseline cache entry (``engine.cache``) and a history line (``log.history``) may sit where a
pull request can commit any file; they count only when signed with a key the checkout never
holds: ``SKILLAB_CACHE_KEY`` (the Action's ``cache-key`` input, a secret) when set, else a random
key made once in the user's own config directory.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

KEY_ENV = "SKILLAB_CACHE_KEY"


def key_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where the user's own cache key lives: their config directory, never a checkout's."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".config")
    return Path(base) / "skillab" / "baseline-cache.key"


def cache_key(environ: Mapping[str, str] | None = None) -> bytes | str:
    """The key entries are signed with: ``SKILLAB_CACHE_KEY`` when set, else the user's key file
    (made on first use, readable by its owner only). A reason (a ``str``) when neither can be had."""
    environ = os.environ if environ is None else environ
    if environ.get(KEY_ENV):
        return hashlib.sha256(environ[KEY_ENV].encode()).digest()
    path = key_file(environ)
    try:
        if not path.exists():
            _make_key(path)
        text = path.read_text(encoding="ascii").strip()
    except (OSError, ValueError) as exc:
        return f"its key file {path} cannot be made or read ({getattr(exc, 'strerror', None) or exc})"
    if len(text) < 32:
        return f"its key file {path} holds no key (delete it to make a new one)"
    return hashlib.sha256(text.encode()).digest()


def _make_key(path: Path) -> None:
    """A new random key at ``path``, owner-only; linked into place whole, so a run starting at
    the same moment reads this key or its own, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".key.")  # mode 0600
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32) + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another run made it first: use that one
    finally:
        os.unlink(tmp)


def entry_mac(key: bytes, entry: Mapping[str, Any]) -> str:
    """HMAC-SHA256 over the entry's canonical JSON, its ``mac`` left out."""
    body = {name: value for name, value in entry.items() if name != "mac"}
    blob = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(key, blob.encode(), hashlib.sha256).hexdigest()


def signed(key: bytes, entry: Mapping[str, Any]) -> bool:
    """Whether ``entry`` carries ``key``'s HMAC (``entry_mac``) in its ``mac``."""
    mac = entry.get("mac")
    return isinstance(mac, str) and hmac.compare_digest(mac, entry_mac(key, entry))


__all__ = ["KEY_ENV", "cache_key", "entry_mac", "key_file", "signed"]
