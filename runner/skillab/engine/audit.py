"""The clean-baseline audit: did a without-skill arm see the skill's content anyway?

The sandbox keeps the skill out of the without-skill arm's view; this audit is the second line,
so a leak is flagged in the results instead of silently shrinking the lift. It looks for the
skill's *content*, not its path names (a glob such as ``S*.md`` names no path): distinctive
lines of SKILL.md and of the bundled files (those the arm was not given anyway) are fingerprints,
and any of them in what the baseline agent read, wrote or said marks the arm contaminated. A
tool call that asks for a staged skills directory or SKILL.md by name is flagged as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..agents.base import AgentResult
from ..grading.trajectory import format_tool_args
from ..skill.loader import SKILL_FILE, Skill
from ..suite.model import Case

# A line shorter than this, or with fewer words, is too common to prove anything.
MIN_FINGERPRINT_CHARS = 24
MIN_FINGERPRINT_WORDS = 3
_MAX_FILE_BYTES = 1 << 20
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class AuditFinding:
    """Why a baseline is contaminated: fingerprints seen, and skill paths asked for."""

    fingerprints: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    @property
    def contaminated(self) -> bool:
        return bool(self.fingerprints or self.paths)


def fingerprints(skill: Skill, case: Case | None = None) -> list[str]:
    """Distinctive normalized lines of SKILL.md's body and of the bundled files the baseline
    was not given; lines the case itself shows every arm (prompt, setup files) are left out."""
    sources = [skill.body]
    if case is None or not case.skill_files_in_every_arm:
        sources += [_read_text(skill.root / rel) for rel in skill.bundled]
    shown = _normalize("\n".join(_case_texts(case))) if case is not None else ""
    found: dict[str, None] = {}
    for source in sources:
        for line in source.splitlines():
            text = _normalize(line)
            if len(text) >= MIN_FINGERPRINT_CHARS and len(text.split()) >= MIN_FINGERPRINT_WORDS \
                    and text not in shown:
                found[text] = None
    return list(found)


def audit_baseline(result: AgentResult, skill: Skill, case: Case | None = None,
                   staging_dirs: tuple[str, ...] = ()) -> bool:
    """True when the without-skill arm saw skill content or asked for the skill by path."""
    return find_contamination(result, skill, case, staging_dirs).contaminated


def find_contamination(result: AgentResult, skill: Skill, case: Case | None = None,
                       staging_dirs: tuple[str, ...] = ()) -> AuditFinding:
    """``staging_dirs``: where the agent is handed its skills (``Agent.staging_dirs``); a
    without-skill arm has none there, so asking for one is a reach for the skill."""
    seen = _normalize("\n".join(_session_texts(result)))
    matched = tuple(line for line in fingerprints(skill, case) if line in seen)
    asked = [format_tool_args(call.args) for call in result.trajectory.tool_calls]
    asked += list(result.paths_touched)
    markers = [SKILL_FILE, *(f"{d}/" for d in staging_dirs), str(skill.root.resolve())]
    paths = tuple(m for m in markers if any(m in text for text in asked))
    return AuditFinding(matched, paths)


def _session_texts(result: AgentResult) -> list[str]:
    texts = [result.final_output or ""]
    for turn in result.trajectory.turns:
        texts.append(turn.text or "")
        for call in turn.tool_calls:
            texts.append(format_tool_args(call.args))
            texts.append(call.output or "")
    return texts


def _case_texts(case: Case) -> list[str]:
    return [case.prompt, *case.setup.files.values(), *case.setup.commands]


def _read_text(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_FILE_BYTES)
    except OSError:
        return ""
    if b"\0" in data:
        return ""  # binary: no lines to recognise
    return data.decode("utf-8", "replace")


def _normalize(text: str) -> str:
    """Each line with its whitespace collapsed and lower-cased (the line breaks kept)."""
    return "\n".join(_SPACE.sub(" ", line).strip().lower() for line in text.splitlines())
