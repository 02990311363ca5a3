"""The settings' defaults the command line shows in its help: a module of its own, so parsing
flags (and ``skillab validate``) does not build the settings dataclasses."""

from __future__ import annotations

from pathlib import Path

DEFAULT_MAX_TURNS = 12
DEFAULT_CACHE_TTL_DAYS = 7.0
# The run history ``--history`` defaults to (``log.history`` reads and appends it).
DEFAULT_HISTORY_PATH = Path(".skillab") / "history.jsonl"
