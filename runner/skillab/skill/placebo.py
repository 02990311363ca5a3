"""The placebo of a skill (``--placebo``): the same name, a description of the same length, and
neutral text in place of every line of the body and of every bundled file, each of the same
length, in the same layout. An agent is offered and stages it exactly as it would the skill, so
the placebo arm differs from the with-skill arm in content only: skill − placebo is the lift of
what the skill says, placebo − none the lift of a skill being there at all.

Lengths are kept in characters per line, so the body's token count under skillab's estimate
(``agents.context_budget.tokens``, 4 characters a token) is the skill's own, and the neutral
words are short common ones, as the prose they replace mostly is. Markdown markers that open a
line (headings, list bullets, numbers, quotes) are kept, so the outline looks the same.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..errors import UsageError
from .loader import SKILL_FILE, Skill, load_skill

# Plain prose about nothing any task asks for: no instruction, no domain word, no format.
NEUTRAL = (
    "the morning was quiet and the light came in slowly over the old wooden table while a kettle "
    "warmed on the stove and a bird called once from the garden wall then the day went on as days "
    "do with small sounds from the street and a breeze that moved the curtain now and then "
)
_MARKER = re.compile(r"^(\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)?)")


def neutral_text(length: int, offset: int = 0) -> str:
    """Neutral prose exactly ``length`` characters long (never ending in a space it can avoid)."""
    if length <= 0:
        return ""
    start = offset % len(NEUTRAL)
    text = (NEUTRAL * (2 + (start + length) // len(NEUTRAL)))[start:start + length]
    return text[:-1] + "." if text.endswith(" ") and length > 1 else text


def neutral_lines(text: str) -> str:
    """``text`` with every line replaced by neutral prose of the same length, its opening
    markdown marker kept."""
    out, offset = [], 0
    for line in text.split("\n"):
        marker = _MARKER.match(line).group(1)  # type: ignore[union-attr]  # the pattern matches any line
        rest = len(line) - len(marker)
        out.append(marker + neutral_text(rest, offset) if rest else line)
        offset += rest + 7
    return "\n".join(out)


def make_placebo(skill: Skill, directory: Path) -> Skill:
    """Write the placebo of ``skill`` under ``directory`` (a folder of the skill's own folder
    name) and load it."""
    if skill.index is not None:
        raise UsageError(f"--placebo: {skill.root} is a set of skills; a placebo stands in for one skill")
    root = Path(directory) / Path(skill.root).resolve().name
    root.mkdir(parents=True, exist_ok=False)
    (root / SKILL_FILE).write_text(
        f"---\nname: {skill.name}\ndescription: {neutral_text(len(skill.description))}\n---\n\n"
        f"{neutral_lines(skill.body)}\n", encoding="utf-8")
    for rel in skill.bundled:
        source, target = Path(skill.root) / rel, root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        size = source.stat().st_size
        target.write_text(neutral_lines(_text_of(source)) if _is_text(source) else neutral_text(size),
                          encoding="utf-8")
        os.chmod(target, stat.S_IMODE(source.stat().st_mode))
    placebo = load_skill(root)
    if placebo.bundled != skill.bundled:
        raise UsageError(f"--placebo: the placebo of {skill.root} would not list the same files")
    return placebo


def _is_text(path: Path) -> bool:
    try:
        path.read_text(encoding="utf-8")
        return True
    except (UnicodeDecodeError, ValueError):
        return False


def _text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")
