"""The parts of a skill an ablation can take out: SKILL.md's sections and the bundled files.

A section is a markdown heading of the chosen level (``##`` by default) with everything up to
the next heading of that level or above; the text before the first such heading (the preamble,
with the frontmatter) always stays, since it carries the skill's name, description and framing.
Headings inside fenced code blocks are text, not sections. A bundled file is a part of its own
unless a grader calls it: a validator or setup command that names the file needs it whatever the
agent was shown, so taking it out would measure the grader, not the skill.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .loader import SKILL_FILE, Skill

PartKind = Literal["section", "file"]
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class SkillPart:
    """One part of a skill: a SKILL.md section (its heading line and body) or a bundled file."""

    kind: PartKind
    # The heading text for a section, the path relative to the skill for a file.
    name: str
    # 1-based line range of a section in SKILL.md (inclusive); None for a file.
    lines: tuple[int, int] | None
    chars: int

    @property
    def label(self) -> str:
        return f"## {self.name}" if self.kind == "section" else self.name

    @property
    def key(self) -> str:
        """Unique within a skill: what results and the variant's folder are named by."""
        if self.kind == "file":
            return f"file:{self.name}"
        assert self.lines is not None
        return f"section:{self.lines[0]}:{self.name}"


@dataclass(frozen=True)
class Partition:
    """A skill cut into parts, and the bundled files left whole because graders call them."""

    parts: tuple[SkillPart, ...]
    grader_files: tuple[str, ...]
    heading_level: int


def split_sections(text: str, level: int = 2) -> list[SkillPart]:
    """The sections of SKILL.md ``text`` at heading ``level`` (``#`` count), in file order."""
    lines = text.splitlines(keepends=True)
    starts: list[tuple[int, str]] = []
    fence: str | None = None
    in_front = text.startswith("---")
    for index, line in enumerate(lines):
        stripped = line.rstrip("\r\n")
        if in_front:
            if index > 0 and stripped.rstrip() == "---":
                in_front = False
            continue
        marker = _FENCE.match(stripped)
        if marker:
            token = marker.group(1)
            if fence is None:
                fence = token[0] * len(token)
            elif token.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        heading = _HEADING.match(stripped)
        if heading and len(heading.group(1)) <= level:
            starts.append((index, heading.group(2).strip() if len(heading.group(1)) == level else ""))
    parts = []
    for n, (start, name) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        if not name:  # a heading above the level closes the previous section and opens none
            continue
        parts.append(SkillPart("section", name, (start + 1, end), sum(len(x) for x in lines[start:end])))
    return parts


def section_texts(text: str, level: int = 2) -> dict[str, str]:
    """Each section's label and its text (heading included, surrounding blank lines stripped)."""
    lines = text.splitlines(keepends=True)
    return {part.label: "".join(lines[part.lines[0] - 1: part.lines[1]]).strip()
            for part in split_sections(text, level) if part.lines is not None}


def partition(skill: Skill, grader_commands: list[str], *, level: int = 2) -> Partition:
    """The parts of ``skill``: its sections at ``level``, then its bundled files that no grader
    command names."""
    text = skill.skill_md_bytes().decode("utf-8", errors="replace")
    sections = split_sections(text, level)
    graded, free = [], []
    for rel in skill.bundled:
        if any(rel in command or Path(rel).name in command for command in grader_commands):
            graded.append(rel)
        else:
            free.append(rel)
    files = [SkillPart("file", rel, None, _size(skill.root / rel)) for rel in free]
    return Partition(tuple(sections + files), tuple(graded), level)


def without_part(text: str, part: SkillPart) -> str:
    """SKILL.md ``text`` with ``part`` (a section) taken out."""
    if part.kind != "section" or part.lines is None:
        return text
    lines = text.splitlines(keepends=True)
    first, last = part.lines
    return "".join(lines[: first - 1] + lines[last:])


def write_variant(source_dir: Path, part: SkillPart, into: Path, skill_rel: str = ".") -> Path:
    """A copy of ``source_dir`` (the skill's folder with its suite, or the plugin holding both at
    ``skill_rel``) at ``into``, without ``part``."""
    shutil.copytree(source_dir, into, symlinks=True, ignore=shutil.ignore_patterns(".skillab", ".git"))
    skill = into / skill_rel
    if part.kind == "file":
        (skill / part.name).unlink()
    else:
        skill_md = skill / SKILL_FILE
        text = skill_md.read_text(encoding="utf-8")
        skill_md.write_text(without_part(text, part), encoding="utf-8")
    return into


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
