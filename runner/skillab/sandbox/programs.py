"""What an agent CLI needs mounted (read-only) to run in the sandbox: its own installation and
its interpreter, and nothing else of the host."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .bwrap import SYSTEM_DIRS, TRUSTED_PATH


def install_paths(binary: str) -> tuple[Path, ...]:
    """Directories to mount read-only so ``binary`` runs: the outermost ``node_modules`` (or the
    binary's own directory) holding it, and the installation of a ``#!`` interpreter, each
    unless the system directories already hold it."""
    real = Path(os.path.realpath(binary))
    paths = [_narrowed(_package_root(real), real)]
    interpreter = _interpreter(real)
    if interpreter is not None:
        resolved = Path(os.path.realpath(interpreter))
        # <prefix>/bin/node -> <prefix>, so its lib/ comes too.
        prefix = resolved.parent.parent if resolved.parent.name == "bin" else resolved.parent
        paths.append(_narrowed(prefix, resolved))
    return tuple(p for p in dict.fromkeys(paths) if not in_system(p))


def _narrowed(directory: Path, file: Path) -> Path:
    """``directory``, or just ``file`` when the directory holds the runner's own places: a binary
    kept in the temporary directory would mount every arm's workspace (the home, the checkout
    and the virtualenv would be covered by ``bwrap._covers``, the CLI with them)."""
    text = str(directory).rstrip("/") + "/"
    return file if any(f"{place}/".startswith(text) for place in _runner_places()) else directory


def _runner_places() -> list[str]:
    import sys
    import tempfile

    from .scratch import SCRATCH_ENV

    places = [os.path.expanduser("~"), os.environ.get("HOME", ""), os.getcwd(), sys.prefix,
              tempfile.gettempdir(), "/dev/shm", os.environ.get(SCRATCH_ENV, "")]
    return [os.path.realpath(p).rstrip("/") for p in places if p]


def resolved_binary(binary: str) -> str:
    """The real path of ``binary``: links such as ``node_modules/.bin/x`` are not mounted."""
    return os.path.realpath(binary)


def _package_root(real: Path) -> Path:
    outermost = None
    for parent in real.parents:
        if parent.name == "node_modules":
            outermost = parent
    return outermost or real.parent


def token_holder(binary: str) -> Path:
    """The executable a process started as ``binary`` becomes: its ``#!`` interpreter, or
    itself."""
    real = Path(os.path.realpath(binary))
    interpreter = _interpreter(real)
    return Path(os.path.realpath(interpreter)) if interpreter else real


def _interpreter(real: Path) -> str | None:
    try:
        with open(real, "rb") as handle:
            first = handle.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env" and len(words) > 1:
        name = words[-1] if words[1].startswith("-") else words[1]
        return shutil.which(name, path=f"{real.parent}:{os.environ.get('PATH', '')}:{TRUSTED_PATH}")
    return words[0]


def in_system(path: Path) -> bool:
    text = str(path)
    return any(text == d or text.startswith(d + "/") for d in SYSTEM_DIRS)
