"""The one rule for every path a suite names: it stays inside the suite's root, with no link.

Loaders copy the files a suite names (fixtures, workspace folders, verifier tests, grader files)
into each arm's workspace on the host, before any sandbox exists, and git stores links, so a
pull request can commit ``fx -> /home/runner`` or ``p -> /proc/self``. A path is therefore taken
only when it is relative, has no ``..``, and no component below the suite's root is a symbolic
link: the first, one in the middle, the last, or the folder a loader walks. The check at load
time names the file, field and path; staging then reads every file through ``linkfree`` from the
root down, so a link swapped in after the check is refused as well.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Literal

from ..errors import SandboxError
from ..linkfree import first_link, open_below

Kind = Literal["file", "folder", "either"]
_DRIVE = re.compile(r"^[A-Za-z]:")
# What every refusal ends with: the rule, said once.
RULE = "suite paths must stay inside the suite's folder, with no symbolic link on the way"


def path_problem(root: Path, rel: str, *, want: Kind = "either") -> str | None:
    """Why ``rel`` cannot name a file or folder of the suite whose folder is ``root`` (None
    when it can): not a relative path, ``..``, a link at any component, missing, or the wrong
    kind (``want``)."""
    problem = shape_problem(rel)
    if problem:
        return problem
    parts = split(rel)
    return _link_problem(root, parts) or _kind_problem(Path(root, *parts), want)


def refuse_outside(root: Path, source: Path, *, want: Kind = "either") -> str | None:
    """``path_problem`` for an absolute ``source`` a loader built below ``root``."""
    return escape_problem(root, source) or _kind_problem(Path(source), want)


def escape_problem(root: Path, source: Path) -> str | None:
    """Why ``source`` is not reached from ``root`` without leaving it or following a link (None
    when it is); whether it exists is not asked."""
    try:
        rel = Path(os.path.abspath(source)).relative_to(os.path.abspath(root))
    except ValueError:
        return f"is outside the suite's folder {root} — {RULE}"
    return _link_problem(root, list(rel.parts))


def split(rel: str) -> list[str]:
    """The components of a relative POSIX path, ``.`` and empty ones dropped."""
    return [part for part in rel.split("/") if part not in ("", ".")]


def shape_problem(rel: str) -> str | None:
    """Why ``rel`` is not a relative path that stays below the folder it is taken from (None when
    it is); what it names on disk is not asked."""
    if not isinstance(rel, str) or not rel.strip():
        return "is empty"
    if "\0" in rel:
        return "contains a NUL byte"
    if rel.startswith(("/", "\\")) or _DRIVE.match(rel) or os.path.isabs(rel):
        return "is absolute"
    if "\\" in rel:
        return "uses '\\'; write '/' between folders"
    if ".." in rel.split("/"):
        return "climbs out with '..'"
    return None


def _link_problem(root: Path, parts: list[str]) -> str | None:
    depth = first_link(root, parts)
    if depth is None:
        return None
    at = "/".join(parts[:depth])
    target = os.readlink(Path(root, *parts[:depth]))
    return f"goes through a symbolic link ({at} -> {target}) — {RULE}"


def _kind_problem(path: Path, want: Kind) -> str | None:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "does not exist"
    if want != "folder" and stat.S_ISREG(mode):
        return None
    if want != "file" and stat.S_ISDIR(mode):
        return None
    return {"file": "is not a regular file", "folder": "is not a folder"}.get(want, "is not a file or folder")


def read_below(root: Path, source: Path) -> tuple[bytes, int]:
    """The bytes and permission bits of the regular file ``source`` below ``root``, opened from
    the root down with no link followed; ``SandboxError`` when it is not there that way."""
    real = os.path.realpath(root)
    parts = Path(os.path.abspath(source)).relative_to(os.path.abspath(root)).parts
    fd = open_below(real, parts) if parts else None
    if fd is None:
        raise SandboxError(f"cannot stage {'/'.join(parts) or source}: it is missing, not a regular file, "
                           f"or reached through a symbolic link — {RULE}")
    with open(fd, "rb") as handle:
        mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
        return handle.read(), mode
