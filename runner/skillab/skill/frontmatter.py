"""SKILL.md frontmatter, read as the reference runner reads it, under the suite parser's bounds.

The reference runner (skillevaluation) splits ``---`` fences and reads the block with PyYAML;
a block that is not valid YAML, or not a mapping, reads as no metadata and the whole text as
the body. skillab does the same and says so in a warning, and recovers ``name:`` and
``description:`` from their lines so the skill still has its listing. What the bounded parser
refuses (an alias bomb, nesting past the depth cap, a number thousands of digits long) stays an
error: leniency never means parsing without limits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SkillError, SuiteError

# A name or description longer than this is loaded with a warning (agents accept it and cut
# their listing of it); past MAX_FIELD_HARD_CHARS it is a mistake, not a listing, and refused.
MAX_FIELD_CHARS = 4096
MAX_FIELD_HARD_CHARS = 65536
_FENCE = re.compile(r"^---[ \t]*\r?$")
_LINE_FIELD = re.compile(r"^(name|description)[ \t]*:[ \t]*(.*?)[ \t]*\r?$")


@dataclass(frozen=True)
class Frontmatter:
    meta: dict[str, Any]
    body: str
    warnings: tuple[str, ...] = ()
    # The line of each top-level key in SKILL.md (the file's own numbering).
    lines: dict[str, int] = field(default_factory=dict)


def read_frontmatter(text: str, path: Path) -> Frontmatter:
    """The metadata and body of SKILL.md text; see the module docstring for the leniency."""
    if not text.startswith("---"):
        return Frontmatter({}, text)
    lines = text.splitlines(keepends=True)
    end = next((i for i in range(1, len(lines)) if _FENCE.match(lines[i])), None)
    if end is None:
        return Frontmatter({}, text, (f"{path}:1: frontmatter opened with '---' is never closed — "
                                      "read as body, as the reference runner reads it",))
    block = "".join(lines[1:end])
    body = "".join(lines[end + 1:])
    if not block.strip():
        return Frontmatter({}, body)
    from ..yaml_source import YamlSyntaxError, parse_yaml

    try:
        doc = parse_yaml(block, path)
    except YamlSyntaxError as exc:
        issue = exc.first
        line = f":{issue.line + 1}" if issue.line else ""
        warning = (f"{path}{line}: frontmatter is not valid YAML ({issue.message.removeprefix('invalid YAML: ')})"
                   " — read leniently as the reference runner reads it: no metadata, the whole file as the "
                   "body; name and description taken from their lines")
        return Frontmatter(_line_fields(lines[1:end]), text, (warning,))
    except SuiteError as exc:  # a bound, not a syntax slip: refuse, do not guess
        issue = exc.first
        line = f":{issue.line + 1}" if issue.line else ""
        raise SkillError(f"{path}{line}: frontmatter {issue.message}") from None
    if not isinstance(doc.value, dict):
        warning = f"{path}:2: frontmatter is not a mapping (name:, description:) — read as no metadata"
        return Frontmatter({}, text, (warning,))
    warnings = tuple(
        f"{path}:{dup.line + 1}: frontmatter repeats the key {dup.key!r} (first on line "
        f"{dup.first_line + 1}) — the first is used"
        for dup in doc.duplicates
    )
    key_lines = {str(path[0]): line + 1 for path, line in doc.lines.items() if len(path) == 1}
    return Frontmatter(doc.value, body, warnings, key_lines)


def _line_fields(lines: list[str]) -> dict[str, str]:
    """``name:`` and ``description:`` from their own lines, for a block YAML cannot read."""
    found: dict[str, str] = {}
    for line in lines:
        match = _LINE_FIELD.match(line)
        if match and match.group(1) not in found:
            found[match.group(1)] = match.group(2).strip().strip("'\"")
    return found
