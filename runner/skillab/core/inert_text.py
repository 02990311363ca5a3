"""Text from a sandbox, a suite or a model made inert for a reader and for GitHub's log parser.

Bidirectional and zero-width controls (a "Trojan Source" reordering, an invisible character) are
shown as ``<U+202E>``. A log line is kept from being read as a GitHub Actions workflow command:
the runner reads ``::name::`` at the start of a line (after blanks) and the legacy ``##[name]``
ANYWHERE in a line, so both are broken with a zero-width space.
"""

from __future__ import annotations

import re

ZWSP = "\u200b"
LEGACY_COMMAND = re.compile(r"##(?=\[)")
_HIDDEN = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def reveal(text: str) -> str:
    """Bidi and zero-width controls as visible ``<U+XXXX>`` tags."""
    return _HIDDEN.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def neutralize(line: str) -> str:
    """A plain log line that cannot be read as a command: no ``::`` at its start, no ``##[``
    anywhere, hidden characters shown."""
    line = LEGACY_COMMAND.sub("#" + ZWSP + "#", reveal(line))
    stripped = line.lstrip()
    if stripped.startswith("::"):
        indent = line[: len(line) - len(stripped)]
        return indent + ":" + ZWSP + ":" + stripped[2:]
    return line
