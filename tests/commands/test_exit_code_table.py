"""The exit-code table of docs/cli.md lists every command skillab has."""

from __future__ import annotations

import re
from pathlib import Path

from skillab.cli import COMMANDS

README = Path(__file__).resolve().parent.parent.parent / "docs" / "cli.md"


def test_every_command_has_a_row():
    text = README.read_text()
    table = text.split("Exit codes of every command", 1)[1].split("\n\n", 2)[1]
    rows = re.findall(r"^\| (`skillab [^|]+)\|", table, re.M)
    named = {m for row in rows for m in re.findall(r"`skillab ([a-z-]+)", row)}
    assert set(COMMANDS) | {"action"} <= named, sorted(set(COMMANDS) | {"action"} - named)
