"""One suite audited: every check over its cases, the findings most severe first."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.audit import AuditBlock, AuditFinding
from ..skill.loader import SKILL_FILE, Skill
from ..suite.model import Suite
from .cases import history_findings, near_duplicates
from .contamination import example_contamination, prompt_contamination
from .leaks import answer_leaks
from .text import TextFile, read_text

if TYPE_CHECKING:
    from ..log.history_entry import HistoryEntry

_RANK = {"high": 0, "medium": 1, "low": 2}


def skill_text_files(skill: Skill) -> list[TextFile]:
    """What the with-skill agent reads: SKILL.md (a set's generated index) and each bundled
    text file, named as the user finds them."""
    files = [TextFile(str(skill.root / SKILL_FILE), skill.skill_md_bytes().decode("utf-8", "replace"))]
    for rel in skill.bundled:
        text = read_text(skill.root / rel)
        if text is not None:
            files.append(TextFile(str(skill.root / rel), text))
    return files


def audit_suite(suite: Suite, skill: Skill, history: Sequence[HistoryEntry] = ()) -> AuditBlock:
    files = skill_text_files(skill)
    where = str(suite.path)
    found: list[AuditFinding] = []
    for case in suite.cases:
        found += answer_leaks(case, files, where)
        found += example_contamination(case, files)
        found += prompt_contamination(case, skill, where)
    found += near_duplicates(suite.cases, where)
    found += history_findings(suite.cases, list(history), where)
    order = {c.name: i for i, c in enumerate(suite.cases)}
    found.sort(key=lambda f: (_RANK[f.severity], order.get(f.case, 0)))
    return AuditBlock(tuple(found))


def history_for(suite: Suite, path: Path) -> list[HistoryEntry]:
    """The history's runs of this suite; none when the file is absent or unreadable."""
    from ..log.history import read_history
    from ..log.history_entry import suite_key

    if not path.is_file():
        return []
    entries, _ = read_history(path)
    key = suite_key(str(suite.path))
    return [e for e in entries if e.suite == key]
