"""Reading what an agent CLI printed: its JSON event lines, and the paths its tools named."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .skill_view import normalize


def json_lines(stdout: str) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL stream; other lines (banners, a line cut by the output cap)
    are skipped."""
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            yield event


def workspace_relative(path: str, workspace: Path) -> str:
    """A workspace-relative form of ``path`` when it lies inside the workspace, else as given."""
    if not os.path.isabs(path):
        return normalize(path)
    for root in {str(workspace), os.path.realpath(workspace)}:
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return normalize(os.path.relpath(path, root))
    return path
