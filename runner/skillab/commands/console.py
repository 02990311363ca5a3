"""The one voice of the commands: what skillab says about a run, on stderr."""

from __future__ import annotations

import sys


def say(message: str) -> None:
    """Every message skillab prints about the run goes to stderr in one style."""
    print(f"skillab: {message}", file=sys.stderr, flush=True)
